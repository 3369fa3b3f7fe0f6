// Longer than ~400 lines on purpose: the composition root builds and wires every service in
// dependency order; its length is the list of services it composes.
// createHarness: options → one Fetch handler over real storage and services.
import { readFileSync, existsSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Handlers } from "../../generated/server/routes.js";
import { describeConfigError, globalConfigFile, loadConfig, stateDirectory, type Config, type Env } from "../config/index.js";
import { ActivityHub } from "../core/events/hub.js";
import { EventStreams, type StreamTiming } from "../core/events/streams.js";
import { SessionService } from "../core/sessions.js";
import { InteractionService } from "../core/turns/interactions.js";
import type { RunnerScope, TurnRunner } from "../core/turns/runner.js";
import { TurnService } from "../core/turns/service.js";
import { createFetchHandler, type FetchHandler, type RequestContext } from "../http/handler.js";
import type { GuardOptions } from "../http/guard.js";
import { openDatabase, type StorageHandle, type StorageMigrationProgress } from "../storage/index.js";
import { sessionHandlers, turnHandlers } from "./handlers.js";
import { depthHandlers } from "./depth-handlers.js";
import { createModelGateway, ProviderSetupFailed, setupFailed } from "./models.js";
import { CatalogSetupError, HostModelCatalog } from "./model-catalog.js";
import { HostServedModels } from "./served-models.js";
import { modelHandlers } from "./model-handlers.js";
import type { ProviderGateway } from "./models.js";
import type { ModelGateway } from "../core/turns/gateway.js";
import { withContentResolver, type DurableContentResolver } from "../core/turns/content.js";
import type { ToolDispatchLifecycle } from "../core/turns/dispatch.js";
import type { HookPipeline } from "../plugins/hooks.js";
import { defaultArtifactCacheDirectory, type SessionPluginArtifactOptions } from "../plugins/artifact-options.js";
import { unavailableHandlers } from "./unavailable.js";
import { providerHandlers } from "./provider-handlers.js";
import {
  InjectedCredentials,
  LoginManager,
  authFileLocation,
  bindInjectedCredentials,
  injectedCredentialsOf,
  type CredentialMode,
  type McpOAuthTokenResolver,
  type McpSecretResolver,
  type ProviderCredentialsPort,
  type ScopedProviderCredentialResolver,
} from "../providers/index.js";
import { CORE_TOOL_IDS } from "../tools/ids.js";
import { createHistoryServices, historyHandlers } from "./history-handlers.js";
import { createWorkspaceHistoryServices, workspaceHistoryHandlers } from "./workspace-history-handlers.js";
import { mcpHandlers } from "./mcp-handlers.js";
import type { HostMcp } from "./mcp-host.js";
import { closingDeclaredMcp, overlayMcpServers, SessionMcpHosts, type SessionMcp } from "./session-mcp.js";
import { createRunner } from "./runner-host.js";
import { pluginHandlers } from "./plugin-routes.js";
import { workspaceFilesHandlers } from "./workspace-files-handlers.js";
import { RewindService } from "../core/rewind/service.js";
import { ANSWERED_DURING_PLUGIN_ACTIVATION, afterActivation } from "./plugin-host.js";
import { createProjectScope, ProjectScopes, type ProjectScope, type ScopeDependencies } from "./project-scopes.js";
import { absoluteWorkdir } from "../contract/paths.js";
import { HarnessStartupError } from "./errors.js";
import { hostLeaseMs } from "./lease.js";
import { packageRoot, release } from "./version.js";
import { AUTH_FILE_VARIABLE, useWireTransport } from "../providers/index.js";
// Node only (node:http), so not part of the providers index the Worker bundles.
import { nodeTransport } from "../providers/node-transport.js";
import { dashboardAsset } from "./dashboard.js";
import { TerminalHost } from "./terminals.js";
import { terminalHandlers } from "./terminal-handlers.js";
import { stderrLogger, type DaemonLog } from "../daemon/log.js";
import { withDaemonLog } from "../daemon/handlers.js";
import { withStorageFailures } from "./storage-failures.js";
import { createHostSandbox } from "./sandbox-host.js";
import type { SandboxSetting } from "../sandbox/index.js";

