// Recording a workdir state for Turn patches: a recursive lstat scan (symlinks recorded, never
// followed) that names every regular file and symlink by the SHA-256 of its content. A file
// whose size, mtime, inode and mode equal the previous record keeps its digest unread, so a scan
// after a Turn reads only what changed; contents not seen before are handed to `store` in
// batches (a content-addressed store). Left out: `.git` and `node_modules` anywhere, the
// workdir's private `.ze-harness`, files over MAX_SNAPSHOT_FILE_BYTES. Past MAX_SNAPSHOT_FILES
// files, MAX_SNAPSHOT_NEW_BYTES of new content or a path over MAX_WORKSPACE_PATH_BYTES (which
// also bounds the directory descriptors open at once) the scan fails (`SnapshotTooLarge`).
//
// Every directory and file is reached through its parent's verified descriptor (verified.ts), so
// nothing outside the workdir is ever read or recorded, even while a directory is swapped for a
// symlink: one replaced mid-scan is skipped, not entered.
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";
import { constants, promises as fsp, type BigIntStats } from "node:fs";
import { compareBytes, MAX_WORKSPACE_PATH_BYTES, PRIVATE_ROOT_NAMES } from "./path.js";
import { childPath, closeDirectory, closeVerified, directoryPath, isPathChanged, openChild, openChildDirectory, openVerifiedDirectory, type VerifiedDirectory } from "./verified.js";

export const MAX_SNAPSHOT_FILE_BYTES = 4 * 1024 * 1024;
export const MAX_SNAPSHOT_FILES = 50_000;
export const MAX_SNAPSHOT_NEW_BYTES = 256 * 1024 * 1024;
const BATCH_BYTES = 8 * 1024 * 1024;

/** [pathBase64, sha256, mode, size, mtimeMs, ino] — the storage room's ManifestEntry. */
export type SnapshotEntry = [path: string, sha256: string, mode: number, size: number, mtimeMs: number, ino: string];

export class SnapshotTooLarge extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SnapshotTooLarge";
  }
}

export interface SnapshotBlob {
  readonly sha256: string;
  readonly bytes: Uint8Array;
}

export interface ScanOptions {
  /** The previous record, by path: unchanged stats reuse its digest. */
  readonly previous?: ReadonlyMap<string, SnapshotEntry>;
  /** Receives contents whose digest the previous record did not hold. */
  readonly store: (blobs: readonly SnapshotBlob[]) => Promise<void>;
  readonly signal?: AbortSignal;
}

const SKIPPED_ANYWHERE = new Set([".git", "node_modules"]);

export const sha256Hex = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex");

export function modeOf(stat: { isSymbolicLink(): boolean; mode: number }): number {
  if (stat.isSymbolicLink()) return 0o120000;
  return stat.mode & 0o111 ? 0o100755 : 0o100644;
}

