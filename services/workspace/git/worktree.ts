// The fast status's worktree side: one walk of the working directory (`readdir` with file
// types, `lstat` only for tracked files), giving index ↔ file changes and untracked files with
// exactly the general walk's rules (walk.ts + status-walk.ts):
// - a tracked file whose lstat matches its index entry (mtime, ctime, inode, uid, gid, size) is
//   unchanged without reading it, unless it is racy (its mtime is not older, in whole seconds,
//   than the index file's) or recorded with size 0; otherwise its content is hashed;
// - a path neither HEAD nor the index knows is checked with isomorphic-git's `isIgnored`
//   (`.gitignore`s, `info/exclude`, read as bytes like the names); an ignored one is left out, an
//   ignored directory is not entered; a file where HEAD has a directory and the index nothing is
//   checked too; other untracked files are not;
// - `.gitattributes` files met are checked for filters and conversions.
// Paths are byte strings (one character per byte, `latin1`; `fsPath` turns one into the Buffer the
// filesystem gets), so names that are not UTF-8 are kept exactly.
// Synchronous `readdir`/`lstat` are ~7× cheaper than their promises here; the walk yields to the
// event loop (and checks the signal) every few hundred of them.
import { createHash } from "node:crypto";
import { lstatSync, promises as fsp, readdirSync, type Dirent, type Stats } from "node:fs";
import git from "isomorphic-git";
import type { GitChangeKind } from "../../../generated/client/types.gen.js";
import { checkSignal, readOnlyGitFs } from "./fs.js";
import { fileMode, type HeadTree } from "./head-tree.js";
import { sameTime, type IndexEntry, type IndexFile } from "./index-file.js";
import { checkAttributes, type Repository } from "./repository.js";

export interface WorktreeScan {
  readonly worktree: { path: string; change: GitChangeKind }[];
  readonly untracked: string[];
}

export interface WorktreeInput {
  readonly repo: Repository;
  readonly index: IndexFile;
  readonly entries: ReadonlyMap<string, IndexEntry>;
  /** Every directory holding an index entry (its proper path prefixes). */
  readonly indexDirs: ReadonlySet<string>;
  readonly head: HeadTree;
  readonly filemode: boolean;
  readonly signal?: AbortSignal | undefined;
}

type Kind = "dir" | "regular" | "symlink" | "special";

const YIELD_EVERY = 1024;
const HASH_CONCURRENCY = 8;
const UINT32 = 2 ** 32;

function kindOf(entry: Dirent | Stats): Kind | undefined {
  if (entry.isDirectory()) return "dir";
  if (entry.isFile()) return "regular";
  if (entry.isSymbolicLink()) return "symlink";
  if (entry.isFIFO() || entry.isSocket() || entry.isCharacterDevice() || entry.isBlockDevice()) return "special";
  return undefined; // DT_UNKNOWN: ask lstat
}

/** A byte-string path as the filesystem takes it. */
export const fsPath = (path: string): Buffer => Buffer.from(path, "latin1");

/** A UTF-8 string as a byte string. */
export const byteString = (text: string): string => Buffer.from(text, "utf8").toString("latin1");

/**
 * `readdir` as isomorphic-git's filesystem answers it (a vanished or non-directory path lists
 * nothing), each name a byte string.
 */
function listing(path: string): { name: string; dirent: Dirent }[] {
  try {
    const entries = readdirSync(fsPath(path), { withFileTypes: true, encoding: "buffer" }) as unknown as Dirent<Buffer>[];
    return entries.map((dirent) => ({ name: dirent.name.toString("latin1"), dirent: dirent as unknown as Dirent }));
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === "ENOENT" || code === "ENOTDIR") return [];
    throw error;
  }
}

function statMatches(entry: IndexEntry, stat: Stats): boolean {
  return (
    entry.size !== 0 &&
    stat.size % UINT32 === entry.size &&
    stat.ino % UINT32 === entry.ino &&
    stat.uid === entry.uid &&
    stat.gid === entry.gid &&
    sameTime(entry.mtimeSeconds, entry.mtimeNanoseconds, stat.mtimeMs) &&
    sameTime(entry.ctimeSeconds, entry.ctimeNanoseconds, stat.ctimeMs)
  );
}

function blobOid(content: Buffer): string {
  return createHash("sha1").update(`blob ${content.length}\0`).update(content).digest("hex");
}

