// Resolving a WorkspacePath under the workdir without following symlinks: every directory on
// the way is `lstat`ed and must be a real directory (a symlink there is refused as a path
// escape, since it could lead out of the workdir), private state is refused, and the
// physical identities seen are kept so a read can check them again before it publishes.
import { Buffer } from "node:buffer";
import { promises as fsp, type BigIntStats } from "node:fs";
import { Failure, forbidden, validationFailure } from "../../contract/failure.js";
import { decodeWorkspacePath, isPrivatePath, underDirectory, type DecodedPath } from "./path.js";

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

/**
 * Walks the directories of `segments` below the workdir without following symlinks. Resolves
 * with the last directory's path and identity, or undefined when one is missing.
 */
export async function walkDirectories(workdir: string, segments: readonly Buffer[]): Promise<{ absolute: Buffer; identity: Identity; chain: Identity[] } | undefined> {
  const root = await lstatOrUndefined(workdir);
  if (!root?.isDirectory()) throw new Failure({ _tag: "UnavailableError", message: "The Session workdir no longer exists", reason: "service_unavailable" });
  let absolute: Buffer = Buffer.from(workdir);
  let relative: Buffer = Buffer.alloc(0);
  const chain: Identity[] = [identityOf(root)];
  for (const segment of segments) {
    relative = relative.length === 0 ? Buffer.from(segment) : Buffer.concat([relative, Buffer.from("/"), segment]);
    absolute = underDirectory(workdir, relative);
    const stat = await lstatOrUndefined(absolute);
    if (!stat) return undefined;
    if (stat.isSymbolicLink()) throw validationFailure("path passes through a symlink, which is never followed (it could lead out of the workdir)");
    if (!stat.isDirectory()) throw validationFailure("path passes through something that is not a directory");
    chain.push(identityOf(stat));
  }
  return { absolute, identity: chain.at(-1)!, chain };
}

/** The directory a listing or watch observes (null: the workdir itself). */
export async function resolveDirectory(workdir: string, value: string | undefined): Promise<ResolvedDirectory> {
  const path = value === undefined ? null : decodeRequestPath(value);
  const walked = await walkDirectories(workdir, path?.segments ?? []);
  if (!walked) throw notFoundPath("No directory exists at path");
  return { path, absolute: walked.absolute, identity: walked.identity };
}
