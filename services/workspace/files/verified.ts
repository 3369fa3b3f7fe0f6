// Descriptor-verified access to workdir paths (issue 17 §4): a check on a path and a later open
// of the same path are two lookups, and something writing the workdir meanwhile (a terminal, a
// build, a concurrent tool call) can swap a directory on the way for a symlink to anywhere. So
// every access is checked on what was actually opened:
//
// - `openVerified(path, flags, expected)` opens a path and then asks the kernel where the
//   descriptor really is: on Linux `readlink("/proc/self/fd/<fd>")` is the real path of the open
//   file (no symlinks; " (deleted)" appended once it is unlinked, which is refused). It must be
//   exactly `expected` (a canonical absolute path the caller authorized), else `PathChanged`.
//   Reads then use that descriptor.
// - A verified directory's children are reached through its descriptor: `childPath(dir, name)`
//   is `/proc/self/fd/<fd>/<name>`, which the kernel resolves to that very directory before
//   looking `name` up in it — Node has no openat, and this is its equivalent. `openChild` adds
//   O_NOFOLLOW, so what it opens is that directory's child itself, never a link's target.
//   Listings read `/proc/self/fd/<fd>`, so they list exactly the checked directory.
// - `writeInDirectory` replaces a child atomically: a temporary file created through the
//   directory's descriptor with O_CREAT|O_EXCL|O_NOFOLLOW, then a rename from and to names in
//   that same directory; the temporary file is removed on every failure.
// - `openDirectoryChain` walks (and with `create`, makes) directories one component at a time
//   through these descriptors, from a root opened and verified by path.
//
// Each claim above was checked on Linux 6.x (rename between two `/proc/self/fd/<fd>/` names,
// O_EXCL on a dangling name, " (deleted)" for an unlinked directory, inotify through the magic
// link). Where `/proc/self/fd` does not tell real paths (not Linux), the fallback verifies by
// identity: the descriptor's device and inode must be those of `lstat(expected)` after the open,
// and `realpath(expected)` must be `expected`; children are then reached by path and verified
// the same way. That narrows the window to the checks themselves but cannot close it.
import { Buffer } from "node:buffer";
import { randomBytes } from "node:crypto";
import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, promises as fsp, readlinkSync, realpathSync, type BigIntStats } from "node:fs";

/** Something on the way changed between the check and the access (for example a directory became a symlink). */
export class PathChanged extends Error {
  readonly code = "EPATHCHANGED" as const;
  constructor() {
    super("The path changed while it was being accessed");
    this.name = "PathChanged";
  }
}

/** Matches a {@link PathChanged} by its code, across module copies. */
export const isPathChanged = (error: unknown): error is PathChanged => typeof error === "object" && error !== null && (error as { code?: unknown }).code === "EPATHCHANGED";

const PROC_FD = "/proc/self/fd";
let descriptorPaths: boolean | undefined;

/** Whether this host tells an open descriptor's real path through /proc/self/fd (Linux). */
export function descriptorPathsAvailable(): boolean {
  if (descriptorPaths === undefined) {
    try {
      const fd = openSync("/", constants.O_RDONLY | constants.O_DIRECTORY);
      try {
        descriptorPaths = readlinkSync(`${PROC_FD}/${fd}`) === "/";
      } finally {
        closeSync(fd);
      }
    } catch {
      descriptorPaths = false;
    }
  }
  return descriptorPaths;
}

/** Tests only: run the portable fallback (false), or detect again (undefined). */
export function forceDescriptorPathsForTests(value: boolean | undefined): void {
  descriptorPaths = value;
}

type PathLike = string | Buffer;
const bytesOf = (path: PathLike): Buffer => (typeof path === "string" ? Buffer.from(path) : path);

/** An open file (or directory) read through its handle. */
export interface Opened {
  readonly handle: fsp.FileHandle;
  readonly stat: BigIntStats;
  /** Its real absolute path, as verified. */
  readonly path: Buffer;
}

/**
 * An open, verified directory, held as a plain descriptor: opening, checking and closing a
 * directory are metadata calls of a few microseconds, made synchronously (a thread-pool round
 * trip each would cost ten times as much); contents are still read asynchronously.
 */
export interface VerifiedDirectory {
  readonly fd: number;
  readonly stat: BigIntStats;
  /** Its real absolute path, as verified. */
  readonly path: Buffer;
}

const fdOf = (opened: Opened | VerifiedDirectory): number => ("fd" in opened ? opened.fd : opened.handle.fd);
const sameFile = (a: BigIntStats, b: BigIntStats): boolean => a.dev === b.dev && a.ino === b.ino;

/** Whether the open descriptor `fd` (whose fstat is `stat`) is the file at `expected` now. */
function isAt(fd: number, stat: BigIntStats, expected: Buffer): boolean {
  // Unlinked since it was opened (its /proc path then ends in " (deleted)").
  if (stat.nlink === 0n) return false;
  try {
    // The descriptor's magic link: the kernel's own name for what is open (in memory, never blocks).
    if (descriptorPathsAvailable()) return readlinkSync(`${PROC_FD}/${fd}`, { encoding: "buffer" }).equals(expected);
    return sameFile(lstatSync(expected, { bigint: true }), stat) && realpathSync.native(expected, { encoding: "buffer" }).equals(expected);
  } catch {
    return false;
  }
}

