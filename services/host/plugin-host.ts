// The host's plugins, loaded only when needed: a host that runs Turns, or whose configuration
// declares plugins, activates the host generation at startup; a one-shot metadata command loads
// the plugin room on the first plugin operation. Each Turn leases the current host generation
// (and its Session's overlay) for its whole run, so a reload never changes a running Turn's tools,
// hooks or agents.
//
// How startup waits depends on the host. An embedded command (`await`) waits for the generation:
// one that does not activate stops it with its reason. A server (`background`) never waits on a
// plugin: its listener answers at once while the generation activates (each plugin's load and
// setup bounded by the setup limit), the inventory lists every plugin as not ready meanwhile
// (`failed`, saying where it stands), and the operations that draw on plugins wait for the
// activation (harness.ts). A generation that does not activate leaves that server running without
// plugins, the rejection in the inventory and in its log, until a reload activates one.
import type { RuntimePlugin } from "../../generated/client/types.gen.js";
import type { Config, Env } from "../config/index.js";
import type { McpServer } from "../config/types.js";
import type { SessionPluginArtifactOptions } from "../plugins/index.js";
import type { StorageHandle } from "../storage/index.js";
import { DEFAULT_PROVIDER_IDS } from "../providers/index.js";
import { HarnessStartupError } from "./errors.js";
import type { PluginHandlerServices } from "./plugin-handlers.js";

export interface HostPlugins {
  /** The plugin services, loading them first when needed; waits for an activation in progress. */
  get(): Promise<PluginHandlerServices>;
  /** The plugin services when they are loaded already, else undefined. */
  loaded(): PluginHandlerServices | undefined;
  /** Whether the first host generation is activating now (its plugins are not in use yet). */
  activating(): boolean;
  /** Resolves once no first activation is in progress (at once when none is); never rejects. */
  settled(): Promise<void>;
  /** The runtime plugin inventory without waiting on a plugin: while the first generation activates, each plugin as not ready. */
  inventory(): Promise<RuntimePlugin[]>;
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
  readonly sessionPluginArtifacts?: SessionPluginArtifactOptions | undefined;
  /** The built-in and Core tool ids plugins may not reuse. */
  readonly reservedToolIds: readonly string[];
  readonly eager: boolean;
  /** `await` (an embedded command) or `background` (a server; see the top of this file). */
  readonly startup: "await" | "background";
  readonly setupTimeoutMs?: number | undefined;
  readonly onDiagnostic?: ((source: string, error: unknown) => void) | undefined;
  /** A background first generation that did not activate, described (the server goes on without plugins). */
  readonly onRejected?: ((message: string) => void) | undefined;
}

/** Why a generation did not activate, with each failed plugin's reason. */
function describeRejection(message: string, plugins: readonly RuntimePlugin[]): string {
  const failed = plugins.filter((plugin) => plugin.status === "failed").map((plugin) => `${plugin.pluginId ?? plugin.source}: ${plugin.error ?? "failed"}`);
  return [message, ...failed].join("; ");
}

