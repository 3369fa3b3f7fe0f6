// Path resolution for file tools: a model-supplied path becomes a canonical absolute target
// (every symlink in the existing part resolved, `..` applied after symlinks as the OS would)
// plus its permission resources, as the reference's `WorkspaceFileTarget` describes:
//
// - inside the workdir the resource is workdir-relative with forward slashes (`.` for the workdir);
// - outside it is the absolute canonical path, and `externalDirectory` asks for `<dir>/*`, where
//   `<dir>` is the target itself when it is an existing directory and its parent otherwise.
//
// The same canonical path goes into the projection's `metadata.canonicalPath`, and `execute`
// acts on it, so the operation touches exactly what was authorized.
import { constants, lstatSync, readlinkSync, realpathSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, posix } from "node:path";
import { insideRoot } from "../contract/paths.js";
import { MAX_NAME_BYTES, isPathChanged, openVerified, type Opened } from "../workspace/files/verified.js";
import { ToolFailure, throwIfAborted, type PermissionProjection, type ToolContext } from "./tool.js";

/** Most symlinks followed while resolving one path (Linux's own limit). */
const MAX_SYMLINKS = 40;

export interface FileTarget {
  readonly canonicalPath: string;
  readonly resource: string;
  readonly externalDirectory?: { readonly resource: string; readonly save: string };
}

const invalidPath = (why: string): ToolFailure => new ToolFailure("invalid_path", `Invalid path: ${why}.`);

/** Lexically joins `rest` (components with no existing filesystem meaning) onto `base`. */
function appendLexically(base: string, rest: readonly string[]): string {
  return posix.normalize(join(base, ...rest));
}

/** Canonicalizes an absolute path whose tail may not exist. */
function canonicalize(absolute: string, budget: { links: number }): string {
  const parts = absolute.split("/").filter((p) => p !== "" && p !== ".");
  let current = "/";
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (part === "..") {
      current = dirname(current);
      continue;
    }
    const next = join(current, part);
    let isLink: boolean;
    try {
      isLink = lstatSync(next).isSymbolicLink();
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // Missing (or a parent that is a file): the rest cannot hold symlinks; the file operation
      // reports `not_found`/`not_file` itself.
      if (code === "ENOENT" || code === "ENOTDIR") return appendLexically(current, parts.slice(i));
      if (code === "ENAMETOOLONG") throw invalidPath("a name in it is longer than 255 bytes, or it is longer than 4096 bytes");
      throw invalidPath("the path cannot be resolved");
    }
    if (!isLink) {
      current = next;
      continue;
    }
    if (++budget.links > MAX_SYMLINKS) throw invalidPath("too many symbolic links");
    let target: string;
    try {
      target = readlinkSync(next);
    } catch {
      throw invalidPath("the path cannot be resolved");
    }
    // Resolve the link target (which may itself dangle) and continue with the remaining parts.
    const linked = isAbsolute(target) ? target : join(current, target);
    return canonicalize([linked, ...parts.slice(i + 1)].join("/"), budget);
  }
  return current;
}

/** The canonical form of a Session workdir (it exists: it was checked at Session creation). */
export function canonicalWorkdir(workdir: string): string {
  if (!isAbsolute(workdir)) throw invalidPath("the Session workdir is not absolute");
  try {
    return realpathSync(workdir);
  } catch {
    throw invalidPath("the Session workdir cannot be resolved");
  }
}

function isExistingDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** Resolves `filePath` (workdir-relative or absolute) into a canonical target with its resources. */
export function resolveFileTarget(workdir: string, filePath: string): FileTarget {
  if (filePath.length === 0) throw invalidPath("the path is empty");
  if (filePath.includes("\0")) throw invalidPath("the path contains NUL");
  // No filesystem holds such a name: refused before anything is resolved or created.
  if (filePath.split("/").some((part) => Buffer.byteLength(part) > MAX_NAME_BYTES)) throw invalidPath(`a name in it is longer than ${MAX_NAME_BYTES} bytes`);
  const root = canonicalWorkdir(workdir);
  // No lexical normalization before canonicalizing: `link/..` must leave the link's target.
  const absolute = isAbsolute(filePath) ? filePath : `${root}/${filePath}`;
  const canonicalPath = canonicalize(absolute, { links: 0 });
  const relative = insideRoot(root, canonicalPath);
  if (relative !== undefined) return { canonicalPath, resource: relative };
  const dir = isExistingDirectory(canonicalPath) ? canonicalPath : dirname(canonicalPath);
  const pattern = dir === "/" ? "/*" : `${dir}/*`;
  return { canonicalPath, resource: canonicalPath, externalDirectory: { resource: pattern, save: pattern } };
}

