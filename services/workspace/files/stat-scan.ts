// The stat-only scan Turn recording runs in a repository (services/core/rewind): every file and
// symlink under the workdir that git would not ignore (ignore-rules.ts), by its stat data alone —
// nothing is read. A file whose mode, size, mtime, inode and ctime equal the previous record
// keeps the digest recorded for it; any other gets "" (content unknown), and the recorder reads
// only those it must.
//
// Left out: `.git` and `node_modules` anywhere, a nested repository (a directory holding `.git`),
// the workdir's private `.ze-harness`, and names that are not UTF-8.
//
// A warm scan is lstat calls only: a directory whose inode, mtime and ctime and whose rule files
// are unchanged reuses its cached listing (already filtered by the rules), so neither `readdir`
// nor the ignore rules run again; synchronous `lstat` is several times cheaper than its promise
// here, and the walk yields to the event loop every few thousand calls. Directories are opened
// and listed through their parent's verified descriptor (verified.ts), so a directory swapped for
// a symlink mid-scan is skipped, never entered, and no outside name is ever recorded; files are
// stat'ed by path (a swap there yields some other file's stat data under an inside name, at
// worst), and content is only ever read through verified descriptors (restore.ts).
import { Buffer } from "node:buffer";
import { lstatSync, readdirSync, type Dirent, type Stats } from "node:fs";
import type { RecordingRules } from "./ignore-rules.js";
import { ruleFileKey } from "./ignore-rules.js";
import { PRIVATE_ROOT_NAMES } from "./path.js";
import { closeDirectory, directoryPath, isPathChanged, openChildDirectory, openVerifiedDirectory, type VerifiedDirectory } from "./verified.js";

/** [pathBase64, sha256 | "", mode, size, mtimeMs, identity] — the storage room's ManifestEntry. */
export type SnapshotEntry = [path: string, sha256: string, mode: number, size: number, mtimeMs: number, identity: string];

export const MAX_SNAPSHOT_FILES = 50_000;
const YIELD_EVERY = 4096;
const SKIPPED_ANYWHERE = new Set([".git", "node_modules"]);

export class SnapshotTooLarge extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SnapshotTooLarge";
  }
}

type Kind = "dir" | "file" | "symlink";

interface Child {
  readonly name: string;
  readonly kind: Kind | undefined;
  /** The workdir-relative path, "/"-separated. */
  readonly rel: string;
  readonly key: string;
}

/** Filtered directory listings by absolute path, each under the stat and rule identity it was read with. */
export class ListingCache {
  readonly #listings = new Map<string, { readonly key: string; readonly children: readonly Child[] }>();
  constructor(private readonly limit = 100_000) {}

  get(dir: string, key: string): readonly Child[] | undefined {
    const found = this.#listings.get(dir);
    return found?.key === key ? found.children : undefined;
  }