export async function scanWorktree(input: WorktreeInput): Promise<WorktreeScan> {
  const { repo, index, entries, indexDirs, head, filemode, signal } = input;
  const worktree: { path: string; change: GitChangeKind }[] = [];
  const untracked: string[] = [];
  const found = new Set<string>();
  const toHash: { path: string; abs: string; symlink: boolean; oid: string }[] = [];
  const ignoreFs = readOnlyGitFs(signal, { memoize: true, byteNames: true });
  const isIgnored = (filepath: string): Promise<boolean> => git.isIgnored({ fs: ignoreFs, dir: byteString(repo.dir), gitdir: byteString(repo.gitdir), filepath });
  let work = 0;
  const pace = async (): Promise<void> => {
    work = 0;
    await new Promise<void>((resolve) => setImmediate(resolve));
    checkSignal(signal);
  };

  /** Compares a tracked file with its index entry; returns the kind the worktree has there. */
  const tracked = (path: string, abs: string, entry: IndexEntry, kind: Kind | undefined, subdirs: [string, string][]): Kind | undefined => {
    found.add(path);
    let stat: Stats | undefined;
    if (kind !== "dir" && kind !== "special") {
      stat = lstatSync(fsPath(abs), { throwIfNoEntry: false });
      work++;
      kind = stat ? kindOf(stat) : undefined;
    }
    if (kind === "dir") {
      worktree.push({ path, change: "deleted" });
      subdirs.push([path, abs]);
    } else if (kind === "special") worktree.push({ path, change: "typeChanged" });
    else if (!stat || kind === undefined) worktree.push({ path, change: "deleted" });
    else {
      const before = fileMode(entry.mode);
      const after = fileMode(stat.mode);
      if (before.symlink !== after.symlink) worktree.push({ path, change: "typeChanged" });
      else if (filemode && before.mode !== after.mode) worktree.push({ path, change: "modified" });
      else if (!statMatches(entry, stat) || entry.mtimeSeconds >= index.mtimeSeconds) toHash.push({ path, abs, symlink: after.symlink, oid: entry.oid });
    }
    return kind;
  };

  const visit = async (dir: string, abs: string): Promise<void> => {
    const children = listing(abs);
    work += children.length;
    const subdirs: [string, string][] = [];
    // Paths HEAD and the index do not know, and files where HEAD has a directory: ignore checks.
    const unknown: { name: string; path: string; abs: string; kind: Kind | undefined; fileOnly: boolean }[] = [];
    const attributes: { path: string; abs: string }[] = [];
    for (const child of children) {
      if (work >= YIELD_EVERY) await pace();
      const name = child.name;
      const path = dir === "" ? name : `${dir}/${name}`;
      const childAbs = `${abs}/${name}`;
      let kind = kindOf(child.dirent);
      const entry = entries.get(path);
      if (entry) {
        if (tracked(path, childAbs, entry, kind, subdirs) === "regular" && name === ".gitattributes") attributes.push({ path, abs: childAbs });
        continue;
      }
      const inIndex = indexDirs.has(path);
      const headDir = head.dirs.has(path);
      if (!inIndex && !headDir && !head.files.has(path)) {
        unknown.push({ name, path, abs: childAbs, kind, fileOnly: false });
        continue;
      }
      if (kind === undefined) {
        const stat = lstatSync(fsPath(childAbs), { throwIfNoEntry: false });
        work++;
        kind = stat ? kindOf(stat) : undefined;
      }
      if (kind === "regular" && name === ".gitattributes") attributes.push({ path, abs: childAbs });
      if (kind === "dir") subdirs.push([path, childAbs]);
      else if (kind === "regular" || kind === "symlink") {
        if (!inIndex && headDir) unknown.push({ name, path, abs: childAbs, kind, fileOnly: true });
        else untracked.push(path);
      }
    }
    const ignored = await Promise.all(unknown.map((candidate) => isIgnored(candidate.path)));
    for (const [i, candidate] of unknown.entries()) {
      let kind = candidate.kind;
      if (kind === undefined) {
        const stat = lstatSync(fsPath(candidate.abs), { throwIfNoEntry: false });
        work++;
        kind = stat ? kindOf(stat) : undefined;
      }
      if (ignored[i]) {
        // The general walk lists a directory before it is asked whether the directory is ignored.
        if (kind === "dir" && !candidate.fileOnly) work += listing(candidate.abs).length;
        continue;
      }
      if (kind === "regular" || kind === "symlink") untracked.push(candidate.path);
      else if (kind === "dir" && !candidate.fileOnly) subdirs.push([candidate.path, candidate.abs]);
      if (kind === "regular" && candidate.name === ".gitattributes" && !candidate.fileOnly) attributes.push({ path: candidate.path, abs: candidate.abs });
    }
    for (const file of attributes) checkAttributes((await fsp.readFile(fsPath(file.abs))).toString("utf8"), fsPath(file.path).toString("utf8"));
    for (const [path, childAbs] of subdirs) await visit(path, childAbs);
  };

  checkSignal(signal);
  await visit("", byteString(repo.dir));
  for (const entry of entries.values()) if (!found.has(entry.path)) worktree.push({ path: entry.path, change: "deleted" });
  await hashAll(toHash, signal, (path, change) => worktree.push({ path, change }));
  return { worktree, untracked };
}

/** Hashes the files whose stat data cannot vouch for them: `modified` when they differ, `deleted` when gone meanwhile. */
async function hashAll(files: readonly { path: string; abs: string; symlink: boolean; oid: string }[], signal: AbortSignal | undefined, report: (path: string, change: GitChangeKind) => void): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < files.length) {
      const file = files[next++]!;
      checkSignal(signal);
      let content: Buffer;
      try {
        content = file.symlink ? await fsp.readlink(fsPath(file.abs), { encoding: "buffer" }) : await fsp.readFile(fsPath(file.abs));
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        if (code !== "ENOENT" && code !== "ENOTDIR") throw error;
        report(file.path, "deleted");
        continue;
      }
      if (blobOid(content) !== file.oid) report(file.path, "modified");
    }
  };
  await Promise.all(Array.from({ length: Math.min(HASH_CONCURRENCY, files.length) }, worker));
}
