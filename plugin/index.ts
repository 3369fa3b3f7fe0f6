// `ze-harness/plugin`: the authoring contract for trusted Ze Harness plugins.
//
// Zero dependencies: this file is the only one with runtime code, and it imports nothing (the
// other modules hold types only, re-exported below with `export type`, so the emitted JavaScript
// has no import statement). Because nothing here has shared identity, a plugin may hold a
// different copy of this module than the host: match failures with the `is*` guards (by `_tag`),
// never with `instanceof`. A plain object `{ id, setup }` loads exactly like `definePlugin(...)`.
import type {
  PluginFailure,
  QuestionDismissedFailure,
  WebFetchErrorCode,
  WebFetchFailure,
  WorkspaceFileErrorCode,
  WorkspaceFileFailure,
  WorkspaceShellErrorCode,
  WorkspaceShellFailure,
} from "./failures.js";
import type { Plugin } from "./plugin.js";
import type { JsonObject } from "./json.js";
import type { CompatibleProviderConfig, ProviderDefinition, ProviderDefinitionInput, Redacted } from "./provider.js";

export type { JsonObject, JsonSchema, JsonValue } from "./json.js";
export type {
  PluginFailure,
  QuestionDismissedFailure,
  WebFetchErrorCode,
  WebFetchFailure,
  WorkspaceFileErrorCode,
  WorkspaceFileFailure,
  WorkspaceShellErrorCode,
  WorkspaceShellFailure,
} from "./failures.js";
export type { SessionWorkdir, WorkspaceDirectoryEntry, WorkspaceFileTarget, WorkspaceFiles, WorkspaceShell } from "./workspace.js";
export type { WebFetch, WebFetchFormat } from "./web-fetch.js";
export type { PermissionEffect, PermissionProjection, PermissionRule, PermissionRuleset, ToolApprovalDecision } from "./permission.js";
export type { QuestionAnswer, QuestionOption, QuestionPrompt, QuestionRequest } from "./question.js";
export type {
  TerminalToolOutputArtifact,
  ToolActivityUpdate,
  ToolDeclaration,
  ToolExecutionContext,
  ToolModelContext,
  ToolOutputArtifact,
  ToolOutputArtifactState,
  ToolPermissionContext,
} from "./tool.js";
export type { JournalEntry, JournalKindDeclaration } from "./journal.js";
export type {
  AssistantContentPart,
  GenerationSettings,
  ImageMimeType,
  ImageReference,
  ImageReferenceKind,
  ModelInstruction,
  ModelInstructions,
  ModelMessage,
  ModelToolCallPart,
  ModelToolChoice,
  ModelToolDescriptor,
  PromptContent,
  PromptContentPart,
  PromptImagePart,
  PromptTextPart,
  ReasoningBoundaryPart,
  ReasoningPart,
  RefusalPart,
  ToolResultContentPart,
  ToolResultPart,
  ToolResultValue,
} from "./message.js";
export type {
  ModelDeclaration,
  PluginModelCandidate,
  PluginModelEvent,
  PluginModelEventUsage,
  PluginModelMetadata,
  PluginModelRequest,
  PluginModelStreamContext,
} from "./model.js";
export type {
  HookHandler,
  HookHandlers,
  HookName,
  HookResult,
  ModelRequestBeforeInput,
  ToolExecuteAfterInput,
  ToolExecuteBeforeInput,
  ToolExecuteBeforeResult,
  TurnBeforeInput,
} from "./hook.js";
export type { AgentDeclaration, AgentMode, AgentToolSelection } from "./agent.js";
export type {
  HttpSkillSource,
  Skill,
  SkillDeclaration,
  SkillHttpHeader,
  SkillSource,
  SkillTransform,
  SkillTransformPatch,
  WorkspaceSkillSource,
} from "./skill.js";
export type { ExecutionLimit, McpClientCapabilities, McpCredentialReference, McpLimits, McpReconnectPolicy, McpServerDefinition } from "./mcp.js";
export type {
  ExecutionLimitEvidence,
  ExecutionLimitOrigin,
  ModelUsage,
  PermissionReply,
  PermissionRequest,
  ToolApprovalSource,
  TurnEvent,
  TurnFault,
  TurnOutcome,
} from "./session.js";
export type { Plugin, PluginActivation, PluginCleanup, PluginContext } from "./plugin.js";
export type {
  CompatibleProviderAuthentication,
  CompatibleProviderConfig,
  CompatibleProviderModel,
  ProviderCatalogModel,
  ProviderCredentialsDeclaration,
  ProviderDefinition,
  ProviderDefinitionInput,
  ProviderModelAcquisitionInput,
  ProviderModelCorrection,
  ProviderModelService,
  ProviderProtocol,
  ProviderStreamContext,
  Redacted,
} from "./provider.js";

