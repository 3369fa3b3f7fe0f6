// Display formatting of CodeMode source (the reference's `formatCodeMode`): for showing a script,
// never for running it. It accepts JavaScript and TypeScript and re-indents by bracket nesting —
// two spaces per bracket opened on an earlier line, one more for a line that continues a `.`
// chain — trims trailing whitespace, normalizes line ends and collapses runs of blank lines. The
// inside of template literals and block comments is kept exactly. Source it cannot read (an
// unbalanced bracket, an unterminated string, comment, template or regex) comes back unchanged.
// It does not reflow lines or change tokens: Node built-ins only, no formatter dependency.

export interface CodeModeFormatter {
  format(source: string): string;
}

/** Formats `source` for display. */
export async function formatCodeMode(source: string): Promise<string> {
  return formatSource(source);
}

/** A formatter for repeated renders: remembers its most recent results. */
export function makeCodeModeFormatter(): CodeModeFormatter {
  const cache = new Map<string, string>();
  return {
    format(source) {
      const hit = cache.get(source);
      if (hit !== undefined) return hit;
      const formatted = formatSource(source);
      if (cache.size >= 32) cache.delete(cache.keys().next().value as string);
      cache.set(source, formatted);
      return formatted;
    },
  };
}

interface Line {
  readonly text: string;
  /** Starts inside a template literal or block comment: kept exactly. */
  readonly verbatim: boolean;
  /** The lines that opened each bracket still open at the line's start, outermost first. */
  readonly open: readonly number[];
}

const OPENERS: Readonly<Record<string, string>> = { "(": ")", "[": "]", "{": "}" };
const REGEX_AFTER = new Set([..."(,=:[!&|?{};+-*%<>~^"]);
const REGEX_KEYWORDS = new Set(["return", "typeof", "case", "do", "else", "in", "of", "new", "delete", "void", "throw", "yield", "await", "instanceof"]);

function formatSource(source: string): string {
  const lines = scan(source.replace(/\r\n?/g, "\n"));
  if (!lines) return source;
  const indents: number[] = [];
  const out: string[] = [];
  lines.forEach((line) => {
    if (line.verbatim) {
      indents.push(0);
      out.push(line.text);
      return;
    }
    const trimmed = line.text.trim();
    const closers = /^[)\]}]*/.exec(trimmed)![0].length;
    const depth = Math.max(0, line.open.length - closers);
    let indent = depth === 0 ? 0 : indents[line.open[depth - 1]!]! + 1;
    indents.push(indent);
    if (/^\??\.[^.]/.test(trimmed)) indent++;
    out.push(trimmed === "" ? "" : "  ".repeat(indent) + trimmed);
  });
  const collapsed = out.join("\n").replace(/\n{3,}/g, "\n\n");
  return collapsed.replace(/^\n+/, "").replace(/\n+$/, "");
}

/** Splits into lines with their bracket context, or undefined when the source does not scan. */
function scan(source: string): Line[] | undefined {
  type Mode = "code" | "line-comment" | "block-comment" | "single" | "double" | "template";
  const lines: Line[] = [];
  const stack: { closer: string; line: number; template: boolean }[] = [];
  let mode: Mode = "code";
  let lineStart = 0;
  let lineVerbatim = false;
  let lineOpen: number[] = [];
  let previous = ""; // the last significant code character or word
  let word = "";

  const endLine = (end: number): void => {
    lines.push({ text: source.slice(lineStart, end), verbatim: lineVerbatim, open: lineOpen });
    lineStart = end + 1;
    lineVerbatim = mode === "template" || mode === "block-comment";
    lineOpen = stack.map((entry) => entry.line);
  };

  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    const next = source[i + 1];
    if (c === "\n") {
      if (mode === "single" || mode === "double") return undefined;
      if (mode === "line-comment") mode = "code";
      if (mode === "code" && word) ((previous = word), (word = ""));
      endLine(i);
      continue;
    }
    switch (mode) {
      case "line-comment":
        continue;
      case "block-comment":
        if (c === "*" && next === "/") ((mode = "code"), i++);
        continue;
      case "single":
      case "double":
        if (c === "\\") i++;
        else if (c === (mode === "single" ? "'" : '"')) ((mode = "code"), (previous = "x"));
        continue;
      case "template":
        if (c === "\\") i++;
        else if (c === "`") ((mode = "code"), (previous = "x"));
        else if (c === "$" && next === "{") {
          stack.push({ closer: "}", line: lines.length, template: true });
          mode = "code";
          previous = "{";
          i++;
        }
        continue;
    }
    if (/[\w$]/.test(c)) {
      word += c;
      continue;
    }
    if (word) ((previous = word), (word = ""));
    if (c === " " || c === "\t") continue;
    if (c === "/" && next === "/") ((mode = "line-comment"), i++);
    else if (c === "/" && next === "*") ((mode = "block-comment"), i++);
    else if (c === "'") mode = "single";
    else if (c === '"') mode = "double";
    else if (c === "`") mode = "template";
    else if (c === "/" && (previous === "" || REGEX_AFTER.has(previous) || REGEX_KEYWORDS.has(previous))) {
      const end = regexEnd(source, i);
      if (end === undefined) return undefined;
      i = end;
      previous = "x";
    } else if (c in OPENERS) {
      stack.push({ closer: OPENERS[c]!, line: lines.length, template: false });
      previous = c;
    } else if (c === ")" || c === "]" || c === "}") {
      const top = stack.pop();
      if (!top || top.closer !== c) return undefined;
      if (top.template) mode = "template";
      previous = c;
    } else previous = c;
  }
  if (mode !== "code" && mode !== "line-comment") return undefined;
  if (stack.length > 0) return undefined;
  lines.push({ text: source.slice(lineStart), verbatim: lineVerbatim, open: lineOpen });
  return lines;
}

/** The index of the closing `/` of the regex literal starting at `start` (flags are word characters). */
function regexEnd(source: string, start: number): number | undefined {
  let inClass = false;
  for (let i = start + 1; i < source.length; i++) {
    const c = source[i];
    if (c === "\n") return undefined;
    if (c === "\\") i++;
    else if (c === "[") inClass = true;
    else if (c === "]") inClass = false;
    else if (c === "/" && !inClass) return i;
  }
  return undefined;
}
