// Structural shapes of the failures this package's classes create (see index.ts for the classes
// and their `is*` guards). Match failures by `_tag`, never with `instanceof`: a plugin may hold a
// different copy of this module than the host.

/** Structural shape of a `PluginError`; what `isPluginError` narrows to. */
export interface PluginFailure {
  /** Structural tag that identifies the failure across module copies. */
  readonly _tag: "PluginError";
  /** Diagnostic for the plugin author. Tool, permission, hook and setup failures never expose it. */
  readonly message: string;
  /**
   * Safe text that may reach the model and clients. Core trims it and keeps at most 4,096
   * characters (512 for setup failures); an empty or blank value counts as absent.
   */
  readonly publicMessage?: string | undefined;
}

/** Safe failure code carried by a `WorkspaceFileError`. */
export type WorkspaceFileErrorCode = "invalid_path" | "not_found" | "not_file" | "too_large" | "max_bytes_exceeded" | "invalid_utf8" | "io";

/** Structural shape of a workspace file failure, as narrowed by `isWorkspaceFileError`. */
export interface WorkspaceFileFailure {
  readonly _tag: "WorkspaceFileError";
  /** What went wrong. Safe to show to the model or user. */
  readonly code: WorkspaceFileErrorCode;
}

/** Safe failure code carried by a `WorkspaceShellError`. */
export type WorkspaceShellErrorCode = "invalid_command" | "invalid_timeout" | "spawn_failed";

/** Structural shape of a workspace shell failure, as narrowed by `isWorkspaceShellError`. */
export interface WorkspaceShellFailure {
  readonly _tag: "WorkspaceShellError";
  readonly code: WorkspaceShellErrorCode;
}

/** Safe failure code carried by a `WebFetchError`. */
export type WebFetchErrorCode =
  | "invalid_url"
  | "invalid_timeout"
  | "request_failed"
  | "timed_out"
  | "http_status"
  | "too_large"
  | "unsupported_content_type"
  | "invalid_utf8";

/** Structural shape of a web fetch failure, as narrowed by `isWebFetchError`. */
export interface WebFetchFailure {
  readonly _tag: "WebFetchError";
  readonly code: WebFetchErrorCode;
}

/** Structural shape of a `QuestionDismissedError`, as narrowed by `isQuestionDismissedError`. */
export interface QuestionDismissedFailure {
  readonly _tag: "QuestionDismissedError";
  /** Fault code the call settles with when the failure escapes `execute`. */
  readonly code: "question_dismissed";
}
