// The Turn runner of a host that runs Turns: the built-in tools, the host's hooks and, for each
// Turn, the lease of its project's scope (project-scopes.ts) — the plugin generation (and the
// Session's overlay), the agents, Skills, MCP servers and CodeMode setting of the project the
// Session's workdir belongs to — and of the model catalog's current generation.
import { statSync } from "node:fs";
import { hostname } from "node:os";
import type { Config } from "../config/index.js";
import { absoluteWorkdir } from "../contract/paths.js";
import type { ActivityHub } from "../core/events/hub.js";
import type { RewindService } from "../core/rewind/service.js";
import type { Subagents } from "../core/subagents/host.js";
import type { ModelGateway } from "../core/turns/gateway.js";
import type { TurnRunner } from "../core/turns/runner.js";
import type { SessionRow, StorageHandle } from "../storage/index.js";
import type { HostCatalogs } from "./catalogs.js";
import type { HarnessOptions } from "./harness.js";
import type { HostMcp } from "./mcp-host.js";
import type { HostModelCatalog } from "./model-catalog.js";
import type { ProjectScope, ProjectScopes } from "./project-scopes.js";
import { hostLeaseMs } from "./lease.js";
import type { HostSandboxSetup } from "./sandbox-host.js";
import type { HostServedModels } from "./served-models.js";
import { combineOffers, declaredMcpServers, type SessionMcpHosts } from "./session-mcp.js";
import type { TerminalHost } from "./terminals.js";

