// The fast status, as git computes it: the index read directly (index-file.ts), HEAD ↔ index by
// comparing each entry's oid and mode with HEAD's tree read once (head-tree.ts), index ↔ file
// by the entries' stat data and hashing only what it cannot vouch for, untracked files from one
// walk of the working directory (worktree.ts). Gives exactly what the general walk
// (status-walk.ts) gives; undefined when the index holds what only that walk reads faithfully.
// Every path here is a byte string (one character per byte, `latin1`): names that are not UTF-8
// (Latin-1, invalid sequences) are reported with their exact bytes, as agent-api.md asks.
import git from "isomorphic-git";
import type { GitChangeKind, GitStatus, GitStatusEntry } from "../../../generated/client/types.gen.js";
import { readOnlyGitFs } from "./fs.js";
import { fileMode, gitlink, readHeadTree } from "./head-tree.js";
import { readIndexFile, type IndexEntry } from "./index-file.js";
import { indexTreeOids } from "./index-trees.js";
import { readBranch, type Repository } from "./repository.js";
import { headCommit } from "./walk.js";
import { scanWorktree } from "./worktree.js";

/** Whether HEAD names a branch without commits (so the walk reads HEAD as the empty tree). */
async function unbornBranch(repo: Repository, signal?: AbortSignal): Promise<boolean> {
  try {
    const target = await git.resolveRef({ fs: readOnlyGitFs(signal), dir: repo.dir, gitdir: repo.gitdir, ref: "HEAD", depth: 2 });
    return target.startsWith("refs/heads/");
  } catch {
    return false;
  }
}

const encoded = (bytes: Buffer): { bytesBase64: string } => ({ bytesBase64: bytes.toString("base64") });
const byBytes = (a: { bytes: Buffer }, b: { bytes: Buffer }): number => Buffer.compare(a.bytes, b.bytes);

/** Entries sorted by path bytes, as the contract orders them. */
function changes(items: readonly { path: string; change: GitChangeKind }[]): GitStatusEntry[] {
  const keyed = items.map((item) => ({ bytes: Buffer.from(item.path, "latin1"), change: item.change }));
  return keyed.sort(byBytes).map(({ bytes, change }) => ({ path: encoded(bytes), change }));
}

export async function fastStatus(repo: Repository, filemode: boolean, signal?: AbortSignal): Promise<GitStatus | undefined> {
  const [index, head, branch] = await Promise.all([readIndexFile(repo.gitdir, "latin1"), headCommit(repo, signal), readBranch(repo)]);
  if (!index) return undefined;
  if (head === undefined && !(await unbornBranch(repo, signal))) return undefined;
  const entries = new Map<string, IndexEntry>();
  const indexDirs = new Set<string>();
  let previousDir = "";
  for (const entry of index.entries) {
    if (entry.mode >>> 12 === 0b1110) throw gitlink();
    entries.set(entry.path, entry);
    const dir = entry.path.slice(0, Math.max(0, entry.path.lastIndexOf("/")));
    if (dir === previousDir) continue; // the previous entry's directory: its prefixes are in already
    previousDir = dir;
    for (let slash = entry.path.indexOf("/"); slash !== -1; slash = entry.path.indexOf("/", slash + 1)) indexDirs.add(entry.path.slice(0, slash));
  }
  // A path that is both a file and a directory in the index: the walk's reading stands.
  for (const dir of indexDirs) if (entries.has(dir)) return undefined;
  const tree = await readHeadTree(repo, head, indexTreeOids(index), signal);
  const sameDirs = new Map<string, boolean>();
  const underSame = (path: string): boolean => {
    if (tree.same.has("")) return true;
    const dir = path.slice(0, Math.max(0, path.lastIndexOf("/")));
    let known = sameDirs.get(dir);
    if (known === undefined) {
      known = false;
      for (let slash = path.indexOf("/"); slash !== -1 && !known; slash = path.indexOf("/", slash + 1)) known = tree.same.has(path.slice(0, slash));
      sameDirs.set(dir, known);
    }
    return known;
  };

  const staged: { path: string; change: GitChangeKind }[] = [];
  for (const entry of index.entries) {
    if (underSame(entry.path)) continue; // HEAD holds this very entry
    const before = tree.files.get(entry.path);
    if (!before) {
      staged.push({ path: entry.path, change: "added" });
      continue;
    }
    const after = fileMode(entry.mode);
    if (before.symlink !== after.symlink) staged.push({ path: entry.path, change: "typeChanged" });
    else if ((filemode && before.mode !== after.mode) || before.oid !== entry.oid) staged.push({ path: entry.path, change: "modified" });
  }
  for (const path of tree.files.keys()) if (!entries.has(path)) staged.push({ path, change: "deleted" });

  const { worktree, untracked } = await scanWorktree({ repo, index, entries, indexDirs, head: tree, filemode, signal });
  const untrackedBytes = untracked.map((path) => ({ bytes: Buffer.from(path, "latin1") })).sort(byBytes);
  return {
    head: head ? { oid: head } : null,
    ...(branch !== undefined ? { branch } : {}),
    staged: changes(staged),
    worktree: changes(worktree),
    untracked: untrackedBytes.map(({ bytes }) => ({ path: encoded(bytes) })),
  };
}