// ---------------------------------------------------------------------------------------------
// limits

/** Largest file `workspaceFiles.readText` returns (50 KiB); the default and ceiling of `maxBytes`. */
export const MAX_FILE_READ_BYTES = 51200;
/** Shell output kept in memory (50 KiB): `workspaceShell.execute` returns the last 50 KiB. */
export const MAX_SHELL_OUTPUT_BYTES = 51200;
/** Largest accepted shell `timeoutMs` (2^31 - 1). */
export const MAX_SHELL_TIMEOUT_MS = 2147483647;
/** Largest page `workspaceFiles.readDirectory` returns; also the default `limit`. */
export const MAX_DIRECTORY_ENTRIES = 2000;
/** `webFetch.fetchText` timeout when `timeoutMs` is absent. */
export const DEFAULT_WEB_FETCH_TIMEOUT_MS = 30000;
/** Largest response body `webFetch.fetchText` reads (5 MiB). */
export const MAX_WEB_FETCH_RESPONSE_BYTES = 5242880;
/** Largest accepted `webFetch.fetchText` `timeoutMs` (2 minutes). */
export const MAX_WEB_FETCH_TIMEOUT_MS = 120000;
/** Longest journal kind name. */
export const MAX_JOURNAL_KIND_LENGTH = 64;
/** Longest stored journal summary (UTF-16 code units); longer ones are truncated. */
export const MAX_JOURNAL_SUMMARY_LENGTH = 256;
/** Largest journal entry `data` (UTF-8 bytes of its JSON). */
export const MAX_JOURNAL_DATA_BYTES = 4096;
/** Most journal entries one Turn may record across every plugin and kind. */
export const MAX_JOURNAL_ENTRIES_PER_TURN = 50;

// ---------------------------------------------------------------------------------------------
// error

/** `cause` when it is a primitive string, else `undefined`; never runs code the value defines. */
export const asString = (cause: unknown): string | undefined => (typeof cause === "string" ? cause : undefined);

/** Whether `cause` has an own data property `_tag` equal to `tag`; runs no accessor, never throws. */
function hasTag(cause: unknown, tag: string): boolean {
  if ((typeof cause !== "object" && typeof cause !== "function") || cause === null) return false;
  try {
    const descriptor = Object.getOwnPropertyDescriptor(cause, "_tag");
    return descriptor !== undefined && "value" in descriptor && descriptor.value === tag;
  } catch {
    return false;
  }
}

/**
 * Typed failure for plugin code to throw from setup, tools, hooks and other callbacks. From a
 * tool, `message` stays private and only `publicMessage` reaches the model; from a hook,
 * `publicMessage` words the Turn's fault; from a host `setup`, a `publicMessage` skips the plugin
 * instead of failing the activation.
 */
export class PluginError extends Error implements PluginFailure {
  readonly _tag = "PluginError" as const;
  readonly publicMessage?: string | undefined;
  constructor(input: { readonly message: string; readonly publicMessage?: string | undefined }) {
    super(input.message);
    this.name = "PluginError";
    if (input.publicMessage !== undefined) this.publicMessage = input.publicMessage;
  }
}

