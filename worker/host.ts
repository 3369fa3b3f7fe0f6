// Longer than ~400 lines on purpose: like the Node host's composition root (services/host/harness.ts),
// this one constructor wires every service of a server object together (storage, Sessions, Turns,
// files, MCP, plugins, the alarm, the Fetch handler); each part lives in its own file and only the
// wiring and the public methods that reach it are here.
// WorkerHarnessHost: the embeddable Worker host (the reference's "Embedding in a host Durable
// Object"). Constructed inside a host Durable Object, it holds every Session of one server in the
// object's SQLite and serves them through the same generated route table, Fetch handler and Core
// services as the Node host: storage (migrated on wake inside `blockConcurrencyWhile`),
// SessionService, the Turn composition (worker/turns.ts), the `/workspace` file store and
// CodeMode, recovery on one multiplexed alarm (worker/host-alarm.ts) and the watch helpers
// (worker/host-watch.ts). The standalone `HarnessServerObject` (worker/server-object.ts) is a thin
// shell composed on this host with options read from Worker variables.
//
// - `fetch(request)` trusts its caller (no bearer, Host or Origin check: in-object calls are
//   trusted) and serves every route of the host's server, the server-level ones too (the Session
//   list, the activity stream, server deletion); other server names are 404s.
// - Configuration is plain options (worker/host-options.ts); a bad one is kept as a typed refusal
//   answered to every request (503) and rejected by `resources()`, never a crash loop.
// - Keys: `providerKeys` (the injected port) first, then — unless `credentialMode` is
//   `'injected-only'` — the Worker's own bindings in `env` (the provider authority when
//   `HARNESS_PROVIDER_AUTHORITY` is bound, else the secrets each definition names). Resolved once
//   at wake; an injected-only host instead reads a live slot (seeded from the port) and its
//   `resolveProviderCredential` at every acquisition (worker/host-credentials.ts).
// - The embedder ports: `providerDefinitions` (compiled with the providers, host-options.ts),
//   `contentResolver` and `toolDispatch` (Core seams: services/core/turns/content.ts, dispatch.ts)
//   and `workspace` (its file home serves /workspace, its Computer runs `shell`: host-workspace.ts).
import type { ServerStreamEvent, SessionStreamEvent, TurnStreamEvent } from "../generated/client/types.gen.js";
import type { Handlers } from "../generated/server/routes.js";
import { Failure, unavailable, validationFailure } from "../services/contract/failure.js";
import { ActivityHub } from "../services/core/events/hub.js";
import { EventStreams } from "../services/core/events/streams.js";
import { SessionService } from "../services/core/sessions.js";
import type { StoredInstructions } from "../services/core/turns/admission.js";
import type { TurnRunner } from "../services/core/turns/runner.js";
import { sessionHandlers } from "../services/host/handlers.js";
import { withStorageFailures } from "../services/host/storage-failures.js";
import { createFetchHandler, PROTOCOL_VERSION, statusOf, VERSION_HEADER, type FetchHandler, type RequestContext } from "../services/http/handler.js";
import type { ProviderSet } from "../services/providers/index.js";
import type { StorageHandle } from "../services/storage/index.js";
import { compactions as compactionStore, turns as turnStore } from "../services/storage/index.js";
import { RecoveryAlarm, type AlarmStorage, type RecoveryQuarantine } from "./alarm.js";
import { authorityProviderKeys, type AuthorityEnv } from "./authority-routes.js";
import { workerExecuteTool } from "./codemode.js";
import { WorkspaceFileStore, workspaceFileRoutes, agentsInstructions, workspaceFileTools, type FilesStorageInput } from "./files/index.js";
import { HostAlarmCoordinator, type AlarmParticipant } from "./host-alarm.js";
import { catalogRevision, compileHostSettings, type CompiledHostSettings, type RejectedProvider, type WorkerHostSettings, type WorkerModelCatalogStatus } from "./host-options.js";
import { hostWatches, type WatchServerOptions, type WatchSessionOptions, type WatchTurnOptions } from "./host-watch.js";
import { OPENAPI_DOCUMENT, RELEASE } from "./release.js";
import { openDurableObjectStorage, type DurableObjectStorageInput } from "./storage.js";
import { composeWorkerMcp } from "./mcp-compose.js";
import { workerMcpHandlers } from "./mcp-routes.js";
import { callbackPage } from "./oauth.js";
import BUILT_DASHBOARD from "ze-harness:dashboard-asset";
import { UNBUILT_DASHBOARD } from "../services/http/dashboard.js";
import { workspaceSkills } from "./skills.js";
import { createWorkerPlugins, type WorkerPlugins } from "./plugins.js";
import { checkHostPluginOptions, type WorkerHostPluginOptions, type WorkerServerPluginEntry, type WorkerServerPluginStatus } from "./host-plugins.js";
import { scopedLoader, type WorkerLoaderBinding } from "./plugins-loader.js";
import { closingSessionMcp, reconnectingMcp, sessionCallbackTargets, sessionMcpOperations } from "./plugins-mcp.js";
import { unavailableShellTool, workerTools } from "./tools.js";
import { workspaceAgents } from "./agents.js";
import { composeWorkerTurns, environmentKeys, gatewayEnvironment, type ProviderKeys } from "./turns.js";
import { workerUnavailableHandlers } from "./unavailable.js";
import { WORKSPACE_ROOT, workspaceWorkdirs } from "./workspace.js";
import { computerShellTool, workspaceProblem, type HostWorkspace } from "./host-workspace.js";
import { credentialOptionsProblem, HostCredentials, memoizedKeys, notInjected, type ScopedProviderCredentialResolver } from "./host-credentials.js";
import type { DurableContentResolver } from "../services/core/turns/content.js";
import { embedderPortProblem, type ToolDispatchLifecycle } from "../services/core/turns/dispatch.js";
import type { AnyToolDefinition } from "../services/tools/tool.js";

