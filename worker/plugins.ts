// Session plugins on the Cloudflare Worker host: the same Core pieces as the Node host — a
// `PluginRuntime` (here an empty host generation: the standalone Worker has no configured or
// server plugins) and the host-neutral `SessionPluginOverlays` (services/plugins/session-overlays.ts) over the object's SQLite — with the Worker's own
// sources (worker/plugins-sources.ts: `Bundle` through `LOADER`, every other kind a typed
// unsupported capability) and host capabilities (`workspaceFiles` is the /workspace store,
// `webFetch` the Node host's bounded fetch over the Worker's network; `workspaceShell` fails
// `spawn_failed`: Workers cannot spawn local processes).
// `workerPluginHandlers` serves the five Session plugin operations through the Node host's
// handlers (services/host/plugin-routes.ts); `lease` gives each Turn of a Session with an overlay
// its tools, hooks, Agents and Skills, as services/host/runner-host.ts does on Node, and the MCP
// servers its revision declares (worker/plugins-mcp.ts: a WorkerMcpHost per Session).
import type { Handlers } from "../generated/server/routes.js";
import { WorkspaceShellError, type WorkspaceFiles } from "../plugin/index.js";
import type { TurnExtensions } from "../services/core/turns/environment.js";
import { pluginAsDiscovered } from "../services/host/catalogs.js";
import { pluginHandlers } from "../services/host/plugin-routes.js";
import type { RequestContext } from "../services/http/handler.js";
import type { HostCapabilities } from "../services/plugins/capabilities.js";
import { createToolRegistry } from "../services/plugins/generation.js";
import { createWebFetch } from "../services/plugins/web-fetch.js";
import { HookPipeline } from "../services/plugins/hooks.js";
import { PluginRuntime } from "../services/plugins/runtime.js";
import { SessionPluginOverlays } from "../services/plugins/session-overlays.js";
import type { SessionRow, StorageHandle } from "../services/storage/index.js";
import type { ToolRegistry } from "../services/tools/registry.js";
import type { AnyToolDefinition } from "../services/tools/tool.js";
import { loadAgentCatalog, type AgentCatalog } from "../services/workspace/agents.js";
import type { SkillDiscovery } from "../services/workspace/skills.js";
import { PluginBundleCache, type PluginCacheStorageInput } from "./plugins-cache.js";
import type { WorkerLoaderBinding } from "./plugins-loader.js";
import type { WorkerMcpHost } from "./mcp.js";
import { combinedOffer, WorkerSessionMcp, type SessionOAuthFactory } from "./plugins-mcp.js";
import { workerSessionSources } from "./plugins-sources.js";

export interface WorkerPluginsInput {
  readonly storage: StorageHandle;
  /** The object's `ctx.storage` (the bundle cache's tables). */
  readonly objectStorage: PluginCacheStorageInput;
  /** The server's /workspace store (`context.workspaceFiles`). */
  readonly files: WorkspaceFiles;
  /** The `LOADER` binding; absent, `Bundle` sources are a typed unsupported capability. */
  readonly loader?: WorkerLoaderBinding | undefined;
  /** The test and development knob `HARNESS_PLUGIN_BUNDLE_LOOPBACK_HTTP`. */
  readonly allowLoopbackHttp?: boolean | undefined;
  /** The Worker's built-in tool ids (a plugin tool may not take one). */
  readonly reservedToolIds: readonly string[];
  readonly onDiagnostic?: ((source: string, error: unknown) => void) | undefined;
  /** The server's host-configured MCP servers (their ids and names are reserved; a Turn is offered theirs, then its Session's). */
  readonly mcp?: WorkerMcpHost | undefined;
  /** The OAuth lifecycle of each Session's own MCP servers (worker/plugins-mcp.ts; absent: none). */
  readonly mcpOAuth?: SessionOAuthFactory | undefined;
}

export interface WorkerPlugins {
  readonly sessions: SessionPluginOverlays;
  readonly cache: PluginBundleCache;
  readonly handlers: Partial<Handlers<RequestContext>>;
  /** The runner's per-Turn lease (`TurnEnvironment.lease`) over the base tools, hooks and Agents. */
  /** The Session's own MCP servers (its active overlay's declared ones), if any: the catalog's view. */
  sessionMcp(sessionId: string): Promise<WorkerMcpHost | undefined>;
  /** Closes the Session's own MCP servers (the Session was deleted). */
  forgetSession(sessionId: string): Promise<void>;
  lease(base: { readonly tools: Readonly<Record<string, AnyToolDefinition>>; readonly registry: ToolRegistry; readonly hooks: HookPipeline; readonly agents: AgentCatalog }): (session: SessionRow) => Promise<TurnExtensions>;
}