/** Matches a `PluginError` from any copy of this package by its own `_tag` data property. */
export const isPluginError = (cause: unknown): cause is PluginFailure => hasTag(cause, "PluginError");

// ---------------------------------------------------------------------------------------------
// workspace

/** Rejection of a `WorkspaceFiles` method; carries only a safe code. */
export class WorkspaceFileError extends Error implements WorkspaceFileFailure {
  readonly _tag = "WorkspaceFileError" as const;
  readonly code: WorkspaceFileErrorCode;
  constructor(input: { readonly code: WorkspaceFileErrorCode }) {
    super(`Workspace file failed: ${input.code}`);
    this.name = "WorkspaceFileError";
    this.code = input.code;
  }
}

export const isWorkspaceFileError = (cause: unknown): cause is WorkspaceFileFailure => hasTag(cause, "WorkspaceFileError");

/** Rejection of `WorkspaceShell.execute`; a non-zero exit or a timeout is not an error. */
export class WorkspaceShellError extends Error implements WorkspaceShellFailure {
  readonly _tag = "WorkspaceShellError" as const;
  readonly code: WorkspaceShellErrorCode;
  constructor(input: { readonly code: WorkspaceShellErrorCode }) {
    super(`Workspace shell failed: ${input.code}`);
    this.name = "WorkspaceShellError";
    this.code = input.code;
  }
}

export const isWorkspaceShellError = (cause: unknown): cause is WorkspaceShellFailure => hasTag(cause, "WorkspaceShellError");

// ---------------------------------------------------------------------------------------------
// web-fetch

/** Rejection of `WebFetch.fetchText`; carries only a safe code. */
export class WebFetchError extends Error implements WebFetchFailure {
  readonly _tag = "WebFetchError" as const;
  readonly code: WebFetchErrorCode;
  constructor(input: { readonly code: WebFetchErrorCode }) {
    super(`Web fetch failed: ${input.code}`);
    this.name = "WebFetchError";
    this.code = input.code;
  }
}

export const isWebFetchError = (cause: unknown): cause is WebFetchFailure => hasTag(cause, "WebFetchError");

// ---------------------------------------------------------------------------------------------
// question

/** Rejection of `askQuestion` when the user dismisses, nobody can answer, or the reply is malformed. */
export class QuestionDismissedError extends Error implements QuestionDismissedFailure {
  readonly _tag = "QuestionDismissedError" as const;
  readonly code = "question_dismissed" as const;
  constructor() {
    super("The user dismissed this question.");
    this.name = "QuestionDismissedError";
  }
}

export const isQuestionDismissedError = (cause: unknown): cause is QuestionDismissedFailure => hasTag(cause, "QuestionDismissedError");

// ---------------------------------------------------------------------------------------------
// plugin

/**
 * Checks and freezes a plugin definition: a frozen `{ id, setup }`, every other property dropped.
 * Throws a `PluginError` when `id` is not a non-empty primitive string or `setup` is not a
 * function; Core checks the full ID format later, at activation.
 */
export const definePlugin = (plugin: { readonly id: string; readonly setup: Plugin["setup"] }): Plugin => {
  if (typeof plugin !== "object" || plugin === null) throw new PluginError({ message: "definePlugin expects an object with id and setup." });
  const { id, setup } = plugin;
  if (typeof id !== "string" || id === "") throw new PluginError({ message: "A plugin id must be a non-empty string." });
  if (typeof setup !== "function") throw new PluginError({ message: `Plugin ${JSON.stringify(id)} must have a setup function.` });
  return Object.freeze({ id, setup });
};

// ---------------------------------------------------------------------------------------------
// provider

/** A provider definition ID: lowercase segments joined by `.`, `_` or `-`, starting with a letter. */
export const PROVIDER_DEFINITION_ID = /^[a-z][a-z0-9]*(?:[._-][a-z0-9]+)*$/;

/** Where a `Redacted` keeps its reader; shared by every copy of this package (`Symbol.for`). */
const REDACTED_VALUE = Symbol.for("ze-harness.redacted.value");

