// The Fetch handler: size limits → guards → route → validate → handler → encode; HEAD is the
// GET without its body. One function serves the network listener, the daemon and the embedded
// in-process client.
import { routes, type Handlers, type RouteDefinition, type SseMessage } from "../../generated/server/routes.js";
import { HARNESS_PROTOCOL_VERSION } from "../contract/protocol.js";
import { Failure, isFailure, type EncodedError } from "../contract/failure.js";
import { dashboardResponse, isDashboardRequest, type DashboardOptions } from "./dashboard.js";
import { checkHost, checkOrigin, checkToken, type GuardOptions } from "./guard.js";
import { BodyTooLarge, checkRequestSize, discardUnreadBody, readInput, MAX_REQUEST_BODY_BYTES } from "./request.js";
import { Router } from "./router.js";
import { isConsumerBehind, sseBody, sseSourceResponse, writesSse } from "./sse.js";

/** Protocol version advertised in `Ze-Harness-Version: <protocol>/<release>` (services/contract/protocol.ts). */
export const PROTOCOL_VERSION = HARNESS_PROTOCOL_VERSION;
export const VERSION_HEADER = "Ze-Harness-Version";

/** What every handler receives besides its validated input. */
export interface RequestContext {
  readonly request: Request;
  /** Aborts when the client goes away. */
  readonly signal: AbortSignal;
  /** The `Last-Event-ID` a reconnecting EventSource sent, if any. */
  readonly lastEventId?: string;
}

export interface FetchHandlerOptions {
  readonly handlers: Handlers<RequestContext>;
  /** The release half of the version header, e.g. `0.1.0`. */
  readonly release: string;
  readonly guard?: GuardOptions;
  /** Server names this host serves (`local` on a local host). */
  readonly servers: (name: string) => boolean;
  /** The OpenAPI document served at GET /openapi.json. */
  readonly openapi: () => string;
  /** The API reference page served at GET /reference. */
  readonly referencePage?: () => string;
  /** The dashboard served at GET /dashboard (public: the page asks for a token on 401). */
  readonly dashboard?: DashboardOptions;
  readonly maxBodyBytes?: number;
  /** Called with unexpected errors (never with typed failures); must not throw. */
  readonly onUnexpectedError?: (error: unknown, route: RouteDefinition | undefined) => void;
}

export type FetchHandler = (request: Request) => Promise<Response>;

const STATUS_BY_TAG: Record<EncodedError["_tag"], number> = {
  ValidationError: 400,
  UnauthorizedError: 401,
  ForbiddenError: 403,
  NotFoundError: 404,
  ConflictError: 409,
  SteerConflictError: 409,
  TurnNotActiveError: 409,
  TurnNotSteerableError: 409,
  InternalServerError: 500,
  UnavailableError: 503,
};

export const statusOf = (error: EncodedError): number => STATUS_BY_TAG[error._tag];

const ALLOWED_REQUEST_HEADERS = "authorization, content-type, last-event-id, x-ze-harness-client-id";