/** The one server name a local host serves. */
export const LOCAL_SERVER = "local";

export const DEFAULT_DATABASE_FILE = "ze-harness.db";

export interface HarnessOptions {
  /** `--database`: a path (relative → state directory), `:memory:`, or a libSQL URL. Falls back to ZE_HARNESS_DB, then ze-harness.db. */
  readonly database?: string | undefined;
  /** `--config`: replaces the project config layer. */
  readonly configPath?: string | undefined;
  /** A configuration object merged over the files (the embedded SDK's `config`), validated like one. */
  readonly inlineConfig?: unknown;
  /** Trusted plugin objects handed over in code (the embedded SDK's `inlinePlugins`). */
  readonly inlinePlugins?: readonly unknown[] | undefined;
  /** How `Package` and `Git` Session plugin sources install (the embedded SDK's `sessionPluginArtifacts`). */
  readonly sessionPluginArtifacts?: SessionPluginArtifactOptions | undefined;
  /** Native provider definitions (`defineProvider`) by configured provider ID (the embedded SDK's `providerDefinitions`). */
  readonly providerDefinitions?: Readonly<Record<string, unknown>> | undefined;
  /** Where the provider `auth.json` is (default: `<state directory>/auth.json`). */
  readonly authFilePath?: string | undefined;
  /** Session workdirs resolve inside this directory; project config is discovered from it. */
  readonly serverRoot: string;
  readonly env: Env;
  readonly token?: string | undefined;
  readonly allowedHosts?: readonly string[] | undefined;
  readonly allowedOrigins?: readonly string[] | undefined;
  /** Origins that may frame the dashboard besides its own (serve --frame-ancestor; never without a token). */
  readonly frameAncestors?: readonly string[] | undefined;
  /** Warnings worth a log line (a replaced duplicate Skill, a malformed SKILL.md). */
  readonly onWarning?: (message: string) => void;
  /** Unexpected errors (logged by the caller; the client sees only a generic 500). */
  readonly onUnexpectedError?: (error: unknown, operationId?: string) => void;
  /**
   * Run admitted Turns in this process (default true). One-shot embedded commands that only
   * read or write Session metadata pass false, so they never claim work they would abandon.
   */
  readonly runTurns?: boolean;
  /**
   * Which Sessions this host's runner runs: `owned` (an embedded command: only the Sessions it
   * operates on, holding their runner lease) or `unowned` (a server, the default: every Session
   * no other live host holds).
   */
  readonly runnerScope?: RunnerScope;
  /** Replaces the provider-backed model gateway (tests of the loop itself). */
  readonly gateway?: ModelGateway;
  /** Stream heartbeat and idle re-read intervals. */
  readonly streamTiming?: StreamTiming;
  /** Claim lease of running Turns. */
  readonly leaseMs?: number;
  /** The hook pipeline Turns run through (an embedding host's own hooks); empty by default. */
  readonly hooks?: HookPipeline;
  /** A server's background catalog work: discovery at startup, the cached catalog refreshed at startup and hourly. */
  readonly backgroundModels?: boolean;
  /** Only the shared daemon (`serve --register`) passes its log: it serves `GET /v1/logs` and logs `turn.submitted`. */
  readonly daemonLog?: DaemonLog;
  /**
   * A server's plugin startup: activate the configured plugins in the background instead of
   * before the harness is returned, so the listener never waits on a plugin (see plugin-host.ts);
   * operations that draw on plugins wait for the activation, status reads do not.
   */
  readonly backgroundPlugins?: boolean;
  /** `--sandbox MODE`: overrides the config's `sandbox.mode` (services/sandbox; `off` turns it off). */
  readonly sandbox?: SandboxSetting | undefined;
  /**
   * `injected-only` (the reference's injected-host mode): provider keys come only from
   * `providerCredentials` and the in-memory slot the provider connection routes write, MCP
   * secrets and OAuth tokens only from their resolvers — never auth.json, a configured key or the
   * environment (services/providers/injected.ts). Default `ambient`.
   */
  readonly credentialMode?: CredentialMode | undefined;
  readonly providerCredentials?: ProviderCredentialsPort | undefined;
  /** Asked before the slot at every acquisition serving Session work, with its scope (once per Turn); a denial fails the work. */
  readonly resolveProviderCredential?: ScopedProviderCredentialResolver | undefined;
  readonly mcpCredentialResolver?: McpSecretResolver | undefined;
  readonly mcpOAuthTokenResolver?: McpOAuthTokenResolver | undefined;
  /** Hears the database's backup and migration steps while it opens (the daemon's startup progress). */
  readonly onMigrationProgress?: ((progress: StorageMigrationProgress) => void) | undefined;
  /** An embedder's content references resolver (the embedded SDK's `contentResolver`; services/core/turns/content.ts). */
  readonly contentResolver?: DurableContentResolver | undefined;
  /** An embedder's custody of every approved tool call (the embedded SDK's `toolDispatch`; services/core/turns/dispatch.ts). */
  readonly toolDispatch?: ToolDispatchLifecycle | undefined;
}