/** The regular file `name` of `dir` as `lstat` saw it, read through its descriptor; undefined when it changed. */
async function readChild(dir: VerifiedDirectory, name: Buffer, seen: BigIntStats): Promise<Buffer | undefined> {
  let opened;
  try {
    opened = await openChild(dir, name, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    if (!opened.stat.isFile() || opened.stat.ino !== seen.ino || opened.stat.dev !== seen.dev || opened.stat.size > BigInt(MAX_SNAPSHOT_FILE_BYTES)) return undefined;
    // Reading the size seen plus a byte: getting exactly the size is the end; otherwise (a short
    // read, a file that grew) read on until the end.
    const size = Number(opened.stat.size);
    const chunks: Buffer[] = [];
    let total = 0;
    for (let room = size + 1; ; room = 64 * 1024) {
      const buffer = Buffer.allocUnsafe(room);
      const { bytesRead } = await opened.handle.read(buffer, 0, room, null);
      chunks.push(buffer.subarray(0, bytesRead));
      total += bytesRead;
      if (total > MAX_SNAPSHOT_FILE_BYTES) return undefined;
      if (bytesRead === 0 || (chunks.length === 1 && total === size)) return Buffer.concat(chunks, total);
    }
  } catch {
    return undefined;
  } finally {
    await closeVerified(opened);
  }
}

export async function scanWorkdir(workdir: string, options: ScanOptions): Promise<SnapshotEntry[]> {
  const entries: SnapshotEntry[] = [];
  const known = new Set<string>();
  for (const entry of options.previous?.values() ?? []) known.add(entry[1]);
  let pending: SnapshotBlob[] = [];
  let pendingBytes = 0;
  let newBytes = 0;
  const flush = async (): Promise<void> => {
    if (pending.length === 0) return;
    const batch = pending;
    pending = [];
    pendingBytes = 0;
    await options.store(batch);
  };
  // The workdir by its canonical path, verified; below it every directory through its parent.
  const visit = async (dir: VerifiedDirectory, relative: Buffer): Promise<void> => {
    if (options.signal?.aborted) throw options.signal.reason;
    const names = (await fsp.readdir(directoryPath(dir), { encoding: "buffer" })).sort(compareBytes);
    const kept = names.filter((name) => {
      const text = name.toString("latin1");
      return !(SKIPPED_ANYWHERE.has(text) || (relative.length === 0 && PRIVATE_ROOT_NAMES.includes(text)));
    });
    // One directory's stats at once: a warm scan is all stats.
    const stats = await Promise.all(kept.map((name) => fsp.lstat(childPath(dir, name), { bigint: true }).catch(() => undefined)));
    for (let index = 0; index < kept.length; index++) {
      const name = kept[index]!;
      const stat = stats[index];
      if (!stat) continue; // removed while scanning
      const path = relative.length === 0 ? Buffer.from(name) : Buffer.concat([relative, Buffer.from("/"), name]);
      if (stat.isDirectory()) {
        if (path.length > MAX_WORKSPACE_PATH_BYTES) throw new SnapshotTooLarge(`The workdir has a path longer than ${MAX_WORKSPACE_PATH_BYTES} bytes`);
        let child: VerifiedDirectory;
        try {
          child = openChildDirectory(dir, name);
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code;
          if (code === "ENOENT" || code === "ENOTDIR" || isPathChanged(error)) continue; // removed or replaced while scanning
          throw error;
        }
        try {
          await visit(child, path);
        } finally {
          closeDirectory(child);
        }
        continue;
      }
      if (!stat.isFile() && !stat.isSymbolicLink()) continue;
      if (stat.size > BigInt(MAX_SNAPSHOT_FILE_BYTES)) continue;
      if (entries.length >= MAX_SNAPSHOT_FILES) throw new SnapshotTooLarge(`The workdir has more than ${MAX_SNAPSHOT_FILES} files to record`);
      const key = path.toString("base64");
      const mode = modeOf({ isSymbolicLink: () => stat.isSymbolicLink(), mode: Number(stat.mode) });
      const size = Number(stat.size);
      const mtimeMs = Number(stat.mtimeNs / 1_000_000n);
      const ino = stat.ino.toString();
      const before = options.previous?.get(key);
      if (before && before[2] === mode && before[3] === size && before[4] === mtimeMs && before[5] === ino) {
        entries.push([key, before[1], mode, size, mtimeMs, ino]);
        continue;
      }
      const bytes = stat.isSymbolicLink() ? await fsp.readlink(childPath(dir, name), { encoding: "buffer" }).catch(() => undefined) : await readChild(dir, name, stat);
      if (!bytes) continue; // changed while scanning
      const sha256 = sha256Hex(bytes);
      entries.push([key, sha256, mode, bytes.length, mtimeMs, ino]);
      if (!known.has(sha256)) {
        known.add(sha256);
        newBytes += bytes.length;
        if (newBytes > MAX_SNAPSHOT_NEW_BYTES) throw new SnapshotTooLarge(`The workdir has more than ${MAX_SNAPSHOT_NEW_BYTES} bytes of new content to record`);
        pending.push({ sha256, bytes });
        pendingBytes += bytes.length;
        if (pendingBytes >= BATCH_BYTES) await flush();
      }
    }
  };
  const root = openVerifiedDirectory(await fsp.realpath(workdir, { encoding: "buffer" }));
  try {
    await visit(root, Buffer.alloc(0));
  } finally {
    closeDirectory(root);
  }
  await flush();
  return entries;
}
