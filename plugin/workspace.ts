// `workspace`: host filesystem and shell capabilities (`context.workspaceFiles`,
// `context.workspaceShell`). Methods reject with `WorkspaceFileError` / `WorkspaceShellError`
// (index.ts), which carry only safe codes.
import type { TerminalToolOutputArtifact, ToolActivityUpdate } from "./tool.js";

export type { WorkspaceFileErrorCode, WorkspaceFileFailure, WorkspaceShellErrorCode, WorkspaceShellFailure } from "./failures.js";

/**
 * A Session working directory, as received in a tool context's `workdir`: non-empty, at most
 * 1024 characters, forward slashes, no `..` segments. `.` is the host root.
 */
export type SessionWorkdir = string;

/** One entry of a `readDirectory` listing. */
export interface WorkspaceDirectoryEntry {
  /** Entry name within the directory, not a path. */
  readonly name: string;
  /** A symlink reports its target's kind, or `other` when the target cannot be read. */
  readonly kind: "file" | "directory" | "other";
}

/** A path resolved against a Session working directory for authorization. */
export interface WorkspaceFileTarget {
  /** Absolute path with every existing symlink resolved. Pass it to the file operation. */
  readonly canonicalPath: string;
  /** Permission resource: workdir-relative inside it (`.` for itself), else the canonical path. */
  readonly resource: string;
  /** Present only outside the working directory: project it as `external_directory`. */
  readonly externalDirectory?: { readonly resource: string; readonly save: string } | undefined;
}

/**
 * Host filesystem access. Only `resolvePath` applies a working directory; the other methods
 * resolve a relative path against the host root. The host checks no permissions itself.
 */
export interface WorkspaceFiles {
  readonly resolvePath: (input: { readonly filePath: string; readonly cwd?: SessionWorkdir | undefined }) => Promise<WorkspaceFileTarget>;
  /** Reads a whole file as UTF-8 text, at most `maxBytes` (≤ `MAX_FILE_READ_BYTES`). */
  readonly readText: (input: { readonly filePath: string; readonly maxBytes?: number | undefined; readonly signal: AbortSignal }) => Promise<{
    readonly filePath: string;
    readonly content: string;
    readonly byteLength: number;
  }>;
  /** Creates or replaces a file with UTF-8 text, creating missing parent directories. */
  readonly writeText: (input: { readonly filePath: string; readonly content: string; readonly signal: AbortSignal }) => Promise<{
    readonly filePath: string;
    readonly byteLength: number;
  }>;
  /** Removes one file (a symlink as a link). */
  readonly removeFile: (input: { readonly filePath: string; readonly signal: AbortSignal }) => Promise<{ readonly filePath: string }>;
  /** Lists one page of a directory's entries, sorted by name (1-based `offset`). */
  readonly readDirectory: (input: {
    readonly dirPath: string;
    readonly offset?: number | undefined;
    readonly limit?: number | undefined;
    readonly signal: AbortSignal;
  }) => Promise<{
    readonly dirPath: string;
    readonly entries: readonly WorkspaceDirectoryEntry[];
    readonly offset: number;
    readonly totalEntries: number;
    readonly truncated: boolean;
  }>;
}

/** Host command execution through the system shell, with an allowlisted environment. */
export interface WorkspaceShell {
  /** Runs one command to completion; a non-zero exit or a timeout still resolves. */
  readonly execute: (input: {
    readonly command: string;
    readonly cwd?: SessionWorkdir | undefined;
    readonly timeoutMs?: number | undefined;
    readonly signal: AbortSignal;
    readonly onOutput?: ((activity: ToolActivityUpdate) => void | Promise<void>) | undefined;
  }) => Promise<{
    /** stdout and stderr interleaved, the last `MAX_SHELL_OUTPUT_BYTES`. */
    readonly output: string;
    readonly exitCode: number | null;
    readonly signal: string | null;
    readonly timedOut: boolean;
    readonly truncated: boolean;
    readonly artifact?: TerminalToolOutputArtifact | undefined;
  }>;
}
