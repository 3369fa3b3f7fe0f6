// The host's MCP servers, loaded only when needed: a configuration that declares servers loads
// the MCP client room at startup (a bad entry stops the host, naming the file) and, in a host
// that runs Turns, starts connecting them at once; one that declares none loads it on the first
// MCP operation, so one-shot commands never pay for the SDK.
import type { Config, ConfigLayer, Env } from "../config/index.js";
import type { McpServer } from "../config/types.js";
import { fileSettingKey, globalConfigFile } from "../config/index.js";
import type { McpHost } from "../mcp/index.js";
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
  readonly runTurns: boolean;
  /** Servers the host plugin generation registered (`context.mcp.register`), after the configured ones. */
  readonly pluginServers?: readonly McpServer[] | undefined;
  readonly onWarning?: ((message: string) => void) | undefined;
}

export async function prepareHostMcp(options: HostMcpOptions): Promise<HostMcp> {
  let host: McpHost | undefined;
  let loading: Promise<McpHost> | undefined;
  const load = async (): Promise<McpHost> => {
    const { McpConfigError, McpHost: Host } = await import("../mcp/index.js");
    try {
      const servers = [...(options.config.mcp ?? []), ...(options.pluginServers ?? [])];
      host = Host.fromConfig({ ...options.config, mcp: servers }, { env: options.env, cwd: options.cwd, clientInfo: { name: "ze-harness", version: release() }, ...(options.onWarning ? { onWarning: options.onWarning } : {}) });
    } catch (error) {
      if (error instanceof McpConfigError) {
        const file = fileSettingKey(options.layers, "mcp") ?? globalConfigFile(options.env);
        throw new HarnessStartupError(error._tag, `${file}: ${error.message}`);
      }
      throw error;
    }
    return host;
  };
  if ((options.config.mcp?.length ?? 0) + (options.pluginServers?.length ?? 0) > 0) {
    loading = load();
    const started = await loading;
    if (options.runTurns) void started.start();
  }
  return {
    get: () => (loading ??= load()),
    loaded: () => host,
    close: async () => {
      await host?.close();
    },
  };
}