async function closeQuietly(handle: fsp.FileHandle): Promise<void> {
  await handle.close().catch(() => undefined);
}

const changedOnLoop = (error: unknown): never => {
  if ((error as NodeJS.ErrnoException).code === "ELOOP") throw new PathChanged();
  throw error;
};

/**
 * Opens `path` (O_NOFOLLOW added: `expected` is canonical, so a symlink there means the path
 * changed) and checks the descriptor is at `expected` (default: `path`). Filesystem errors
 * (ENOENT, ENOTDIR, EACCES, …) reject as they are; a descriptor somewhere else rejects with
 * {@link PathChanged}.
 */
export async function openVerified(path: PathLike, flags: number, expected: PathLike = path): Promise<Opened> {
  const handle = await fsp.open(path, flags | constants.O_NOFOLLOW).catch(changedOnLoop);
  try {
    const stat = await handle.stat({ bigint: true });
    const at = bytesOf(expected);
    if (!isAt(handle.fd, stat, at)) throw new PathChanged();
    return { handle, stat, path: at };
  } catch (error) {
    await closeQuietly(handle);
    throw error;
  }
}

export const DIRECTORY_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY;

/**
 * Opens the directory at `path` and checks it is at `expected` (default: `path`), as
 * {@link openVerified}. A symlink there is followed and then refused by the check (with
 * O_NOFOLLOW it would be ENOTDIR, indistinguishable from a file in the way).
 */
