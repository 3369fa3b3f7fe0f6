// Session plugins on the Cloudflare Worker host: the same Core pieces as the Node host — a
// `PluginRuntime` (the host generation: an embedder's server plugins, worker/host-plugins.ts;
// empty on the standalone Worker) and the host-neutral `SessionPluginOverlays` (services/plugins/session-overlays.ts) over the object's SQLite — with the Worker's own
// sources (worker/plugins-sources.ts: `Bundle` through `LOADER`, every other kind a typed
// unsupported capability) and host capabilities (`workspaceFiles` is the /workspace store,
// `webFetch` the Node host's bounded fetch over the Worker's network; `workspaceShell` fails
// `spawn_failed`: Workers cannot spawn local processes).
// `workerPluginHandlers` serves the five Session plugin operations through the Node host's
// handlers (services/host/plugin-routes.ts); `lease` gives each Turn of a Session with an overlay
// its tools, hooks, Agents and Skills, as services/host/runner-host.ts does on Node, and the MCP
// servers its revision declares (worker/plugins-mcp.ts: a WorkerMcpHost per Session). A Turn's
// Agents are the /workspace store's with the host generation's and its Session plugin's layers
// (worker/agents.ts), its Skills the store's plus the plugins' (a store Skill wins an id, as on
// Node); a Session without an overlay leases only a non-empty host generation.
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
import type { Skill } from "../plugin/index.js";
import type { RuntimeSource } from "../services/plugins/runtime.js";
import { conflict } from "../services/contract/failure.js";
import type { WorkspaceAgents } from "./agents.js";
import { checkServerPluginList, ServerPluginList, WorkerServerPluginConflict, WorkerServerPluginRejected, type WorkerServerPluginEntry, type WorkerServerPluginStatus } from "./host-plugins.js";
import { PluginBundleCache, type PluginCacheStorageInput } from "./plugins-cache.js";
import type { WorkerLoaderBinding } from "./plugins-loader.js";
import type { WorkerMcpHost } from "./mcp.js";
import { combinedOffer, WorkerSessionMcp, type SessionOAuthFactory } from "./plugins-mcp.js";
import { workerSessionSources, type WorkerStaticSessionPlugin } from "./plugins-sources.js";

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
  /** The embedder's linked static Session plugins, by `Static` source id. */
  readonly staticPlugins?: ReadonlyMap<string, WorkerStaticSessionPlugin> | undefined;
  /** The embedder's server plugins at wake (checked by `checkServerPluginList`). */
  readonly serverPlugins?: readonly WorkerServerPluginEntry[] | undefined;
  /** The /workspace store's agents with plugin layers (worker/agents.ts); absent: the built-in agents. */
  readonly agents?: WorkspaceAgents | undefined;
  /** The /workspace store's Skills of a workdir (worker/skills.ts); absent: none. */
  readonly skills?: ((workdir: string) => Promise<SkillDiscovery>) | undefined;
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
  /** The server's agents now: the store's with the current host generation's plugin agents. */
  agents(): AgentCatalog;
  /** Each server plugin's url, plugin id, pinned integrity and state. */
  serverPlugins(): WorkerServerPluginStatus[];
  /** Replaces the server plugin list and reloads the host generation; see worker/host-plugins.ts. */
  setServerPlugins(entries: readonly WorkerServerPluginEntry[]): Promise<WorkerServerPluginStatus[]>;
}

const NO_SKILLS: SkillDiscovery = { skills: [], warnings: [] };

/** The store's Skills plus the plugins' (a store Skill keeps its id, as Node's catalog does). */
function withPluginSkills(found: SkillDiscovery, plugin: readonly Skill[]): SkillDiscovery {
  if (plugin.length === 0) return found;
  const local = new Set(found.skills.map((skill) => skill.id));
  const added = plugin.filter((skill) => !local.has(skill.id)).map(pluginAsDiscovered);
  return { ...found, skills: [...found.skills, ...added].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)) };
}

