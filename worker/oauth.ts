// MCP OAuth credentials in the Worker (the reference's "MCP OAuth credentials in the Worker"):
// each server object composes one server-wide lifecycle — the Node host's McpOAuth
// (services/mcp/oauth.ts: discovery, dynamic client registration, PKCE, the code exchange with
// state and issuer checks, refresh within two minutes of expiry and after a 401, one refresh per
// credential at a time, cancel, forget with revocation) over the object's SQLite store
// (worker/oauth-store.ts). Host-configured servers share one credential namespace across every
// Session of the server. `HARNESS_MCP_CALLBACK_BASE_URL` is the public callback origin: the
// redirect URI is `<origin>/oauth/callback/<server>`, which the gateway forwards to the owning
// object (worker/oauth-callback.ts); the pending state selects the credential it completes.
// Without the variable no lifecycle is composed: an OAuth reference is `authorization_required`
// and the credential operations are a typed 503. Callback query values are never logged.
//
// The servers a Session's plugin overlay declares get a lifecycle per Session
// (`sessionOAuthLifecycle`) over that Session's own credential namespace (worker/oauth-store.ts),
// at the same callback address: the callback's pending state names the Session and credential it
// completes, through that Session's operations (as Node's Session routes complete it).
import type { McpCredentialStatus } from "../generated/client/types.gen.js";
import { Failure } from "../services/contract/failure.js";
import { CALLBACK_PATH_PREFIX, parseCallbackQuery } from "../services/mcp/callback-query.js";
import { McpOAuth } from "../services/mcp/oauth.js";
import type { FilesStorageInput } from "./files/index.js";
import type { WorkerMcpHost } from "./mcp.js";
import type { WorkerMcpOperations } from "./mcp-routes.js";
import { DurableObjectCredentialStore, pendingSessionCredential } from "./oauth-store.js";

export const CALLBACK_BASE_VARIABLE = "HARNESS_MCP_CALLBACK_BASE_URL";

export interface WorkerOAuthEnv {
  /** The public origin the authorization servers redirect to (`https://…`, or `http://` on loopback). */
  readonly HARNESS_MCP_CALLBACK_BASE_URL?: string;
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

export type CallbackBaseResult = { readonly ok: true; readonly origin: string | undefined } | { readonly ok: false; readonly tag: "ConfigInvalid"; readonly message: string };

/**
 * The callback origin of `HARNESS_MCP_CALLBACK_BASE_URL` (absent or blank: none). An `https://`
 * origin, or `http://` on a loopback host (local runs and tests: the Node host's callback is
 * `http://127.0.0.1:<port>` too); no path, query, fragment or credentials. A bad value names
 * the variable, never the value.
 */
export function readCallbackBase(text: string | undefined): CallbackBaseResult {
  if (text === undefined || text.trim() === "") return { ok: true, origin: undefined };
  const invalid = (message: string): CallbackBaseResult => ({ ok: false, tag: "ConfigInvalid", message: `Worker variable ${CALLBACK_BASE_VARIABLE}: ${message}` });
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    return invalid("is not a URL");
  }
  if (url.protocol !== "https:" && !(url.protocol === "http:" && LOOPBACK.has(url.hostname))) return invalid("must be an https:// origin (http:// only on a loopback host)");
  if (url.username !== "" || url.password !== "") return invalid("must not hold credentials");
  if ((url.pathname !== "/" && url.pathname !== "") || url.search !== "" || url.hash !== "") return invalid("must be an origin, without a path, query or fragment");
  return { ok: true, origin: url.origin };
}

export interface WorkerOAuth {
  readonly lifecycle: McpOAuth;
  readonly store: DurableObjectCredentialStore;
  /** The object's storage (the Session-scoped credentials' table). */
  readonly storage: FilesStorageInput;
  /** States whose callback is being completed now: a state is taken once (a concurrent replay would exchange again and overwrite the outcome). */
  readonly taken: Set<string>;
  /** The lifecycle of one Session's own servers (its plugin overlay's), over that Session's credential namespace. */
  sessionLifecycle(sessionId: string, host: () => WorkerMcpHost): McpOAuth;
}

interface LifecycleInput {
  readonly store: DurableObjectCredentialStore;
  readonly origin: string;
  readonly serverName: () => string;
  readonly host: () => WorkerMcpHost;
}

/** One lifecycle over `store`: the redirect URI names the server the object is bound to; a credential change reconnects or retires the servers of `host` using it. */
function lifecycleOver(input: LifecycleInput): McpOAuth {
  return new McpOAuth({
    store: input.store,
    redirectUrl: () => callbackUrl(input.origin, input.serverName()),
    // workerd refuses `redirect: "error"`: a redirected revocation is `failed`.
    revocationRedirect: "manual",
    onChange: (reference, change) => (change === "authorized" ? input.host().reconnectUsing(reference) : input.host().retireUsing(reference, "the OAuth credential was forgotten")),
  });
}

