// gitStatus: a fresh, complete status of the repository rooted at the workdir, read without
// running git. Staged = HEAD ↔ index, worktree = index ↔ working file, untracked = working
// files the index lacks (ignored ones left out). Renames appear as a deletion plus an
// addition. An unborn repository has a null head; no repository → null.
import { promises as fsp } from "node:fs";
import { join } from "node:path";
import type { GitChangeKind, GitStatus, GitStatusEntry } from "../../../generated/client/types.gen.js";
import { compareBytes, encodePath } from "../files/path.js";
import { checkRepositoryFeatures, locateRepository, parseGitConfig, type Repository } from "./repository.js";
import { headCommit, walkRepository, type Side } from "./walk.js";

const isFileLike = (side: Side | undefined): boolean => side !== undefined && (side.type === "regular" || side.type === "symlink");

/** How `after` differs from `before` (both file-like), or undefined when they are the same. */
async function change(before: Side, after: Side, filemode: boolean, indexToWorkdir = false): Promise<GitChangeKind | undefined> {
  if (before.type !== after.type) return "typeChanged";
  if (filemode && before.mode !== after.mode) return "modified";
  // Index ↔ worktree: a file whose stat matches its index entry is unchanged (git's own stat
  // check), which saves the per-file index lookup isomorphic-git's oid() makes.
  if (indexToWorkdir && (await sameStat(before, after))) return undefined;
  const [a, b] = await Promise.all([before.entry.oid(), after.entry.oid()]);
  return a === b ? undefined : "modified";
}

async function sameStat(index: Side, workdir: Side): Promise<boolean> {
  const [a, b] = await Promise.all([index.entry.stat(), workdir.entry.stat()]);
  if (!a || !b) return false;
  return a.size === b.size && a.mtimeSeconds === b.mtimeSeconds && a.mtimeNanoseconds === b.mtimeNanoseconds && a.ctimeSeconds === b.ctimeSeconds && a.ino === b.ino && a.size !== 0;
}

async function readBranch(repo: Repository): Promise<string | undefined> {
  const text = await fsp.readFile(join(repo.gitdir, "HEAD"), "utf8").catch(() => "");
  const match = /^ref:\s*refs\/heads\/(.+?)\s*$/m.exec(text);
  return match?.[1];
}

export async function fileModeTrusted(repo: Repository): Promise<boolean> {
  const config = parseGitConfig(await fsp.readFile(join(repo.gitdir, "config"), "utf8").catch(() => ""));
  const value = config.get("core.filemode")?.at(-1)?.toLowerCase();
  return !(value === "false" || value === "no" || value === "off" || value === "0");
}

const byPath = (a: { path: { bytesBase64: string } }, b: { path: { bytesBase64: string } }): number =>
  compareBytes(Buffer.from(a.path.bytesBase64, "base64"), Buffer.from(b.path.bytesBase64, "base64"));

export async function gitStatus(workdir: string, signal?: AbortSignal): Promise<GitStatus | null> {
  const repo = await locateRepository(workdir);
  if (!repo) return null;
  await checkRepositoryFeatures(repo);
  const filemode = await fileModeTrusted(repo);
  const [head, branch, records] = await Promise.all([headCommit(repo, signal), readBranch(repo), walkRepository(repo, { signal })]);
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
        const kind = await change(record.stage!, record.workdir!, filemode, true);
        if (kind) worktree.push({ path, change: kind });
      }
    } else if (inWorkdir) untracked.push({ path });
  }
  staged.sort(byPath);
  worktree.sort(byPath);
  untracked.sort(byPath);
  return { head: head ? { oid: head } : null, ...(branch !== undefined ? { branch } : {}), staged, worktree, untracked };
}
