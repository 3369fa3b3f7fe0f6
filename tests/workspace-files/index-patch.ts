// Rewrites stat data (or flags) of one entry of a real `.git/index` and its SHA-1 trailer, so a
// test can make an entry whose recorded stat matches a file whose content differs: the racy
// case git's stat check cannot see, which neither git nor isomorphic-git would write on demand.
import { createHash } from "node:crypto";
import { lstatSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseIndex } from "../../services/workspace/git/index-file.js";

function rewrite(dir: string, path: string, patch: (buffer: Buffer, start: number) => void): void {
  const file = join(dir, ".git", "index");
  const buffer = readFileSync(file);
  const entry = parseIndex(buffer)?.find((candidate) => candidate.path === path);
  if (!entry) throw new Error(`${path} is not in the index`);
  patch(buffer, entry.oidAt - 40);
  createHash("sha1").update(buffer.subarray(0, buffer.length - 20)).digest().copy(buffer, buffer.length - 20);
  writeFileSync(file, buffer);
}

/**
 * Records the file's current lstat in its index entry (keeping the entry's oid). `exact` writes
 * the nanoseconds as git does; otherwise as isomorphic-git does (from the float milliseconds).
 */
export function recordStat(dir: string, path: string, exact = false): void {
  const stat = lstatSync(join(dir, path), { bigint: true });
  const time = (ns: bigint): [number, number] => {
    if (exact) return [Number(ns / 1_000_000_000n), Number(ns % 1_000_000_000n)];
    const ms = Number(ns / 1_000_000_000n) * 1000 + Number(ns % 1_000_000_000n) / 1e6;
    const seconds = Math.floor(ms / 1000);
    return [seconds, Math.floor((ms - seconds * 1000) * 1e6)];
  };
  rewrite(dir, path, (buffer, start) => {
    const [cs, cn] = time(stat.ctimeNs);
    const [ms, mn] = time(stat.mtimeNs);
    for (const [offset, value] of [[0, cs], [4, cn], [8, ms], [12, mn], [20, Number(stat.ino % 4294967296n)], [28, Number(stat.uid)], [32, Number(stat.gid)], [36, Number(stat.size)]] as const) {
      buffer.writeUInt32BE(value, start + offset);
    }
  });
}

/** Marks the entry as a merge stage (1–3): an unmerged index. */
export function setStage(dir: string, path: string, stage: 1 | 2 | 3): void {
  rewrite(dir, path, (buffer, start) => buffer.writeUInt16BE((buffer.readUInt16BE(start + 60) & ~0x3000) | (stage << 12), start + 60));
}
