// Turns inside a HarnessServerObject: the same Core the Node host composes in
// services/host/harness.ts and runner-host.ts — TurnService, a TurnRunner, InteractionService,
// EventStreams, the turn, history and workspace-history handlers — over the object's SQLite,
// with a model gateway built from the Worker's variables (worker/config.ts) and provider keys
// through the `ProviderKeys` seam, and the Worker's tool set (worker/tools.ts).
//
// What the Worker leaves out (Node-only or not built yet here): host plugins and hooks beyond
// the empty pipeline (Session plugins come through `lease`, worker/plugins.ts), terminals,
// workspace recording (rewind), CodeMode until `execute` is registered. The runner is one per object: its claims
// carry owner id 1 and the object's fresh instance id, so after a restart every claim of the
// previous instance is "gone" and recovery settles it (see worker/alarm.ts for when it runs).
import { withContentResolver, type DurableContentResolver } from "../services/core/turns/content.js";
import type { ToolDispatchLifecycle } from "../services/core/turns/dispatch.js";
import type { Handlers } from "../generated/server/routes.js";
import type { Env } from "../services/config/index.js";
import type { ActivityHub } from "../services/core/events/hub.js";
import { EventStreams, type StreamTiming } from "../services/core/events/streams.js";
import type { SessionService } from "../services/core/sessions.js";
import { Subagents } from "../services/core/subagents/host.js";
import { InteractionService } from "../services/core/turns/interactions.js";
import { TurnRunner } from "../services/core/turns/runner.js";
import { TurnService } from "../services/core/turns/service.js";
import { turnHandlers } from "../services/host/handlers.js";
import { depthHandlers } from "../services/host/depth-handlers.js";
import { createHistoryServices, historyHandlers } from "../services/host/history-handlers.js";
import { createModelGateway } from "../services/host/models.js";
import { createWorkspaceHistoryServices, workspaceHistoryHandlers } from "../services/host/workspace-history-handlers.js";
import type { RequestContext } from "../services/http/handler.js";
import { HookPipeline } from "../services/plugins/hooks.js";
import type { ProviderSet } from "../services/providers/index.js";
import type { StorageHandle } from "../services/storage/index.js";
import { ToolRegistry, type RegisteredTool } from "../services/tools/registry.js";
import type { AnyToolDefinition } from "../services/tools/tool.js";
import type { StoredInstructions } from "../services/core/turns/admission.js";
import type { TurnExtensions } from "../services/core/turns/environment.js";
import type { SessionRow } from "../services/storage/index.js";
import { loadAgentCatalog, type AgentCatalog } from "../services/workspace/agents.js";
import type { SkillDiscovery } from "../services/workspace/skills.js";
import type { WorkerConfig } from "./config.js";
import { workerTools } from "./tools.js";
import { WORKSPACE_ROOT } from "./workspace.js";

/**
 * Where a server object's inference keys come from, one provider at a time: today the Worker's
 * secrets named by `definition.credentials.environment` (`environmentKeys`); the provider
 * authority object's `providerCredentials()` RPC (a stored key wins) plugs in here later.
 */
export interface ProviderKeys {
  providerKeys(providerId: string): Promise<string | undefined>;
}

/** Keys from Worker secrets: the first non-empty variable the provider's definition names. */
export function environmentKeys(variables: Readonly<Record<string, unknown>>, providers: ProviderSet): ProviderKeys {
  return {
    async providerKeys(providerId) {
      for (const name of providers.provider(providerId)?.environment ?? []) {
        const value = variables[name];
        if (typeof value === "string" && value.trim() !== "") return value;
      }
      return undefined;
    },
  };
}

/**
 * The environment the model gateway reads credentials from: each provider's key (resolved once
 * at wake, as the reference says servers do) under the first variable its definition names.
 * Nothing else of the Worker's bindings is in it.
 */
export async function gatewayEnvironment(providers: ProviderSet, keys: ProviderKeys): Promise<Env> {
  const env: Record<string, string> = {};
  for (const provider of providers.providers) {
    const variable = provider.environment[0];
    if (variable === undefined) continue;
    const key = await keys.providerKeys(provider.id);
    if (key !== undefined) env[variable] = key;
  }
  return env;
}

