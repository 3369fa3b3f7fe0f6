// The Cloudflare Worker host's entry: the gateway Worker and the Durable Object classes it
// binds. The gateway checks Host, Origin and the bearer token (configured by Worker variables),
// then forwards every `/v1/servers/:server/...` request to that server's HarnessServerObject
// (binding HARNESS_SERVERS, addressed by name) with `x-zephyr-server` (and
// `x-zephyr-session-id` on Session routes) set; everything else — health, capabilities, the
// OpenAPI document, the runtime model and provider routes (over the singleton
// HarnessProviderAuthorityObject's RPC, binding HARNESS_PROVIDER_AUTHORITY) and the typed
// answers for runtime routes this host does not serve — it answers itself through the same
// generated route table.
import type { Handlers } from "../generated/server/routes.js";
import { sessionHandlers } from "../services/host/handlers.js";
import { checkHost, checkOrigin, checkToken, type GuardOptions } from "../services/http/guard.js";
import { checkRequestSize, discardUnreadBody } from "../services/http/request.js";
import { createFetchHandler, PROTOCOL_VERSION, statusOf, VERSION_HEADER, type FetchHandler, type RequestContext } from "../services/http/handler.js";
import { unavailable, type EncodedError } from "../services/contract/failure.js";
import type { SessionService } from "../services/core/sessions.js";
import { OPENAPI_DOCUMENT, RELEASE } from "./release.js";
import { SERVER_HEADER, SESSION_HEADER } from "./server-object.js";
import { workerUnavailableHandlers } from "./unavailable.js";
import { authorityRuntimeHandlers, type AuthorityEnv } from "./authority-routes.js";
import { callbackServerOf } from "./oauth.js";
import { forwardOAuthCallback } from "./oauth-callback.js";

export { HarnessServerObject } from "./server-object.js";
export { HarnessProviderAuthorityObject } from "./authority.js";

interface DurableObjectNamespaceLike {
  idFromName(name: string): unknown;
  get(id: unknown): { fetch(request: Request): Promise<Response> };
}

export interface WorkerEnv extends AuthorityEnv {
  readonly HARNESS_SERVERS: DurableObjectNamespaceLike;
  /** Bearer token every authenticated operation demands (a Worker secret); absent: no authentication. */
  readonly HARNESS_API_TOKEN?: string;
  /** Comma-separated Host names accepted besides loopback (`*` accepts any): a deployed Worker names its own. */
  readonly HARNESS_ALLOWED_HOSTS?: string;
  /** Comma-separated browser origins allowed to call the API. */
  readonly HARNESS_ALLOWED_ORIGINS?: string;
}

const list = (value: string | undefined): string[] => (value ?? "").split(",").map((item) => item.trim()).filter((item) => item !== "");

/**
 * Whether `HARNESS_API_TOKEN` is set but blank. The Node host refuses to start on an empty
 * `--token`; a Worker cannot refuse to start, so it refuses every request instead (never an open
 * API because a secret was saved empty).
 */
export const blankToken = (env: WorkerEnv): boolean => env.HARNESS_API_TOKEN !== undefined && env.HARNESS_API_TOKEN.trim() === "";

export function guardOf(env: WorkerEnv): GuardOptions {
  const hosts = list(env.HARNESS_ALLOWED_HOSTS);
  return {
    allowedHosts: ["localhost", "127.0.0.1", "[::1]", "::1", ...hosts],
    allowedOrigins: list(env.HARNESS_ALLOWED_ORIGINS),
    ...(env.HARNESS_API_TOKEN !== undefined && env.HARNESS_API_TOKEN !== "" ? { token: env.HARNESS_API_TOKEN } : {}),
  };
}

/** A refusal of the gateway's own, with the version header every answer of the API carries. */
const refuse = (error: EncodedError, status: number = statusOf(error)): Response =>
  Response.json(error, { status, headers: { [VERSION_HEADER]: `${PROTOCOL_VERSION}/${RELEASE}`, "Access-Control-Expose-Headers": VERSION_HEADER } });

/** The server name of a `/v1/servers/:server/...` path (`undefined` for other paths). */
export function serverOf(pathname: string): string | undefined {
  const match = /^\/v1\/servers\/([^/]+)(?:\/|$)/.exec(pathname);
  if (!match) return undefined;
  try {
    return decodeURIComponent(match[1]!);
  } catch {
    return undefined;
  }
}

/** The Session id of a `/v1/servers/:server/sessions/:sessionId...` path (`undefined` when none; `null` when it does not decode). */
function sessionOf(pathname: string): string | undefined | null {
  const match = /^\/v1\/servers\/[^/]+\/sessions\/([^/]+)/.exec(pathname);
  if (!match) return undefined;
  try {
    return decodeURIComponent(match[1]!);
  } catch {
    return null;
  }
}

