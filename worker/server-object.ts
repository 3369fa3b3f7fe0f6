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
import { EventStreams } from "../services/core/events/streams.js";
import { sessionHandlers, turnHandlers } from "../services/host/handlers.js";
import { withStorageFailures } from "../services/host/storage-failures.js";
import { createFetchHandler, PROTOCOL_VERSION, statusOf, VERSION_HEADER, type FetchHandler, type RequestContext } from "../services/http/handler.js";
import type { StorageHandle } from "../services/storage/index.js";
import { openDurableObjectStorage, type DurableObjectStorageInput } from "./storage.js";
import { workerUnavailableHandlers } from "./unavailable.js";
import { WORKSPACE_ROOT, workspaceWorkdirs } from "./workspace.js";
import { OPENAPI_DOCUMENT, RELEASE } from "./release.js";

export const SERVER_HEADER = "x-zephyr-server";
export const SESSION_HEADER = "x-zephyr-session-id";
/** Where the object keeps the name it is permanently bound to (its key-value storage). */
const BINDING_KEY = "harness:server";

export interface DurableObjectStateLike {
  readonly storage: DurableObjectStorageInput & {
    get<T>(key: string): Promise<T | undefined>;
    put<T>(key: string, value: T): Promise<void>;
  };
  blockConcurrencyWhile<T>(fn: () => Promise<T>): Promise<T>;
}

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
  return match ? decodeURIComponent(match[1]!) : undefined;
}

export class HarnessServerObject {
  readonly #state: DurableObjectStateLike;
  #bound: string | undefined;
  #served: Served | undefined;
  /** Why the database cannot be used (a migration refusal), answered to every request. */
  #refusal: { readonly tag: string; readonly message: string } | undefined;

  constructor(state: DurableObjectStateLike, _env: unknown) {
    this.#state = state;
    void state.blockConcurrencyWhile(async () => {
      this.#bound = await state.storage.get<string>(BINDING_KEY);
      try {
        const storage = await openDurableObjectStorage({ storage: state.storage, server: this.#bound ?? "(unbound)" });
        this.#served = { storage, fetch: this.#compose(storage) };
      } catch (error) {
        // Kept and answered: thrown out of blockConcurrencyWhile it would reset the object.
        const tagged = error as { _tag?: string; message?: string };
        this.#refusal = { tag: tagged._tag ?? "StorageError", message: tagged.message ?? String(error) };
      }
    });
  }

  #compose(storage: StorageHandle): FetchHandler {
    const hub = new ActivityHub((announce) => storage.afterCommit(announce));
    storage.onTurnEvents((rows) => hub.turnEvents(rows));
    const sessions = new SessionService({ storage, serverRoot: WORKSPACE_ROOT, hub, workdirs: workspaceWorkdirs });
    // The server activity stream (replay from a cursor, then live, 15 s heartbeats): the Node
    // host's handler, whose only service is the streams (Turns are not served here yet).
    const streams = new EventStreams(storage, hub);
    const { watchServer } = turnHandlers({ streams, turns: undefined as never, interactions: undefined as never });
    const handlers: Handlers<RequestContext> = {
      ...workerUnavailableHandlers<RequestContext>(),
      ...sessionHandlers({ sessions, release: RELEASE }),
      watchServer,
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
    return this.#served.fetch(request);
  }
}
