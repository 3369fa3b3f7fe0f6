// The automatic Session title a Session without one takes from its first admitted prompt: no
// model call, so it cannot fail.
import type { PromptPart } from "../../../generated/client/types.gen.js";

/** Longest automatic title (the contract's Session title limit). */
const MAX_TITLE = 100;

/** An automatic Session title: the first prompt's first non-empty line, whitespace folded, cut at a word. */
export function titleFrom(prompt: readonly PromptPart[]): string | undefined {
  const text = prompt.map((part) => (part.type === "text" ? part.text : "")).join("\n");
  const line = text.split("\n").map((candidate) => candidate.replace(/\s+/g, " ").trim()).find((candidate) => candidate !== "");
  if (line === undefined) return undefined;
  if (line.length <= MAX_TITLE) return line;
  const cut = line.slice(0, MAX_TITLE - 1);
  const space = cut.lastIndexOf(" ");
  return `${(space > MAX_TITLE / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}
