// The host's plugins, loaded only when needed: a host that runs Turns, or whose configuration
// declares plugins, activates the host generation at startup (a generation that does not
// activate stops the host with its reason); a one-shot metadata command loads the plugin room on
// the first plugin operation. Each Turn leases the current host generation (and its Session's
// overlay) for its whole run, so a reload never changes a running Turn's tools, hooks or agents.
import type { RuntimePlugin } from "../../generated/client/types.gen.js";
import type { Config, Env } from "../config/index.js";
import type { StorageHandle } from "../storage/index.js";
import { HarnessStartupError } from "./errors.js";
import type { PluginHandlerServices } from "./plugin-handlers.js";

export interface HostPlugins {
  get(): Promise<PluginHandlerServices>;
  /** The plugin services when they are loaded already, else undefined. */
  loaded(): PluginHandlerServices | undefined;
  close(): Promise<void>;
}

export interface HostPluginsOptions {
  readonly storage: StorageHandle;
  readonly serverRoot: string;
  readonly env: Env;
  readonly config: Config;
  readonly configPath?: string | undefined;
  readonly inlineConfig?: unknown;
  readonly inlinePlugins?: readonly unknown[] | undefined;
  /** The built-in and Core tool ids plugins may not reuse. */
  readonly reservedToolIds: readonly string[];
  readonly eager: boolean;
  readonly onDiagnostic?: ((source: string, error: unknown) => void) | undefined;
}

/** A first generation that did not activate: why, with each plugin's status. */
function activationFailure(message: string, plugins: readonly RuntimePlugin[]): HarnessStartupError {
  const failed = plugins.filter((plugin) => plugin.status === "failed").map((plugin) => `${plugin.pluginId ?? plugin.source}: ${plugin.error ?? "failed"}`);
  return new HarnessStartupError("PluginActivationFailed", [message, ...failed].join("; "));
}

export async function prepareHostPlugins(options: HostPluginsOptions): Promise<HostPlugins> {
  let services: PluginHandlerServices | undefined;
  let loading: Promise<PluginHandlerServices> | undefined;
  const load = async (): Promise<PluginHandlerServices> => {
    const { createPluginServices } = await import("./plugin-handlers.js");
    const created = await createPluginServices({
      storage: options.storage,
      serverRoot: options.serverRoot,
      env: options.env,
      configPath: options.configPath,
      ...(options.inlineConfig !== undefined ? { inlineConfig: options.inlineConfig } : {}),
      ...(options.inlinePlugins !== undefined ? { inlinePlugins: options.inlinePlugins } : {}),
      reservedToolIds: options.reservedToolIds,
      ...(options.onDiagnostic ? { onDiagnostic: options.onDiagnostic } : {}),
    });
    if (!created.ok) throw activationFailure(created.message, created.plugins);
    services = created.services;
    return services;
  };
  if (options.eager || (options.config.plugins?.length ?? 0) > 0 || (options.inlinePlugins?.length ?? 0) > 0) {
    loading = load();
    await loading;
  }
  return {
    get: () => (loading ??= load()),
    loaded: () => services,
    close: async () => {
      if (!services) return;
      await services.sessions.close();
      await services.runtime.close();
    },
  };
}
