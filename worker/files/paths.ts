// Paths in the Worker's `/workspace` file store. A path is absolute, canonical (no `.`, `..` or
// empty segments, no trailing slash) and inside `/workspace`; there are no symbolic links, so the
// lexical form is the canonical one. A model's path is relative to the Session workdir or
// absolute; `..` is applied lexically and may not climb out of `/workspace`. Every refusal is a
// `WorkspaceFileError` `invalid_path` (the reference's code), decided before anything is read or
// written.
import { WorkspaceFileError } from "../../plugin/index.js";
import { WORKSPACE_ROOT } from "../workspace.js";

/** Longest name of one path segment, in UTF-8 bytes (as on Linux). */
export const MAX_NAME_BYTES = 255;
/** Longest whole path, in UTF-8 bytes (as on Linux). */
export const MAX_PATH_BYTES = 4_096;

const encoder = new TextEncoder();
export const utf8Length = (text: string): number => encoder.encode(text).length;

export const invalidPath = (): WorkspaceFileError => new WorkspaceFileError({ code: "invalid_path" });

/** The canonical absolute path of `filePath` against `cwd` (itself a path inside the root; default the root). */
export function workspacePath(filePath: string, cwd: string = WORKSPACE_ROOT): string {
  if (filePath.length === 0 || filePath.includes("\0")) throw invalidPath();
  const base = cwd === WORKSPACE_ROOT ? WORKSPACE_ROOT : workspacePath(cwd);
  const absolute = filePath.startsWith("/") ? filePath : `${base}/${filePath}`;
  const parts: string[] = [];
  for (const part of absolute.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      // Above `/` stays at `/` (as the OS resolves it); the root check below refuses it anyway.
      parts.pop();
      continue;
    }
    if (utf8Length(part) > MAX_NAME_BYTES) throw invalidPath();
    parts.push(part);
  }
  const path = `/${parts.join("/")}`;
  if (!isInside(WORKSPACE_ROOT, path) || utf8Length(path) > MAX_PATH_BYTES) throw invalidPath();
  return path;
}

/** Whether `path` is `root` or below it (both canonical). */
export const isInside = (root: string, path: string): boolean => path === root || path.startsWith(`${root}/`);

/** The directory holding `path` (the root's parent is `/`). */
export const parentOf = (path: string): string => path.slice(0, Math.max(1, path.lastIndexOf("/")));

/** The last segment of `path`. */
export const nameOf = (path: string): string => path.slice(path.lastIndexOf("/") + 1);

/** `path` relative to `root` with forward slashes (`.` for the root itself); undefined outside it. */
export function relativeTo(root: string, path: string): string | undefined {
  if (path === root) return ".";
  return path.startsWith(`${root}/`) ? path.slice(root.length + 1) : undefined;
}