/** Wraps a credential so it prints `<redacted>` everywhere; `revealRedacted` reads it back. */
export const makeRedacted = (value: string): Redacted => {
  const redacted = {
    _tag: "Redacted" as const,
    toString: () => "<redacted>",
    toJSON: () => "<redacted>",
    [Symbol.for("nodejs.util.inspect.custom")]: () => "<redacted>",
  };
  Object.defineProperty(redacted, REDACTED_VALUE, { value: () => value, enumerable: false });
  return Object.freeze(redacted);
};

/** The credential a `Redacted` holds (from any copy of this package); throws for anything else. */
export const revealRedacted = (redacted: Redacted): string => {
  const read = (redacted as unknown as Record<symbol, unknown> | null | undefined)?.[REDACTED_VALUE];
  if (typeof read !== "function") throw new PluginError({ message: "revealRedacted expects a Redacted credential." });
  return read() as string;
};

const optionalFunction = (value: unknown, name: string, id: string): void => {
  if (value !== undefined && typeof value !== "function") throw new PluginError({ message: `Provider definition ${JSON.stringify(id)}: ${name} must be a function.` });
};

/**
 * Checks and freezes a native provider definition (see `ProviderDefinitionInput`). Throws a
 * `PluginError` for a bad `definitionId`, an empty `version` or a missing `acquireModel`; Core
 * checks the schemas when it compiles the provider.
 */
export const defineProvider = <Options = JsonObject>(input: ProviderDefinitionInput<Options> & { readonly compatible?: CompatibleProviderConfig }): ProviderDefinition<Options> => {
  if (typeof input !== "object" || input === null) throw new PluginError({ message: "defineProvider expects an object." });
  const { definitionId, version, acquireModel } = input;
  if (typeof definitionId !== "string" || !PROVIDER_DEFINITION_ID.test(definitionId) || definitionId.length > 128) {
    throw new PluginError({ message: "A provider definitionId is lowercase letters and digits in segments joined by `.`, `_` or `-`, starting with a letter." });
  }
  if (typeof version !== "string" || version === "") throw new PluginError({ message: `Provider definition ${JSON.stringify(definitionId)}: version must be a non-empty string.` });
  if (typeof acquireModel !== "function") throw new PluginError({ message: `Provider definition ${JSON.stringify(definitionId)}: acquireModel must be a function.` });
  optionalFunction(input.filterModel, "filterModel", definitionId);
  optionalFunction(input.correctModel, "correctModel", definitionId);
  return Object.freeze({
    _tag: "ProviderDefinition" as const,
    definitionId,
    version,
    optionsSchema: input.optionsSchema,
    credentials: input.credentials,
    requestOptionsSchema: input.requestOptionsSchema,
    filterModel: input.filterModel,
    correctModel: input.correctModel,
    acquireModel,
    ...(input.compatible !== undefined ? { compatible: input.compatible } : {}),
  });
};

/**
 * One native provider definition from data: a Chat Completions, Responses or Anthropic Messages
 * compatible endpoint (the fields of a config `providers.<id>.definition`). Core runs it through
 * its own adapters (the same ones a config definition uses) and validates the data like a config
 * definition when it compiles the provider; its `acquireModel` is never called.
 */
export const makeCompatibleProviderDefinition = (config: CompatibleProviderConfig): ProviderDefinition => {
  if (typeof config !== "object" || config === null) throw new PluginError({ message: "makeCompatibleProviderDefinition expects an object." });
  const { definitionId, version, ...data } = config;
  const needsKey = data.authentication?.kind !== "none";
  return defineProvider({
    definitionId,
    version: version ?? "1",
    ...(needsKey ? { credentials: { environment: data.credentials?.environment ?? [] } } : {}),
    acquireModel: () => {
      throw new PluginError({ message: `Provider definition ${JSON.stringify(definitionId)} is compatible: Ze runs it through its own adapters.` });
    },
    compatible: Object.freeze(JSON.parse(JSON.stringify({ definitionId, ...data })) as CompatibleProviderConfig),
  });
};