/** What the host takes of its Durable Object's state (`ctx`). */
export interface HostDurableObjectState {
  readonly storage: DurableObjectStorageInput & AlarmStorage & FilesStorageInput;
  blockConcurrencyWhile<T>(fn: () => Promise<T>): Promise<T>;
  /** Keeps the object alive for an admission's drain (`ctx.waitUntil`); absent: the drain just runs. */
  waitUntil?(promise: Promise<unknown>): void;
}

export interface WorkerHarnessHostOptions extends WorkerHostSettings, WorkerHostPluginOptions {
  readonly state: HostDurableObjectState;
  /** The server this object serves; a function when it is learnt later (the standalone object binds on first request). */
  readonly server: string | (() => string | undefined);
  /** The injected key port: asked first, one provider at a time. */
  readonly providerKeys?: ProviderKeys;
  /** The Worker's bindings: ambient key discovery reads them (secrets, `HARNESS_PROVIDER_AUTHORITY`) unless `'injected-only'`. */
  readonly env?: Readonly<Record<string, unknown>>;
  /** How far ahead recovery is armed while Turns are due (ms; default 10 s). */
  readonly recoveryIntervalMs?: number;
  /** One line per alarm outcome (error names only) or unused model catalog worth logging; default `console.warn`. */
  readonly log?: (line: string) => void;
  /** Resolves `content-reference` parts at model-request time, after visibility filtering (services/core/turns/content.ts). */
  readonly contentResolver?: DurableContentResolver;
  /** Host custody of every approved tool call (services/core/turns/dispatch.ts). */
  readonly toolDispatch?: ToolDispatchLifecycle;
  /** The host-provided Workspace: its file home serves /workspace, its Computer runs `shell` (worker/host-workspace.ts). Never closed by the host. */
  readonly workspace?: HostWorkspace;
  /** Injected-only: asked at every model acquisition serving Session work (once per Turn), before the live slot (worker/host-credentials.ts). */
  readonly resolveProviderCredential?: ScopedProviderCredentialResolver;
}

