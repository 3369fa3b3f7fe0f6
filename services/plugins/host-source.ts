// The Node host's plugin source: configuration read now (global file, then the explicit or
// nearest project file), its layers' `plugins` entries as candidates resolved from the project
// directory, the Agent catalog built from the same read with the generation's layer, and the MCP
// servers configuration already names. Called at start and on every runtime reload.
import { describeConfigError, loadConfig, type Env, type LoadedConfig } from "../config/index.js";
import { loadAgentCatalog } from "../workspace/agents.js";
import type { RuntimeSource } from "./runtime.js";
import { configCandidates, inlineCandidate, pluginEntriesFromLayers } from "./source.js";

export interface ConfigRuntimeSourceOptions {
  /** Where the project config is searched from; npm packages resolve from here too. */
  readonly cwd: string;
  readonly env: Env;
  /** `--config FILE`, replacing the project layer. */
  readonly configFile?: string | undefined;
  /** Whether to build (and so check) the Agent catalog with each generation (default true). */
  readonly agents?: boolean;
  /** The embedding program's configuration object, merged last (see loadConfig's `inline`). */
  readonly inlineConfig?: unknown;
  /** Plugin objects handed over in code (the SDK's `inlinePlugins`), after the configured ones. */
  readonly inlinePlugins?: readonly unknown[];
  /** Hears every successful configuration read (e.g. to build Session catalogs from the same layers). */
  readonly onConfig?: (loaded: LoadedConfig) => void;
}

export function configRuntimeSource(options: ConfigRuntimeSourceOptions): () => RuntimeSource {
  return () => {
    const loaded = loadConfig({
      cwd: options.cwd,
      env: options.env,
      ...(options.configFile !== undefined ? { configFile: options.configFile } : {}),
      ...(options.inlineConfig !== undefined ? { inline: options.inlineConfig } : {}),
    });
    if (!loaded.ok) return { ok: false, message: describeConfigError(loaded.error) };
    const { layers, config } = loaded.value;
    options.onConfig?.(loaded.value);
    return {
      ok: true,
      candidates: [...configCandidates(pluginEntriesFromLayers(layers), options.cwd), ...(options.inlinePlugins ?? []).map((plugin) => inlineCandidate(plugin))],
      ...(options.agents === false ? {} : { agentCatalog: (plugins) => loadAgentCatalog({ configLayers: layers, env: options.env, plugins }) }),
      reservedMcp: { ids: (config.mcp ?? []).map((server) => server.id), names: (config.mcp ?? []).map((server) => server.name) },
    };
  };
}
