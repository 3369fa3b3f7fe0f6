// HEAD's tree read once, recursively (isomorphic-git's readTree through the read-only
// filesystem), as a map of every file path to its mode and oid plus the set of directory paths:
// the fast status compares the index against it by path. A subtree whose oid equals the
// index's tree for that directory (index-trees.ts) is not read: it is listed in `same`, and
// holds exactly the index's entries there. Trees are read concurrently. A gitlink (submodule)
// in a tree read fails explicitly, as the general walk does when it meets one (in a `same` subtree
// the index has it, and the index's check fails first). Paths are byte strings (one character per
// byte, `latin1`), so names that are not UTF-8 keep their exact bytes.
import git from "isomorphic-git";
import { readOnlyGitFs } from "./fs.js";
import { ObjectReader } from "./objects.js";
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

interface TreeEntry {
  readonly mode: string;
  readonly path: string;
  readonly oid: string;
  readonly type: "blob" | "tree" | "commit";
}

const MODES: Record<string, TreeEntry["type"]> = { "40000": "tree", "100644": "blob", "100755": "blob", "120000": "blob", "160000": "commit" };
const IGNORABLE = /[\\/:\u200C-\u200F\u202A-\u202E\u206A-\u206F\uFEFF]/;

/**
 * A tree object's entries as isomorphic-git's GitTree reads them, or undefined for anything it
 * would refuse or read differently (an unknown mode; a name it calls unsafe or one near that).
 */
function parseTree(content: Buffer): TreeEntry[] | undefined {
  const entries: TreeEntry[] = [];
  for (let at = 0; at < content.length; ) {
    const space = content.indexOf(0x20, at);
    const nul = content.indexOf(0, at);
    if (space < 0 || nul < 0 || space > nul || nul + 21 > content.length) return undefined;
    const mode = content.toString("latin1", at, space);
    const type = MODES[mode];
    // Checked as isomorphic-git reads the name (UTF-8); kept as its bytes.
    const text = content.toString("utf8", space + 1, nul);
    const path = content.toString("latin1", space + 1, nul);
    const lower = text.toLowerCase().replace(/[. ]+$/, "");
    if (!type || IGNORABLE.test(text) || lower === "" || lower === ".git" || /^\.?git~[1-9]$/.test(lower)) return undefined;
    entries.push({ mode: mode === "40000" ? "040000" : mode, path, oid: content.toString("hex", nul + 1, nul + 21), type });
    at = nul + 21;
  }
  return entries;
}

/** Reads HEAD's commit and trees: through objects.ts where it can, isomorphic-git for the rest. */
class TreeReader {
  private readonly base: { fs: ReturnType<typeof readOnlyGitFs>; dir: string; gitdir: string; cache: object };
  readonly objects: ObjectReader;
  constructor(repo: Repository, signal?: AbortSignal) {
    this.base = { fs: readOnlyGitFs(signal), dir: repo.dir, gitdir: repo.gitdir, cache: {} };
    this.objects = new ObjectReader(repo.gitdir);
  }

  /** The commit's tree; isomorphic-git peels anything else (a tag) or says why it cannot. */
  async rootTree(head: string): Promise<string> {
    const commit = await this.objects.read(head);
    const tree = commit?.type === "commit" ? /^tree ([0-9a-f]{40})\n/.exec(commit.content.toString("latin1", 0, 46))?.[1] : undefined;
    if (tree) return tree;
    return (await git.readTree({ ...this.base, oid: head })).oid;
  }

  async entries(oid: string): Promise<readonly TreeEntry[]> {
    const object = await this.objects.read(oid);
    const parsed = object?.type === "tree" ? parseTree(object.content) : undefined;
    if (parsed) return parsed;
    // isomorphic-git decodes names as UTF-8: a name that is not cannot be kept exactly.
    return (await git.readTree({ ...this.base, oid })).tree.map((entry) => {
      if (entry.path.includes("\uFFFD")) throw notUtf8Path();
      return { ...entry, path: Buffer.from(entry.path, "utf8").toString("latin1") };
    });
  }

  close(): Promise<void> {
    return this.objects.close();
  }
}

/**
 * One path (a byte string) of the commit `head`'s tree: the file there, `tree` for a directory,
 * undefined when HEAD has nothing there (or `head` is undefined: an unborn repository).
 */
export async function headEntry(repo: Repository, head: string | undefined, path: string, signal?: AbortSignal): Promise<TreeFile | "tree" | undefined> {
  if (head === undefined) return undefined;
  const reader = new TreeReader(repo, signal);
  try {
    let oid = await reader.rootTree(head);
    const names = path.split("/");
    for (const [i, name] of names.entries()) {
      const entry = (await reader.entries(oid)).find((candidate) => candidate.path === name);
      if (!entry) return undefined;
      if (entry.type === "commit") throw gitlink();
      if (i === names.length - 1) {
        if (entry.type === "tree") return "tree";
        const mode = fileMode(Number.parseInt(entry.mode, 8));
        return { symlink: mode.symlink, mode: mode.mode, oid: entry.oid };
      }
      if (entry.type !== "tree") return undefined;
      oid = entry.oid;
    }
    return undefined;
  } finally {
    await reader.close();
  }
}

/** The files and directories of the commit `head`'s tree (empty for an unborn repository). */
export async function readHeadTree(repo: Repository, head: string | undefined, indexTrees: ReadonlyMap<string, string>, signal?: AbortSignal): Promise<HeadTree> {
  const files = new Map<string, TreeFile>();
  const dirs = new Set<string>();
  const same = new Set<string>();
  if (head === undefined) return { files, dirs, same };
  const reader = new TreeReader(repo, signal);
  const rootTree = (): Promise<string> => reader.rootTree(head);
  const entriesOf = (oid: string): Promise<readonly TreeEntry[]> => reader.entries(oid);
  const read = async (oid: string, prefix: string): Promise<void> => {
    if (indexTrees.get(prefix) === oid) return void same.add(prefix);
    const tree = await entriesOf(oid);
    const subtrees: Promise<void>[] = [];
    for (const entry of tree) {
      const path = prefix === "" ? entry.path : `${prefix}/${entry.path}`;
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
  try {
    await read(await rootTree(), "");
  } finally {
    await reader.close();
  }
  return { files, dirs, same };
}
