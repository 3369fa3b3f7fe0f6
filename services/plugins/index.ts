// services/plugins: loading trusted plugins into immutable generations, the host runtime that
// swaps and leases them, Session plugin overlays, and the hook pipeline. See README.md. The
// author-facing contract is the zero-dependency `plugin/` module (`ze-harness/plugin`).
export { activatePlugin, DEFAULT_SETUP_TIMEOUT_MS, MAX_SETUP_MESSAGE_CHARS, type ActivationResult, type LoadedPlugin, type PluginCandidate } from "./activate.js";
export { createNodeCapabilities, createWebFetch, createWorkspaceFiles, unavailableCapabilities, type HostCapabilities } from "./capabilities.js";
export { createWorkspaceShell } from "./shell.js";
export {
  createToolRegistry,
  loadPluginGeneration,
  type LoadPluginGenerationOptions,
  type PluginGeneration,
  type PluginGenerationResult,
  type PluginMcpServer,
  type PluginModel,
  type PluginSkillSource,
  type PluginSubscriber,
} from "./generation.js";
export { HOOK_NAMES, HookFailure, HookPipeline, isHookFailure, isHookName, type HookHandlers, type HookName } from "./hooks.js";
export { PluginJournal, storageJournalSink, type JournalAppend, type JournalRecord, type JournalSink } from "./journal.js";
export { PENDING_MESSAGES, PluginRuntime, type GenerationLease, type PluginProgress, type PluginRejection, type PluginRuntimeOptions, type PluginRuntimeStart, type RuntimeSource } from "./runtime.js";
export { configRuntimeSource, type ConfigRuntimeSourceOptions } from "./host-source.js";
export { SessionPluginService, SessionPluginUnavailable, type SessionPluginServiceOptions, type SessionPluginSources, type TurnPluginLease } from "./session-plugins.js";
export { artifactSettingsFrom, type ArtifactSettings, type StaticSessionPlugin } from "./session-sources.js";
export { artifactOptionsProblem, defaultArtifactCacheDirectory, type SessionPluginArtifactOptions } from "./artifact-options.js";
export { pluginSkillEntry, renderPluginSkill } from "./skills.js";
export {
  configCandidates,
  inlineCandidate,
  isPackageName,
  LEGACY_CORE_TOOLS_PACKAGE,
  pluginEntriesFromLayers,
  PluginSourceError,
  resolvePluginSource,
  type PluginConfigLayer,
  type PluginEntry,
} from "./source.js";
export { RESERVED_TOOL_IDS, type PluginToolDefinition } from "./tool-declaration.js";
