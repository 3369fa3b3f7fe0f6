// Markdown answers on the terminal (marked + marked-terminal): headings, emphasis, lists, links,
// code blocks with syntax colour, tables. Streaming-safe: a running answer is cut after its last
// complete block outside a code fence; that stable part renders once (memoized) and the partial
// block after it renders on its own, so a half-received fence is a code block to the end of what
// arrived and never breaks the frame. Colour off (`--no-color`, NO_COLOR): the same layout, no escapes.
// The renderer (with highlight.js) is loaded after the first frame (`loadMarkdown`), so it costs the
// launch nothing; until then text shows as it came.
import { stripVTControlCharacters } from "node:util";
import type { Marked } from "marked";

let library: { Marked: typeof Marked; markedTerminal: (options: Record<string, unknown>) => unknown } | undefined;
let loading: Promise<void> | undefined;

/** Loads marked and marked-terminal (once); resolves when `renderMarkdown` renders. */
export function loadMarkdown(): Promise<void> {
  loading ??= Promise.all([import("marked"), import("marked-terminal")]).then(([marked, terminal]) => {
    library = { Marked: marked.Marked, markedTerminal: terminal.markedTerminal };
  });
  return loading;
}

const parsers = new Map<number, Marked>();
const cache = new Map<string, string>();
const CACHE_SIZE = 200;

function parser(width: number, lib: NonNullable<typeof library>): Marked {
  let found = parsers.get(width);
  if (!found) {
    found = new lib.Marked(lib.markedTerminal({ reflowText: true, width, showSectionPrefix: false, tab: 2, emoji: false }) as never);
    parsers.set(width, found);
  }
  return found;
}

function renderBlock(text: string, width: number, color: boolean): string {
  if (library === undefined) return text;
  const key = `${width}:${color ? 1 : 0}:${text}`;
  const hit = cache.get(key);
  if (hit !== undefined) return hit;
  let out: string;
  try {
    out = (parser(width, library).parse(text, { async: false }) as string).replace(/\s+$/, "");
  } catch {
    out = text; // never lose the answer to a renderer failure
  }
  if (!color) out = stripVTControlCharacters(out);
  if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!);
  cache.set(key, out);
  return out;
}

const FENCE = /^ {0,3}(`{3,}|~{3,})/;

/** `text` cut after its last blank line outside a code fence: [complete blocks, the partial block]. */
export function splitStable(text: string): [string, string] {
  const lines = text.split("\n");
  let fence: string | undefined;
  let cut = -1;
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!;
    const match = FENCE.exec(line);
    if (match) {
      if (fence === undefined) fence = match[1]!;
      else if (match[1]!.startsWith(fence[0]!) && match[1]!.length >= fence.length && line.trim() === match[1]) fence = undefined;
      continue;
    }
    if (fence === undefined && line.trim() === "" && index < lines.length - 1) cut = index;
  }
  if (cut < 0) return ["", text];
  return [lines.slice(0, cut).join("\n"), lines.slice(cut + 1).join("\n")];
}

/**
 * The terminal rendering of Markdown `text` at `width` columns. `tailChars` (a running Turn's
 * visible rows): a partial block longer than that, outside a code fence, renders from a line (or
 * word) boundary near its end, so a long paragraph still streaming costs the same every frame.
 */
export function renderMarkdown(text: string, width: number, color: boolean, tailChars?: number): string {
  const [stable, whole] = splitStable(text);
  let partial = whole;
  if (tailChars !== undefined && partial.length > tailChars && !FENCE.test(partial)) {
    const from = partial.length - tailChars;
    const line = partial.indexOf("\n", from);
    const word = partial.indexOf(" ", from);
    partial = partial.slice(line >= 0 ? line + 1 : word >= 0 ? word + 1 : from);
    if (stable.trim() === "" || partial.trim() === "") return renderBlock(partial, width, color);
  }
  const parts = [stable.trim() === "" ? "" : renderBlock(stable, width, color), partial.trim() === "" ? "" : renderBlock(partial, width, color)];
  return parts.filter((part) => part !== "").join("\n\n");
}

/** Colour unless `--no-color` or NO_COLOR (any non-empty value) says otherwise. */
export function colorWanted(env: NodeJS.ProcessEnv = process.env, argv: readonly string[] = process.argv): boolean {
  return !argv.includes("--no-color") && (env["NO_COLOR"] ?? "") === "";
}
