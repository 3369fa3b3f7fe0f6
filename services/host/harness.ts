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
import { openDatabase, type SessionRow, type StorageHandle } from "../storage/index.js";
import { sessionHandlers, turnHandlers } from "./handlers.js";
import { depthHandlers } from "./depth-handlers.js";
import type { Subagents } from "../core/subagents/host.js";
import { createModelGateway, ProviderSetupFailed, setupFailed } from "./models.js";
import { CatalogSetupError, HostModelCatalog } from "./model-catalog.js";
import { modelHandlers } from "./model-handlers.js";
import type { ProviderGateway } from "./models.js";
import type { ModelGateway } from "../core/turns/gateway.js";
import type { HookPipeline } from "../plugins/hooks.js";
import { unavailableHandlers } from "./unavailable.js";
import { providerHandlers } from "./provider-handlers.js";
import { LoginManager, authFileLocation } from "../providers/index.js";
import { CORE_TOOL_IDS } from "../tools/ids.js";
import { createHistoryServices, historyHandlers } from "./history-handlers.js";
import { createWorkspaceHistoryServices, workspaceHistoryHandlers } from "./workspace-history-handlers.js";
import { loadHostCatalogs, type HostCatalogs } from "./catalogs.js";
import { mcpHandlers } from "./mcp-handlers.js";
import { prepareHostMcp, type HostMcp } from "./mcp-host.js";
import { combineOffers, SessionMcpHosts, type SessionMcp } from "./session-mcp.js";
import { pluginHandlers } from "./plugin-routes.js";
import { workspaceFilesHandlers } from "./workspace-files-handlers.js";
import { RewindService } from "../core/rewind/service.js";
import { ANSWERED_DURING_PLUGIN_ACTIVATION, afterActivation, pluginMcpServers, prepareHostPlugins, type HostPlugins } from "./plugin-host.js";
import { HarnessStartupError } from "./errors.js";
import { packageRoot, release } from "./version.js";
import { AUTH_FILE_VARIABLE } from "../providers/index.js";
import { dashboardAsset } from "./dashboard.js";
import { TerminalHost } from "./terminals.js";
import { terminalHandlers } from "./terminal-handlers.js";
import { stderrLogger, type DaemonLog } from "../daemon/log.js";
import { withDaemonLog } from "../daemon/handlers.js";
import { withStorageFailures } from "./storage-failures.js";
import { createHostSandbox, type HostSandboxSetup } from "./sandbox-host.js";
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

const FALLBACK_REFERENCE =
  '<!doctype html><meta charset="utf-8"><title>Ze Harness API</title><p>The API reference page is built by <code>npm run build</code>. The OpenAPI document is at <a href="/openapi.json">/openapi.json</a>.</p>';

async function createRunner(
  storage: StorageHandle,
  hub: ActivityHub,
  gateway: ModelGateway,
  config: Config,
  catalogs: HostCatalogs,
  subagents: Subagents,
  mcp: HostMcp,
  plugins: HostPlugins,
  models: HostModelCatalog,
  options: HarnessOptions,
  sessionMcp: SessionMcpHosts,
  rewind: RewindService,
  terminals: TerminalHost,
  sandbox: HostSandboxSetup | undefined,
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
  const unleased = { tools: registry, hooks: hostHooks, get agents() { return catalogs.agents; }, release: () => {} };
  // The Session row says whether it has an overlay: a plain Turn costs no plugin statement.
  const leasePlugins = async (session: SessionRow) => {
    // A generation activating in the background is waited for (bounded by each plugin's limits).
    if (!plugins.loaded() && !plugins.activating() && !session.pluginOverlay) return unleased;
    const [services, { createToolRegistry }] = await Promise.all([plugins.get(), import("../plugins/generation.js")]);
    const lease = await services.sessions.lease(session.id);
    return {
      tools: createToolRegistry(base, lease.host, lease.session),
      hooks: HookPipeline.combine(hostHooks, lease.hooks),
      agents: lease.session?.agentCatalog ?? lease.host.agentCatalog ?? catalogs.agents,
      release: () => lease.release(),
    };
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
          const extensions = await leasePlugins(session);
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
    ...(config.contentFlushMillis !== undefined ? { flushMs: config.contentFlushMillis } : {}),
    ...(options.leaseMs !== undefined ? { leaseMs: options.leaseMs } : {}),
  });
}

