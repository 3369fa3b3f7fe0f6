// gitDiff: one file's complete diff in one area — HEAD ↔ index (`staged`), index ↔ working
// file (`worktree`), or an empty file ↔ an untracked working file (`untracked`). Both inputs are
// read in full; the result is `text` (a complete git-style unified patch made with `diff`),
// `binary` (either side not UTF-8 text, or holding NUL), `unchanged`, or `unsupported` (a
// symlink, a type change, a non-regular file). No repository → null.
import type { GitDiffArea, GitFileDiff } from "../../../generated/client/types.gen.js";
import { conflict, validationFailure } from "../../contract/failure.js";
import { decodeWorkspacePath, utf8OrUndefined } from "../files/path.js";
import { asText, textPatch } from "./patch-text.js";
import git from "isomorphic-git";
import { readOnlyGitFs } from "./fs.js";
import { checkRepositoryFeatures, fileModeTrusted, locateRepository, type Repository } from "./repository.js";
import { walkRepository, type Side } from "./walk.js";
import { WorkspaceUnsupported } from "./unsupported.js";

const AREAS: readonly GitDiffArea[] = ["staged", "worktree", "untracked"];

/** A side's bytes: the index walker has no content, so its blob is read by oid. */
async function content(repo: Repository, side: Side, signal?: AbortSignal): Promise<Uint8Array> {
  const direct = await side.entry.content();
  if (direct) return direct;
  const oid = await side.entry.oid();
  return (await git.readBlob({ fs: readOnlyGitFs(signal), dir: repo.dir, gitdir: repo.gitdir, oid })).blob;
}

export async function gitDiff(workdir: string, area: string, pathBase64: string, signal?: AbortSignal): Promise<GitFileDiff | null> {
  if (!AREAS.includes(area as GitDiffArea)) throw validationFailure(`area must be one of ${AREAS.join(", ")}`);
  const decoded = decodeWorkspacePath(pathBase64);
  const path = utf8OrUndefined(decoded.bytes);
  if (path === undefined) throw new WorkspaceUnsupported("filename_encoding", "git observation needs UTF-8 path names");
  const repo = await locateRepository(workdir);
  if (!repo) return null;
  await checkRepositoryFeatures(repo);
  const filemode = await fileModeTrusted(repo);
  const [record] = (await walkRepository(repo, { signal, only: path })).filter((candidate) => candidate.path === path);
  const fields = { path: { bytesBase64: pathBase64 }, area: area as GitDiffArea };
  let before: Side | undefined;
  let after: Side | undefined;
  if (area === "staged") [before, after] = [record?.head, record?.stage];
  else if (area === "worktree") [before, after] = [record?.stage, record?.workdir];
  else {
    if (record?.stage) throw conflict(`${path} is tracked (in the index): diff it in the worktree area`);
    after = record?.workdir;
  }
  if (before?.type === "tree") before = undefined;
  if (after?.type === "tree") after = undefined;
  if (area === "worktree" && !before && after) throw conflict(`${path} is not in the index: diff it in the untracked area`);
  const modes = { ...(before ? { oldMode: before.mode } : {}), ...(after ? { newMode: after.mode } : {}) };
  if (!before && !after) return { kind: "unchanged", ...fields };
  for (const side of [before, after]) {
    if (side?.type === "special") return { kind: "unsupported", ...fields, ...modes, reason: "not a regular file" };
  }
  if (before && after && before.type !== after.type) return { kind: "unsupported", ...fields, ...modes, reason: "type change between a file and a symlink" };
  if (before?.type === "symlink" || after?.type === "symlink") {
    if (before && after && (await before.entry.oid()) === (await after.entry.oid())) return { kind: "unchanged", ...fields, ...modes };
    return { kind: "unsupported", ...fields, ...modes, reason: "symlink" };
  }
  const [oldBytes, newBytes] = await Promise.all([before ? content(repo, before, signal) : undefined, after ? content(repo, after, signal) : undefined]);
  const sameMode = !before || !after || !filemode || before.mode === after.mode;
  if (before && after && sameMode && Buffer.compare(Buffer.from(oldBytes!), Buffer.from(newBytes!)) === 0) return { kind: "unchanged", ...fields, ...modes };
  const oldText = oldBytes ? asText(oldBytes) : "";
  const newText = newBytes ? asText(newBytes) : "";
  if (oldText === undefined || newText === undefined) {
    return { kind: "binary", ...fields, ...modes, ...(oldBytes ? { oldSize: oldBytes.length } : {}), ...(newBytes ? { newSize: newBytes.length } : {}) };
  }
  const effective = (side: Side | undefined, text: string) => (side ? { text, mode: filemode ? side.mode : "100644" } : undefined);
  return { kind: "text", ...fields, ...modes, patch: textPatch(path, effective(before, oldText), effective(after, newText)) };
}
