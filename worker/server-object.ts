// HarnessServerObject: one Durable Object per server name (binding HARNESS_SERVERS). It holds
// every Session of its server in its own SQLite (worker/storage.ts, migrated on wake inside
// blockConcurrencyWhile) and serves the server's routes through the same generated route table,
// Fetch handler and Core services as the Node host. The gateway (worker/index.ts) forwards each
// `/v1/servers/:server/...` request here and names the server in `x-zephyr-server`; the object
// binds itself to the first name it is addressed by and answers any other with 404.
//
// It is a thin shell composed on `WorkerHarnessHost` (worker/host.ts) — the same path embedding
// hosts take — with options read from the Worker's variables (worker/config.ts): the shell keeps
// the server binding and the identity headers; storage, Turns, recovery and the routes are the host's.
import { Failure, unavailable } from "../services/contract/failure.js";
import { readWorkerConfig, type WorkerConfig, type WorkerConfigVariables } from "./config.js";
import { errorResponse, WorkerHarnessHost, type HostDurableObjectState } from "./host.js";
import { settingsOfConfig } from "./host-options.js";
import type { ProviderKeys } from "./turns.js";
import type { AuthorityEnv } from "./authority-routes.js";
import type { WorkerMcpEnv } from "./mcp-compose.js";
import { callbackPage, callbackServerOf, type WorkerOAuthEnv } from "./oauth.js";

export { DEFAULT_RECOVERY_INTERVAL_MS } from "./host.js";

export const SERVER_HEADER = "x-zephyr-server";
export const SESSION_HEADER = "x-zephyr-session-id";
/** Where the object keeps the name it is permanently bound to (its key-value storage). */
const BINDING_KEY = "harness:server";

export type DurableObjectStateLike = HostDurableObjectState;

/** The Worker variables a server object reads (worker/config.ts) and the secrets keys come from. */
export type ServerObjectEnv = WorkerConfigVariables & AuthorityEnv & WorkerMcpEnv & WorkerOAuthEnv & {
  /** How far ahead the recovery alarm is armed while Turns are due (ms; default 10 s). A development knob: tests shorten it. */
  readonly HARNESS_RECOVERY_INTERVAL_MS?: string;
  readonly [secret: string]: unknown;
};

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
  /**
   * The host this object is composed on, once it is bound to a server name; absent before (an
   * unbound object opens no database: a request that does not bind it, such as an OAuth callback
   * anyone can send for any name, leaves nothing stored) and when a Worker variable is refused.
   */
  #host: WorkerHarnessHost | undefined;
  /** Why the Worker variables cannot be used, answered to every request. */
  readonly #refusal: { readonly tag: string; readonly message: string } | undefined;
  /** Composes the host (once the object is bound); undefined when a Worker variable is refused. */
  readonly #compose: (() => WorkerHarnessHost) | undefined;

  constructor(state: DurableObjectStateLike, env: ServerObjectEnv, keys?: ProviderKeys) {
    this.#state = state;
    const variables = env ?? {};
    const configured = readWorkerConfig(variables);
    // A bad Worker variable is refused at wake and answered to every request (never a crash loop).
    if (!configured.ok) this.#refusal = { tag: configured.tag, message: configured.message };
    else this.#compose = () => this.#composeHost(state, variables, configured.value, keys);
    void state.blockConcurrencyWhile(async () => {
      this.#bound = await state.storage.get<string>(BINDING_KEY);
    });
  }

  /** The host of a bound object, composed on its first event (its wake re-arms recovery). */
  #boundHost(): WorkerHarnessHost | undefined {
    if (this.#host === undefined && this.#bound !== undefined) this.#host = this.#compose?.();
    return this.#host;
  }

  #composeHost(state: DurableObjectStateLike, variables: ServerObjectEnv, configured: WorkerConfig, keys: ProviderKeys | undefined): WorkerHarnessHost {
    const interval = positiveInteger(variables.HARNESS_RECOVERY_INTERVAL_MS);
    return new WorkerHarnessHost({
      state,
      server: () => this.#bound,
      ...settingsOfConfig(configured.config),
      env: variables,
      // Keys given to the object are the only ones; else the provider authority when bound (a stored
      // connection wins over the Worker secret), else the Worker's secrets alone.
      ...(keys !== undefined ? { credentialMode: "injected-only" as const, providerKeys: keys } : {}),
      ...(interval !== undefined ? { recoveryIntervalMs: interval } : {}),
    });
  }

  /** The Durable Object alarm: recovery of lost and pending Turns, with backoff and quarantine (worker/alarm.ts). */
  async alarm(): Promise<void> {
    await this.#boundHost()?.alarm();
  }

  async fetch(request: Request): Promise<Response> {
    const server = request.headers.get(SERVER_HEADER);
    if (server === null || server === "") return errorResponse(notServed("The request names no server"));
    // An MCP OAuth callback never binds the object to a name (worker/oauth.ts).
    if (callbackServerOf(new URL(request.url).pathname) !== undefined) {
      const host = server === this.#bound ? this.#boundHost() : undefined;
      if (host === undefined) return callbackPage(404, "Not an expected callback", "Ze Harness is not waiting for this authorization.");
      return host.oauthCallback(request);
    }
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
    const host = this.#boundHost();
    if (host === undefined) {
      const refusal = this.#refusal ?? { tag: "ConfigInvalid", message: "The server object is not configured" };
      return errorResponse(unavailable(`${refusal.tag}: ${refusal.message}`));
    }
    return host.fetch(request);
  }
}

const positiveInteger = (text: string | undefined): number | undefined => {
  const value = text !== undefined && /^[0-9]+$/.test(text) ? Number(text) : Number.NaN;
  return Number.isSafeInteger(value) && value > 0 ? value : undefined;
};