  set(dir: string, key: string, children: readonly Child[]): void {
    if (this.#listings.size >= this.limit) this.#listings.clear();
    this.#listings.set(dir, { key, children });
  }
}

export function modeOf(stat: { isSymbolicLink(): boolean; mode: number }): number {
  if (stat.isSymbolicLink()) return 0o120000;
  return stat.mode & 0o111 ? 0o100755 : 0o100644;
}

/** A file's identity beyond size and mtime: its inode and ctime (a rewrite that kept the mtime still changes the ctime). */
export const identityOf = (stat: Stats): string => `${stat.ino}:${stat.ctimeMs}`;

export const entryOf = (key: string, digest: string, stat: Stats): SnapshotEntry => [key, digest, modeOf(stat), stat.size, stat.mtimeMs, identityOf(stat)];

/** Whether two records describe the same file state (digests aside). */
export const sameStat = (a: SnapshotEntry, b: SnapshotEntry): boolean => a[2] === b[2] && a[3] === b[3] && a[4] === b[4] && a[5] === b[5];

function kindOf(entry: Dirent | Stats): Kind | undefined {
  if (entry.isDirectory()) return "dir";
  if (entry.isFile()) return "file";
  if (entry.isSymbolicLink()) return "symlink";
  return undefined;
}

export interface StatScanOptions {
  /** git's rules; undefined records every file (no repository rules apply). */
  readonly rules?: RecordingRules | undefined;
  /** The previous record, by path: an unchanged stat keeps its digest. */
  readonly previous?: ReadonlyMap<string, SnapshotEntry> | undefined;
  readonly cache?: ListingCache | undefined;
  readonly signal?: AbortSignal | undefined;
}

/** The workdir's recorded files (canonical `workdir`), sorted by path within each directory. */
export async function statScan(workdir: string, options: StatScanOptions = {}): Promise<SnapshotEntry[]> {
  const { rules, previous, cache, signal } = options;
  const entries: SnapshotEntry[] = [];
  let work = 0;
  const pace = async (): Promise<void> => {
    work = 0;
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (signal?.aborted) throw signal.reason;
  };

  const list = (dir: VerifiedDirectory, abs: string, rel: string): Child[] => {
    let dirents: Dirent[];
    try {
      dirents = readdirSync(directoryPath(dir), { withFileTypes: true });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "ENOTDIR" || code === "EACCES") return [];
      throw error;
    }
    // A nested repository is git's business, not this one's.
    if (rel !== "" && dirents.some((entry) => entry.name === ".git")) return [];
    const children: Child[] = [];
    for (const dirent of dirents) {
      const name = dirent.name;
      if (SKIPPED_ANYWHERE.has(name) || name.includes("\uFFFD") || (rel === "" && PRIVATE_ROOT_NAMES.includes(name))) continue;
      let kind = kindOf(dirent);
      if (kind === undefined && !dirent.isFIFO() && !dirent.isSocket() && !dirent.isCharacterDevice() && !dirent.isBlockDevice()) {
        const stat = lstatSync(`${abs}/${name}`, { throwIfNoEntry: false });
        kind = stat ? kindOf(stat) : undefined;
      }
      if (kind === undefined) continue;
      const childRel = rel === "" ? name : `${rel}/${name}`;
      if (rules?.ignored(childRel, kind === "dir")) continue;
      children.push({ name, kind, rel: childRel, key: Buffer.from(childRel, "utf8").toString("base64") });
    }
    children.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return children;
  };

  const visit = async (dir: VerifiedDirectory, abs: string, rel: string, ruleIdentity: string): Promise<void> => {
    const dirStat = dir.stat;
    const identity = rules ? `${ruleIdentity}|${ruleFileKey(`${abs}/.gitignore`)}` : "";
    const cacheKey = `${dirStat.ino}:${dirStat.mtimeNs}:${dirStat.ctimeNs}:${identity}`;
    let children = cache?.get(abs, cacheKey);
    if (!children) {
      children = list(dir, abs, rel);
      cache?.set(abs, cacheKey, children);
    }
    for (const child of children) {
      const childAbs = `${abs}/${child.name}`;
      if (child.kind === "dir") {
        let sub: VerifiedDirectory;
        try {
          sub = openChildDirectory(dir, child.name);
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code;
          // Removed, replaced by a file, or swapped for a symlink while scanning: not entered.
          if (code === "ENOENT" || code === "ENOTDIR" || code === "EACCES" || isPathChanged(error)) continue;
          throw error;
        }
        try {
          await visit(sub, childAbs, child.rel, identity);
        } finally {
          closeDirectory(sub);
        }
        continue;
      }
      if (++work >= YIELD_EVERY) await pace();
      const stat = lstatSync(childAbs, { throwIfNoEntry: false });
      // Gone, or no longer what the listing said (a directory now): the next listing sees it.
      if (!stat || (!stat.isFile() && !stat.isSymbolicLink())) continue;
      if (entries.length >= MAX_SNAPSHOT_FILES) throw new SnapshotTooLarge(`The workdir has more than ${MAX_SNAPSHOT_FILES} files to record`);
      const before = previous?.get(child.key);
      const entry = entryOf(child.key, "", stat);
      if (before && before[1] !== "" && sameStat(before, entry)) entry[1] = before[1];
      entries.push(entry);
    }
  };

  const root = openVerifiedDirectory(workdir);
  try {
    await visit(root, workdir, "", rules ? rules.baseIdentity() : "");
  } finally {
    closeDirectory(root);
  }
  return entries;
}
