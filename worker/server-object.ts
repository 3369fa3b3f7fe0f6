// HarnessServerObject: one Durable Object per server name (binding HARNESS_SERVERS). It holds
// every Session of its server in its own SQLite (worker/storage.ts, migrated on wake inside
// blockConcurrencyWhile) and serves the server's routes through the same generated route table,
// Fetch handler and Core services as the Node host. The gateway (worker/index.ts) forwards each
// `/v1/servers/:server/...` request here and names the server in `x-zephyr-server`; the object
// binds itself to the first name it is addressed by and answers any other with 404.
import type { Handlers } from "../generated/server/routes.js";
import { Failure, unavailable } from "../services/contract/failure.js";
import { ActivityHub } from "../services/core/events/hub.js";
import { SessionService } from "../services/core/sessions.js";
import { sessionHandlers } from "../services/host/handlers.js";
import { withStorageFailures } from "../services/host/storage-failures.js";
import { createFetchHandler, PROTOCOL_VERSION, statusOf, VERSION_HEADER, type FetchHandler, type RequestContext } from "../services/http/handler.js";
import type { StorageHandle } from "../services/storage/index.js";
import { compactions as compactionStore, turns as turnStore } from "../services/storage/index.js";
import type { TurnRunner } from "../services/core/turns/runner.js";
import { RecoveryAlarm, type AlarmStorage } from "./alarm.js";
import { readWorkerConfig, type WorkerConfigVariables } from "./config.js";
import { openDurableObjectStorage, type DurableObjectStorageInput } from "./storage.js";
import { composeWorkerTurns, environmentKeys, gatewayEnvironment, type ProviderKeys } from "./turns.js";
import { authorityProviderKeys, type AuthorityEnv } from "./authority-routes.js";
import { workerExecuteTool } from "./codemode.js";
import { WorkspaceFileStore, agentsInstructions, workspaceFileTools, type FilesStorageInput } from "./files/index.js";
import { validationFailure } from "../services/contract/failure.js";
import type { StoredInstructions } from "../services/core/turns/admission.js";
import { workerUnavailableHandlers } from "./unavailable.js";
import { WORKSPACE_ROOT, workspaceWorkdirs } from "./workspace.js";
import { createWorkerPlugins } from "./plugins.js";
import type { WorkerLoaderBinding } from "./plugins-loader.js";
import { workerTools } from "./tools.js";
import { OPENAPI_DOCUMENT, RELEASE } from "./release.js";

export const SERVER_HEADER = "x-zephyr-server";
export const SESSION_HEADER = "x-zephyr-session-id";
/** Where the object keeps the name it is permanently bound to (its key-value storage). */
const BINDING_KEY = "harness:server";

export interface DurableObjectStateLike {
  readonly storage: DurableObjectStorageInput & AlarmStorage & FilesStorageInput;
  blockConcurrencyWhile<T>(fn: () => Promise<T>): Promise<T>;
}

/** The Worker variables a server object reads (worker/config.ts) and the secrets keys come from. */
export type ServerObjectEnv = WorkerConfigVariables & AuthorityEnv & {
  /** How far ahead the recovery alarm is armed while Turns are due (ms; default 10 s). A development knob: tests shorten it. */
  readonly HARNESS_RECOVERY_INTERVAL_MS?: string;
  readonly [secret: string]: unknown;
};

/** The recovery alarm's default interval: a restarted object's open Turns are recovered within it. */
export const DEFAULT_RECOVERY_INTERVAL_MS = 10_000;

interface Served {
  readonly storage: StorageHandle;
  readonly fetch: FetchHandler;
}

const errorResponse = (failure: Failure): Response =>
  Response.json(failure.body, { status: statusOf(failure.body), headers: { [VERSION_HEADER]: `${PROTOCOL_VERSION}/${RELEASE}`, "Access-Control-Expose-Headers": VERSION_HEADER } });