export async function prepareHostPlugins(options: HostPluginsOptions): Promise<HostPlugins> {
  let services: PluginHandlerServices | undefined;
  let loading: Promise<PluginHandlerServices> | undefined;
  let activating = false;
  // The inventory while the first generation activates (empty until its configuration was read).
  let progress: readonly RuntimePlugin[] = [];
  const background = options.startup === "background";
  const load = async (): Promise<PluginHandlerServices> => {
    const { createPluginServices } = await import("./plugin-handlers.js");
    const created = await createPluginServices({
      storage: options.storage,
      serverRoot: options.serverRoot,
      env: options.env,
      configPath: options.configPath,
      ...(options.inlineConfig !== undefined ? { inlineConfig: options.inlineConfig } : {}),
      ...(options.inlinePlugins !== undefined ? { inlinePlugins: options.inlinePlugins } : {}),
      ...(options.sessionPluginArtifacts !== undefined ? { sessionPluginArtifacts: options.sessionPluginArtifacts } : {}),
      reservedToolIds: options.reservedToolIds,
      nativeProviders: new Set(options.config.providers !== undefined ? Object.keys(options.config.providers) : DEFAULT_PROVIDER_IDS),
      ...(options.setupTimeoutMs !== undefined ? { setupTimeoutMs: options.setupTimeoutMs } : {}),
      ...(options.onDiagnostic ? { onDiagnostic: options.onDiagnostic } : {}),
      onProgress: (plugins) => (progress = plugins),
      keepServing: background,
    });
    if (!created.ok) throw new HarnessStartupError("PluginActivationFailed", describeRejection(created.message, created.plugins));
    if (created.rejection) options.onRejected?.(`Plugins did not activate; serving without them until a reload activates them: ${describeRejection(created.rejection.message, created.rejection.plugins)}`);
    services = created.services;
    return services;
  };
  const begin = (): Promise<PluginHandlerServices> => {
    if (loading) return loading;
    activating = true;
    loading = load().finally(() => (activating = false));
    return loading;
  };
  if (options.eager || (options.config.plugins?.length ?? 0) > 0 || (options.inlinePlugins?.length ?? 0) > 0) {
    const first = begin();
    if (background) first.catch(() => undefined);
    else await first;
  }
  return {
    get: begin,
    loaded: () => services,
    activating: () => activating,
    settled: async () => {
      await loading?.catch(() => undefined);
    },
    inventory: async () => (activating ? [...progress] : (await begin()).runtime.plugins()),
    close: async () => {
      const shut = async (loaded: PluginHandlerServices) => {
        await loaded.sessions.close();
        await loaded.runtime.close();
      };
      // Shutdown never waits on a plugin still activating: its generation closes (its cleanups run) when it settles.
      if (activating) {
        void loading?.then(shut, () => undefined);
        return;
      }
      if (services) await shut(services);
    },
  };
}

/**
 * Operations that answer at once while the first plugin generation activates in the background:
 * health and status reads, and reads and controls of Sessions and Turns that no plugin shapes.
 * Every other operation waits for the activation first (it may need a plugin's Agent, Skill,
 * model or tool), which each plugin's load and setup limit bounds.
 */
export const ANSWERED_DURING_PLUGIN_ACTIVATION: ReadonlySet<string> = new Set([
  "health",
  "capabilities",
  "logs",
  "plugins",
  "getMcpCatalog",
  "getMcpCredential",
  "listSessions",
  "getSession",
  "listSessionTurns",
  "getTurn",
  "watchTurn",
  "watchSession",
  "watchServer",
  "cancelTurn",
  "listTerminals",
  "getTerminal",
]);

/**
 * `handlers` with every operation outside `immediate` waiting for `plugins.settled()` first while
 * an activation is in progress. Once none is, an operation calls its handler at once (no promise
 * and microtask hop of its own on every request; each promise also runs the async hooks), its
 * answer still a promise, a throw a rejection.
 */
export function afterActivation<T extends object>(handlers: T, plugins: Pick<HostPlugins, "activating" | "settled">, immediate: ReadonlySet<string>): T {
  const wrapped: Record<string, unknown> = {};
  for (const [operation, handler] of Object.entries(handlers)) {
    if (typeof handler !== "function" || immediate.has(operation)) {
      wrapped[operation] = handler;
      continue;
    }
    const call = (args: unknown[]): Promise<unknown> => {
      try {
        return Promise.resolve((handler as (...inner: unknown[]) => unknown)(...args));
      } catch (error) {
        return Promise.reject(error);
      }
    };
    wrapped[operation] = (...args: unknown[]): Promise<unknown> => (plugins.activating() ? plugins.settled().then(() => call(args)) : call(args));
  }
  return wrapped as T;
}

/** The MCP servers of the active host plugin generation (none when plugins are not loaded). */
export function pluginMcpServers(plugins: HostPlugins): McpServer[] {
  return plugins.loaded()?.runtime.current.mcpServers.map((server) => server.definition as unknown as McpServer) ?? [];
}