/** A plugin's host capabilities on the Worker. */
export function workerPluginCapabilities(files: WorkspaceFiles): HostCapabilities {
  return {
    workspaceFiles: files,
    workspaceShell: {
      execute: async () => {
        throw new WorkspaceShellError({ code: "spawn_failed" });
      },
    },
    webFetch: createWebFetch(),
  };
}

export async function createWorkerPlugins(input: WorkerPluginsInput): Promise<WorkerPlugins> {
  const capabilities = workerPluginCapabilities(input.files);
  const reservedMcp = { ids: (input.mcp?.slots() ?? []).map((slot) => slot.server.id), names: (input.mcp?.slots() ?? []).map((slot) => slot.server.name) };
  const common = { capabilities, reservedToolIds: input.reservedToolIds, reservedMcp, ...(input.onDiagnostic ? { onDiagnostic: input.onDiagnostic } : {}) };
  // No host plugins on the standalone Worker: the baseline every overlay extends is empty.
  const started = await PluginRuntime.start({ ...common, source: () => ({ ok: true, candidates: [] }) });
  if (!started.ok) throw new Error(`the empty plugin generation did not activate: ${started.message}`);
  const runtime = started.runtime;
  const cache = new PluginBundleCache(input.objectStorage);
  const sessions = new SessionPluginOverlays({
    ...common,
    storage: input.storage,
    runtime,
    sources: workerSessionSources({ cache, loader: input.loader, allowLoopbackHttp: input.allowLoopbackHttp }),
    agentCatalog: (host, layer) => loadAgentCatalog({ configLayers: [], env: {}, plugins: host.agents, sessionPlugins: layer }),
  });
  // Bundles of Sessions deleted since the last wake are freed now.
  await sessions.pruneArtifacts().catch((error: unknown) => input.onDiagnostic?.("session-plugin-artifacts", error));
  const all = pluginHandlers({ services: async () => ({ runtime, sessions }) });
  const handlers: Partial<Handlers<RequestContext>> = {
    sessionPlugins: all.sessionPlugins,
    addSessionPlugin: all.addSessionPlugin,
    // The overlay's MCP servers leave with it.
    removeSessionPlugin: async (request, context) => {
      const removed = await all.removeSessionPlugin(request, context);
      await own.forget(request.path.sessionId);
      return removed;
    },
    reloadSessionPlugin: all.reloadSessionPlugin,
    refreshSessionPlugin: all.refreshSessionPlugin,
  };
  const own = new WorkerSessionMcp({ oauth: input.mcpOAuth });
  return {
    sessions,
    cache,
    handlers,
    forgetSession: (sessionId) => own.forget(sessionId),
    sessionMcp: async (sessionId) => {
      const lease = await sessions.lease(sessionId);
      try {
        return own.hostFor(sessionId, lease.session?.mcpServers ?? []);
      } finally {
        lease.release();
      }
    },
    lease: (base) => async (session) => {
      // The Session row says whether it has an overlay: a plain Turn costs no plugin statement.
      if (!session.pluginOverlay) return { tools: base.registry, hooks: base.hooks, agents: base.agents, release: () => {} };
      const lease = await sessions.lease(session.id);
      const skills: SkillDiscovery = { skills: [...lease.host.skills, ...(lease.session?.skills ?? [])].map(pluginAsDiscovered), warnings: [] };
      // The overlay's own MCP servers: the Turn waits (bounded) for their first attempts, as for the server's.
      const mcp = own.hostFor(session.id, lease.session?.mcpServers ?? []);
      try {
        await mcp?.ready();
      } catch (error) {
        lease.release();
        throw error;
      }
      return {
        ...(mcp !== undefined ? { mcp: () => combinedOffer(input.mcp, mcp) } : {}),
        tools: createToolRegistry(base.tools, lease.host, lease.session),
        hooks: HookPipeline.combine(base.hooks, lease.hooks),
        agents: lease.session?.agentCatalog ?? lease.host.agentCatalog ?? base.agents,
        skills: async () => skills,
        release: () => lease.release(),
      };
    },
  };
}
