// The general status: one isomorphic-git walk of HEAD, the index and the worktree (walk.ts),
// reduced to staged (HEAD ↔ index), worktree (index ↔ working file) and untracked entries.
// `gitStatus` (status.ts) answers from the index's stat data instead (fast.ts) and comes here
// only for an index that path does not read (another version, unmerged entries, a damaged
// file), so both give the same answer; the tests compare them on random repositories.
import { createHash } from "node:crypto";
import { promises as fsp } from "node:fs";
import { join } from "node:path";
import type { GitChangeKind, GitStatus, GitStatusEntry } from "../../../generated/client/types.gen.js";
import { compareBytes, encodePath } from "../files/path.js";
import { checkRepositoryFeatures, fileModeTrusted, locateRepository, readBranch, type Repository } from "./repository.js";
import { headCommit, walkRepository, type Side } from "./walk.js";

const isFileLike = (side: Side | undefined): boolean => side !== undefined && (side.type === "regular" || side.type === "symlink");

/** How `after` differs from `before` (both file-like), or undefined when they are the same. */
async function change(before: Side, after: Side, filemode: boolean, racyFrom?: number): Promise<GitChangeKind | undefined> {
  if (before.type !== after.type) return "typeChanged";
  if (filemode && before.mode !== after.mode) return "modified";
  if (racyFrom !== undefined) {
    // Index ↔ worktree: a file whose stat matches its index entry is unchanged (git's own stat
    // check, which saves the per-file index lookup isomorphic-git's oid() makes) — unless the
    // entry is racy (not older than the index file), when only the content can tell.
    const recorded = await before.entry.stat();
    if (recorded && recorded.mtimeSeconds >= racyFrom) {
      const content = await after.entry.content();
      const oid = content ? createHash("sha1").update(`blob ${content.length}\0`).update(content).digest("hex") : undefined;
      return oid === (await before.entry.oid()) ? undefined : "modified";
    }
    if (await sameStat(before, after)) return undefined;
  }
  const [a, b] = await Promise.all([before.entry.oid(), after.entry.oid()]);
  return a === b ? undefined : "modified";
}

async function sameStat(index: Side, workdir: Side): Promise<boolean> {
  const [a, b] = await Promise.all([index.entry.stat(), workdir.entry.stat()]);
  if (!a || !b) return false;
  return a.size === b.size && a.mtimeSeconds === b.mtimeSeconds && a.mtimeNanoseconds === b.mtimeNanoseconds && a.ctimeSeconds === b.ctimeSeconds && a.ctimeNanoseconds === b.ctimeNanoseconds && a.ino === b.ino && a.size !== 0;
}

/** Whole seconds of the index file's mtime (0 without an index). */
async function indexMtimeSeconds(repo: Repository): Promise<number> {
  const stat = await fsp.lstat(join(repo.gitdir, "index")).catch(() => undefined);
  return stat ? Math.floor(stat.mtimeMs / 1000) : 0;
}

const byPath = (a: { path: { bytesBase64: string } }, b: { path: { bytesBase64: string } }): number =>
  compareBytes(Buffer.from(a.path.bytesBase64, "base64"), Buffer.from(b.path.bytesBase64, "base64"));

/** The status of a located, checked repository by the general walk. */
export async function walkStatus(repo: Repository, filemode: boolean, signal?: AbortSignal): Promise<GitStatus> {
  const [head, branch, records, racyFrom] = await Promise.all([headCommit(repo, signal), readBranch(repo), walkRepository(repo, { signal }), indexMtimeSeconds(repo)]);
  const staged: GitStatusEntry[] = [];
  const worktree: GitStatusEntry[] = [];
  const untracked: { path: { bytesBase64: string } }[] = [];
  for (const record of records) {
    const path = encodePath(Buffer.from(record.path, "utf8"));
    const inHead = isFileLike(record.head);
    const inStage = isFileLike(record.stage);
    const inWorkdir = isFileLike(record.workdir);
    if (!inHead && inStage) staged.push({ path, change: "added" });
    else if (inHead && !inStage) staged.push({ path, change: "deleted" });
    else if (inHead && inStage) {
      const kind = await change(record.head!, record.stage!, filemode);
      if (kind) staged.push({ path, change: kind });
    }
    if (inStage) {
      if (!inWorkdir) worktree.push({ path, change: record.workdir !== undefined && record.workdir.type === "special" ? "typeChanged" : "deleted" });
      else {
        const kind = await change(record.stage!, record.workdir!, filemode, racyFrom);
        if (kind) worktree.push({ path, change: kind });
      }
    } else if (inWorkdir) untracked.push({ path });
  }
  staged.sort(byPath);
  worktree.sort(byPath);
  untracked.sort(byPath);
  return { head: head ? { oid: head } : null, ...(branch !== undefined ? { branch } : {}), staged, worktree, untracked };
}

/** `gitStatus` by the general walk alone: the reference the fast path is tested against. */
export async function gitStatusByWalk(workdir: string, signal?: AbortSignal): Promise<GitStatus | null> {
  const repo = await locateRepository(workdir);
  if (!repo) return null;
  await checkRepositoryFeatures(repo);
  return walkStatus(repo, await fileModeTrusted(repo), signal);
}