/**
 * The projections of a file tool: `external_directory` first when the target is outside the
 * workdir, then `action` on the resource, saving that exact resource, with the canonical path
 * in `metadata`.
 */
export function fileProjections(action: string, target: FileTarget): PermissionProjection[] {
  const projections: PermissionProjection[] = [];
  if (target.externalDirectory) {
    projections.push({
      action: "external_directory",
      resources: [target.externalDirectory.resource],
      save: [target.externalDirectory.save],
    });
  }
  projections.push({
    action,
    resources: [target.resource],
    save: [target.resource],
    metadata: { canonicalPath: target.canonicalPath },
  });
  return projections;
}

/**
 * The canonical path `execute` acts on: the authorized projection's `metadata.canonicalPath`
 * when Core supplied the projections, otherwise a fresh resolution.
 */
export function authorizedPath(ctx: ToolContext, action: string, filePath: string): FileTarget {
  const projection = ctx.permissions?.find((p) => p.action === action);
  const metadata = projection?.metadata as { canonicalPath?: unknown } | undefined;
  if (typeof metadata?.canonicalPath === "string" && projection) {
    const resource = projection.resources[0] ?? metadata.canonicalPath;
    return { canonicalPath: metadata.canonicalPath, resource };
  }
  return resolveFileTarget(ctx.workdir, filePath);
}

/** Maps a Node filesystem error to a safe failure. */
export function fileFailure(error: unknown, resource: string): ToolFailure {
  if (error instanceof ToolFailure) return error;
  const name = JSON.stringify(resource);
  if (isPathChanged(error)) {
    return new ToolFailure("path_changed", `${name} changed while it was being accessed (a directory on the way was replaced, for example by a symbolic link); nothing was read or written there.`);
  }
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case "ENOENT":
      return new ToolFailure("not_found", `Nothing exists at ${name}.`);
    case "ENOTDIR":
      return new ToolFailure("not_file", `A parent of ${name} is not a directory.`);
    case "EISDIR":
      return new ToolFailure("not_file", `${name} is a directory.`);
    case "ELOOP":
      return new ToolFailure("invalid_path", `Invalid path: ${name} has too many symbolic links.`);
    case "ENAMETOOLONG":
      return new ToolFailure("invalid_path", `Invalid path: ${name} has a name longer than 255 bytes or is too long.`);
    case "EACCES":
    case "EPERM":
      return new ToolFailure("io", `Permission denied for ${name}.`);
    default:
      return new ToolFailure("io", `Could not access ${name}.`);
  }
}

/** A file tool's `permissions`: its action on the canonical target of `filePath` (see {@link fileProjections}). */
export function filePermissions(action: string): (input: { readonly filePath: string }, ctx: { readonly workdir: string }) => PermissionProjection[] {
  return (input, ctx) => fileProjections(action, resolveFileTarget(ctx.workdir, input.filePath));
}

/**
 * The start of `read` and `edit`: stop if the call was already interrupted, take the authorized
 * target and open it (non-blocking: a FIFO never hangs the call), checked on the descriptor:
 * what was opened must be the authorized canonical path itself, so a directory on the way that
 * became a symlink since the projection is `path_changed`, never followed. A symlink inside the
 * workdir that points outside was resolved at projection time, so its real target is what was
 * authorized (with its `external_directory` ask). The caller reads from `opened` and closes it.
 */
export async function openTarget(ctx: ToolContext, action: string, filePath: string): Promise<{ target: FileTarget; opened: Opened }> {
  throwIfAborted(ctx.signal);
  const target = authorizedPath(ctx, action, filePath);
  try {
    return { target, opened: await openVerified(target.canonicalPath, constants.O_RDONLY | constants.O_NONBLOCK) };
  } catch (error) {
    throw fileFailure(error, target.resource);
  }
}
