// The host capabilities a plugin's context carries on the Node host: `workspaceFiles` (the server
// machine's filesystem with the server user's authority) and `webFetch` (bounded text fetching);
// `workspaceShell` is in shell.ts. Only `resolvePath` applies a Session workdir; the other file
// methods resolve a relative path against the host root. Failures carry only safe codes; an
// aborted signal rejects with the signal's reason, which is not one of them.
import { lstat, readFile, readdir, stat, unlink, writeFile } from "node:fs/promises";
import { dirname, isAbsolute, resolve } from "node:path";
import { PluginError, WorkspaceFileError, type WebFetch, type WorkspaceFiles, type WorkspaceShell } from "../../plugin/index.js";
import { insideRoot } from "../contract/paths.js";
import { resolveFileTarget } from "../tools/paths.js";
import { MAX_DIRECTORY_ENTRIES, MAX_FILE_READ_BYTES } from "../tools/tool.js";
import { createWorkspaceShell } from "./shell.js";
import { createWebFetch } from "./web-fetch.js";
import { makeDirectory } from "../contract/directory.js";

/** What `context.workspaceFiles`, `workspaceShell` and `webFetch` are backed by. */
export interface HostCapabilities {
  readonly workspaceFiles: WorkspaceFiles;
  readonly workspaceShell: WorkspaceShell;
  readonly webFetch: WebFetch;
}

const fileError = (code: ConstructorParameters<typeof WorkspaceFileError>[0]["code"]) => new WorkspaceFileError({ code });

function checkSignal(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw signal.reason ?? new Error("The operation was aborted.");
}

/** A filesystem error as a safe code. */
function fsCode(error: unknown): WorkspaceFileError {
  switch ((error as NodeJS.ErrnoException | undefined)?.code) {
    case "ENOENT":
      return fileError("not_found");
    case "ENOTDIR":
    case "EISDIR":
      return fileError("not_file");
    case "ELOOP":
    case "ENAMETOOLONG":
      return fileError("invalid_path");
    default:
      return fileError("io");
  }
}

function checkPath(path: unknown): string {
  if (typeof path !== "string" || path === "" || path.includes("\0")) throw fileError("invalid_path");
  return path;
}