export interface Harness {
  readonly fetch: FetchHandler;
  readonly config: Config;
  readonly storage: StorageHandle;
  /** The Turn runner, when this harness runs Turns. */
  readonly runner: TurnRunner | undefined;
  /** MCP servers attached to one Session alone, held in memory (an embedding surface's, such as the ACP client's); present when this harness runs Turns. */
  readonly sessionMcp: SessionMcp | undefined;
  /**
   * Runs `fn` — calls made through this harness's own Fetch handler — as one unit of work: every
   * write they make commits together or not at all (an embedded `run` creating a Session and
   * submitting its prompt leaves nothing behind when the admission is refused).
   */
  atomically<T>(fn: () => Promise<T>): Promise<T>;
  /** An injected-only host's in-memory provider key slot (`credentialMode: "injected-only"`). */
  readonly injectedCredentials: InjectedCredentials | undefined;
  close(): Promise<void>;
}

export { HarnessStartupError } from "./errors.js";

export function resolveDatabaseOption(options: Pick<HarnessOptions, "database" | "env">): string {
  return options.database ?? options.env["ZE_HARNESS_DB"] ?? DEFAULT_DATABASE_FILE;
}

function loadDocument(name: string): () => string {
  let cached: string | undefined;
  return () => (cached ??= readFileSync(join(packageRoot(), name), "utf8"));
}

/** How long a host's stop waits for its extensions (MCP servers, plugins) to close. */
const EXTENSION_CLOSE_WAIT_MS = 5_000;

/** Resolves when `work` settles or after `ms`, whichever is first; `work` goes on either way. */
async function settledWithin(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
    timer.unref();
  });
  await Promise.race([work.then(() => undefined, () => undefined), limit]);
  clearTimeout(timer);
}

const FALLBACK_REFERENCE =
  '<!doctype html><meta charset="utf-8"><title>Ze Harness API</title><p>The API reference page is built by <code>npm run build</code>. The OpenAPI document is at <a href="/openapi.json">/openapi.json</a>.</p>';

