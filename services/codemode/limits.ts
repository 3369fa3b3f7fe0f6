// The CodeMode limits. The first group is the reference's fixed interpreter limits
// (`@zephyrcloudio/harness-codemode`, "Limits"); the rest are this engine's own bounds, where the
// reference is silent or where QuickJS in WebAssembly needs a number the reference does not give.

/** Longest string that crosses the sandbox boundary, in UTF-16 code units. */
export const MAX_STRING_LENGTH = 16_777_216;
/** Longest array that crosses the sandbox boundary. */
export const MAX_ARRAY_LENGTH = 10_000_000;
/** Most tool calls one execution may have pending at once. */
export const MAX_PENDING_PROMISES = 10_000;
/** Deepest plain-data value (objects and arrays nested; the outermost counts as 1) that crosses the boundary. */
export const MAX_VALUE_DEPTH = 32;
/** The function call depth the stack is sized for: ordinary functions nest at least this deep. */
export const MAX_CALL_DEPTH = 10_000;
/** Console arguments nested deeper than this print as `[Object]` / `[Array]`. */
export const CONSOLE_FORMAT_DEPTH = 32;
/** Input schemas nested deeper than this render as `…` in `search` signatures. */
export const SIGNATURE_SCHEMA_DEPTH = 8;

/**
 * QuickJS's stack limit, in bytes of the engine's own (WebAssembly linear-memory) stack: 2 MiB fits
 * 11,900 frames of a one-argument recursive function (10,000 is the reference's call depth) and
 * 7,700 of one with ten locals. The stack is per synchronous run, so it starts over whenever an
 * `await` resumes, as the reference's call depth does.
 */
export const STACK_SIZE_BYTES = 2 * 1024 * 1024;
/**
 * The native stack of the worker thread that runs QuickJS. WebAssembly frames live on it too; it
 * must be large enough that QuickJS's own limit ({@link STACK_SIZE_BYTES}) trips first for
 * JavaScript recursion (measured: 4 MiB is not). Built-ins that recurse in C with little
 * linear-memory stack (JSON on 100,000-deep data, the parser on 100,000 nested brackets) can still
 * exhaust it; that ends the execution with `call_depth` and replaces the worker.
 */
export const WORKER_STACK_MB = 8;
/**
 * Default memory limit of one execution: the QuickJS heap may grow to about this much (the worker's
 * WebAssembly memory is capped at it plus the module's own 16 MiB; see engine.ts).
 */
export const DEFAULT_MEMORY_LIMIT_BYTES = 128 * 1024 * 1024;
/** Largest memory limit a caller may ask for (the WebAssembly module's address space is 2 GiB). */
export const MAX_MEMORY_LIMIT_BYTES = 1024 * 1024 * 1024;
/** Console entries kept per execution; later ones are counted in one closing line. */
export const MAX_LOG_ENTRIES = 1_000;
/** Console text kept per execution (UTF-8 bytes, entries cut to fit). */
export const MAX_LOG_BYTES = 51_200;
/** Most entries one `search` returns. */
export const MAX_SEARCH_RESULTS = 20;
/** How long an aborted execution may take to stop before its worker is terminated. */
export const ABORT_GRACE_MS = 1_000;
/** Idle workers kept warm for the next execution (the rest are terminated when they finish). */
export const MAX_IDLE_WORKERS = 1;
/** A worker whose WebAssembly memory grew past this is retired after its execution, not kept idle. */
export const MAX_IDLE_WORKER_MEMORY_BYTES = 256 * 1024 * 1024;

/** What a caller may tune per execution; everything else above is fixed. */
export interface CodeModeLimits {
  /** QuickJS heap limit in bytes (default {@link DEFAULT_MEMORY_LIMIT_BYTES}). */
  readonly memoryBytes?: number;
  /** Wall-clock deadline in milliseconds. Absent: none (the reference has no default execution timeout). */
  readonly timeoutMs?: number;
}

/**
 * The host byte budget of one execution's `attachments` resource: the bytes all its reads may
 * return together (16 MiB). A read that would pass it fails with `attachment_budget_exhausted`.
 */
export const DEFAULT_ATTACHMENT_BUDGET_BYTES = 16 * 1024 * 1024;
/**
 * Longest single `attachments.read` (8 MiB): its base64 form (4/3 of it) stays within
 * {@link MAX_STRING_LENGTH}. A longer read fails with `attachment_read_too_large`.
 */
export const MAX_ATTACHMENT_READ_BYTES = 8 * 1024 * 1024;
