// Resolving a WorkspacePath under the workdir without following symlinks: every directory on
// the way is opened through its parent's verified descriptor and must be a real directory (a
// symlink there is refused as a path escape, since it could lead out of the workdir), private
// state is refused, and the physical identities seen are kept so a read can check them again
// before it publishes. What is then read or listed is read through the opened descriptor.
import { Buffer } from "node:buffer";
import { promises as fsp, type BigIntStats } from "node:fs";
import { Failure, forbidden, validationFailure } from "../../contract/failure.js";
import { decodeWorkspacePath, isPrivatePath, type DecodedPath } from "./path.js";
import { childPath, closeDirectory, isPathChanged, openChildDirectory, openVerifiedDirectory, type VerifiedDirectory } from "./verified.js";

export interface Identity {
  readonly dev: bigint;
  readonly ino: bigint;
  readonly birth: bigint;
}

export const identityOf = (stat: BigIntStats): Identity => ({ dev: stat.dev, ino: stat.ino, birth: stat.birthtimeNs });
export const sameIdentity = (a: Identity, b: Identity): boolean => a.dev === b.dev && a.ino === b.ino && a.birth === b.birth;
export const identityText = (identity: Identity): string => `${identity.dev.toString(16)}-${identity.ino.toString(16)}-${identity.birth.toString(16)}`;

export async function lstatOrUndefined(path: Buffer | string): Promise<BigIntStats | undefined> {
  try {
    return await fsp.lstat(path, { bigint: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw error;
  }
}

export interface ResolvedDirectory {
  readonly path: DecodedPath | null;
  readonly absolute: Buffer;
  readonly identity: Identity;
}

export const notFoundPath = (message: string): Failure => new Failure({ _tag: "NotFoundError", message });

/** Decodes a path parameter and refuses private state (`.git`, `.ze-harness`). */
export function decodeRequestPath(value: string, field = "path"): DecodedPath {
  const decoded = decodeWorkspacePath(value, field);
  if (isPrivatePath(decoded)) throw forbidden(`${field} names private state (.git or .ze-harness), which is never listed or read`);
  return decoded;
}

/** The Session workdir's canonical path (every walk starts there and is verified against it). */
export async function canonicalWorkdir(workdir: string): Promise<Buffer> {
  try {
    const real = await fsp.realpath(workdir, { encoding: "buffer" });
    if ((await fsp.stat(real)).isDirectory()) return real;
  } catch {
    // reported below
  }
  throw new Failure({ _tag: "UnavailableError", message: "The Session workdir no longer exists", reason: "service_unavailable" });
}

export interface OpenedDirectories {
  /** The last directory, open and verified: reach its children through it (`childPath`, `openChild`). */
  readonly dir: VerifiedDirectory;
  /** Its canonical absolute path. */
  readonly absolute: Buffer;
  readonly identity: Identity;
}

/**
 * Opens the directories of `segments` below the workdir one at a time, each through its parent's
 * verified descriptor with no symlink followed (services/workspace/files/verified.ts), so the
 * result is that directory even while something swaps a directory on the way for a symlink.
 * Resolves with the last directory (the caller closes `dir`), or undefined when one is missing;
 * a symlink or non-directory on the way is a 400.
 */
export async function openDirectories(workdir: string, segments: readonly Buffer[]): Promise<OpenedDirectories | undefined> {
  const root = await canonicalWorkdir(workdir);
  let dir: VerifiedDirectory;
  try {
    dir = openVerifiedDirectory(root);
  } catch {
    throw new Failure({ _tag: "UnavailableError", message: "The Session workdir no longer exists", reason: "service_unavailable" });
  }
  try {
    for (const segment of segments) {
      let next: VerifiedDirectory;
      try {
        next = openChildDirectory(dir, segment);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === "ENOENT") {
          closeDirectory(dir);
          return undefined;
        }
        if (code !== "ENOTDIR" && !isPathChanged(error)) throw error;
        const stat = await lstatOrUndefined(childPath(dir, segment));
        if (stat?.isSymbolicLink() || isPathChanged(error)) throw validationFailure("path passes through a symlink, which is never followed (it could lead out of the workdir)");
        throw validationFailure("path passes through something that is not a directory");
      }
      closeDirectory(dir);
      dir = next;
    }
  } catch (error) {
    closeDirectory(dir);
    throw error;
  }
  return { dir, absolute: dir.path, identity: identityOf(dir.stat) };
}

/** The directory a listing or watch observes (null: the workdir itself), open: the caller closes `dir`. */
export async function openRequestedDirectory(workdir: string, value: string | undefined): Promise<OpenedDirectories & { readonly path: DecodedPath | null }> {
  const path = value === undefined ? null : decodeRequestPath(value);
  const opened = await openDirectories(workdir, path?.segments ?? []);
  if (!opened) throw notFoundPath("No directory exists at path");
  return { ...opened, path };
}

/** The directory a listing or watch observes (null: the workdir itself). */
export async function resolveDirectory(workdir: string, value: string | undefined): Promise<ResolvedDirectory> {
  const opened = await openRequestedDirectory(workdir, value);
  closeDirectory(opened.dir);
  return { path: opened.path, absolute: opened.absolute, identity: opened.identity };
}
