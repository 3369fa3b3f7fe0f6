// Git-style text patches of one file (`diff`'s structuredPatch + formatPatch with git headers),
// shared by gitDiff and Turn patches. Loads only `diff`, not isomorphic-git.
import { formatPatch, structuredPatch, type StructuredPatch } from "diff";
import { utf8OrUndefined } from "../files/path.js";

/** Text is strict UTF-8 without NUL (git's own heuristic looks for NUL). */
export function asText(bytes: Uint8Array): string | undefined {
  if (bytes.includes(0)) return undefined;
  return utf8OrUndefined(bytes);
}

/** A complete git-style patch of one file (`a/`/`b/` names, creation and deletion headers, mode changes). */
export function textPatch(path: string, before: { text: string; mode: string } | undefined, after: { text: string; mode: string } | undefined): string {
  const patch: StructuredPatch = structuredPatch(before ? `a/${path}` : "/dev/null", after ? `b/${path}` : "/dev/null", before?.text ?? "", after?.text ?? "", undefined, undefined, { context: 3 });
  patch.isGit = true;
  if (!before) {
    patch.isCreate = true;
    patch.oldFileName = `a/${path}`;
    patch.newMode = after!.mode;
  } else if (!after) {
    patch.isDelete = true;
    patch.newFileName = `b/${path}`;
    patch.oldMode = before.mode;
  } else if (before.mode !== after.mode) {
    patch.oldMode = before.mode;
    patch.newMode = after.mode;
  }
  // formatPatch names /dev/null sides in the ---/+++ lines only when told to.
  let text = formatPatch(patch);
  if (!before) text = text.replace(`\n--- a/${path}\n`, "\n--- /dev/null\n");
  if (!after) text = text.replace(`\n+++ b/${path}\n`, "\n+++ /dev/null\n");
  return text;
}