export function createFetchHandler(options: FetchHandlerOptions): FetchHandler {
  const router = new Router(routes);
  const guard = options.guard ?? {};
  const versionValue = `${PROTOCOL_VERSION}/${options.release}`;
  const bodyLimit = options.maxBodyBytes ?? MAX_REQUEST_BODY_BYTES;

  const finish = (request: Request, response: Response): Response => {
    response.headers.set(VERSION_HEADER, versionValue);
    response.headers.set("Access-Control-Expose-Headers", VERSION_HEADER);
    const origin = request.headers.get("origin");
    if (origin !== null && checkOrigin(request, guard).ok) {
      response.headers.set("Access-Control-Allow-Origin", origin);
      response.headers.append("Vary", "Origin");
    }
    return response;
  };

  // The headers `finish` adds, as one record built before the Response: a handler's answer is
  // made with all its headers at once, so Node's listener writes them without a Headers object.
  const answerHeaders = (request: Request, own: Readonly<Record<string, string>>): Record<string, string> => {
    const headers: Record<string, string> = { ...own, "ze-harness-version": versionValue, "access-control-expose-headers": VERSION_HEADER };
    const origin = request.headers.get("origin");
    if (origin !== null && checkOrigin(request, guard).ok) {
      headers["access-control-allow-origin"] = origin;
      headers["vary"] = "Origin";
    }
    return headers;
  };

  // `method` is the request's, except that HEAD is answered as the GET it mirrors, down to the
  // wording (and so the Content-Length) of an error. Errors propagate to `answer`; `seen`
  // names the operation once the route is known, for the log line of an unexpected error.
  const respond = async (request: Request, method: string, seen: { route?: RouteDefinition }): Promise<Response> => {
    const url = new URL(request.url);
    // Sizes first: nothing else should look at a request this large.
    const oversized = checkRequestSize(request, url);
    if (oversized) return finish(request, errorResponse(oversized.error, oversized.status));
    const host = checkHost(request, guard);
    if (!host.ok) return finish(request, errorResponse({ _tag: "ForbiddenError", message: host.message }));
    const origin = checkOrigin(request, guard);
    if (!origin.ok) return finish(request, errorResponse({ _tag: "ForbiddenError", message: origin.message }));

    if (method === "OPTIONS") {
      const response = new Response(null, { status: 204 });
      response.headers.set("Access-Control-Allow-Methods", "GET, HEAD, PUT, POST, DELETE, PATCH, OPTIONS");
      response.headers.set("Access-Control-Allow-Headers", ALLOWED_REQUEST_HEADERS);
      response.headers.set("Access-Control-Max-Age", "600");
      return finish(request, response);
    }
    if (method === "GET" && url.pathname === "/openapi.json") {
      return finish(request, new Response(options.openapi(), { headers: { "content-type": "application/json" } }));
    }
    if (method === "GET" && url.pathname === "/reference" && options.referencePage) {
      return finish(request, new Response(options.referencePage(), { headers: { "content-type": "text/html; charset=utf-8" } }));
    }
    if (options.dashboard && isDashboardRequest(method, url)) {
      return finish(request, dashboardResponse(options.dashboard));
    }

    const lookup = router.lookup(method, url.pathname);
    if (lookup.kind !== "matched") {
      const message =
        lookup.kind === "method_not_allowed"
          ? `${method} is not supported on ${url.pathname} (allowed: ${lookup.allowed.join(", ")})`
          : `No endpoint at ${method} ${url.pathname}`;
      return finish(request, errorResponse({ _tag: "NotFoundError", message, resource: "endpoint" }));
    }
    const { route, params } = lookup.match;
    seen.route = route;
    if (route.authenticated) {
      const auth = checkToken(request, guard);
      if (!auth.ok) return finish(request, errorResponse({ _tag: "UnauthorizedError", message: auth.message }));
    }
    const input = await readInput(request, route, params, url, bodyLimit);
    const server = params["server"];
    if (server !== undefined && !options.servers(server)) {
      throw new Failure({ _tag: "NotFoundError", message: `Server ${JSON.stringify(server)} is not served by this host` });
    }
    const lastEventId = request.headers.get("last-event-id") ?? undefined;
    // The signal is made when a handler asks for it (a stream, a long call), not for every request.
    const context: RequestContext = {
      request,
      get signal() {
        return request.signal;
      },
      ...(lastEventId !== undefined ? { lastEventId } : {}),
    };
    const handler = options.handlers[route.operationId] as (input: unknown, context: RequestContext) => Promise<HandlerResult>;
    const result = await handler.call(options.handlers, input, context);
    if (!("stream" in result)) return new Response(JSON.stringify(result.body), { status: result.status, headers: answerHeaders(request, JSON_HEADERS) });
    const headers = answerHeaders(request, SSE_HEADERS);
    if (request.method === "HEAD") {
      // A HEAD answer has no body: end the stream the handler opened (its subscriptions) unread.
      void Promise.resolve(result.stream[Symbol.asyncIterator]().return?.()).catch(() => undefined);
      return new Response(null, { status: result.status, headers });
    }
    const onError = (error: unknown): void => {
      if (!isFailure(error) && !isConsumerBehind(error)) reportUnexpected(error, route);
    };
    if (writesSse(request)) return sseSourceResponse({ status: result.status, headers, messages: result.stream, onError });
    return new Response(sseBody(result.stream, onError), { status: result.status, headers });
  };

  // Called for every error that is not a typed Failure, wherever it was thrown: a 500 always has
  // its log line. The callback must not throw; if it does anyway, the 500 still goes out.
  const reportUnexpected = (error: unknown, route: RouteDefinition | undefined): void => {
    try {
      options.onUnexpectedError?.(error, route);
    } catch {
      // nothing more can be done about a failing logger
    }
  };

  // What a thrown error answers: a typed Failure its own status, anything else a logged 500.
  const errorAnswer = (request: Request, error: unknown, route: RouteDefinition | undefined): Response => {
    if (isFailure(error)) return finish(request, errorResponse(error.body, error instanceof BodyTooLarge ? error.status : undefined));
    reportUnexpected(error, route);
    const response = errorResponse({ _tag: "InternalServerError", message: "The server failed to handle the request" });
    try {
      return finish(request, response);
    } catch {
      return response;
    }
  };

  const answer = async (request: Request, method: string, seen: { route?: RouteDefinition }): Promise<Response> => {
    let response: Response;
    try {
      response = await respond(request, method, seen);
    } catch (error) {
      response = errorAnswer(request, error, seen.route);
    }
    // A refusal may come before the body was read: read it anyway, so the connection stays usable.
    if (response.status >= 400) await discardUnreadBody(request, bodyLimit);
    return response;
  };

  // Total: whatever is thrown (a guard, the body read, a handler, HEAD's read of the GET body)
  // becomes the contract's error here, never an exception for the listener to turn into an
  // unlogged 500.
  return async (request: Request): Promise<Response> => {
    const seen: { route?: RouteDefinition } = {};
    if (request.method !== "HEAD") return answer(request, request.method, seen);
    const response = await answer(request, "GET", seen);
    try {
      return await withoutBody(response);
    } catch (error) {
      return withoutBody(errorAnswer(request, error, seen.route));
    }
  };
}

/** The GET answer's status and headers (its Content-Length included) without its body: a HEAD answer. */
async function withoutBody(response: Response): Promise<Response> {
  const headers = new Headers(response.headers);
  if (response.body !== null) headers.set("content-length", String((await response.arrayBuffer()).byteLength));
  return new Response(null, { status: response.status, statusText: response.statusText, headers });
}

type HandlerResult =
  | { status: number; body: unknown }
  | { status: number; stream: AsyncIterable<SseMessage<unknown>> };

const JSON_HEADERS: Readonly<Record<string, string>> = { "content-type": "application/json" };

const SSE_HEADERS: Readonly<Record<string, string>> = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache, no-transform",
  "x-accel-buffering": "no",
};

function jsonResponse(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: JSON_HEADERS });
}

/** The error as the contract encodes it, with the status its `_tag` maps to unless one is given (413, 414, 431). */
export function errorResponse(error: EncodedError, status: number = statusOf(error)): Response {
  return jsonResponse(status, error);
}
