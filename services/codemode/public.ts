// `ze-harness/codemode`: the CodeMode package API (the reference's `@zephyrcloudio/harness-codemode`).
// `ze-harness/codemode/format` (format.ts) is the display formatter alone.
export { CodeMode, Tool, ToolSchemaError, type CodeModeOptions, type CodeModeRuntime, type StandardSchema, type ToolDefinition, type ToolSchema } from "./api.js";
export { renderResult } from "./render.js";
export { formatCodeMode, makeCodeModeFormatter, type CodeModeFormatter } from "./format.js";
export type { CodeModeOutcome } from "./run.js";
export type { CodeModeError, CodeModeErrorCode } from "./errors.js";
export type { CodeModeLimits } from "./limits.js";