/** The object's server-wide lifecycle, and the factory of its Sessions' own (their credential tables are migrated at wake: worker/oauth-store.ts). */
export function composeWorkerOAuth(input: { readonly storage: FilesStorageInput; readonly origin: string; readonly serverName: () => string; readonly host: () => WorkerMcpHost }): WorkerOAuth {
  const store = new DurableObjectCredentialStore(input.storage);
  const lifecycle = lifecycleOver({ ...input, store });
  return {
    lifecycle,
    store,
    storage: input.storage,
    taken: new Set(),
    sessionLifecycle: (sessionId, host) => lifecycleOver({ ...input, store: new DurableObjectCredentialStore(input.storage, { sessionId }), host }),
  };
}

/** A Session's own MCP servers as the callback completes them: its host and its operations (with its lifecycle). */
export interface SessionCallbackTarget {
  readonly host: WorkerMcpHost;
  readonly operations: Pick<WorkerMcpOperations, "completeAuthorization">;
}

/** `<origin>/oauth/callback/<server>`: one callback address per server object. */
export const callbackUrl = (origin: string, server: string): string => `${origin}${CALLBACK_PATH_PREFIX}${encodeURIComponent(server)}`;

/** The server name of a `/oauth/callback/:server` path (undefined for other paths or a bad encoding). */
export function callbackServerOf(pathname: string): string | undefined {
  if (!pathname.startsWith(CALLBACK_PATH_PREFIX)) return undefined;
  const rest = pathname.slice(CALLBACK_PATH_PREFIX.length);
  if (rest === "" || rest.includes("/")) return undefined;
  try {
    return decodeURIComponent(rest);
  } catch {
    return undefined;
  }
}

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A self-contained page for the browser that followed the redirect (never echoing a query value). */
export function callbackPage(status: number, title: string, text: string): Response {
  const body = `<!doctype html><html lang="en"><meta charset="utf-8"><title>${escapeHtml(title)}</title><body style="font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto"><h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p></body></html>`;
  return new Response(body, { status, headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store", "referrer-policy": "no-referrer" } });
}

const STATUS_TEXT: Record<McpCredentialStatus["kind"], string> = {
  absent: "No credential was stored.",
  pending: "The authorization is still pending.",
  authorized: "You can close this window and return to Ze Harness.",
  expired: "The credential expired.",
  "authorization-required": "The authorization could not be completed; start it again from Ze Harness.",
  forgotten: "The credential was forgotten.",
};

/**
 * Completes the authorization the callback's `state` selects, through the same operation as the
 * Session route: a server-wide credential's, else a Session's own (`sessions` finds that
 * Session's servers).
 */
export async function answerCallback(
  request: Request,
  oauth: WorkerOAuth | undefined,
  operations: WorkerMcpOperations,
  host: WorkerMcpHost,
  sessions?: (sessionId: string) => Promise<SessionCallbackTarget | undefined>,
): Promise<Response> {
  if (request.method !== "GET") return callbackPage(405, "Not an expected callback", "Authorization callbacks are GET requests.");
  if (oauth === undefined) return callbackPage(404, "Not an expected callback", `This server has no MCP OAuth lifecycle (${CALLBACK_BASE_VARIABLE} is not set).`);
  const callback = parseCallbackQuery(new URL(request.url).searchParams);
  if (callback === undefined) return callbackPage(400, "Not an expected callback", "The request carries no authorization response.");
  let reference = oauth.store.pendingReference(callback.state);
  let target: SessionCallbackTarget = { host, operations };
  if (reference === undefined && sessions !== undefined) {
    const pending = pendingSessionCredential(oauth.storage, callback.state);
    const own = pending === undefined ? undefined : await sessions(pending.sessionId);
    if (own !== undefined) (reference = pending!.reference), (target = own);
  }
  const slot = reference === undefined ? undefined : target.host.slots().find((candidate) => candidate.server.oauthReference === reference);
  if (slot === undefined) return callbackPage(404, "Not an expected callback", "Ze Harness is not waiting for this authorization.");
  if (oauth.taken.has(callback.state)) return callbackPage(409, "Not an expected callback", "This authorization is already being completed.");
  oauth.taken.add(callback.state);
  try {
    const status = await target.operations.completeAuthorization(slot.server.name, callback);
    if (status.kind === "authorized") return callbackPage(200, "Authorization received", STATUS_TEXT.authorized);
    return callbackPage(callback.kind === "denied" ? 400 : 502, callback.kind === "denied" ? "Authorization refused" : "Authorization not completed", callback.kind === "denied" ? `The authorization server answered ${callback.error}.` : STATUS_TEXT[status.kind]);
  } catch (error) {
    if (error instanceof Failure) return callbackPage(error.body._tag === "ValidationError" ? 400 : error.body._tag === "ConflictError" ? 409 : 503, "Authorization not completed", error.body.message);
    throw error;
  } finally {
    oauth.taken.delete(callback.state);
  }
}