export async function createRunner(

  storage: StorageHandle,
  hub: ActivityHub,
  gateway: ModelGateway,
  config: Config,
  catalogs: HostCatalogs,
  subagents: Subagents,
  mcp: HostMcp,
  scopes: ProjectScopes,
  models: HostModelCatalog,
  options: HarnessOptions,
  sessionMcp: SessionMcpHosts,
  rewind: RewindService,
  terminals: TerminalHost,
  sandbox: HostSandboxSetup | undefined,
  served: HostServedModels,
): Promise<TurnRunner> {
  const { toolTerminals } = await import("./tool-terminals.js");
  const [{ TurnRunner: Runner }, { builtinTools, coreTools, createShellTool, executeTool, ToolRegistry }, { HookPipeline }] = await Promise.all([
    import("../core/turns/runner.js"),
    import("../tools/index.js"),
    import("../plugins/hooks.js"),
  ]);
  const base = { ...builtinTools, shell: createShellTool({ sandbox: sandbox?.resolver, note: sandbox?.note }), ...coreTools, execute: executeTool };
  const hostHooks = options.hooks ?? new HookPipeline();
  const registry = new ToolRegistry(base);
  // The Session row says whether it has an overlay: a plain Turn costs no plugin statement.
  const leasePlugins = async (scope: ProjectScope, session: SessionRow) => {
    const { plugins, catalogs: scoped } = scope;
    // A generation activating in the background is waited for (bounded by each plugin's limits).
    if (!plugins.loaded() && !plugins.activating() && !session.pluginOverlay) {
      void sessionMcp.forgetDeclared(session.id);
      return { tools: registry, hooks: hostHooks, agents: scoped.agents, release: () => {} };
    }
    const [services, { createToolRegistry }, { TurnEventQueue }] = await Promise.all([plugins.get(), import("../plugins/generation.js"), import("../plugins/observers.js")]);
    const lease = await services.sessions.lease(session.id);
    // The overlay's own MCP servers: the Turn waits (bounded) for their first attempts, as for the project's.
    try {
      const declared = await sessionMcp.declared(session.id, declaredMcpServers(lease.session), absoluteWorkdir(options.serverRoot, session.workdir));
      await declared?.ready();
    } catch (error) {
      lease.release();
      throw error;
    }
    // The Turn's plugin models: the host generation's and its overlay's, for its whole run.
    let unpinModels: () => void;
    try {
      unpinModels = await served.pin(session.id, [lease.host, lease.session]);
    } catch (error) {
      lease.release();
      throw error;
    }
    // Host subscribers first, then the Session overlay's (plugin order, then registration order).
    const subscribers = [...lease.host.subscribers, ...(lease.session?.subscribers ?? [])];
    return {
      tools: createToolRegistry(base, lease.host, lease.session),
      hooks: HookPipeline.combine(hostHooks, lease.hooks),
      agents: lease.session?.agentCatalog ?? lease.host.agentCatalog ?? scoped.agents,
      ...(subscribers.length > 0 ? { observe: () => new TurnEventQueue(subscribers, scope.config.observerBufferSize) } : {}),
      release: () => (unpinModels(), lease.release()),
    };
  };
  // Each Turn leases its project's scope (re-read when its file changed), plugins, MCP servers and Skills.
  const leaseProject = async (session: SessionRow) => {
    const workdir = absoluteWorkdir(options.serverRoot, session.workdir);
    reachableWorkdir(workdir);
    let held: { scope: ProjectScope; release: () => void };
    try {
      held = await scopes.acquire(workdir);
    } catch (error) {
      // The file broke after the admission: the Turn fails naming it.
      throw Object.assign(new Error(error instanceof Error ? error.message : String(error)), { code: "config_invalid" });
    }
    try {
      const { scope } = held;
      const extensions = await leasePlugins(scope, session);
      const projectMcp = (await scope.mcp()).loaded();
      // A project's servers start with its first Turn, which waits (bounded) for their first connection
      // attempts; so does a Turn right after the host started (an embedded `run`): the servers it
      // configured or its plugins registered are offered from the first Turn (later, nothing to wait for).
      await projectMcp?.ready();
      return {
        ...extensions,
        skills: (workdir: string) => scope.catalogs.skills(workdir),
        mcp: (sessionId: string) => combineOffers(projectMcp ? { tools: projectMcp.toolEntries(), instructions: projectMcp.instructions() } : undefined, sessionMcp.offer(sessionId)),
        codemode: scope.config.codemode?.enabled !== false,
        release: () => (extensions.release(), held.release()),
      };
    } catch (error) {
      held.release();
      throw error;
    }
  };
  return new Runner({
    storage,
    hub,
    gateway,
    tools: registry,
    hooks: hostHooks,
    environment: {
      get agents() {
        return catalogs.agents;
      },
      // Each Turn leases the current model catalog, host generation and its Session's overlay.
      lease: async (session: SessionRow) => {
        const unpin = await models.pin(session.id);
        try {
          const extensions = await leaseProject(session);
          return { ...extensions, release: () => (extensions.release(), unpin()) };
        } catch (error) {
          unpin();
          throw error;
        }
      },
      skills: (workdir) => catalogs.skills(workdir),
      subagents,
      codemode: config.codemode?.enabled !== false,
      terminals: toolTerminals(terminals),
      mcp: (sessionId: string) => {
        const host = mcp.loaded();
        return combineOffers(host ? { tools: host.toolEntries(), instructions: host.instructions() } : undefined, sessionMcp.offer(sessionId));
      },
    },
    serverRoot: options.serverRoot,
    workspace: rewind.observer,
    scope: options.runnerScope ?? "unowned",
    ...(options.toolDispatch ? { toolDispatch: options.toolDispatch } : {}),
    ...(config.contentFlushMillis !== undefined ? { flushMs: config.contentFlushMillis } : {}),
    ...leaseOption(options),
  });
}

/**
 * Fails the Turn, before its first model call, when this host cannot reach the Session's workdir:
 * hosts sharing a database run each other's Sessions, and a workdir made on another machine (or
 * outside the shared filesystem) would otherwise run with tools failing one by one (docs/scale.md).
 */
function reachableWorkdir(workdir: string): void {
  let problem: string | undefined;
  try {
    // Synchronous: a stat costs microseconds, its promise form a threadpool round trip on every Turn.
    const found = statSync(workdir, { throwIfNoEntry: false });
    if (found === undefined) problem = "ENOENT";
    else if (!found.isDirectory()) problem = "it is not a directory";
  } catch (error) {
    problem = (error as NodeJS.ErrnoException).code ?? String(error);
  }
  if (problem === undefined) return;
  throw Object.assign(
    new Error(`This host (${hostname()}) cannot reach the Session's workdir ${workdir} (${problem}); every host that may run the Session must see it at the same path`),
    { code: "workdir_unreachable" },
  );
}

/** The claim lease (lease.ts). */
function leaseOption(options: HarnessOptions): { leaseMs?: number } {
  const leaseMs = hostLeaseMs(options);
  return leaseMs === undefined ? {} : { leaseMs };
}

