// The `ze-harness/worker-host` entry (package.json `exports`): what an embedding host Durable
// Object imports. Built by tools/worker/build-host.mjs into dist/worker-host/index.mjs (one ES
// module for workerd, `node:*` imports left to `nodejs_compat`, QuickJS's .wasm beside it) with
// typings in dist/types/worker/host-public.d.ts from the public declaration pass (sdk/tsconfig.json).
import { bundledCatalog } from "../services/providers/catalog.js";
import type { NormalizedCatalog } from "../services/providers/models-dev.js";
import { DEFAULT_PROVIDER_IDS } from "../services/providers/registry.js";

export { WorkerHarnessHost, DEFAULT_RECOVERY_INTERVAL_MS, type HostDurableObjectState, type WorkerHarnessHostOptions, type WorkerHostResources } from "./host.js";
export {
  ModelsDevSourceError,
  validateModelCatalog,
  type ProviderConfigMap,
  type RejectedProvider,
  type WorkerHostSettings,
  type WorkerModelCatalog,
  type WorkerModelCatalogStatus,
} from "./host-options.js";
export {
  WorkerServerPluginConflict,
  WorkerServerPluginRejected,
  type WorkerHostPluginOptions,
  type WorkerServerPluginEntry,
  type WorkerServerPluginStatus,
  type WorkerStaticSessionPluginEntry,
} from "./host-plugins.js";
export type { WorkerLoaderBinding } from "./plugins-loader.js";
export type { WatchServerOptions, WatchSessionOptions, WatchTurnOptions } from "./host-watch.js";
export type { AlarmParticipant } from "./host-alarm.js";
export type { RecoveryQuarantine } from "./alarm.js";
export type { ProviderKeys } from "./turns.js";
export type { ProviderCredentialAnswer, ProviderCredentialScope, ScopedProviderCredentialResolver } from "./host-credentials.js";
export type { PermissionRule, ProviderEntry as ProviderConfigEntry } from "../services/config/index.js";
export type { ServerStreamEvent, SessionStreamEvent, TurnStreamEvent } from "../generated/client/types.gen.js";
// The embedder ports (services/core/turns/content.ts, dispatch.ts; worker/host-workspace.ts).
export {
  CONTENT_UNRESOLVED,
  DurableContentResolutionError,
  type DurableContent,
  type DurableContentResolutionReason,
  type DurableContentResolutionRequest,
  type DurableContentResolver,
} from "../services/core/turns/content.js";
export { ToolDispatchError, type ToolDispatchLease, type ToolDispatchLifecycle, type ToolDispatchOutcome } from "../services/core/turns/dispatch.js";
export type { HostWorkspace, WorkspaceComputer, WorkspaceExecRequest, WorkspaceExecResult } from "./host-workspace.js";
export type { WorkspaceFileHome, WorkspaceFileHomeChild, WorkspaceFileHomeEntry } from "./files/home.js";
export type { ProviderDefinitionMap } from "./host-options.js";
export { defineProvider, makeCompatibleProviderDefinition, makeRedacted, revealRedacted } from "../plugin/index.js";
export type { ProviderDefinition, ProviderModelAcquisitionInput, ProviderStreamContext, Redacted } from "../plugin/index.js";
// The reference's names for contract shapes, as aliases of the generated types (never restated).
export type {
  Attribution as PromptAttribution,
  AppendConversationRequest as AppendConversationCommand,
  Fault as TurnFault,
  HistoryVisibility,
  PermissionReplyRequest as ReplyPermissionInput,
  PermissionRequest,
  PromptPart,
  QuestionReplyRequest as ReplyQuestionInput,
  QuestionRequest,
  SessionTurnState,
  SubmitPromptRequest as SubmitPromptCommand,
  TextTurnPart as TurnTextPart,
  ToolApproval as ToolApprovalSnapshot,
  ToolQuestion as ToolQuestionSnapshot,
  ToolTurnPart as TurnToolPart,
  Turn as TurnSnapshot,
  TurnOutcome,
  TurnPart,
  TurnPhase,
  TurnUsage,
} from "../generated/client/types.gen.js";
/** A prompt's content (the contract's prompt parts). */
export type PromptContent = readonly import("../generated/client/types.gen.js").PromptPart[];
export type { NormalizedCatalog as NormalizedModelsDevSnapshot } from "../services/providers/models-dev.js";

/** The models.dev snapshot bundled with this build (`providers` keyed by provider id). */
export function loadBundledModelsDevSnapshot(): NormalizedCatalog {
  return bundledCatalog();
}

/** The provider ids a host enables when `providers` is omitted. */
export const defaultProviderIds: readonly string[] = DEFAULT_PROVIDER_IDS;
