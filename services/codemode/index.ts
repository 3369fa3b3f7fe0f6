// CodeMode: run model-written JavaScript against a set of tools in a QuickJS (WebAssembly) sandbox.
export { runCodeMode, type CodeModeCallEvent, type CodeModeCallOptions, type CodeModeOutcome, type CodeModeRequest, type CodeModeTool } from "./run.js";
export { shutdownCodeModeEngine } from "./engine.js";
export { LIMIT_CODES, type CodeModeError, type CodeModeErrorCode } from "./errors.js";
export { formatCodeMode, makeCodeModeFormatter, type CodeModeFormatter } from "./format.js";
export { renderResult } from "./render.js";
export { schemaType, toolPath, toolSignature, type ToolSignature } from "./signature.js";
export {
  CONSOLE_FORMAT_DEPTH,
  DEFAULT_MEMORY_LIMIT_BYTES,
  MAX_ARRAY_LENGTH,
  MAX_CALL_DEPTH,
  MAX_LOG_BYTES,
  MAX_LOG_ENTRIES,
  MAX_MEMORY_LIMIT_BYTES,
  MAX_PENDING_PROMISES,
  MAX_SEARCH_RESULTS,
  MAX_STRING_LENGTH,
  MAX_VALUE_DEPTH,
  SIGNATURE_SCHEMA_DEPTH,
  STACK_SIZE_BYTES,
  type CodeModeLimits,
} from "./limits.js";
export {
  AttachmentError,
  AttachmentResource,
  isAttachmentError,
  type AttachmentErrorCode,
  type AttachmentFile,
  type AttachmentMetadata,
  type AttachmentResourceOptions,
} from "./attachments.js";
export { DEFAULT_ATTACHMENT_BUDGET_BYTES, MAX_ATTACHMENT_READ_BYTES } from "./limits.js";
export { CodeMode, Tool, ToolSchemaError, type CodeModeOptions, type CodeModeRuntime, type StandardSchema, type ToolDefinition, type ToolSchema } from "./api.js";