/**
 * The model Turns use when neither the prompt nor HARNESS_MODEL names one: the first model (by
 * provider, then model ID) of an enabled provider that has its credential or needs none.
 */
export function firstAvailableModel(providers: ProviderSet, env: Env): string | undefined {
  for (const provider of providers.providers) {
    if (!provider.enabled) continue;
    const keyed = provider.environment.some((name) => (env[name] ?? "") !== "");
    for (const model of provider.models) {
      if (keyed || model.authentication.kind === "none") return model.ref;
    }
  }
  return undefined;
}

export interface WorkerTurnsInput {
  readonly storage: StorageHandle;
  readonly hub: ActivityHub;
  readonly sessions: SessionService;
  readonly configured: WorkerConfig;
  /** The gateway's credential environment (`gatewayEnvironment`). */
  readonly env: Env;
  readonly streamTiming?: StreamTiming;
  /** The runner's claim lease. */
  readonly leaseMs?: number;
  /** Told of each admission (the object arms its recovery alarm). */
  readonly onAdmission?: () => void;
  /** Tools beside the base set (the /workspace file tools, CodeMode's `execute`), by id. */
  readonly extraTools?: Readonly<Record<string, AnyToolDefinition>>;
  /** The workdir's AGENTS.md at admission (from the /workspace store); absent: none. */
  readonly instructions?: (workdir: string) => Promise<StoredInstructions | null>;
  /** The current agent catalog (worker/agents.ts: built-in and /workspace Markdown agents); absent: the built-in agents. */
  readonly agents?: () => AgentCatalog;
  /** The Skills of a workdir (from the /workspace store, worker/skills.ts); absent: none. */
  readonly skills?: (workdir: string) => Promise<SkillDiscovery>;
  /** The server's MCP servers (worker/mcp.ts): each Turn waits (bounded) for their first attempts, then is offered their Tools. */
  readonly mcp?: WorkerTurnsMcp;
  /** Each Turn's plugin lease over the base tools, hooks and Agents (worker/plugins.ts); absent: no plugins. */
  /** The embedder's content references resolver and tool-call custody (services/core/turns/content.ts, dispatch.ts). */
  readonly contentResolver?: DurableContentResolver;
  readonly toolDispatch?: ToolDispatchLifecycle;
  readonly lease?: (base: { readonly tools: Readonly<Record<string, AnyToolDefinition>>; readonly registry: ToolRegistry; readonly hooks: HookPipeline; readonly agents: AgentCatalog }) => (session: SessionRow) => Promise<TurnExtensions>;
}

/** What Turns use of a server object's MCP servers (a WorkerMcpHost). */
export interface WorkerTurnsMcp {
  ready(): Promise<void>;
  toolEntries(): RegisteredTool[];
  instructions(): { readonly server: string; readonly text: string }[];
}

export interface WorkerTurns {
  readonly runner: TurnRunner;
  /** The prompt admission (MCP prompt submission admits through it). */
  readonly service: TurnService;
  readonly handlers: Partial<Handlers<RequestContext>>;
}

const NO_SKILLS: SkillDiscovery = { skills: [], warnings: [] };

function builtinAgents(): AgentCatalog {
  // Without a catalog from the server object: the built-in agents only.
  const loaded = loadAgentCatalog({ configLayers: [], env: {} });
  if (!loaded.ok) throw new Error(`the built-in agent catalog is invalid: ${loaded.error._tag}`);
  return loaded.value;
}