/** File access rooted at `root` (the server root). */
export function createWorkspaceFiles(root: string): WorkspaceFiles {
  const onHost = (path: unknown): string => {
    const checked = checkPath(path);
    return isAbsolute(checked) ? checked : resolve(root, checked);
  };
  const workdirOf = (cwd: string | undefined): string => {
    if (cwd === undefined) return root;
    if (typeof cwd !== "string" || cwd === "" || cwd.includes("\0")) throw fileError("invalid_path");
    if (isAbsolute(cwd)) return cwd;
    const absolute = resolve(root, cwd);
    if (insideRoot(root, absolute) === undefined) throw fileError("invalid_path");
    return absolute;
  };
  return {
    resolvePath: async ({ filePath, cwd }) => {
      checkPath(filePath);
      try {
        const target = resolveFileTarget(workdirOf(cwd), filePath);
        return { canonicalPath: target.canonicalPath, resource: target.resource, ...(target.externalDirectory ? { externalDirectory: { ...target.externalDirectory } } : {}) };
      } catch (error) {
        if (error instanceof WorkspaceFileError) throw error;
        throw fileError("invalid_path");
      }
    },
    readText: async ({ filePath, maxBytes, signal }) => {
      const path = onHost(filePath);
      if (maxBytes !== undefined && (!Number.isSafeInteger(maxBytes) || maxBytes < 1)) throw fileError("max_bytes_exceeded");
      checkSignal(signal);
      const info = await stat(path).catch((error: unknown) => {
        throw fsCode(error);
      });
      if (!info.isFile()) throw fileError("not_file");
      if (info.size > MAX_FILE_READ_BYTES && (maxBytes === undefined || maxBytes >= MAX_FILE_READ_BYTES)) throw fileError("too_large");
      if (maxBytes !== undefined && info.size > Math.min(maxBytes, MAX_FILE_READ_BYTES)) throw fileError("max_bytes_exceeded");
      const bytes = await readFile(path, { signal }).catch((error: unknown) => {
        checkSignal(signal);
        throw fsCode(error);
      });
      if (bytes.length > Math.min(maxBytes ?? MAX_FILE_READ_BYTES, MAX_FILE_READ_BYTES)) throw fileError(maxBytes === undefined ? "too_large" : "max_bytes_exceeded");
      let content: string;
      try {
        content = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
      } catch {
        throw fileError("invalid_utf8");
      }
      return { filePath, content, byteLength: bytes.length };
    },
    writeText: async ({ filePath, content, signal }) => {
      const path = onHost(filePath);
      if (typeof content !== "string") throw fileError("io");
      checkSignal(signal);
      const existing = await stat(path).catch(() => undefined);
      if (existing?.isDirectory()) throw fileError("not_file");
      try {
        await makeDirectory(dirname(path));
        await writeFile(path, content, { signal });
      } catch (error) {
        checkSignal(signal);
        throw (error as NodeJS.ErrnoException).code === "EEXIST" ? fileError("not_file") : fsCode(error);
      }
      return { filePath, byteLength: Buffer.byteLength(content, "utf8") };
    },
    removeFile: async ({ filePath, signal }) => {
      const path = onHost(filePath);
      checkSignal(signal);
      const info = await lstat(path).catch((error: unknown) => {
        throw fsCode(error);
      });
      if (info.isDirectory()) throw fileError("not_file");
      await unlink(path).catch((error: unknown) => {
        throw fsCode(error);
      });
      return { filePath };
    },
    readDirectory: async ({ dirPath, offset = 1, limit = MAX_DIRECTORY_ENTRIES, signal }) => {
      const path = onHost(dirPath);
      if (!Number.isSafeInteger(offset) || offset < 1 || !Number.isSafeInteger(limit) || limit < 1) throw fileError("invalid_path");
      checkSignal(signal);
      const info = await stat(path).catch((error: unknown) => {
        throw fsCode(error);
      });
      if (!info.isDirectory()) throw fileError("not_file");
      const dirents = await readdir(path, { withFileTypes: true }).catch((error: unknown) => {
        throw fsCode(error);
      });
      dirents.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      const page = dirents.slice(offset - 1, offset - 1 + Math.min(limit, MAX_DIRECTORY_ENTRIES));
      const entries = await Promise.all(
        page.map(async (entry) => {
          let kind: "file" | "directory" | "other" = entry.isFile() ? "file" : entry.isDirectory() ? "directory" : "other";
          if (entry.isSymbolicLink()) {
            const target = await stat(resolve(path, entry.name)).catch(() => undefined);
            kind = target?.isFile() ? "file" : target?.isDirectory() ? "directory" : "other";
          }
          return { name: entry.name, kind };
        }),
      );
      return { dirPath, entries, offset, totalEntries: dirents.length, truncated: offset - 1 + page.length < dirents.length };
    },
  };
}

// `createWebFetch` lives in web-fetch.ts: the Worker host uses it without this module's
// filesystem and shell imports.
export { createWebFetch } from "./web-fetch.js";

/** The Node host's capabilities, rooted at the server root. */
export function createNodeCapabilities(options: { readonly root: string; readonly fetch?: typeof fetch }): HostCapabilities {
  return { workspaceFiles: createWorkspaceFiles(options.root), workspaceShell: createWorkspaceShell(options.root), webFetch: createWebFetch(options.fetch) };
}

/** Capabilities of a host that provides none: every method throws a `PluginError`. */
export function unavailableCapabilities(): HostCapabilities {
  const missing = (what: string) => async (): Promise<never> => {
    throw new PluginError({ message: `This host provides no ${what}.` });
  };
  return {
    workspaceFiles: {
      resolvePath: missing("workspace files"),
      readText: missing("workspace files"),
      writeText: missing("workspace files"),
      removeFile: missing("workspace files"),
      readDirectory: missing("workspace files"),
    },
    workspaceShell: { execute: missing("workspace shell") },
    webFetch: { fetchText: missing("web fetch") },
  };
}
