// The Worker host's workdirs: every Session of a server works inside that server's
// `/workspace`, a store the Worker keeps (not a disk: no directory is checked for existence).
// A relative workdir resolves against `/workspace` and must stay inside it; an absolute one must
// name a path inside it; a client's own cwd (`clientWorkdir`) means nothing here and is ignored,
// so remote Sessions default to the whole workspace. There is no git repository to identify a
// project by, so every Session of a Worker server is in the `global` project.
import { validationFailure } from "../services/contract/failure.js";
import { GLOBAL_PROJECT } from "../services/contract/project.js";
import type { SessionWorkdirs } from "../services/core/sessions.js";
import { MAX_WORKDIR_LENGTH, type ResolvedWorkdir, type WorkdirRequest } from "../services/workspace/workdir.js";

export const WORKSPACE_ROOT = "/workspace";

/** The path's segments after `.` and empty ones are dropped; `..` is refused, never resolved. */
function segments(path: string, field: string): string[] {
  if (path.length === 0) throw validationFailure(`${field} must not be empty`);
  if (path.length > MAX_WORKDIR_LENGTH) throw validationFailure(`${field} must be at most ${MAX_WORKDIR_LENGTH} characters`);
  if (path.includes("\\")) throw validationFailure(`${field} must use forward slashes`);
  if (path.includes("\0")) throw validationFailure(`${field} must not contain NUL`);
  const parts = path.split("/").filter((part) => part !== "" && part !== ".");
  if (parts.includes("..")) throw validationFailure(`${field} must not contain '..' segments`);
  return parts;
}

export function resolveWorkspaceWorkdir(root: string, request: WorkdirRequest): ResolvedWorkdir {
  if (request.workdir === undefined) return { stored: ".", absolute: root };
  const parts = segments(request.workdir, "workdir");
  if (request.workdir.startsWith("/")) {
    const rootParts = segments(root, "workspace root");
    const inside = rootParts.every((part, index) => parts[index] === part);
    if (!inside) throw validationFailure(`workdir ${JSON.stringify(request.workdir)} is outside the workspace ${root}`);
    const absolute = `/${parts.join("/")}`;
    return { stored: absolute, absolute };
  }
  if (parts.length === 0) return { stored: ".", absolute: root };
  return { stored: parts.join("/"), absolute: `${root}/${parts.join("/")}` };
}

export const workspaceWorkdirs: SessionWorkdirs = {
  resolve: resolveWorkspaceWorkdir,
  projectId: () => GLOBAL_PROJECT,
};
