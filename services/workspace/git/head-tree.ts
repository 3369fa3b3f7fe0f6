// HEAD's tree read once, recursively (isomorphic-git's readTree through the read-only
// filesystem), as a map of every file path to its mode and oid plus the set of directory paths:
// the fast status compares the index against it by path. A subtree whose oid equals the
// index's tree for that directory (index-trees.ts) is not read: it is listed in `same`, and
// holds exactly the index's entries there. Trees are read concurrently. A gitlink (submodule)
// or a name that is not UTF-8 in a tree read fails explicitly, as the general walk does when it
// meets one (in a `same` subtree the index has it, and the index's check fails first).
import git from "isomorphic-git";
import { readOnlyGitFs } from "./fs.js";
import type { Repository } from "./repository.js";
import { WorkspaceUnsupported } from "./unsupported.js";

export interface FileMode {
  readonly symlink: boolean;
  /** Git mode as octal text (`100644`, `100755`, `120000`). */
  readonly mode: string;
}

export interface TreeFile extends FileMode {
  readonly oid: string;
}

export interface HeadTree {
  /** HEAD's files outside the `same` directories. */
  readonly files: ReadonlyMap<string, TreeFile>;
  /** HEAD's directories, but none inside a `same` directory. */
  readonly dirs: ReadonlySet<string>;
  /** Directories (`""` the root) whose HEAD tree is the index's tree there. */
  readonly same: ReadonlySet<string>;
}

const REGULAR: FileMode = { symlink: false, mode: "100644" };
const EXECUTABLE: FileMode = { symlink: false, mode: "100755" };
const SYMLINK: FileMode = { symlink: true, mode: "120000" };

/** A file's kind and normalized mode from its raw mode bits (tree, index or lstat), as the walk's sides. */
export function fileMode(mode: number): FileMode {
  if ((mode & 0o170000) === 0o120000) return SYMLINK;
  return (mode & 0o111) !== 0 ? EXECUTABLE : REGULAR;
}

export const notUtf8Path = (): WorkspaceUnsupported =>
  new WorkspaceUnsupported("filename_encoding", "A path in the repository is not UTF-8; git observation needs UTF-8 names");

export const gitlink = (): WorkspaceUnsupported => new WorkspaceUnsupported("submodule", "Submodules (gitlink entries) are not supported");

/** The root tree oid of commit `head`, or the oid itself when it is not a commit (readTree peels it). */
async function rootTree(base: { fs: ReturnType<typeof readOnlyGitFs>; dir: string; gitdir: string; cache: object }, head: string): Promise<string> {
  try {
    return (await git.readCommit({ ...base, oid: head })).commit.tree;
  } catch {
    return head;
  }
}

/** The files and directories of the commit `head`'s tree (empty for an unborn repository). */
export async function readHeadTree(repo: Repository, head: string | undefined, indexTrees: ReadonlyMap<string, string>, signal?: AbortSignal): Promise<HeadTree> {
  const files = new Map<string, TreeFile>();
  const dirs = new Set<string>();
  const same = new Set<string>();
  if (head === undefined) return { files, dirs, same };
  const base = { fs: readOnlyGitFs(signal), dir: repo.dir, gitdir: repo.gitdir, cache: {} };
  const { fs, cache } = base;
  const read = async (oid: string, prefix: string): Promise<void> => {
    if (indexTrees.get(prefix) === oid) return void same.add(prefix);
    const { tree } = await git.readTree({ fs, dir: repo.dir, gitdir: repo.gitdir, oid, cache });
    const subtrees: Promise<void>[] = [];
    for (const entry of tree) {
      const path = prefix === "" ? entry.path : `${prefix}/${entry.path}`;
      if (path.includes("\uFFFD")) throw notUtf8Path();
      if (entry.type === "commit") throw gitlink();
      if (entry.type === "tree") {
        dirs.add(path);
        subtrees.push(read(entry.oid, path));
        continue;
      }
      const mode = fileMode(Number.parseInt(entry.mode, 8));
      files.set(path, { symlink: mode.symlink, mode: mode.mode, oid: entry.oid });
    }
    await Promise.all(subtrees);
  };
  await read(await rootTree(base, head), "");
  return { files, dirs, same };
}
