// The index (`.git/index`) read directly for the fast status: every entry's path, mode, oid and
// the stat data git recorded, and the index file's own mtime (the racy-git reference). Only
// what isomorphic-git would read the same way is accepted (DIRC versions 2 and 3, a valid
// checksum, stage-0 entries, known flags, each path once); anything else returns undefined and
// the caller falls back to the general walk, which reads (or refuses) it through isomorphic-git.
import { createHash } from "node:crypto";
import { promises as fsp } from "node:fs";
import { join } from "node:path";

/**
 * Whether a recorded (seconds, nanoseconds) is the timestamp `ms` (Stats' float milliseconds):
 * as git records it (exact; `ms` is computed from seconds and nanoseconds the same way), or as
 * isomorphic-git does (derived from these very milliseconds). Here rather than in worktree.ts:
 * services/core/rewind/git-before.ts uses it and must not load isomorphic-git.
 */
export function sameTime(recordedSeconds: number, recordedNanoseconds: number, ms: number): boolean {
  if (recordedSeconds * 1000 + recordedNanoseconds / 1e6 === ms) return true;
  const seconds = Math.floor(ms / 1000);
  return seconds % 2 ** 32 === recordedSeconds && Math.floor((ms - seconds * 1000) * 1e6) === recordedNanoseconds;
}

export interface IndexEntry {
  readonly path: string;
  /** The mode git recorded (`0o100644`, `0o100755`, `0o120000`, `0o160000`). */
  readonly mode: number;
  readonly oid: string;
  /** Where the oid's 20 bytes start in `IndexFile.buffer`. */
  readonly oidAt: number;
  readonly ctimeSeconds: number;
  readonly ctimeNanoseconds: number;
  readonly mtimeSeconds: number;
  readonly mtimeNanoseconds: number;
  readonly ino: number;
  readonly uid: number;
  readonly gid: number;
  readonly size: number;
}

export interface IndexFile {
  readonly buffer: Buffer;
  readonly entries: readonly IndexEntry[];
  /** Whole seconds of the index file's mtime; an entry not older than this is racy. */
  readonly mtimeSeconds: number;
}

const SKIP_WORKTREE = 0x4000;
const INTENT_TO_ADD = 0x2000;
const ENTRY_FIXED = 62;

/** The index, or undefined when only the general walk reads it faithfully (`names`: see {@link parseIndex}). */
export async function readIndexFile(gitdir: string, names: "utf8" | "latin1" = "utf8"): Promise<IndexFile | undefined> {
  const file = join(gitdir, "index");
  let buffer: Buffer;
  let mtimeSeconds: number;
  try {
    const handle = await fsp.open(file, "r");
    try {
      const stat = await handle.stat();
      if (!stat.isFile()) return undefined;
      mtimeSeconds = Math.floor(stat.mtimeMs / 1000);
      buffer = await handle.readFile();
    } finally {
      await handle.close();
    }
  } catch (error) {
    // No index: isomorphic-git reads an empty one.
    if ((error as { code?: string }).code === "ENOENT") return { buffer: Buffer.alloc(0), entries: [], mtimeSeconds: 0 };
    return undefined;
  }
  const entries = parseIndex(buffer, names);
  return entries ? { buffer, entries, mtimeSeconds } : undefined;
}

/**
 * `names`: how entry paths are decoded — `utf8` (text), or `latin1`: one character per byte, so
 * any name (also one that is not UTF-8) keeps its exact bytes (`Buffer.from(path, "latin1")`).
 */
export function parseIndex(buffer: Buffer, names: "utf8" | "latin1" = "utf8"): IndexEntry[] | undefined {
  if (buffer.length < 32 || buffer.toString("latin1", 0, 4) !== "DIRC") return undefined;
  const claimed = buffer.toString("hex", buffer.length - 20);
  if (createHash("sha1").update(buffer.subarray(0, buffer.length - 20)).digest("hex") !== claimed) return undefined;
  const version = buffer.readUInt32BE(4);
  if (version !== 2 && version !== 3) return undefined;
  const count = buffer.readUInt32BE(8);
  const entries: IndexEntry[] = [];
  const seen = new Set<string>();
  let at = 12;
  for (let i = 0; i < count; i++) {
    if (at + ENTRY_FIXED > buffer.length) return undefined;
    const flags = buffer.readUInt16BE(at + 60);
    if ((flags & 0x3000) !== 0) return undefined; // unmerged: the walk's reading of stages stands
    let pathStart = at + ENTRY_FIXED;
    if (flags & 0x4000) {
      if (pathStart + 2 > buffer.length) return undefined;
      const extended = buffer.readUInt16BE(pathStart);
      if (extended & ~(SKIP_WORKTREE | INTENT_TO_ADD)) return undefined;
      pathStart += 2;
    }
    const nul = buffer.indexOf(0, pathStart + 1);
    if (nul < 0 || nul >= buffer.length - 20) return undefined;
    const path = buffer.toString(names, pathStart, nul);
    if (path.includes("../") || path.includes("..\\") || path.includes("\0") || !wellFormed(path) || seen.has(path)) return undefined;
    seen.add(path);
    // 1–8 NUL bytes pad the entry to a multiple of 8 (counted from the first entry).
    let padding = 8 - ((nul - 12) % 8);
    if (padding === 0) padding = 8;
    for (let p = 0; p < padding; p++) if (buffer[nul + p] !== 0) return undefined;
    const mode = buffer.readUInt32BE(at + 24);
    const type = mode >>> 12;
    if (type !== 0b1000 && type !== 0b1010 && type !== 0b1110) return undefined;
    entries.push({
      path,
      mode,
      oid: buffer.toString("hex", at + 40, at + 60),
      oidAt: at + 40,
      ctimeSeconds: buffer.readUInt32BE(at),
      ctimeNanoseconds: buffer.readUInt32BE(at + 4),
      mtimeSeconds: buffer.readUInt32BE(at + 8),
      mtimeNanoseconds: buffer.readUInt32BE(at + 12),
      ino: buffer.readUInt32BE(at + 20),
      uid: buffer.readUInt32BE(at + 28),
      gid: buffer.readUInt32BE(at + 32),
      size: buffer.readUInt32BE(at + 36),
    });
    at = nul + padding;
    if (at >= buffer.length - 20 && i < count - 1) return undefined;
  }
  return entries;
}

const DOT_SEGMENT = /(?:^|\/)\.\.?(?:\/|$)/;

/** A relative path of non-empty segments, none `.` or `..` (git's own index never holds others). */
function wellFormed(path: string): boolean {
  return !(path.startsWith("/") || path.endsWith("/") || path.includes("//") || DOT_SEGMENT.test(path));
}
