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
 * Git's C-style quoting of `a/` + a name that is not UTF-8 and `b/` + it, as header names
 * (`"a/caf\351.txt"`: control bytes, `"`, `\` and bytes over 0x7e escaped). `diff` quotes UTF-8
 * names itself (it encodes the name as UTF-8, which a name that is not cannot round-trip).
 */
export function quotedNames(bytes: Uint8Array): { readonly old: string; readonly new: string } {
  let quoted = "";
  for (const byte of bytes) {
    const escape = C_ESCAPES[byte];
    if (escape !== undefined) quoted += `\\${escape}`;
    else if (byte < 0x20 || byte > 0x7e) quoted += `\\${byte.toString(8).padStart(3, "0")}`;
    else quoted += String.fromCharCode(byte);
  }
  return { old: `"a/${quoted}"`, new: `"b/${quoted}"` };
}

/** Stands for a name in the headers until it is replaced by its quoted form (printable ASCII, so `diff` leaves it as it is). */
const PLACEHOLDER = "ze-harness-path-5b1f0c2e9d";

/**
 * A complete git-style patch of one file (`a/`/`b/` names, creation and deletion headers, mode
 * changes). `quoted`: the header names of a path that is not UTF-8 ({@link quotedNames}).
 */
export function textPatch(
  path: string,
  before: { text: string; mode: string } | undefined,
  after: { text: string; mode: string } | undefined,
  quoted?: { readonly old: string; readonly new: string },
): string {
  if (quoted) {
    const text = textPatch(PLACEHOLDER, before, after);
    const body = text.indexOf("\n@@");
    const header = body < 0 ? text : text.slice(0, body);
    return header.replaceAll(`a/${PLACEHOLDER}`, quoted.old).replaceAll(`b/${PLACEHOLDER}`, quoted.new) + (body < 0 ? "" : text.slice(body));
  }
  const names = { old: `a/${path}`, new: `b/${path}` };
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
