// The host's MCP servers, loaded only when needed: a configuration that declares servers loads
// the MCP client room at startup (a bad entry stops the host, naming the file) and, in a host
// that runs Turns, starts connecting them at once; one that declares none loads it on the first
// MCP operation, so one-shot commands never pay for the SDK. The host plugin generation's servers
// join at startup, or — when it activates in the background — once it settled.
import type { Config, ConfigLayer, Env } from "../config/index.js";
import type { McpServer } from "../config/types.js";
import { fileSettingKey, globalConfigFile } from "../config/index.js";
import type { McpHost } from "../mcp/index.js";
import type { CommandSandbox } from "../sandbox/index.js";
import { HarnessStartupError } from "./errors.js";
import { release } from "./version.js";

export interface HostMcp {
  /** The McpHost (loaded on first use). */
  get(): Promise<McpHost>;
  /** The McpHost when it is loaded already (Turns offer its tools), else undefined. */
  loaded(): McpHost | undefined;
  close(): Promise<void>;
}

export interface HostMcpOptions {
  readonly config: Config;
  readonly layers: readonly ConfigLayer[];
  readonly env: Env;
  readonly cwd: string;
  /** The OS sandbox local servers run in (services/sandbox). */
  readonly sandbox?: CommandSandbox | undefined;
  readonly runTurns: boolean;
  /**
   * Servers the host plugin generation registered (`context.mcp.register`), after the configured
   * ones: a list when the generation is active already, or the promise of one while it activates
   * in the background (they join, and start connecting, once it settles).
   */
  readonly pluginServers?: readonly McpServer[] | Promise<readonly McpServer[]> | undefined;
  readonly onWarning?: ((message: string) => void) | undefined;
}

export async function prepareHostMcp(options: HostMcpOptions): Promise<HostMcp> {
  let host: McpHost | undefined;
  let loading: Promise<McpHost> | undefined;
  const ready = Array.isArray(options.pluginServers) ? (options.pluginServers as readonly McpServer[]) : [];
  const load = async (): Promise<McpHost> => {
    const { McpConfigError, McpHost: Host } = await import("../mcp/index.js");
    try {
      const servers = [...(options.config.mcp ?? []), ...ready];
      host = Host.fromConfig({ ...options.config, mcp: servers }, { env: options.env, cwd: options.cwd, sandbox: options.sandbox, clientInfo: { name: "ze-harness", version: release() }, ...(options.onWarning ? { onWarning: options.onWarning } : {}) });
    } catch (error) {
      if (error instanceof McpConfigError) {
        const file = fileSettingKey(options.layers, "mcp") ?? globalConfigFile(options.env);
        throw new HarnessStartupError(error._tag, `${file}: ${error.message}`);
      }
      throw error;
    }
    return host;
  };
  if ((options.config.mcp?.length ?? 0) + ready.length > 0) {
    loading = load();
    const started = await loading;
    if (options.runTurns) void started.start();
  }
  let closed = false;
  // Set from the moment a background plugin generation settled until its servers were added: a
  // read then waits for that short step (never for the activation itself).
  let joining: Promise<void> | undefined;
  const warn = (error: unknown) => options.onWarning?.(`The plugins' MCP servers were not added: ${error instanceof Error ? error.message : String(error)}`);
  if (options.pluginServers instanceof Promise) {
    // A background plugin activation: its servers join when it settles (the plugin checked them against the configured ones).
    void options.pluginServers.then((servers) => {
      if (servers.length === 0 || closed) return;
      joining = (async () => {
        const joined = await (loading ??= load());
        joined.add(servers);
        if (options.runTurns) void joined.start();
      })()
        .catch(warn)
        .finally(() => (joining = undefined));
    }, warn);
  }
  return {
    get: async () => {
      await joining;
      return (loading ??= load());
    },
    loaded: () => host,
    close: async () => {
      closed = true;
      await host?.close();
    },
  };
}