/** Composes the Turn services and their handlers over one server object's storage. */
export function composeWorkerTurns(input: WorkerTurnsInput): WorkerTurns {
  const { storage, hub, sessions, configured } = input;
  const model = configured.config.model ?? firstAvailableModel(configured.providers, input.env);
  const config = model !== undefined ? { ...configured.config, model } : configured.config;
  // Over the providers compiled at wake (a WorkerHarnessHost may compile them from a supplied catalog).
  const gateway = withContentResolver(createModelGateway(config, input.env, [], { providers: () => configured.providers, ensure: async () => {} }), input.contentResolver);
  const fixed = input.agents === undefined ? builtinAgents() : undefined;
  const agents = input.agents ?? (() => fixed!);
  const catalogs = {
    get agents() {
      return agents();
    },
    skills: input.skills ?? (async () => NO_SKILLS),
  };
  const tools = workerTools(input.extraTools !== undefined ? { extra: input.extraTools } : {});
  const subagents = new Subagents({ storage, hub, agents });
  const registry = new ToolRegistry(tools);
  const hooks = new HookPipeline();
  const mcp = input.mcp;
  // Session plugins' lease (over the base agents as they are when each Turn leases).
  const pluginLease = input.lease?.({
    tools,
    registry,
    hooks,
    get agents() {
      return agents();
    },
  });
  const runner = new TurnRunner({
    storage,
    hub,
    gateway,
    tools: registry,
    hooks,
    environment: {
      get agents() {
        return agents();
      },
      // A Turn waits (at most the MCP host's ready wait after it started) for the servers' first
      // connection attempts, so the first Turn is offered their Tools, as on Node; then it leases
      // its Session's plugins.
      ...(mcp !== undefined || pluginLease !== undefined
        ? {
            lease: async (session: SessionRow): Promise<TurnExtensions> => {
              await mcp?.ready();
              return pluginLease !== undefined ? pluginLease(session) : { tools: registry, hooks, agents: agents(), release: () => {} };
            },
          }
        : {}),
      ...(mcp !== undefined ? { mcp: () => ({ tools: mcp.toolEntries(), instructions: mcp.instructions() }) } : {}),
      skills: catalogs.skills,
      subagents,
      // CodeMode's `execute` is offered once worker/codemode.ts registers it (HARNESS_CODEMODE_ENABLED).
      codemode: config.codemode?.enabled !== false && "execute" in tools,
    },
    serverRoot: WORKSPACE_ROOT,
    scope: "unowned",
    ...(input.toolDispatch !== undefined ? { toolDispatch: input.toolDispatch } : {}),
    // A Durable Object has no process id: one object is one runner.
    processId: 1,
    ...(input.leaseMs !== undefined ? { leaseMs: input.leaseMs } : {}),
    ...(config.contentFlushMillis !== undefined ? { flushMs: config.contentFlushMillis } : {}),
  });
  const notify = input.onAdmission;
  const turns = new TurnService({
    storage,
    config,
    hub,
    models: gateway,
    catalogs,
    serverRoot: WORKSPACE_ROOT,
    // AGENTS.md lives in the server's /workspace store (worker/files/).
    instructions: input.instructions ?? (async () => null),
    interrupt: (turnId, reason) => runner.interrupt(turnId, reason),
    runner: {
      admissionClaim: (sessionId) => runner.admissionClaim(sessionId),
      onAdmitted: (turn, session, claimed) => {
        notify?.();
        runner.onAdmitted(turn, session, claimed);
      },
      launchAdmitted: (turn, session, durable) => {
        notify?.();
        return runner.launchAdmitted(turn, session, durable);
      },
    },
  });
  subagents.attach({ sessions, turns });
  const interactions = new InteractionService({ storage, hub });
  const streams = new EventStreams(storage, hub, input.streamTiming);
  const handlers: Partial<Handlers<RequestContext>> = {
    ...turnHandlers({ turns, interactions, streams }),
    ...historyHandlers(createHistoryServices(storage, hub, config, gateway, runner)),
    ...workspaceHistoryHandlers(createWorkspaceHistoryServices(storage, hub, interactions, input.streamTiming)),
    // Detaching a Session's foreground sub-agent calls, as the Node host's depth handler does.
    promoteSessionBackground: async ({ path }) => {
      await sessions.get(path.server, path.sessionId);
      return { status: 200, body: { promoted: subagents.promote(path.sessionId) } };
    },
  };
  // The Session's agents and Skills (safe metadata), from the same catalogs its Turns use.
  const depth = depthHandlers({ sessions, catalogs, catalogsFor: async () => catalogs, subagents, serverRoot: WORKSPACE_ROOT });
  handlers.sessionAgents = depth.sessionAgents;
  handlers.sessionSkills = depth.sessionSkills;
  return { runner, service: turns, handlers };
}
