// Git-style text patches of one file (`diff`'s structuredPatch + formatPatch with git headers),
// shared by gitDiff and Turn patches. Loads only `diff`, not isomorphic-git.
import { formatPatch, structuredPatch, type StructuredPatch } from "diff";
import { utf8OrUndefined } from "../files/path.js";

/** Text is strict UTF-8 without NUL (git's own heuristic looks for NUL). */
export function asText(bytes: Uint8Array): string | undefined {
  if (bytes.includes(0)) return undefined;
  return utf8OrUndefined(bytes);
}

const C_ESCAPES: Record<number, string> = { 7: "a", 8: "b", 9: "t", 10: "n", 11: "v", 12: "f", 13: "r", 0x22: '"', 0x5c: "\\" };

/**
 * A path's `a/`/`b/` names in patch headers: the UTF-8 text, or for a name that is not UTF-8 git's
 * C-style quoting (`"a/caf\351.txt"`: control bytes, `"`, `\` and bytes over 0x7f escaped).
 */
export function patchNames(bytes: Uint8Array): { readonly old: string; readonly new: string } {
  const text = utf8OrUndefined(bytes);
  if (text !== undefined) return { old: `a/${text}`, new: `b/${text}` };
  let quoted = "";
  for (const byte of bytes) {
    const escape = C_ESCAPES[byte];
    if (escape !== undefined) quoted += `\\${escape}`;
    else if (byte < 0x20 || byte >= 0x7f) quoted += `\\${byte.toString(8).padStart(3, "0")}`;
    else quoted += String.fromCharCode(byte);
  }
  return { old: `"a/${quoted}"`, new: `"b/${quoted}"` };
}

/** A complete git-style patch of one file (`a/`/`b/` names, creation and deletion headers, mode changes). */
export function textPatch(
  path: string,
  before: { text: string; mode: string } | undefined,
  after: { text: string; mode: string } | undefined,
  names: { readonly old: string; readonly new: string } = { old: `a/${path}`, new: `b/${path}` },
): string {
  const patch: StructuredPatch = structuredPatch(before ? names.old : "/dev/null", after ? names.new : "/dev/null", before?.text ?? "", after?.text ?? "", undefined, undefined, { context: 3 });
  patch.isGit = true;
  if (!before) {
    patch.isCreate = true;
    patch.oldFileName = names.old;
    patch.newMode = after!.mode;
  } else if (!after) {
    patch.isDelete = true;
    patch.newFileName = names.new;
    patch.oldMode = before.mode;
  } else if (before.mode !== after.mode) {
    patch.oldMode = before.mode;
    patch.newMode = after.mode;
  }
  // formatPatch names /dev/null sides in the ---/+++ lines only when told to.
  let text = formatPatch(patch);
  if (!before) text = text.replace(`\n--- ${names.old}\n`, "\n--- /dev/null\n");
  if (!after) text = text.replace(`\n+++ ${names.new}\n`, "\n+++ /dev/null\n");
  return text;
}