export function openVerifiedDirectory(path: PathLike, expected: PathLike = path): VerifiedDirectory {
  const fd = openSync(path, DIRECTORY_FLAGS);
  try {
    const stat = fstatSync(fd, { bigint: true });
    const at = bytesOf(expected);
    if (!isAt(fd, stat, at)) throw new PathChanged();
    return { fd, stat, path: at };
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/** Closes a verified directory. */
export function closeDirectory(dir: VerifiedDirectory): void {
  try {
    closeSync(dir.fd);
  } catch {
    // already closed
  }
}

function checkName(name: PathLike): Buffer {
  const bytes = bytesOf(name);
  const text = bytes.toString("latin1");
  if (bytes.length === 0 || text === "." || text === ".." || bytes.includes(0x2f) || bytes.includes(0)) throw new PathChanged();
  return bytes;
}

const realChild = (dir: VerifiedDirectory, name: Buffer): Buffer => Buffer.concat([dir.path, Buffer.from(dir.path.length > 1 ? "/" : ""), name]);

/** The path of `name` in `dir`: through its descriptor on Linux, by its verified path elsewhere. */
export function childPath(dir: VerifiedDirectory, name: PathLike): Buffer {
  const bytes = checkName(name);
  if (descriptorPathsAvailable()) return Buffer.concat([Buffer.from(`${PROC_FD}/${dir.fd}/`), bytes]);
  return realChild(dir, bytes);
}

/** The path that lists an open directory itself (its descriptor's magic link on Linux). */
export function directoryPath(dir: VerifiedDirectory | Opened): Buffer {
  return descriptorPathsAvailable() ? Buffer.from(`${PROC_FD}/${fdOf(dir)}`) : dir.path;
}

/**
 * Opens `name` in `dir` without following a symlink there. On Linux the open goes through the
 * directory's descriptor and so is its child by construction; elsewhere it is verified.
 */
export async function openChild(dir: VerifiedDirectory, name: PathLike, flags: number): Promise<Opened> {
  const bytes = checkName(name);
  const real = realChild(dir, bytes);
  if (!descriptorPathsAvailable()) return openVerified(real, flags);
  const handle = await fsp.open(childPath(dir, bytes), flags | constants.O_NOFOLLOW).catch(changedOnLoop);
  try {
    return { handle, stat: await handle.stat({ bigint: true }), path: real };
  } catch (error) {
    await closeQuietly(handle);
    throw error;
  }
}

/** Opens the subdirectory `name` of `dir`: a symlink there throws {@link PathChanged}, a file ENOTDIR. */
export function openChildDirectory(dir: VerifiedDirectory, name: PathLike): VerifiedDirectory {
  const bytes = checkName(name);
  const real = realChild(dir, bytes);
  if (!descriptorPathsAvailable()) return openVerifiedDirectory(real);
  let fd: number;
  try {
    fd = openSync(childPath(dir, bytes), DIRECTORY_FLAGS | constants.O_NOFOLLOW);
  } catch (error) {
    // O_NOFOLLOW with O_DIRECTORY answers ENOTDIR for a symlink too: tell them apart.
    if ((error as NodeJS.ErrnoException).code === "ENOTDIR" && lstatSync(childPath(dir, bytes), { throwIfNoEntry: false })?.isSymbolicLink()) throw new PathChanged();
    throw error;
  }
  try {
    return { fd, stat: fstatSync(fd, { bigint: true }), path: real };
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

export interface ChainOptions {
  /** Make missing directories (mkdir one component at a time, each through its verified parent). */
  readonly create?: boolean;
}

function makeChild(dir: VerifiedDirectory, name: PathLike): VerifiedDirectory {
  try {
    mkdirSync(childPath(dir, name));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  return openChildDirectory(dir, name);
}

/**
 * Opens the directory `segments` below the canonical directory `root`: `root` by path, verified,
 * then each segment through its parent's descriptor (no symlink followed). Throws the failing
 * component's error (ENOENT, ENOTDIR for a file or symlink) or {@link PathChanged}. The caller
 * closes the result ({@link closeDirectory}).
 */
export function openDirectoryChain(root: PathLike, segments: readonly PathLike[], options: ChainOptions = {}): VerifiedDirectory {
  let dir = openVerifiedDirectory(root);
  try {
    for (const segment of segments) {
      let next: VerifiedDirectory;
      try {
        next = openChildDirectory(dir, segment);
      } catch (error) {
        if (!options.create || (error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
        next = makeChild(dir, segment);
      }
      closeDirectory(dir);
      dir = next;
    }
    return dir;
  } catch (error) {
    closeDirectory(dir);
    throw error;
  }
}

/**
 * Opens the directory at the canonical absolute `path`: by path and verified when it exists;
 * with `create`, missing directories are made from the nearest existing ancestor down, each
 * through its verified parent.
 */
export function openDirectory(path: string, options: ChainOptions = {}): VerifiedDirectory {
  try {
    return openVerifiedDirectory(path);
  } catch (error) {
    if (!options.create || (error as NodeJS.ErrnoException).code !== "ENOENT" || path === "/") throw error;
  }
  const cut = path.lastIndexOf("/");
  const parent = openDirectory(cut <= 0 ? "/" : path.slice(0, cut), options);
  try {
    return makeChild(parent, path.slice(cut + 1));
  } finally {
    closeDirectory(parent);
  }
}

/**
 * The real absolute path of an open file, told by its descriptor (Linux) — elsewhere
 * `realpath(path)` when that is still the same file —, or undefined when it cannot be told
 * (unlinked, or replaced meanwhile). For a caller that follows symlinks on purpose and then
 * decides on where the file really is.
 */
export async function realPathOf(handle: fsp.FileHandle, path: string): Promise<string | undefined> {
  try {
    const stat = await handle.stat({ bigint: true });
    if (stat.nlink === 0n) return undefined;
    if (descriptorPathsAvailable()) return readlinkSync(`${PROC_FD}/${handle.fd}`);
    const real = await fsp.realpath(path);
    return sameFile(await fsp.lstat(real, { bigint: true }), stat) ? real : undefined;
  } catch {
    return undefined;
  }
}

/** Closes an opened file, ignoring errors. */
export const closeVerified = (opened: Opened): Promise<void> => closeQuietly(opened.handle);

/** Longest name a Linux filesystem takes, in bytes. */
export const MAX_NAME_BYTES = 255;

/** A fresh temporary name beside `name` (kept within MAX_NAME_BYTES). */
function temporaryName(name: Buffer, tag: string): Buffer {
  const suffix = `.${randomBytes(6).toString("hex")}.${tag}`;
  const room = MAX_NAME_BYTES - 1 - suffix.length;
  let stem = name.length <= room ? name : name.subarray(0, room);
  // Never end inside a UTF-8 sequence.
  if (stem.length < name.length) while (stem.length > 0 && (name[stem.length]! & 0xc0) === 0x80) stem = stem.subarray(0, stem.length - 1);
  return Buffer.concat([Buffer.from("."), stem, Buffer.from(suffix)]);
}

export type ChildContent =
  | { readonly kind: "file"; readonly bytes: Uint8Array | string; readonly mode?: number }
  | { readonly kind: "symlink"; readonly target: Buffer };

/**
 * Replaces (or creates) `name` in the verified directory `dir` atomically: the content goes to a
 * temporary child made with O_CREAT|O_EXCL|O_NOFOLLOW (or a symlink), which then takes the name
 * in one rename inside `dir`. A file gets `mode` when given (else 0666 less the umask). The
 * temporary child is removed on any failure.
 */
export async function writeInDirectory(dir: VerifiedDirectory, name: PathLike, content: ChildContent, tag = "ze-tmp"): Promise<void> {
  const target = childPath(dir, name);
  const temporary = childPath(dir, temporaryName(checkName(name), tag));
  let created = false;
  try {
    if (content.kind === "symlink") {
      await fsp.symlink(content.target, temporary);
      created = true;
    } else {
      const handle = await fsp.open(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, content.mode === undefined ? 0o666 : 0o600);
      created = true;
      try {
        await handle.writeFile(content.bytes);
        if (content.mode !== undefined) await handle.chmod(content.mode);
      } finally {
        await closeQuietly(handle);
      }
    }
    await fsp.rename(temporary, target);
  } catch (error) {
    if (created) await fsp.unlink(temporary).catch(() => undefined);
    throw error;
  }
}
