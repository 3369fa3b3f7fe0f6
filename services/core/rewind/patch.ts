// A Turn patch from its changed files, each with what is known of both sides: every file with
// both sides' digests, sizes and modes, and the complete patch text — git-style unified hunks
// for UTF-8 text (`textPatch` of services/workspace/git/patch-text.ts), a `Binary files … differ`
// stanza otherwise, and a stanza saying so where the content before the Turn was not recorded.
import { Buffer } from "node:buffer";
import { compareBytes } from "../../workspace/files/path.js";
import { asText, textPatch } from "../../workspace/git/patch-text.js";
import type { StoredPatchFile } from "../../storage/index.js";

/** One side of a changed file: its content, or (before only) that it existed unrecorded. */
export type Side = { readonly sha256: string; readonly mode: number; readonly bytes: Buffer } | { readonly unrecorded: true; readonly mode: number; readonly size: number } | null;

export interface FileChange {
  /** Path bytes, Base64. */
  readonly path: string;
  readonly before: Side;
  readonly after: Side;
}

export interface ComputedPatch {
  readonly files: StoredPatchFile[];
  readonly patch: string;
}

const octal = (mode: number): string => mode.toString(8);

export function computePatch(changes: readonly FileChange[]): ComputedPatch {
  const sorted = [...changes].sort((a, b) => compareBytes(Buffer.from(a.path, "base64"), Buffer.from(b.path, "base64")));
  const files: StoredPatchFile[] = [];
  const texts: string[] = [];
  for (const { path, before: a, after: b } of sorted) {
    const name = Buffer.from(path, "base64").toString("utf8");
    const unrecordedBefore = a !== null && "unrecorded" in a;
    const unrecordedAfter = b !== null && "unrecorded" in b;
    const oldText = a === null ? "" : "bytes" in a ? asText(a.bytes) : undefined;
    const newText = b === null ? "" : "bytes" in b ? asText(b.bytes) : undefined;
    const content = oldText !== undefined && newText !== undefined ? "text" : "binary";
    files.push({
      path,
      change: a === null ? "added" : b === null ? "deleted" : "modified",
      content,
      ...(a !== null ? ("bytes" in a ? { beforeSha256: a.sha256, beforeSize: a.bytes.length, beforeMode: a.mode } : { beforeSize: a.size, beforeMode: a.mode, beforeRecorded: false }) : {}),
      ...(b !== null ? ("bytes" in b ? { afterSha256: b.sha256, afterSize: b.bytes.length, afterMode: b.mode } : { afterSize: b.size, afterMode: b.mode }) : {}),
    });
    if (unrecordedBefore || unrecordedAfter) {
      const side = unrecordedBefore ? `a/${name} before this Turn` : `b/${name} after this Turn`;
      texts.push(`diff --git a/${name} b/${name}\n# the content of ${side} was not recorded\n`);
    } else if (content === "text") {
      texts.push(textPatch(name, a ? { text: oldText!, mode: octal(a.mode) } : undefined, b ? { text: newText!, mode: octal(b.mode) } : undefined));
    } else {
      const header = !a ? `new file mode ${octal(b!.mode)}\n` : !b ? `deleted file mode ${octal(a.mode)}\n` : a.mode !== b.mode ? `old mode ${octal(a.mode)}\nnew mode ${octal(b.mode)}\n` : "";
      texts.push(`diff --git a/${name} b/${name}\n${header}Binary files ${a ? `a/${name}` : "/dev/null"} and ${b ? `b/${name}` : "/dev/null"} differ\n`);
    }
  }
  return { files, patch: texts.join("") };
}