export interface WorkerHostResources {
  /** The enabled providers the host compiled. */
  readonly providerIds: readonly string[];
  /** Ids left out under `unknownProviders: 'report'` (empty under `'fail'`). */
  readonly rejectedProviders: readonly RejectedProvider[];
  readonly modelCatalog: WorkerModelCatalogStatus;
}

/** The recovery alarm's default interval: a restarted object's open Turns are recovered within it. */
export const DEFAULT_RECOVERY_INTERVAL_MS = 10_000;

interface Served {
  readonly storage: StorageHandle;
  readonly fetch: FetchHandler;
  readonly streams: EventStreams;
  readonly compiled: CompiledHostSettings;
  readonly recovery: RecoveryAlarm;
  /** Answers a forwarded MCP OAuth callback (worker/oauth.ts). */
  readonly callback: (request: Request) => Promise<Response>;
  readonly plugins: WorkerPlugins;
  /** A requested MCP reconnect (worker/mcp.ts `reconnect`): the server's, or a Session's own. */
  readonly reconnectMcp: (name: string, sessionId?: string) => Promise<boolean>;
}

/** A Failure as the HTTP answer the Fetch handler would give it. */
export const errorResponse = (failure: Failure): Response =>
  Response.json(failure.body, { status: statusOf(failure.body), headers: { [VERSION_HEADER]: `${PROTOCOL_VERSION}/${RELEASE}`, "Access-Control-Expose-Headers": VERSION_HEADER } });

/** Why the host cannot serve (a migration or configuration refusal), as a thrown value. */
const refusalError = (refusal: { tag: string; message: string }): Error & { _tag: string } => Object.assign(new Error(refusal.message), { _tag: refusal.tag, name: refusal.tag });

export class WorkerHarnessHost {
  readonly #options: WorkerHarnessHostOptions;
  readonly #server: () => string | undefined;
  readonly #alarm: HostAlarmCoordinator;
  /** Injected-only: the live provider key slot (and resolver) the gateway reads at every acquisition. */
  readonly #credentials: HostCredentials | undefined;
  #served: Served | undefined;
  /** Why the host cannot serve (a migration or configuration refusal), answered to every request. */
  #refusal: { readonly tag: string; readonly message: string } | undefined;
  /** Starts (or re-runs) the runner's recovery and scheduling. */
  #drain: (() => Promise<void>) | undefined;
  /** Settles when the database is open and the host composed (or refused). */
  readonly ready: Promise<void>;
  readonly watchTurn: (sessionId: string, turnId: string, options?: WatchTurnOptions) => Promise<AsyncIterableIterator<TurnStreamEvent>>;
  readonly watchSession: (sessionId: string, options?: WatchSessionOptions) => Promise<AsyncIterableIterator<SessionStreamEvent>>;
  readonly watchServer: (options?: WatchServerOptions) => Promise<AsyncIterableIterator<ServerStreamEvent>>;

