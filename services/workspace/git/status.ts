// gitStatus: a fresh, complete status of the repository rooted at the workdir, read without
// running git. Staged = HEAD ↔ index, worktree = index ↔ working file, untracked = working
// files the index lacks (ignored ones left out). Renames appear as a deletion plus an
// addition. An unborn repository has a null head; no repository → null. Answered from the
// index's stat data (fast.ts); an index only isomorphic-git reads faithfully (another
// version, unmerged entries, a damaged file) takes the general walk (status-walk.ts).
import type { GitStatus } from "../../../generated/client/types.gen.js";
import { fastStatus } from "./fast.js";
import { checkRepositoryFeatures, fileModeTrusted, locateRepository } from "./repository.js";
import { walkStatus } from "./status-walk.js";

export { fileModeTrusted } from "./repository.js";

export async function gitStatus(workdir: string, signal?: AbortSignal): Promise<GitStatus | null> {
  const repo = await locateRepository(workdir);
  if (!repo) return null;
  await checkRepositoryFeatures(repo);
  const filemode = await fileModeTrusted(repo);
  return (await fastStatus(repo, filemode, signal)) ?? (await walkStatus(repo, filemode, signal));
}