export async function createHarness(input: HarnessOptions): Promise<Harness> {
  // SDK-free model requests (the Chat Completions adapter) go out through node:http, not fetch.
  useWireTransport(nodeTransport);
  // The auth file override travels in the host's environment object, which every room reads.
  let options: HarnessOptions =
    input.authFilePath !== undefined ? { ...input, env: { ...input.env, [AUTH_FILE_VARIABLE]: resolve(input.authFilePath) } } : input;
  if (options.credentialMode !== undefined && options.credentialMode !== "ambient" && options.credentialMode !== "injected-only") {
    throw new HarnessStartupError("ValidationError", `credentialMode must be "ambient" or "injected-only", not ${JSON.stringify(options.credentialMode)}`);
  }
  const ports = (["providerCredentials", "resolveProviderCredential", "mcpCredentialResolver", "mcpOAuthTokenResolver"] as const).filter((name) => options[name] !== undefined);
  if (ports.length > 0 && options.credentialMode !== "injected-only") {
    throw new HarnessStartupError("ValidationError", `${ports.join(", ")} ${ports.length === 1 ? "needs" : "need"} credentialMode "injected-only" (an injected-port host)`);
  }
  if (options.credentialMode === "injected-only") {
    // So does the injected store: bound to this host's own copy of the environment object.
    let injected: InjectedCredentials;
    try {
      injected = new InjectedCredentials(options);
    } catch (error) {
      throw new HarnessStartupError("ValidationError", (error as Error).message);
    }
    options = { ...options, env: { ...options.env } };
    bindInjectedCredentials(options.env, injected);
  }
  const loaded = loadConfig({
    cwd: options.serverRoot,
    env: options.env,
    ...(options.configPath !== undefined ? { configFile: options.configPath } : {}),
    ...(options.inlineConfig !== undefined ? { inline: options.inlineConfig } : {}),
  });
  if (!loaded.ok) throw new HarnessStartupError(loaded.error._tag, describeConfigError(loaded.error));

  const state = stateDirectory(options.env);
  let storage: StorageHandle;
  try {
    storage = await openDatabase({
      url: resolveDatabaseOption(options),
      authToken: options.env["ZE_HARNESS_DB_AUTH_TOKEN"],
      stateDirectory: state,
      onMigrationProgress: options.onMigrationProgress,
    });
  } catch (error) {
    const tagged = error as { _tag?: string; message?: string };
    if (typeof tagged._tag === "string") throw new HarnessStartupError(tagged._tag, tagged.message ?? tagged._tag);
    throw error;
  }

  let gateway: ModelGateway;
  let models: HostModelCatalog;
  // Plugin models (the host generation's, or what a running Turn leased) beside the composed ones.
  const served = new HostServedModels();
  try {
    models = await HostModelCatalog.create({ config: loaded.value.config, env: options.env, warn: options.onWarning, definitions: options.providerDefinitions, served });
    // Content references resolve at request time, after the history's visibility filter (content.ts).
    gateway = withContentResolver(options.gateway ?? createModelGateway(loaded.value.config, options.env, loaded.value.layers, models, served), options.contentResolver);
  } catch (error) {
    await storage.close();
    const failed = error instanceof CatalogSetupError ? setupFailed(error.error, loaded.value.layers) : error;
    if (failed instanceof ProviderSetupFailed) throw new HarnessStartupError(failed.tag, failed.message);
    throw error;
  }
  const config = loaded.value.config;
  // The OS sandbox of shell calls, terminals and MCP stdio servers (undefined when off).
  const sandbox = createHostSandbox({ config, flag: options.sandbox, env: options.env, database: resolveDatabaseOption(options), configPath: options.configPath });
  // Each scope (the host's, and one per project a Session works in) builds from these.
  const scopeDependencies: ScopeDependencies = {
    storage,
    env: options.env,
    configPath: options.configPath,
    inlineConfig: options.inlineConfig,
    inlinePlugins: options.inlinePlugins,
    // The cache is pruned against this database's revisions: one directory per database by default.
    sessionPluginArtifacts: { ...options.sessionPluginArtifacts, cacheDirectory: options.sessionPluginArtifacts?.cacheDirectory ?? defaultArtifactCacheDirectory(state, resolveDatabaseOption(options)) },
    sandbox: sandbox?.sandbox,
    runTurns: options.runTurns !== false,
    reservedToolIds: CORE_TOOL_IDS,
    startup: options.backgroundPlugins === true ? "background" : "await",
    // Rejected after the listener opened, there is no caller to fail: the host's log says it.
    onRejected: options.onWarning ?? ((message) => (options.daemonLog ?? stderrLogger("server")).warn("plugins.rejected", { message })),
    onWarning: options.onWarning,
  };
  let hostScope: ProjectScope;
  let mcp: HostMcp;
  try {
    hostScope = await createProjectScope(scopeDependencies, loaded.value, options.serverRoot, true);
    mcp = await hostScope.mcp();
  } catch (error) {
    await storage.close();
    throw error;
  }
  const { catalogs, plugins } = hostScope;

  // The configuration of each Session's project: the host's scope where the files match it.
  const scopes = new ProjectScopes({
    env: options.env,
    serverRoot: options.serverRoot,
    configPath: options.configPath,
    inlineConfig: options.inlineConfig,
    host: { scope: hostScope, loaded: loaded.value },
    build: (project, root) => createProjectScope(scopeDependencies, project, root, false),
    onWarning: options.onWarning,
  });
  const scopeOf = (workdir: string) => scopes.forWorkdir(workdir);
  served.attach(() => plugins, (workdir) => scopes.forWorkdir(workdir));
  // What admission and Session creation read: a scope whose plugins activate is waited for (they may add agents).
  const settledScopeOf = async (workdir: string) => {
    const scope = await scopes.forWorkdir(workdir);
    if (scope !== hostScope) await scope.plugins.settled();
    return scope;
  };
  // Announcements of durable changes wait for the change's transaction to commit.
  const hub = new ActivityHub((announce) => storage.afterCommit(announce));
  storage.onTurnEvents((rows) => hub.turnEvents(rows));
  // The runner, its loop and the tools load only in hosts that run Turns (not one-shot metadata commands).
  // Like the runner, sub-agents load only in hosts that run Turns.
  const subagents = options.runTurns === false ? undefined : new (await import("../core/subagents/host.js")).Subagents({ storage, hub, agents: () => catalogs.agents });
  // Every unexpected error is one ERROR line: in daemon.log on the daemon (where GET /v1/logs
  // reads it), and to the caller's callback (a foreground serve writes it on stderr).
  const reportUnexpected = (error: unknown, operationId: string | undefined): void => {
    options.daemonLog?.error("request.failed", { operation: operationId ?? "-", error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
    options.onUnexpectedError?.(error, operationId);
  };
  const rewind = new RewindService({
    storage,
    onError: (error) => reportUnexpected(error, "turnPatch"),
    // The Session's project decides (its nearest ze-harness.config.json over the global file).
    recording: async (workdir) => (await scopes.forWorkdir(workdir)).config.workspace?.recording ?? "repository",
    env: options.env,
  });
  const sessionMcp = subagents ? new SessionMcpHosts({ env: options.env, onWarning: options.onWarning, sandbox: sandbox?.resolver }) : undefined;
  // PTYs clients open in Session workdirs and `shell` calls with `tty: true` run in (node-pty and the emulator load on the first one).
  // One claim lease for both of this host's work owners (read once: the option, else ZE_HARNESS_LEASE_MS).
  const leaseMs = hostLeaseMs(options);
  const terminals = new TerminalHost(storage, options.serverRoot, {}, sandbox?.resolver, leaseMs);
  const runner = subagents && sessionMcp ? await createRunner(storage, hub, gateway, config, catalogs, subagents, mcp, scopes, models, { ...options, leaseMs }, sessionMcp, rewind, terminals, sandbox, served) : undefined;
  const sessions = new SessionService({
    storage,
    serverRoot: options.serverRoot,
    hub,
    agents: async (workdir: string) => (await settledScopeOf(workdir)).catalogs.agents,
    onDeleted: (ids: readonly string[]) => {
      runner?.abandonSessions(ids);
      terminals.closeSessions(ids);
      // Every deleted Session's own MCP servers stop (a parent's children and a deleted server's
      // Sessions too, not only the one deleteSession names): no stdio server outlives its Session.
      for (const id of ids) {
        void sessionMcp?.forgetDeclared(id).catch(() => {});
        void sessionMcp?.detach(id).catch(() => {});
      }
    },
  });
  const turns = new TurnService({
    storage,
    config,
    hub,
    models: gateway,
    configFile: loaded.value.layers.at(-1)?.file ?? globalConfigFile(options.env),
    catalogs,
    serverRoot: options.serverRoot,
    project: settledScopeOf,
    ...(runner ? { interrupt: (turnId: string, reason?: string) => runner.interrupt(turnId, reason), runner } : {}),
  });
  subagents?.attach({ sessions, turns });
  const interactions = new InteractionService({ storage, hub });
  const streams = new EventStreams(storage, hub, options.streamTiming);
  // Host-held provider logins (polling and token exchange run here; see services/providers/login).
  const logins = new LoginManager({ location: () => authFileLocation(options.env), env: options.env });
  const composed: Handlers<RequestContext> = {
    ...unavailableHandlers<RequestContext>(),
    ...sessionHandlers({ sessions, release: release() }),
    ...turnHandlers({ turns, interactions, streams }),
    ...depthHandlers({ sessions, catalogs, catalogsFor: async (workdir) => (await settledScopeOf(workdir)).catalogs, subagents, serverRoot: options.serverRoot }),
    ...historyHandlers(createHistoryServices(storage, hub, config, gateway, runner)),
    ...workspaceHistoryHandlers(createWorkspaceHistoryServices(storage, hub, interactions, options.streamTiming)),
    ...mcpHandlers({
      mcp: async (server, sessionId) => {
        const session = await sessions.get(server, sessionId);
        const workdir = absoluteWorkdir(options.serverRoot, session.workdir);
        const scope = await scopeOf(workdir);
        const shared = await (await scope.mcp()).get();
        // The servers the Session's plugin overlay declares join its view (origin `session`).
        return sessionMcp ? sessionMcp.operations(sessionId, shared, () => overlayMcpServers(storage, scope.plugins, server, sessionId), workdir) : shared;
      },
      turns,
    }),
    ...pluginHandlers({ services: () => plugins.get(), inventory: () => plugins.inventory(), models }),
    ...modelHandlers({ catalog: models, sessions }),
    ...providerHandlers({ providers: () => ("providers" in gateway ? (gateway as ProviderGateway).providers : undefined), env: options.env, logins }),
    ...terminalHandlers(terminals),
    ...workspaceFilesHandlers({ sessions, serverRoot: options.serverRoot, serverRules: async (workdir) => (await scopeOf(workdir)).config.permissions, rewind }),
  };
  const closing = closingDeclaredMcp(composed, sessionMcp);
  const logged = options.daemonLog ? withDaemonLog(closing, options.daemonLog) : closing;
  const activated = options.backgroundPlugins === true ? afterActivation(logged, plugins, ANSWERED_DURING_PLUGIN_ACTIVATION) : logged;
  const handlers = withStorageFailures(activated);
  const guard: GuardOptions = {
    ...(options.allowedHosts ? { allowedHosts: options.allowedHosts } : {}),
    ...(options.allowedOrigins ? { allowedOrigins: options.allowedOrigins } : {}),
    ...(options.token !== undefined ? { token: options.token } : {}),
  };
  const referencePath = join(packageRoot(), "dist", "reference.html");
  const reference = existsSync(referencePath) ? loadDocument(join("dist", "reference.html")) : () => FALLBACK_REFERENCE;
  const fetch = createFetchHandler({
    handlers,
    release: release(),
    guard,
    servers: (name) => name === LOCAL_SERVER,
    openapi: loadDocument(join("generated", "openapi.json")),
    referencePage: reference,
    dashboard: { server: LOCAL_SERVER, asset: dashboardAsset(), ...(options.frameAncestors && options.token !== undefined ? { frameAncestors: options.frameAncestors } : {}) },
    onUnexpectedError: (error, route) => reportUnexpected(error, route?.operationId),
  });
  const close = async (): Promise<void> => {
    logins.close();
    // Turns first: a `shell` call's terminal (`tty: true`) ends as interrupted, not as hung up.
    await runner?.stop();
    await terminals.stop();
    models.close();
    // Extensions close under their own lifecycle limits, unlimited unless configured: a local MCP
    // server whose tree ignores SIGTERM would hold the host's stop forever. The host stops
    // waiting after EXTENSION_CLOSE_WAIT_MS; each such server's supervisor kills its group when
    // this process exits (its control socket closes), so nothing is left running behind it.
    await settledWithin(Promise.all([sessionMcp?.close(), scopes.close(), hostScope.close()]), EXTENSION_CLOSE_WAIT_MS);
    await sandbox?.sandbox.close();
    await storage.close();
  };
  try {
    await runner?.start();
  } catch (error) {
    // Recovery could not read the database (a damaged file): nothing stays open, and the tag names why.
    await close().catch(() => {});
    const tagged = error as { _tag?: string; message?: string };
    if (typeof tagged._tag === "string") throw new HarnessStartupError(tagged._tag, tagged.message ?? tagged._tag);
    throw error;
  }
  if (options.backgroundModels === true) models.startBackground();
  return {
    fetch,
    config,
    storage,
    runner,
    sessionMcp,
    injectedCredentials: injectedCredentialsOf(options.env),
    atomically: (fn) => storage.transaction(() => fn()),
    close,
  };
}