/**
 * A name the gateway carries in a header must arrive unchanged: header values cannot hold line
 * breaks or other control characters (workerd throws), and their surrounding spaces are stripped
 * (the object would bind itself to another name than the one it was addressed by).
 */
const HEADER_SAFE = /^(?![ \t])[^\x00-\x1f\x7f]*(?<![ \t])$/u;

async function forward(request: Request, env: WorkerEnv, server: string): Promise<Response> {
  const guard = guardOf(env);
  const host = checkHost(request, guard);
  if (!host.ok) return refuse({ _tag: "ForbiddenError", message: host.message });
  const origin = checkOrigin(request, guard);
  if (!origin.ok) return refuse({ _tag: "ForbiddenError", message: origin.message });
  // A preflight is the gateway's own answer (no token is sent with one): forwarded, it would
  // wake — and lazily create — a server object for anyone who can reach the Worker.
  if (request.method === "OPTIONS") return gateway(env)(request);
  const token = checkToken(request, guard);
  if (!token.ok) return refuse({ _tag: "UnauthorizedError", message: token.message });
  // Sizes before anything reaches (and creates) an object.
  const url = new URL(request.url);
  const oversized = checkRequestSize(request, url);
  if (oversized) return refuse(oversized.error, oversized.status);
  const sessionId = sessionOf(url.pathname);
  if (sessionId === null) return refuse({ _tag: "ValidationError", message: "path.sessionId: is not valid percent-encoding" });
  if (!HEADER_SAFE.test(server)) return refuse({ _tag: "ValidationError", message: "path.server: must not contain control characters or begin or end with a space" });
  if (sessionId !== undefined && !HEADER_SAFE.test(sessionId)) return refuse({ _tag: "ValidationError", message: "path.sessionId: must not contain control characters or begin or end with a space" });
  const headers = new Headers(request.headers);
  // The identity headers are the gateway's alone: a client's own values never reach the object.
  headers.set(SERVER_HEADER, server);
  headers.delete(SESSION_HEADER);
  if (sessionId !== undefined) headers.set(SESSION_HEADER, sessionId);
  const object = env.HARNESS_SERVERS.get(env.HARNESS_SERVERS.idFromName(server));
  return object.fetch(new Request(request, { headers }));
}

let gatewayHandler: { readonly env: WorkerEnv; readonly token: string | undefined; readonly fetch: FetchHandler } | undefined;

/**
 * What the gateway answers itself: health, capabilities, /openapi.json, the runtime model and
 * provider routes through the authority; the other runtime routes are typed 503s.
 */
function gateway(env: WorkerEnv): FetchHandler {
  const guard = guardOf(env);
  if (gatewayHandler === undefined || gatewayHandler.env !== env || gatewayHandler.token !== guard.token) {
    const served = sessionHandlers({ sessions: undefined as unknown as SessionService, release: RELEASE });
    const handlers: Handlers<RequestContext> = {
      ...workerUnavailableHandlers<RequestContext>(),
      ...authorityRuntimeHandlers(env),
      health: served.health,
      capabilities: served.capabilities,
    };
    gatewayHandler = {
      env,
      token: guard.token,
      fetch: createFetchHandler({ handlers, release: RELEASE, guard, servers: () => false, openapi: () => OPENAPI_DOCUMENT }),
    };
  }
  return gatewayHandler.fetch;
}

export default {
  async fetch(request: Request, env: WorkerEnv): Promise<Response> {
    const response = await route(request, env);
    // A refusal of the gateway's own leaves the body unread, and workerd then closes the
    // connection under a client that may already reuse it: read it (bounded) and drop it.
    if (response.status >= 400) await discardUnreadBody(request);
    return response;
  },
};

/** The answer: the gateway's own, or the server object's for a `/v1/servers/:server/...` path. */
async function route(request: Request, env: WorkerEnv): Promise<Response> {
  if (blankToken(env)) return refuse(unavailable("HARNESS_API_TOKEN is set but empty: set a token, or remove the secret to serve without authentication").body);
  const pathname = new URL(request.url).pathname;
  // An MCP OAuth redirect to the public callback address (worker/oauth-callback.ts).
  const callback = callbackServerOf(pathname);
  if (callback !== undefined) return forwardOAuthCallback(request, guardOf(env), env.HARNESS_SERVERS, callback);
  const server = serverOf(pathname);
  if (server !== undefined) return forward(request, env, server);
  return gateway(env)(request);
}