export async function createHarness(input: HarnessOptions): Promise<Harness> {
  // The auth file override travels in the host's environment object, which every room reads.
  const options: HarnessOptions =
    input.authFilePath !== undefined ? { ...input, env: { ...input.env, [AUTH_FILE_VARIABLE]: resolve(input.authFilePath) } } : input;
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
    });
  } catch (error) {
    const tagged = error as { _tag?: string; message?: string };
    if (typeof tagged._tag === "string") throw new HarnessStartupError(tagged._tag, tagged.message ?? tagged._tag);
    throw error;
  }

  let gateway: ModelGateway;
  let models: HostModelCatalog;
  try {
    models = await HostModelCatalog.create({ config: loaded.value.config, env: options.env, warn: options.onWarning });
    gateway = options.gateway ?? createModelGateway(loaded.value.config, options.env, loaded.value.layers, models);
  } catch (error) {
    await storage.close();
    const failed = error instanceof CatalogSetupError ? setupFailed(error.error, loaded.value.layers) : error;
    if (failed instanceof ProviderSetupFailed) throw new HarnessStartupError(failed.tag, failed.message);
    throw error;
  }
  const config = loaded.value.config;
  // The OS sandbox of shell calls, terminals and MCP stdio servers (undefined when off).
  const sandbox = createHostSandbox({ config, flag: options.sandbox, env: options.env, database: resolveDatabaseOption(options), configPath: options.configPath });
  let catalogs: HostCatalogs;
  let mcp: HostMcp;
  let plugins: HostPlugins;
  try {
    plugins = await prepareHostPlugins({
      storage,
      serverRoot: options.serverRoot,
      env: options.env,
      config,
      configPath: options.configPath,
      inlineConfig: options.inlineConfig,
      inlinePlugins: options.inlinePlugins,
      reservedToolIds: CORE_TOOL_IDS,
      // Loaded at startup when configured; otherwise on the first plugin operation or the first
      // Turn of a Session with a plugin overlay (a plain one-shot `run` never loads the room).
      eager: false,
      startup: options.backgroundPlugins === true ? "background" : "await",
      // Rejected after the listener opened, there is no caller to fail: the host's log says it.
      onRejected: options.onWarning ?? ((message) => (options.daemonLog ?? stderrLogger("server")).warn("plugins.rejected", { message })),
    });
    catalogs = loadHostCatalogs({
      config,
      layers: loaded.value.layers,
      env: options.env,
      warn: options.onWarning,
      current: () => plugins.loaded()?.runtime.current.agentCatalog,
      pluginSkills: () => plugins.loaded()?.runtime.current.skills ?? [],
    });
    mcp = await prepareHostMcp({
      config,
      layers: loaded.value.layers,
      env: options.env,
      cwd: options.serverRoot,
      sandbox: sandbox?.sandbox,
      runTurns: options.runTurns !== false,
      // A plugin's servers join at startup (when a background activation settles); a later
      // plugin reload does not restart MCP servers.
      pluginServers: plugins.activating() ? plugins.settled().then(() => pluginMcpServers(plugins)) : pluginMcpServers(plugins),
      onWarning: options.onWarning,
    });
  } catch (error) {
    await storage.close();
    throw error;
  }
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
    recording: () => config.workspace?.recording ?? "repository",
    env: options.env,
  });
  const sessionMcp = subagents ? new SessionMcpHosts({ env: options.env, onWarning: options.onWarning, sandbox: sandbox?.resolver }) : undefined;
  // PTYs clients open in Session workdirs and `shell` calls with `tty: true` run in (node-pty and the emulator load on the first one).
  const terminals = new TerminalHost(storage, options.serverRoot, {}, sandbox?.resolver);
  const runner = subagents && sessionMcp ? await createRunner(storage, hub, gateway, config, catalogs, subagents, mcp, plugins, models, options, sessionMcp, rewind, terminals, sandbox) : undefined;
  const sessions = new SessionService({
    storage,
    serverRoot: options.serverRoot,
    hub,
    agents: () => catalogs.agents,
    onDeleted: (ids: readonly string[]) => {
      runner?.abandonSessions(ids);
      terminals.closeSessions(ids);
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
    ...depthHandlers({ sessions, catalogs, subagents, serverRoot: options.serverRoot }),
    ...historyHandlers(createHistoryServices(storage, hub, config, gateway, runner)),
    ...workspaceHistoryHandlers(createWorkspaceHistoryServices(storage, hub, interactions, options.streamTiming)),
    ...mcpHandlers({ mcp: () => mcp.get(), sessions, turns }),
    ...pluginHandlers({ services: () => plugins.get(), inventory: () => plugins.inventory(), models }),
    ...modelHandlers({ catalog: models, sessions }),
    ...providerHandlers({ providers: () => ("providers" in gateway ? (gateway as ProviderGateway).providers : undefined), env: options.env, logins }),
    ...terminalHandlers(terminals),
    ...workspaceFilesHandlers({ sessions, serverRoot: options.serverRoot, serverRules: config.permissions, rewind }),
  };
  const logged = options.daemonLog ? withDaemonLog(composed, options.daemonLog) : composed;
  const activated = options.backgroundPlugins === true ? afterActivation(logged, () => plugins.settled(), ANSWERED_DURING_PLUGIN_ACTIVATION) : logged;
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
    await sessionMcp?.close();
    await mcp.close();
    await plugins.close();
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
    atomically: (fn) => storage.transaction(() => fn()),
    close,
  };
}
