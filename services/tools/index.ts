// The built-in tools and their shared contract.
import { editTool } from "./edit.js";
import { executeTool } from "./execute.js";
import { pauseTool } from "./pause.js";
import { questionTool } from "./question.js";
import { readTool } from "./read.js";
import { shellTool } from "./shell.js";
import { skillTool } from "./skill.js";
import { taskTool } from "./task.js";
import type { AnyToolDefinition } from "./tool.js";
import { webfetchTool } from "./webfetch.js";
import { writeTool } from "./write.js";

/** Built-in tools by id. */
export const builtinTools = {
  read: readTool,
  write: writeTool,
  edit: editTool,
  shell: shellTool,
  webfetch: webfetchTool,
  question: questionTool,
  pause: pauseTool,
} as const satisfies Readonly<Record<string, AnyToolDefinition>>;

/** Core's own tools: they work only with the capability Core puts in their context. */
export const coreTools = {
  task: taskTool,
  skill: skillTool,
} as const satisfies Readonly<Record<string, AnyToolDefinition>>;

export type BuiltinToolId = keyof typeof builtinTools;

export const BUILTIN_TOOL_IDS = Object.keys(builtinTools) as BuiltinToolId[];

export * from "./tool.js";
export { ToolRegistry, type RegisteredTool, type ToolSelection, type ToolSource } from "./registry.js";
export { validateToolInput, disallowedSchemaKeywords, ALLOWED_SCHEMA_KEYWORDS, type ToolInputValidation } from "./validate.js";
export { resolveFileTarget, fileProjections, canonicalWorkdir, type FileTarget } from "./paths.js";
export { externalDirectoriesOf, pathCandidates } from "./shell-scan.js";
export { checkUrl, isTextualContentType } from "./webfetch.js";
export { editTool, pauseTool, questionTool, readTool, shellTool, skillTool, taskTool, webfetchTool, writeTool };
export { createShellTool, type ShellToolOptions } from "./shell.js";
export type { SkillInput } from "./skill.js";
export type { TaskInput } from "./task.js";
export type { EditInput } from "./edit.js";
export { executeTool };
export { scriptTools, MAX_EXECUTE_CODE_CHARS, MAX_EXECUTE_RESULT_BYTES, type ExecuteInput } from "./execute.js";
export type { PauseInput } from "./pause.js";
export type { QuestionInput } from "./question.js";
export type { ReadInput } from "./read.js";
export type { ShellInput } from "./shell.js";
export type { WebFetchFormat, WebFetchInput } from "./webfetch.js";
export type { WriteInput } from "./write.js";
export { AttachmentResource, type AttachmentFile, type AttachmentMetadata } from "../codemode/attachments.js";
