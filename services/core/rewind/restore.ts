// Reading and restoring one workdir file for a rewind: the digest of what is at a path now, and
// putting a recorded content back (or removing the file). Both reach the file through its
// parent directory's verified descriptor (services/workspace/files/verified.ts): the parents are
// opened one component at a time from the canonical workdir without following a symlink (and,
// to restore, made when missing), so neither a read nor a write nor a removal ever goes through
// a directory swapped for a symlink to outside the workdir. A symlink on the way is "unsafe" for
// the check and `PathChanged` for a restore.
import { Buffer } from "node:buffer";
import { constants, promises as fsp, type Stats } from "node:fs";
import { canonicalWorkdir } from "../../workspace/files/resolve.js";
import { modeOf, sha256Hex } from "../../workspace/files/snapshot.js";
import { PathChanged, childPath, closeDirectory, closeVerified, openChild, openDirectoryChain, writeInDirectory, type VerifiedDirectory } from "../../workspace/files/verified.js";

function segmentsOf(path: Buffer): Buffer[] {
  const segments: Buffer[] = [];
  let start = 0;
  for (let i = 0; i <= path.length; i++) {
    if (i === path.length || path[i] === 0x2f) {
      segments.push(path.subarray(start, i));
      start = i + 1;
    }
  }
  return segments;
}

/** Runs `fn` in the open parent directory of `path` (`create`: made when missing); undefined when a parent is missing. */
async function inParent<T>(workdir: string, path: Buffer, create: boolean, fn: (dir: VerifiedDirectory, name: Buffer) => Promise<T>): Promise<T | undefined> {
  const segments = segmentsOf(path);
  let dir: VerifiedDirectory;
  try {
    dir = openDirectoryChain(await canonicalWorkdir(workdir), segments.slice(0, -1), { create });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" && !create) return undefined;
    // A file or a symlink where a directory belongs.
    if (code === "ENOTDIR" || code === "ELOOP") throw new PathChanged();
    throw error;
  }
  try {
    return await fn(dir, segments.at(-1)!);
  } finally {
    closeDirectory(dir);
  }
}

/** The digest of what is at `path` now (null: nothing), or "unsafe" when a parent is not a plain directory. */
export async function currentDigest(workdir: string, path: Buffer): Promise<string | null | "unsafe"> {
  const found = await readCurrent(workdir, path, Number.POSITIVE_INFINITY);
  return found === null || found === "unsafe" ? found : found === "too_large" ? "unsafe" : found.sha256;
}

/** A workdir file's content as recorded: bytes, digest, mode and the stat it was read at. */
export interface CurrentContent {
  readonly bytes: Buffer;
  readonly sha256: string;
  readonly mode: number;
  readonly stat: Stats;
}

/**
 * What is at `path` now, read through its parent's verified descriptor: null when nothing is
 * there, "unsafe" when a parent is not a plain directory or the entry is not a file or symlink,
 * "too_large" past `maxBytes`.
 */
export async function readCurrent(workdir: string, path: Buffer, maxBytes: number): Promise<CurrentContent | null | "unsafe" | "too_large"> {
  try {
    const found = await inParent(workdir, path, false, async (dir, name): Promise<CurrentContent | null | "unsafe" | "too_large"> => {
      const stat = await fsp.lstat(childPath(dir, name)).catch((error: NodeJS.ErrnoException) => {
        if (error.code === "ENOENT") return undefined;
        throw error;
      });
      if (!stat) return null;
      if (stat.isSymbolicLink()) {
        const target = await fsp.readlink(childPath(dir, name), { encoding: "buffer" });
        return { bytes: target, sha256: sha256Hex(target), mode: 0o120000, stat };
      }
      if (!stat.isFile()) return "unsafe";
      if (stat.size > maxBytes) return "too_large";
      const opened = await openChild(dir, name, constants.O_RDONLY | constants.O_NONBLOCK);
      try {
        if (!opened.stat.isFile()) return "unsafe";
        const bytes = await opened.handle.readFile();
        if (bytes.length > maxBytes) return "too_large";
        const after = await opened.handle.stat();
        return { bytes, sha256: sha256Hex(bytes), mode: modeOf(after), stat: after };
      } finally {
        await closeVerified(opened);
      }
    });
    return found === undefined ? null : found;
  } catch (error) {
    if (error instanceof PathChanged) return "unsafe";
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return null;
    throw error;
  }
}

/** Puts one file back (written beside it, then renamed over it), or removes it. */
export async function restore(workdir: string, path: Buffer, content: { bytes: Buffer; mode: number } | undefined): Promise<void> {
  await inParent(workdir, path, content !== undefined, async (dir, name) => {
    if (!content) {
      await fsp.rm(childPath(dir, name), { force: true });
      return;
    }
    if (content.mode === 0o120000) await writeInDirectory(dir, name, { kind: "symlink", target: content.bytes }, "ze-rewind");
    else await writeInDirectory(dir, name, { kind: "file", bytes: content.bytes, mode: content.mode & 0o777 }, "ze-rewind");
  });
}
