// A Turn patch from two recorded workdir states: every path whose digest or mode differs, with
// both sides' digests, sizes and modes, and the complete patch text — git-style unified hunks
// for UTF-8 text (`textPatch` of services/workspace/git/diff.ts), a `Binary files … differ`
// stanza otherwise. Contents come from the content-addressed store.
import { Buffer } from "node:buffer";
import { compareBytes } from "../../workspace/files/path.js";
import type { SnapshotEntry } from "../../workspace/files/snapshot.js";
import { asText, textPatch } from "../../workspace/git/patch-text.js";
import type { StoredPatchFile } from "../../storage/index.js";

export interface ComputedPatch {
  readonly files: StoredPatchFile[];
  readonly patch: string;
}

const octal = (mode: number): string => mode.toString(8);

export async function computePatch(
  before: readonly SnapshotEntry[],
  after: readonly SnapshotEntry[],
  blob: (sha256: string) => Promise<Buffer | undefined>,
): Promise<ComputedPatch> {
  const old = new Map(before.map((entry) => [entry[0], entry]));
  const now = new Map(after.map((entry) => [entry[0], entry]));
  const paths = [...new Set([...old.keys(), ...now.keys()])]
    .filter((path) => {
      const a = old.get(path);
      const b = now.get(path);
      return !a || !b || a[1] !== b[1] || a[2] !== b[2];
    })
    .sort((a, b) => compareBytes(Buffer.from(a, "base64"), Buffer.from(b, "base64")));
  const files: StoredPatchFile[] = [];
  const texts: string[] = [];
  for (const path of paths) {
    const a = old.get(path);
    const b = now.get(path);
    const [oldBytes, newBytes] = await Promise.all([a ? blob(a[1]) : undefined, b ? blob(b[1]) : undefined]);
    const oldText = a ? (oldBytes ? asText(oldBytes) : undefined) : "";
    const newText = b ? (newBytes ? asText(newBytes) : undefined) : "";
    const content = oldText !== undefined && newText !== undefined ? "text" : "binary";
    files.push({
      path,
      change: !a ? "added" : !b ? "deleted" : "modified",
      content,
      ...(a ? { beforeSha256: a[1], beforeSize: a[3], beforeMode: a[2] } : {}),
      ...(b ? { afterSha256: b[1], afterSize: b[3], afterMode: b[2] } : {}),
    });
    const name = Buffer.from(path, "base64").toString("utf8");
    if (content === "text") {
      texts.push(textPatch(name, a ? { text: oldText!, mode: octal(a[2]) } : undefined, b ? { text: newText!, mode: octal(b[2]) } : undefined));
    } else {
      const header = !a ? `new file mode ${octal(b![2])}\n` : !b ? `deleted file mode ${octal(a[2])}\n` : a[2] !== b[2] ? `old mode ${octal(a[2])}\nnew mode ${octal(b[2])}\n` : "";
      texts.push(`diff --git a/${name} b/${name}\n${header}Binary files ${a ? `a/${name}` : "/dev/null"} and ${b ? `b/${name}` : "/dev/null"} differ\n`);
    }
  }
  return { files, patch: texts.join("") };
}
