// tools/bundle.mjs's last pass over the one-file CommonJS builds (dist/bundle/local.cjs and
// embedded.cjs): every dynamic import() is routed through `__zeImport`, and the text is made ASCII.
//
// The files are compiled by bin/local-cache.js as a vm.Script (with its code cache), where V8's own
// import() has no loader behind it in Node 20 (and none at all for code from cached data): each
// dynamic import becomes a call of `__zeImport`, which bin/local-cache.js passes in (its import() is
// an ordinary module's). Required as a plain module, a file falls back to import() itself. The calls
// are found in the output's syntax tree (TypeScript's parser), so an import() of a computed
// specifier (a plugin's URL) is routed too, and one in a comment or a string is left as it is.
//
// ASCII: bin/local-cache.js reads an ASCII file as Latin-1, quicker than UTF-8, and V8 keeps it as
// a one-byte string; a single wider character (esbuild keeps them in comments and some literals)
// makes the whole 3.4 MiB of embedded.cjs a two-byte string. Each is written as its \u escape, which
// means the same in a string, a RegExp, an untagged template and a comment; anywhere else (a name, a
// tagged template, whose tag sees the raw text), after a backslash (`/[\’]/`: the escape would read
// as a backslash and "u2019") or as a line separator between tokens fails the build.
import { readFileSync, writeFileSync } from "node:fs";
import ts from "typescript";

export const DYNAMIC_IMPORT_BANNER = 'var __zeImport = typeof __zeDynamicImport === "function" ? __zeDynamicImport : (specifier) => import(specifier);';

/** Rewrites `file` in place (routedSource); returns how many import() calls it routed. */
export function routeDynamicImports(file) {
  const { text, routed } = routedSource(file, readFileSync(file, "utf8"));
  writeFileSync(file, text);
  return routed;
}

/** The template literal a template token belongs to. */
function templateOf(node) {
  if (ts.isNoSubstitutionTemplateLiteral(node)) return node;
  if (ts.isTemplateHead(node)) return node.parent;
  return node.parent.parent; // a TemplateMiddle or TemplateTail, in its TemplateSpan
}

/** Whether a non-ASCII character inside the token `node` may be written as its \u escape. */
function escapable(node) {
  if (ts.isStringLiteral(node) || ts.isRegularExpressionLiteral(node)) return true;
  if (ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateHead(node) || ts.isTemplateMiddle(node) || ts.isTemplateTail(node)) {
    return !ts.isTaggedTemplateExpression(templateOf(node).parent);
  }
  return false;
}

/** The token (a node without children) that holds `position`; undefined between tokens (a comment, whitespace). */
function tokenAt(source, position) {
  let found = source;
  for (;;) {
    const inner = found.getChildren(source).find((child) => position >= child.getStart(source) && position < child.getEnd());
    if (inner === undefined) break;
    found = inner;
  }
  return found !== source && found.getChildCount(source) === 0 ? found : undefined;
}

/**
 * `text` (the JavaScript of `file`, whose first import() is DYNAMIC_IMPORT_BANNER's) with every
 * other import() call routed to `__zeImport` and every non-ASCII character escaped; throws where
 * either cannot be done safely.
 */
export function routedSource(file, text) {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS);
  const starts = [];
  const visit = (node) => {
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) starts.push(node.expression.getStart(source));
    ts.forEachChild(node, visit);
  };
  visit(source);
  for (let position = 0; position < text.length; position++) {
    const code = text.charCodeAt(position);
    if (code <= 0x7f) continue;
    const token = tokenAt(source, position);
    if (token !== undefined && !escapable(token)) {
      throw new Error(`${file}: a non-ASCII character at ${position} outside a string, RegExp, untagged template or comment (tools/bundle-route.mjs)`);
    }
    // After an odd run of backslashes (a RegExp's identity escape, which esbuild keeps as written)
    // the escape would read as a backslash and "uXXXX"; a line or paragraph separator between
    // tokens ends a // comment, and its escape would not.
    let backslashes = 0;
    while (text.charCodeAt(position - 1 - backslashes) === 0x5c) backslashes++;
    if ((token !== undefined && backslashes % 2 === 1) || (token === undefined && (code === 0x2028 || code === 0x2029))) {
      throw new Error(`${file}: a non-ASCII character at ${position} whose \\u escape would not mean the same (an escaped character, or a line separator between tokens) (tools/bundle-route.mjs)`);
    }
  }
  // The banner's own fallback is the first call; every later one is routed.
  const [fallback, ...routed] = starts.sort((a, b) => a - b);
  if (fallback === undefined || !text.startsWith(DYNAMIC_IMPORT_BANNER, text.lastIndexOf("\n", fallback) + 1)) {
    throw new Error(`${file}: the dynamic-import banner is not the file's first import() (tools/bundle-route.mjs)`);
  }
  let out = "";
  let at = 0;
  for (const start of routed) {
    out += `${text.slice(at, start)}__zeImport`;
    at = start + "import".length;
  }
  out += text.slice(at);
  return { text: out.replace(/[^\x00-\x7f]/g, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`), routed: routed.length };
}