  constructor(options: WorkerHarnessHostOptions) {
    this.#options = options;
    const server = options.server;
    this.#server = typeof server === "function" ? server : () => server;
    this.#alarm = new HostAlarmCoordinator(options.state.storage);
    this.#credentials = options.credentialMode === "injected-only" ? new HostCredentials(options.resolveProviderCredential) : undefined;
    const watches = hostWatches(() => this.#streams(), this.#server);
    this.watchTurn = watches.watchTurn;
    this.watchSession = watches.watchSession;
    this.watchServer = watches.watchServer;
    this.ready = options.state.blockConcurrencyWhile(async () => {
      try {
        const storage = await openDurableObjectStorage({ storage: options.state.storage, server: this.#server() ?? "(unbound)" });
        this.#served = await this.#compose(storage);
      } catch (error) {
        // Kept and answered: thrown out of blockConcurrencyWhile it would reset the object.
        const tagged = error as { _tag?: string; message?: string };
        this.#refusal = { tag: tagged._tag ?? "StorageError", message: tagged.message ?? String(error) };
      }
    });
  }

  async #streams(): Promise<EventStreams> {
    await this.ready;
    if (this.#served === undefined) throw unavailable(this.#refusalMessage());
    return this.#served.streams;
  }

  #refusalMessage(): string {
    const refusal = this.#refusal ?? { tag: "StorageError", message: "The server's database is not open" };
    return `${refusal.tag}: ${refusal.message}`;
  }

  #keys(providers: ProviderSet): ProviderKeys {
    const { providerKeys: port, credentialMode } = this.#options;
    if (credentialMode === "injected-only") return port ?? { providerKeys: async () => undefined };
    const env = this.#options.env ?? {};
    // A stored connection wins over the Worker secret (a stored-but-unreadable one blocks it), else the secrets alone.
    const ambient = env["HARNESS_PROVIDER_AUTHORITY"] !== undefined ? authorityKeys(env as AuthorityEnv) : environmentKeys(env, providers);
    if (port === undefined) return ambient;
    return { providerKeys: async (providerId) => (await port.providerKeys(providerId)) ?? (await ambient.providerKeys(providerId)) };
  }

  async #compose(storage: StorageHandle): Promise<Served> {
    const state = this.#options.state;
    const hub = new ActivityHub((announce) => storage.afterCommit(announce));
    storage.onTurnEvents((rows) => hub.turnEvents(rows));
    let runner: TurnRunner | undefined;
    const workspaceRefusal = workspaceProblem(this.#options.workspace);
    if (workspaceRefusal !== undefined) throw Object.assign(new Error(`WorkerHarnessHost option workspace: ${workspaceRefusal}`), { _tag: "ConfigInvalid" });
    // The server's /workspace: the embedder's file home, else the object's SQLite (its own migration runs here, after the server's).
    const files = new WorkspaceFileStore(this.#options.workspace?.files ?? state.storage);
    // Built-in agents and the Markdown ones in /workspace/.ze-harness/agents, read at each use, with
    // the server plugins' (the host generation) once the plugins are composed.
    const storeAgents = workspaceAgents(files);
    let plugins: WorkerPlugins | undefined;
    const agents = () => plugins?.agents() ?? storeAgents();
    // What a deleted Session leaves behind (its own MCP servers, their credential rows): set once composed.
    let forgetDeleted: ((sessionId: string) => void) | undefined;
    const sessions = new SessionService({
      storage,
      serverRoot: WORKSPACE_ROOT,
      hub,
      workdirs: workspaceWorkdirs,
      agents: () => agents(),
      // Every deleted id (a parent's spawned children and a deleteServer's Sessions too, not only
      // the one deleteSession names) drops its own MCP servers and credential rows.
      onDeleted: (ids) => {
        runner?.abandonSessions(ids);
        for (const id of ids) forgetDeleted?.(id);
      },
    });
    const credentialProblem = credentialOptionsProblem(this.#options);
    if (credentialProblem !== undefined) throw Object.assign(new Error(`WorkerHarnessHost option ${credentialProblem}`), { _tag: "ConfigInvalid" });
    const ports = embedderPortProblem(this.#options);
    if (ports !== undefined) throw Object.assign(new Error(`WorkerHarnessHost option ${ports}`), { _tag: "ConfigInvalid" });
    const compiled = compileHostSettings(this.#options);
    // A bad option is refused at wake and answered to every request (never a crash loop).
    if (!compiled.ok) throw Object.assign(new Error(compiled.message), { _tag: compiled.tag });
    const pluginOptions = checkHostPluginOptions(this.#options);
    if (!pluginOptions.ok) throw Object.assign(new Error(pluginOptions.message), { _tag: pluginOptions.tag });
    const configured = compiled.value.configured;
    if (compiled.value.catalog.diagnostic !== undefined) this.#log(`catalog: ${compiled.value.catalog.diagnostic}`);
    // Injected-only: the port is asked once per provider (the slot's seeds and the wake environment).
    const keys = this.#credentials !== undefined ? memoizedKeys(this.#keys(configured.providers)) : this.#keys(configured.providers);
    const codemode = configured.config.codemode?.enabled !== false;
    // HARNESS_MCP's servers: started by the first Turn or MCP route, never at wake.
    const mcp = composeWorkerMcp({ env: this.#options.env ?? {}, storage: state.storage, serverName: () => this.#server() ?? "" });
    const computer = this.#options.workspace?.computer;
    const extraTools = { ...workspaceFileTools(files), ...(codemode ? { execute: workerExecuteTool() } : {}), ...(computer !== undefined ? { shell: computerShellTool(computer, unavailableShellTool) as AnyToolDefinition } : {}) };
    const env = this.#options.env ?? {};
    // Session plugins (worker/plugins.ts): `Bundle` sources through the `LOADER` binding, when bound.
    const skills = workspaceSkills(files);
    plugins = await createWorkerPlugins({
      storage,
      objectStorage: state.storage,
      files,
      loader: scopedLoader(this.#options.dynamicPlugins?.loader ?? (env["LOADER"] as WorkerLoaderBinding | undefined), this.#server() ?? "(unbound)"),
      staticPlugins: pluginOptions.staticPlugins,
      serverPlugins: pluginOptions.serverPlugins,
      agents: storeAgents,
      skills,
      allowLoopbackHttp: env["HARNESS_PLUGIN_BUNDLE_LOOPBACK_HTTP"] === "true",
      reservedToolIds: Object.keys(workerTools({ extra: extraTools })),
      onDiagnostic: (source, error) => this.#log(`plugins: ${source}: ${error instanceof Error ? error.name : "error"}`),
      mcp: mcp.host,
      mcpOAuth: mcp.sessionOAuth,
    });
    const composedPlugins = plugins;
    forgetDeleted = (sessionId) => {
      mcp.forgetSession(sessionId);
      void composedPlugins.forgetSession(sessionId).catch(() => {});
    };
    const gatewayEnv = await gatewayEnvironment(configured.providers, keys);
    // Injected-only: acquisitions read the live slot bound to this environment (worker/host-credentials.ts).
    await this.#credentials?.bind(gatewayEnv, configured.providers, keys);
    const turns = composeWorkerTurns({
      storage,
      hub,
      sessions,
      configured,
      env: gatewayEnv,
      extraTools,
      lease: plugins.lease,
      instructions: async (workdir) => storedInstructions(files, workdir),
      mcp: mcp.host,
      skills,
      agents,
      ...(this.#options.contentResolver !== undefined ? { contentResolver: this.#options.contentResolver } : {}),
      ...(this.#options.toolDispatch !== undefined ? { toolDispatch: this.#options.toolDispatch } : {}),
      // Recovery runs first on every admission (the alarm is the backstop).
      onAdmission: () => this.notifyAdmission(),
    });
    runner = turns.runner;
    const started = runner;
    // The runner starts with the first drain: its own recovery (claims of a previous instance are
    // gone), then the pending work, then its lease renewal. Waking the object starts nothing: reads
    // and the streams are observational; an admission or the alarm drains.
    let starting: Promise<void> | undefined;
    this.#drain = async (): Promise<void> => {
      if (starting === undefined) {
        starting = started.start();
        starting.catch(() => (starting = undefined));
        return starting;
      }
      await starting;
      await started.recover();
      await started.schedule();
    };
    const recovery = new RecoveryAlarm({
      storage: this.#alarm.recoveryStorage(),
      intervalMs: this.#options.recoveryIntervalMs ?? DEFAULT_RECOVERY_INTERVAL_MS,
      recover: this.#drain,
      due: () => workDue(storage),
      log: (line) => this.#log(`alarm: ${line}`),
    });
    this.#alarm.setRecovery(() => recovery.alarm());
    // Work left open (an object restarted mid-Turn) gets its alarm if none is armed.
    await recovery.wake();
    await this.#alarm.rearm();
    const handlers: Handlers<RequestContext> = {
      ...workerUnavailableHandlers<RequestContext>(),
      ...closingSessionMcp(sessionHandlers({ sessions, release: RELEASE }), plugins, mcp),
      ...turns.handlers,
      ...workerMcpHandlers({ sessions, turns: turns.service, mcp: mcp.operations, own: sessionMcpOperations(plugins) }),
      ...plugins.handlers,
      // Listing, reading and watching the Session workdir in the /workspace store (worker/files/routes.ts).
      ...workspaceFileRoutes({ sessions, store: files, serverRules: configured.config.permissions }),
    };
    const fetch = createFetchHandler({
      handlers: withStorageFailures(handlers),
      release: RELEASE,
      // In-object calls are trusted: the embedder (or the standalone gateway) checked its caller.
      guard: { allowedHosts: ["*"] },
      servers: (name) => name === this.#server(),
      openapi: () => OPENAPI_DOCUMENT,
      // GET /dashboard, the page the Node daemon serves, for this host's server (inlined at bundle time).
      dashboard: { server: this.#server() ?? "", asset: () => BUILT_DASHBOARD ?? UNBUILT_DASHBOARD },
    });
    return { storage, fetch, streams: new EventStreams(storage, hub), compiled: compiled.value, recovery, callback: (request) => mcp.callback(request, sessionCallbackTargets(plugins)), plugins, reconnectMcp: reconnectingMcp(mcp.host, plugins) };
  }

  #log(line: string): void {
    (this.#options.log ?? ((text: string) => console.warn(`harness ${text}`)))(line);
  }

  /** Answers an MCP OAuth callback forwarded to this server (`GET /oauth/callback/:server`; worker/oauth.ts). */
  async oauthCallback(request: Request): Promise<Response> {
    await this.ready;
    if (this.#served === undefined) return callbackPage(404, "Not an expected callback", "Ze Harness is not waiting for this authorization.");
    return this.#served.callback(request);
  }

  /** Serves one request of the host's server (trusted: no bearer check). */
  async fetch(request: Request): Promise<Response> {
    await this.ready;
    if (this.#served === undefined) return errorResponse(unavailable(this.#refusalMessage()));
    const response = await this.#served.fetch(request);
    // The alarm an admission asked for is armed before its answer leaves.
    await this.#served.recovery.settled();
    return response;
  }

  /** The Durable Object's `alarm()`: recovery when its revision is due, then the due participants (worker/host-alarm.ts). */
  async alarm(): Promise<void> {
    await this.ready;
    await this.#alarm.alarm();
  }

  /** An admission made outside `fetch` (or by it): arms recovery and drains through `waitUntil`. */
  notifyAdmission(): void {
    this.#served?.recovery.admitted();
    const drain = this.#drain;
    if (drain === undefined) return;
    const running = drain().catch(() => {});
    this.#options.state.waitUntil?.(running);
  }

  /** A host-owned alarm participant: `run` is called from `alarm()` once `setParticipantDue(id, at)` is due. */
  registerAlarmParticipant(id: string, run: AlarmParticipant): Promise<void> {
    return this.#alarm.registerAlarmParticipant(id, run);
  }

  /** Wakes participant `id` at `at` (epoch ms) on the object's one alarm; `null` clears it. */
  setParticipantDue(id: string, at: number | null): Promise<void> {
    return this.#alarm.setParticipantDue(id, at);
  }

  /** What the host compiled: provider ids, the ids `unknownProviders: 'report'` left out, and the model catalog. Rejects with the host's refusal. */
  /** Injected-only: writes (replaces) one provider's key in memory; the next model acquisition uses it. Throws on other hosts and unknown ids. */
  async setProviderCredential(providerId: string, apiKey: string): Promise<void> {
    (await this.#liveCredentials()).set(providerId, apiKey);
  }

  /** Injected-only: whether the slot holds a key for the provider (never the key; `false` for unknown ids). */
  async hasProviderCredential(providerId: string): Promise<boolean> {
    return (await this.#liveCredentials()).has(providerId);
  }

  /** Injected-only: removes the provider's key; new acquisitions fail closed, in-flight ones keep theirs. Throws on unknown ids. */
  async removeProviderCredential(providerId: string): Promise<void> {
    (await this.#liveCredentials()).remove(providerId);
  }

  async #liveCredentials(): Promise<HostCredentials> {
    const credentials = this.#credentials;
    if (credentials === undefined) throw notInjected();
    await this.ready;
    if (this.#served === undefined) throw refusalError(this.#refusal ?? { tag: "StorageError", message: "The server's database is not open" });
    return credentials;
  }

  async resources(): Promise<WorkerHostResources> {
    await this.ready;
    if (this.#served === undefined) throw refusalError(this.#refusal ?? { tag: "StorageError", message: "The server's database is not open" });
    const { configured, rejectedProviders, catalog } = this.#served.compiled;
    return {
      providerIds: configured.providers.providers.filter((provider) => provider.enabled).map((provider) => provider.id),
      rejectedProviders,
      modelCatalog: {
        source: catalog.source,
        contentRevision: catalogRevision(catalog.catalog),
        publishedAt: catalog.publishedAt,
        ...(catalog.diagnostic !== undefined ? { diagnostic: catalog.diagnostic } : {}),
      },
    };
  }

  /** Each server plugin's url, plugin id, pinned integrity and state (worker/host-plugins.ts). Rejects with the host's refusal. */
  async serverPlugins(): Promise<WorkerServerPluginStatus[]> {
    return (await this.#plugins()).serverPlugins();
  }

  /** Replaces the server plugin list and reloads the host generation; `WorkerServerPluginConflict` or `WorkerServerPluginRejected` keep the previous one. */
  async setServerPlugins(entries: readonly WorkerServerPluginEntry[]): Promise<WorkerServerPluginStatus[]> {
    return (await this.#plugins()).setServerPlugins(entries);
  }

  async #plugins(): Promise<WorkerPlugins> {
    await this.ready;
    if (this.#served === undefined) throw refusalError(this.#refusal ?? { tag: "StorageError", message: "The server's database is not open" });
    return this.#served.plugins;
  }

  /**
   * Reconnects the MCP server `name` now (the reference's "until the host requests a reconnect"):
   * a `manual` server, or one past its `maxAttempts`, gets a new attempt with its attempts counted
   * from zero; with `sessionId`, the Session plugin's own server of that name. Resolves false when
   * no such server is configured; waits for the attempt at most 5 s (its status tells the rest).
   */
  async reconnectMcpServer(name: string, options: { readonly sessionId?: string } = {}): Promise<boolean> {
    await this.ready;
    if (this.#served === undefined) throw refusalError(this.#refusal ?? { tag: "StorageError", message: "The server's database is not open" });
    return this.#served.reconnectMcp(name, options.sessionId);
  }

  /** The last quarantined recovery revision, for operators (worker/alarm.ts). */
  async quarantineState(): Promise<RecoveryQuarantine | undefined> {
    await this.ready;
    return this.#served?.recovery.quarantineState();
  }
}

/** Whether Turns or manual compactions are admitted or running (the recovery alarm stays armed). */
async function workDue(storage: StorageHandle): Promise<boolean> {
  const [open, compacting] = await Promise.all([
    turnStore.allTurnsInPhases(storage, ["pending", "running"]),
    compactionStore.sessionsWithPendingCompactions(storage),
  ]);
  return open.length > 0 || compacting.length > 0;
}

/** The authority's `providerKeys` as the gateway's key seam: a provider with no usable key has none. */
function authorityKeys(env: AuthorityEnv): ProviderKeys {
  const resolve = authorityProviderKeys(env);
  return {
    async providerKeys(providerId) {
      const key = await resolve(providerId);
      return key.ok ? key.key?.reveal() : undefined;
    },
  };
}

/** The workdir's AGENTS.md for a new Turn, as Node's admission reads it: null when absent, a 400 when unusable. */
function storedInstructions(files: WorkspaceFileStore, workdir: string): StoredInstructions | null {
  const read = agentsInstructions(files, workdir);
  if (read === undefined) return null;
  if (read._tag === "InstructionFileInvalid") throw validationFailure(`Invalid request: ${read.message} (${read.canonicalPath})`);
  return { path: read.path, content: read.content };
}
