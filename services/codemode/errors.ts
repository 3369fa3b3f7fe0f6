// How a CodeMode execution fails: one stable code per cause, a message safe for the model.

export type CodeModeErrorCode =
  /** The script is not valid JavaScript (an async function body). */
  | "syntax_error"
  /** The script threw (or returned a rejected promise) and did not catch it. */
  | "script_error"
  /** A value crossing the boundary is not JSON data (a BigInt, a cycle, …). */
  | "invalid_value"
  /** A string crossing the boundary is longer than `MAX_STRING_LENGTH` (or than QuickJS allows). */
  | "string_too_long"
  /** An array crossing the boundary is longer than `MAX_ARRAY_LENGTH`. */
  | "array_too_long"
  /** A value crossing the boundary nests deeper than `MAX_VALUE_DEPTH`. */
  | "value_too_deep"
  /** More than `MAX_PENDING_PROMISES` tool calls were pending at once. */
  | "pending_promises"
  /** The stack was exhausted (call depth). */
  | "call_depth"
  /** The QuickJS heap reached the memory limit. */
  | "memory_limit"
  /** The deadline (`limits.timeoutMs`) passed. */
  | "timed_out"
  /** The caller's `AbortSignal` aborted. */
  | "interrupted"
  /** The engine could not start or stopped working (a bug or a crashed worker). */
  | "engine_failed";

export interface CodeModeError {
  readonly code: CodeModeErrorCode;
  readonly message: string;
}

/** The codes that mean a limit was reached (the rest are the script's own failures or the host's). */
export const LIMIT_CODES: ReadonlySet<CodeModeErrorCode> = new Set<CodeModeErrorCode>([
  "string_too_long",
  "array_too_long",
  "value_too_deep",
  "pending_promises",
  "call_depth",
  "memory_limit",
]);

export const codeModeError = (code: CodeModeErrorCode, message: string): CodeModeError => ({ code, message });
