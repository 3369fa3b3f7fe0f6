// One walk of HEAD, the index and the worktree (isomorphic-git's `walk` over TREE, STAGE and
// WORKDIR, through the read-only filesystem), reduced to per-path records of what each side
// holds. Ignored untracked paths are pruned; a gitlink (submodule) anywhere, or a nested
// `.gitattributes` naming a filter or conversion, fails explicitly. `only` restricts the walk
// to one path (directories off its way are pruned), which is how a diff reads one file.
import git, { type WalkerEntry } from "isomorphic-git";
import { readOnlyGitFs } from "./fs.js";
import { checkAttributes, type Repository } from "./repository.js";
import { WorkspaceUnsupported } from "./unsupported.js";

export type SideType = "regular" | "symlink" | "tree" | "special";

export interface Side {
  readonly type: SideType;
  /** Git mode as octal text (`100644`, `100755`, `120000`). */
  readonly mode: string;
  readonly entry: WalkerEntry;
}

export interface PathRecord {
  readonly path: string;
  readonly head?: Side | undefined;
  readonly stage?: Side | undefined;
  readonly workdir?: Side | undefined;
}

function sideType(kind: string, mode: number): SideType | "commit" {
  if (kind === "commit") return "commit";
  if (kind === "tree") return "tree";
  if (kind === "special") return "special";
  return (mode & 0o170000) === 0o120000 ? "symlink" : "regular";
}

async function side(entry: WalkerEntry | null): Promise<Side | undefined> {
  if (!entry) return undefined;
  const kind = await entry.type();
  const mode = (await entry.mode()) ?? 0;
  const type = sideType(kind, mode);
  if (type === "commit") throw new WorkspaceUnsupported("submodule", "Submodules (gitlink entries) are not supported");
  const normal = type === "symlink" ? "120000" : type === "tree" ? "40000" : (mode & 0o111) !== 0 ? "100755" : "100644";
  return { type, mode: normal, entry };
}

export interface WalkOptions {
  readonly signal?: AbortSignal | undefined;
  /** Walk only this path (and the directories leading to it). */
  readonly only?: string | undefined;
  readonly cache?: object;
}

/** Whether HEAD resolves to a commit (false in an unborn repository). */
export async function headCommit(repo: Repository, signal?: AbortSignal): Promise<string | undefined> {
  try {
    return await git.resolveRef({ fs: readOnlyGitFs(signal), dir: repo.dir, gitdir: repo.gitdir, ref: "HEAD" });
  } catch (error) {
    if ((error as { code?: string }).code === "NotFoundError") return undefined;
    throw error;
  }
}

export async function walkRepository(repo: Repository, options: WalkOptions = {}): Promise<PathRecord[]> {
  const fs = readOnlyGitFs(options.signal);
  const cache = options.cache ?? {};
  const base = { fs, dir: repo.dir, gitdir: repo.gitdir, cache };
  const head = await headCommit(repo, options.signal);
  const only = options.only;
  const records: PathRecord[] = [];
  await git.walk({
    ...base,
    // An unborn HEAD walks as the empty tree (isomorphic-git resolves the unborn branch itself).
    trees: [git.TREE({ ref: head ?? "HEAD" }), git.STAGE(), git.WORKDIR({ refresh: false })],
    map: async (path, [h, s, w]) => {
      if (path === ".") return true;
      if (path.includes("\uFFFD")) throw new WorkspaceUnsupported("filename_encoding", "A path in the repository is not UTF-8; git observation needs UTF-8 names");
      if (only !== undefined && path !== only && !only.startsWith(`${path}/`)) return null;
      if (!h && !s && w) {
        if (await git.isIgnored({ ...base, filepath: path })) return null;
      }
      const [headSide, stageSide, workdirSide] = await Promise.all([side(h ?? null), side(s ?? null), side(w ?? null)]);
      if (path === ".gitattributes" || path.endsWith("/.gitattributes")) {
        const source = workdirSide?.type === "regular" ? workdirSide : stageSide?.type === "regular" ? stageSide : undefined;
        const content = await source?.entry.content();
        if (content) checkAttributes(Buffer.from(content).toString("utf8"), path);
      }
      const blobs = [headSide, stageSide, workdirSide].some((x) => x !== undefined && x.type !== "tree");
      if (!blobs) return undefined;
      // A workdir file that is neither in HEAD nor the index but ignored is left out even
      // when a directory of the same name is tracked.
      if (!stageSide && workdirSide && workdirSide.type !== "tree" && headSide?.type !== "regular" && headSide?.type !== "symlink") {
        if (await git.isIgnored({ ...base, filepath: path })) return undefined;
      }
      records.push({ path, head: headSide, stage: stageSide, workdir: workdirSide });
      return undefined;
    },
  });
  return records;
}
