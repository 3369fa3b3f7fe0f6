// Replacing a file's whole content atomically, in the directory that was checked: the parent
// directory is opened and verified on its descriptor (services/workspace/files/verified.ts;
// missing parents are made one component at a time, each through its verified parent), the new
// content goes to a temporary file created through that descriptor (O_CREAT|O_EXCL|O_NOFOLLOW),
// which then takes the file's name in one rename inside the same directory. A reader (a `cat`
// in the same model step, an editor, the workspace scan) sees the old content or the new one,
// never a truncated file, and a directory swapped for a symlink on the way is refused
// (`PathChanged`) instead of written through. An existing file keeps its permission bits; a hard
// link to it keeps the old content (as with every editor that saves this way).
//
// `path` is canonical (the authorized target, every symlink already resolved), so a symlink at
// its last component means the path changed since it was authorized: refused, not followed.
import { promises as fsp } from "node:fs";
import { PathChanged, childPath, closeDirectory, openDirectory, writeInDirectory } from "../workspace/files/verified.js";

export interface AtomicWriteOptions {
  /** Make missing parent directories (`write`); `edit` needs the file to exist already. */
  readonly makeParents?: boolean;
  /** Called once the directory is open, before anything is created in it (may throw to stop). */
  readonly checkpoint?: () => void;
}

/** Writes `content` at the canonical absolute `path`; resolves with whether a file was replaced. */
export async function writeFileAtomic(path: string, content: string, options: AtomicWriteOptions = {}): Promise<{ replaced: boolean }> {
  const cut = path.lastIndexOf("/");
  const name = path.slice(cut + 1);
  if (cut < 0 || name === "") throw Object.assign(new Error("not a file path"), { code: "EISDIR" });
  const dir = openDirectory(cut === 0 ? "/" : path.slice(0, cut), { create: options.makeParents === true });
  try {
    options.checkpoint?.();
    const existing = await fsp.lstat(childPath(dir, name)).catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return undefined;
      throw error;
    });
    if (existing?.isSymbolicLink()) throw new PathChanged();
    if (existing?.isDirectory()) throw Object.assign(new Error("is a directory"), { code: "EISDIR" });
    await writeInDirectory(dir, name, { kind: "file", bytes: content, ...(existing?.isFile() ? { mode: existing.mode & 0o7777 } : {}) });
    return { replaced: existing !== undefined };
  } finally {
    closeDirectory(dir);
  }
}