const notServed = (message: string): Failure => new Failure({ _tag: "NotFoundError", message });

/** The Session id of a `/v1/servers/:server/sessions/:sessionId...` path, if it names one. */
export function sessionIdOf(pathname: string): string | undefined {
  const match = /^\/v1\/servers\/[^/]+\/sessions\/([^/]+)/.exec(pathname);
  if (!match) return undefined;
  try {
    return decodeURIComponent(match[1]!);
  } catch {
    // Bad percent-encoding names no Session (the gateway answers such paths with a 400 first).
    return undefined;
  }
}

export class HarnessServerObject {
  readonly #state: DurableObjectStateLike;
  #bound: string | undefined;
  #served: Served | undefined;
  /** Why the database cannot be used (a migration refusal), answered to every request. */
  #refusal: { readonly tag: string; readonly message: string } | undefined;
  readonly #env: ServerObjectEnv;
  /** Where provider keys come from (the provider authority's RPC, later); absent: the Worker's secrets. */
  readonly #keys: ProviderKeys | undefined;
  #alarms: RecoveryAlarm | undefined;
  /** Starts (or re-runs) the runner's recovery and scheduling without waiting for it. */
  #drain: (() => void) | undefined;

  constructor(state: DurableObjectStateLike, env: ServerObjectEnv, keys?: ProviderKeys) {
    this.#state = state;
    this.#env = env ?? {};
    this.#keys = keys;
    void state.blockConcurrencyWhile(async () => {
      this.#bound = await state.storage.get<string>(BINDING_KEY);
      try {
        const storage = await openDurableObjectStorage({ storage: state.storage, server: this.#bound ?? "(unbound)" });
        this.#served = { storage, fetch: await this.#compose(storage) };
      } catch (error) {
        // Kept and answered: thrown out of blockConcurrencyWhile it would reset the object.
        const tagged = error as { _tag?: string; message?: string };
        this.#refusal = { tag: tagged._tag ?? "StorageError", message: tagged.message ?? String(error) };
      }
    });
  }

  async #compose(storage: StorageHandle): Promise<FetchHandler> {
    const hub = new ActivityHub((announce) => storage.afterCommit(announce));
    storage.onTurnEvents((rows) => hub.turnEvents(rows));
    let runner: TurnRunner | undefined;
    const sessions = new SessionService({
      storage,
      serverRoot: WORKSPACE_ROOT,
      hub,
      workdirs: workspaceWorkdirs,
      onDeleted: (ids) => runner?.abandonSessions(ids),
    });
    const configured = readWorkerConfig(this.#env);
    // A bad Worker variable is refused at wake and answered to every request (never a crash loop).
    if (!configured.ok) throw Object.assign(new Error(configured.message), { _tag: configured.tag });
    // Keys from the provider authority when it is bound (a stored connection wins over the Worker
    // secret; a stored-but-unreadable one blocks it), else from the Worker's secrets alone.
    const keys = this.#keys ?? (this.#env.HARNESS_PROVIDER_AUTHORITY !== undefined ? authorityKeys(this.#env) : environmentKeys(this.#env as Record<string, unknown>, configured.value.providers));
    // The server's /workspace (the object's SQLite; its own migration runs here, after the server's).
    const files = new WorkspaceFileStore(this.#state.storage);
    const codemode = configured.value.config.codemode?.enabled !== false;
    const extraTools = { ...workspaceFileTools(files), ...(codemode ? { execute: workerExecuteTool() } : {}) };
    // Session plugins (worker/plugins.ts): `Bundle` sources through the `LOADER` binding, when bound.
    const plugins = await createWorkerPlugins({
      storage,
      objectStorage: this.#state.storage,
      files,
      loader: this.#env["LOADER"] as WorkerLoaderBinding | undefined,
      allowLoopbackHttp: this.#env["HARNESS_PLUGIN_BUNDLE_LOOPBACK_HTTP"] === "true",
      reservedToolIds: Object.keys(workerTools({ extra: extraTools })),
      onDiagnostic: (source, error) => console.warn(`harness plugins: ${source}: ${error instanceof Error ? error.name : "error"}`),
    });
    const turns = composeWorkerTurns({
      storage,
      hub,
      sessions,
      configured: configured.value,
      env: await gatewayEnvironment(configured.value.providers, keys),
      extraTools,
      lease: plugins.lease,
      instructions: async (workdir) => storedInstructions(files, workdir),
      // Recovery runs first on every admission (the alarm is the backstop).
      onAdmission: () => {
        this.#alarms?.admitted();
        this.#drain?.();
      },
    });
    runner = turns.runner;
    const started = runner;
    // The runner starts with the first drain: its own recovery (claims of a previous instance are
    // gone), then the pending work, then its lease renewal. Waking the object starts nothing: reads
    // and the streams are observational; an admission or the alarm drains.
    let starting: Promise<void> | undefined;
    const drain = async (): Promise<void> => {
      if (starting === undefined) {
        starting = started.start();
        starting.catch(() => (starting = undefined));
        return starting;
      }
      await starting;
      await started.recover();
      await started.schedule();
    };
    this.#drain = () => void drain().catch(() => {});
    this.#alarms = new RecoveryAlarm({
      storage: this.#state.storage,
      intervalMs: positiveInteger(this.#env.HARNESS_RECOVERY_INTERVAL_MS) ?? DEFAULT_RECOVERY_INTERVAL_MS,
      recover: drain,
      due: () => workDue(storage),
      log: (line) => console.warn(`harness alarm: ${line}`),
    });
    // Work left open (an object restarted mid-Turn) gets its alarm if none is armed.
    await this.#alarms.wake();
    const handlers: Handlers<RequestContext> = {
      ...workerUnavailableHandlers<RequestContext>(),
      ...sessionHandlers({ sessions, release: RELEASE }),
      ...turns.handlers,
      ...plugins.handlers,
    };
    return createFetchHandler({
      handlers: withStorageFailures(handlers),
      release: RELEASE,
      // The gateway checked Host, Origin and the token; only it can reach this object.
      guard: { allowedHosts: ["*"] },
      servers: (name) => name === this.#bound,
      openapi: () => OPENAPI_DOCUMENT,
    });
  }

  /** The Durable Object alarm: recovery of lost and pending Turns, with backoff and quarantine (worker/alarm.ts). */
  async alarm(): Promise<void> {
    await this.#alarms?.alarm();
  }

  async fetch(request: Request): Promise<Response> {
    const server = request.headers.get(SERVER_HEADER);
    if (server === null || server === "") return errorResponse(notServed("The request names no server"));
    if (this.#bound === undefined) {
      // Lazily created: the first request addressed to a name binds the object to it for good.
      await this.#state.storage.put(BINDING_KEY, server);
      this.#bound = server;
    }
    if (server !== this.#bound) return errorResponse(notServed(`Server ${JSON.stringify(server)} is not served by this object`));
    const sessionId = request.headers.get(SESSION_HEADER);
    if (sessionId !== null && sessionId !== sessionIdOf(new URL(request.url).pathname)) {
      return errorResponse(notServed(`Session ${JSON.stringify(sessionId)} does not match the request path`));
    }
    if (this.#served === undefined) {
      const refusal = this.#refusal ?? { tag: "StorageError", message: "The server's database is not open" };
      return errorResponse(unavailable(`${refusal.tag}: ${refusal.message}`));
    }
    const response = await this.#served.fetch(request);
    // The alarm an admission asked for is armed before its answer leaves.
    await this.#alarms?.settled();
    return response;
  }
}

const positiveInteger = (text: string | undefined): number | undefined => {
  const value = text !== undefined && /^[0-9]+$/.test(text) ? Number(text) : Number.NaN;
  return Number.isSafeInteger(value) && value > 0 ? value : undefined;
};

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