interface ReferenceRow {
  readonly session_id: string;
  readonly active: number;
  readonly artifact: string | null;
  readonly resolved: string;
}

/** Every Session's desired and active revision (which Session, whether active, its artifact and resolution). */
async function revisionReferences(storage: StorageHandle): Promise<ReferenceRow[]> {
  return storage.reader().sql.all<ReferenceRow>(
    `SELECT p.session_id AS session_id, CASE WHEN r.id = p.active_revision_id THEN 1 ELSE 0 END AS active, r.artifact AS artifact, r.resolved AS resolved
       FROM session_plugin p JOIN session_plugin_revision r
         ON r.session_id = p.session_id AND (r.id = p.desired_revision_id OR r.id = p.active_revision_id)`,
  );
}

const bundleDigest = (artifact: string | null): string | undefined => {
  const parsed = artifact === null ? undefined : (JSON.parse(artifact) as { kind?: unknown; digest?: unknown });
  return parsed?.kind === "bundle" && typeof parsed.digest === "string" ? parsed.digest : undefined;
};

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
  const cache = new PluginBundleCache(input.objectStorage);
  const list = new ServerPluginList({ cache, loader: input.loader, allowLoopbackHttp: input.allowLoopbackHttp === true });
  // The host generation: the server plugin list (empty on the standalone Worker), its agents checked as Node's are.
  const source = (): RuntimeSource => {
    const listed = list.source();
    return listed.ok ? { ...listed, agentCatalog: (layer) => loadAgentCatalog({ configLayers: [], env: {}, plugins: layer }) } : listed;
  };
  let runtime!: PluginRuntime;
  // A first list whose generation does not activate leaves an empty one and reports it (the server still serves).
  await list.activate(await list.resolve(input.serverPlugins ?? [], true), async () => {
    const started = await PluginRuntime.startWithout({ ...common, source });
    runtime = started.runtime;
    if (started.rejection !== undefined) input.onDiagnostic?.("server-plugins", new Error(started.rejection.message));
    return { activated: started.rejection === undefined, value: undefined };
  }, true);
  const builtins = loadAgentCatalog({ configLayers: [], env: {} });
  if (!builtins.ok) throw new Error(`the built-in agent catalog is invalid: ${builtins.error._tag}`);
  const agentsWith: WorkspaceAgents = input.agents ?? (() => builtins.value);
  const storeSkills = input.skills ?? (async () => NO_SKILLS);
  const sessions = new SessionPluginOverlays({
    ...common,
    storage: input.storage,
    runtime,
    sources: workerSessionSources({
      cache,
      loader: input.loader,
      allowLoopbackHttp: input.allowLoopbackHttp,
      staticPlugins: input.staticPlugins,
      // What a Session's add must not free of its own cache entries: every reference but its own
      // desired revision (the add replaces it), and the server list's pins.
      keep: async (sessionId) => {
        const keep = new Set(cache.serverPlugins().flatMap((row) => (row.digest !== undefined ? [row.digest] : [])));
        for (const row of await revisionReferences(input.storage)) {
          const digest = bundleDigest(row.artifact);
          if (digest !== undefined && !(row.session_id === sessionId && row.active === 0)) keep.add(digest);
        }
        return keep;
      },
    }),
    agentCatalog: (host, layer) => loadAgentCatalog({ configLayers: [], env: {}, plugins: host.agents, sessionPlugins: layer }),
  });
  // Bundles of Sessions deleted since the last wake are freed now.
  await sessions.pruneArtifacts().catch((error: unknown) => input.onDiagnostic?.("session-plugin-artifacts", error));
  const all = pluginHandlers({ services: async () => ({ runtime, sessions }) });
  const handlers: Partial<Handlers<RequestContext>> = {
    sessionPlugins: all.sessionPlugins,
    // A server plugin's id is the server's: a Session cannot run its own copy beside it.
    addSessionPlugin: async (request, context) => {
      const pluginId = (request.body as { resolved?: { pluginId?: unknown } } | undefined)?.resolved?.pluginId;
      if (typeof pluginId === "string" && list.pluginIds().includes(pluginId)) throw conflict(`Plugin ${pluginId} is a server plugin of this server; a Session cannot add it as its own.`);
      return all.addSessionPlugin(request, context);
    },
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
  /** setServerPlugins calls, one at a time. */
  let serial: Promise<unknown> = Promise.resolve();
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
      if (!session.pluginOverlay) {
        // No overlay: a Turn costs no plugin statement, and leases the host generation only when it has plugins.
        if (!runtime.current.plugins.some((plugin) => plugin.status === "active")) return { tools: base.registry, hooks: base.hooks, agents: base.agents, release: () => {} };
        const held = runtime.lease();
        const host = held.generation;
        return {
          tools: createToolRegistry(base.tools, host),
          hooks: HookPipeline.combine(base.hooks, host.hooks),
          agents: agentsWith({ plugins: host.agents }),
          skills: async (workdir) => withPluginSkills(await storeSkills(workdir), host.skills),
          release: () => held.release(),
        };
      }
      const lease = await sessions.lease(session.id);
      const pluginSkills = [...lease.host.skills, ...(lease.session?.skills ?? [])];
      // The overlay's own MCP servers: the Turn waits (bounded) for their first attempts, as for the server's.
      const mcp = own.hostFor(session.id, lease.session?.mcpServers ?? []);
      let agents: AgentCatalog;
      try {
        await mcp?.ready();
        // The store's agents (worker/agents.ts) with the host generation's and the Session plugin's layers.
        agents = agentsWith({ plugins: lease.host.agents, sessionPlugins: lease.session?.agents });
      } catch (error) {
        lease.release();
        throw error;
      }
      return {
        ...(mcp !== undefined ? { mcp: () => combinedOffer(input.mcp, mcp) } : {}),
        tools: createToolRegistry(base.tools, lease.host, lease.session),
        hooks: HookPipeline.combine(base.hooks, lease.hooks),
        agents,
        skills: async (workdir) => withPluginSkills(await storeSkills(workdir), pluginSkills),
        release: () => lease.release(),
      };
    },
    agents: () => agentsWith({ plugins: runtime.current.agents }),
    serverPlugins: () => list.statuses(runtime.plugins()),
    setServerPlugins: (entries) => {
      const run = async (): Promise<WorkerServerPluginStatus[]> => {
        const checked = checkServerPluginList(entries);
        if (typeof checked === "string") throw new WorkerServerPluginRejected(`The server plugin list is malformed: ${checked}; the previous list stays active.`);
        entries = checked;
        // A Session running (or activating) one of the ids as its own plugin: nothing changes.
        const ids = new Set(entries.map((entry) => entry.pluginId));
        const held = [...new Set((await revisionReferences(input.storage)).map((row) => (JSON.parse(row.resolved) as { pluginId?: string }).pluginId ?? ""))].filter((id) => ids.has(id)).sort();
        if (held.length > 0) throw new WorkerServerPluginConflict(`A Session runs ${held.map((id) => JSON.stringify(id)).join(", ")} as its own Session plugin; the server plugins stay as they were.`, held);
        const resolved = await list.resolve(entries, false);
        const reloaded = await list.activate(resolved, async () => {
          const result = await runtime.reload();
          return { activated: result.result === "reloaded", value: result };
        });
        if (reloaded.result !== "reloaded") {
          const rejected = runtime.lastRejection?.plugins ?? [];
          throw new WorkerServerPluginRejected(`The new server plugin list did not activate: ${runtime.lastRejection?.message ?? "rejected"}; the previous list stays active.`, list.statuses(rejected, resolved));
        }
        // The previous list's bytes are freed now unless a Session references them.
        await sessions.pruneArtifacts().catch((error: unknown) => input.onDiagnostic?.("session-plugin-artifacts", error));
        return list.statuses(runtime.plugins());
      };
      const next = serial.then(run, run);
      serial = next.catch(() => undefined);
      return next;
    },
  };
}
