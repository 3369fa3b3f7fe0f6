// The Node host's plugin services (`createPluginServices`): the host generation from
// configuration and the Session overlays. The operations that use them are in plugin-routes.ts;
// this module (and services/plugins behind it) loads only when a host needs plugins.
import type { RuntimePlugin } from "../../generated/client/types.gen.js";
import { stateDirectory, type Config, type ConfigLayer, type Env } from "../config/index.js";
import {
  artifactSettingsFrom,
  configRuntimeSource,
  createNodeCapabilities,
  PluginRuntime,
  SessionPluginService,
  storageJournalSink,
  type HostCapabilities,
  type PluginGeneration,
  type PluginProgress,
  type PluginRejection,
  type SessionPluginArtifactOptions,
  type StaticSessionPlugin,
} from "../plugins/index.js";
import type { StorageHandle } from "../storage/index.js";
import { loadAgentCatalog, type PluginAgentLayer } from "../workspace/agents.js";

export interface PluginHandlerServices {
  readonly runtime: PluginRuntime;
  readonly sessions: SessionPluginService;
  /** The merged configuration the current host generation was loaded from (re-read on reload). */
  config?(): Config | undefined;
}

/**
 * The static Session plugin source id every host links: a plugin without code, so a Session
 * plugin revision `{ source: { _tag: "Static", id: DECLARATIVE_SESSION_PLUGIN }, resolved: {
 * pluginId: DECLARATIVE_SESSION_PLUGIN }, mcpServers, skills }` contributes only its declared MCP
 * servers and Skills to that Session.
 */
export const DECLARATIVE_SESSION_PLUGIN = "ze-harness.declarative";
const declarativeSessionPlugin: StaticSessionPlugin = { pluginId: DECLARATIVE_SESSION_PLUGIN, version: "1", plugin: { id: DECLARATIVE_SESSION_PLUGIN, setup: () => undefined } };

export interface CreatePluginServicesOptions {
  readonly storage: StorageHandle;
  /** The server root: project config is found from it, packages resolve from it, capabilities are rooted at it. */
  readonly serverRoot: string;
  readonly env: Env;
  readonly configPath?: string | undefined;
  readonly inlineConfig?: unknown;
  readonly inlinePlugins?: readonly unknown[] | undefined;
  /** The built-in and Core tool ids (`Object.keys({ ...builtinTools, ...coreTools })`). */
  readonly reservedToolIds: readonly string[];
  readonly capabilities?: HostCapabilities;
  readonly staticPlugins?: ReadonlyMap<string, StaticSessionPlugin>;
  /** How `Package` and `Git` Session plugin sources install (the SDK's `sessionPluginArtifacts`). */
  readonly sessionPluginArtifacts?: SessionPluginArtifactOptions | undefined;
  readonly setupTimeoutMs?: number;
  /** Reference behaviour: only a `PluginError` with a `publicMessage` skips a failing host plugin. */
  readonly failClosed?: boolean;
  /** The composed native provider ids a plugin model may not name (the configured `providers`, or the defaults). */
  readonly nativeProviders?: ReadonlySet<string>;
  /** Full plugin errors, for the host's log. */
  readonly onDiagnostic?: (source: string, error: unknown) => void;
  /** Hears the inventory while the first generation activates (see `PluginRuntime.start`). */
  readonly onProgress?: PluginProgress;
  /**
   * For a host that already serves: a first generation that does not activate leaves the host
   * without plugins (`rejection` says why; the inventory lists it) instead of failing.
   */
  readonly keepServing?: boolean;
}

export type CreatePluginServicesResult =
  | { readonly ok: true; readonly services: PluginHandlerServices; readonly rejection?: PluginRejection | undefined }
  | { readonly ok: false; readonly message: string; readonly plugins: readonly RuntimePlugin[] };

/**
 * The Node host's plugin services: the host generation from configuration (re-read on reload),
 * journal writes into `storage`, and Session overlays whose Agent catalog layers the overlay over
 * the host's configuration and plugins. A first generation that does not activate is returned as
 * the reason the host should not start.
 */
export async function createPluginServices(options: CreatePluginServicesOptions): Promise<CreatePluginServicesResult> {
  const capabilities = options.capabilities ?? createNodeCapabilities({ root: options.serverRoot });
  const journal = storageJournalSink(options.storage);
  const common = {
    capabilities,
    journal,
    reservedToolIds: options.reservedToolIds,
    ...(options.nativeProviders !== undefined ? { nativeProviders: options.nativeProviders } : {}),
    ...(options.setupTimeoutMs !== undefined ? { setupTimeoutMs: options.setupTimeoutMs } : {}),
    ...(options.onDiagnostic ? { onDiagnostic: options.onDiagnostic } : {}),
  };
  // The layers of the configuration the current host generation was loaded from.
  let layers: readonly ConfigLayer[] = [];
  let config: Config | undefined;
  const runtimeOptions = {
    ...common,
    ...(options.failClosed !== undefined ? { failClosed: options.failClosed } : {}),
    source: configRuntimeSource({
      cwd: options.serverRoot,
      env: options.env,
      configFile: options.configPath,
      ...(options.inlineConfig !== undefined ? { inlineConfig: options.inlineConfig } : {}),
      ...(options.inlinePlugins !== undefined ? { inlinePlugins: options.inlinePlugins } : {}),
      onConfig: (loaded) => {
        layers = loaded.layers;
        config = loaded.config;
      } }),
  };
  let runtime: PluginRuntime;
  let rejection: PluginRejection | undefined;
  if (options.keepServing === true) {
    ({ runtime, rejection } = await PluginRuntime.startWithout(runtimeOptions, options.onProgress));
  } else {
    const started = await PluginRuntime.start(runtimeOptions, options.onProgress);
    if (!started.ok) return started;
    runtime = started.runtime;
  }
  const sessions = new SessionPluginService({
    ...common,
    storage: options.storage,
    runtime,
    projectDirectory: options.serverRoot,
    // Every host links the declarative Session plugin; an embedder's static plugins come beside it.
    staticPlugins: new Map([[DECLARATIVE_SESSION_PLUGIN, declarativeSessionPlugin], ...(options.staticPlugins ?? new Map())]),
    artifacts: artifactSettingsFrom(options.sessionPluginArtifacts, options.env, stateDirectory(options.env)),
    agentCatalog: (host: PluginGeneration, layer: PluginAgentLayer) => loadAgentCatalog({ configLayers: layers, env: options.env, plugins: host.agents, sessionPlugins: layer }),
  });
  // Artifacts of Sessions deleted since the last run are freed now.
  void sessions.pruneArtifacts().catch((error: unknown) => options.onDiagnostic?.("session-plugin-artifacts", error));
  return { ok: true, services: { runtime, sessions, config: () => config }, ...(rejection ? { rejection } : {}) };
}
