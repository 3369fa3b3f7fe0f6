// Session working directories. A workdir is chosen once at creation and never
// changes: relative values resolve inside the server root and must stay there,
// absolute values name a directory on this machine (stored canonical), and a `clientWorkdir` hint
// (the client's absolute cwd) is accepted only inside the server root, where it
// is stored relative. The directory must exist when the Session is created.
import { statSync, realpathSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { validationFailure } from "../contract/failure.js";
import { insideRoot } from "../contract/paths.js";

export const MAX_WORKDIR_LENGTH = 1024;

export interface WorkdirRequest {
  readonly workdir?: string | undefined;
  readonly clientWorkdir?: string | undefined;
}

export interface ResolvedWorkdir {
  /** What the Session stores and reports: `.`-relative inside the root, or absolute. */
  readonly stored: string;
  /** Canonical absolute directory. */
  readonly absolute: string;
}

function checkShape(value: string, field: string): void {
  if (value.length === 0) throw validationFailure(`${field} must not be empty`);
  if (value.length > MAX_WORKDIR_LENGTH) throw validationFailure(`${field} must be at most ${MAX_WORKDIR_LENGTH} characters`);
  if (value.includes("\\")) throw validationFailure(`${field} must use forward slashes`);
  if (value.includes("\0")) throw validationFailure(`${field} must not contain NUL`);
  if (value.split("/").includes("..")) throw validationFailure(`${field} must not contain '..' segments`);
}

function existingDirectory(path: string, field: string): string {
  let canonical: string;
  try {
    canonical = realpathSync(path);
  } catch {
    throw validationFailure(`${field} ${JSON.stringify(path)} does not exist`);
  }
  if (!statSync(canonical).isDirectory()) throw validationFailure(`${field} ${JSON.stringify(path)} is not a directory`);
  return canonical;
}

export function resolveWorkdir(serverRoot: string, request: WorkdirRequest): ResolvedWorkdir {
  const root = existingDirectory(serverRoot, "server root");
  if (request.workdir !== undefined) {
    checkShape(request.workdir, "workdir");
    if (isAbsolute(request.workdir)) {
      const absolute = existingDirectory(request.workdir, "workdir");
      return { stored: absolute, absolute };
    }
    const absolute = existingDirectory(resolve(root, request.workdir), "workdir");
    const rel = insideRoot(root, absolute);
    if (rel === undefined) throw validationFailure(`workdir ${JSON.stringify(request.workdir)} leaves the server root`);
    return { stored: rel, absolute };
  }
  if (request.clientWorkdir !== undefined) {
    checkShape(request.clientWorkdir, "clientWorkdir");
    if (!isAbsolute(request.clientWorkdir)) throw validationFailure("clientWorkdir must be an absolute path");
    const absolute = existingDirectory(request.clientWorkdir, "clientWorkdir");
    const rel = insideRoot(root, absolute);
    if (rel === undefined) throw validationFailure(`clientWorkdir ${JSON.stringify(request.clientWorkdir)} is outside the server root`);
    return { stored: rel, absolute };
  }
  return { stored: ".", absolute: root };
}
