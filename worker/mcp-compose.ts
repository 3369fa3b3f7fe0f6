// A server object's MCP composition, made once per wake: the host-configured servers of
// `HARNESS_MCP` (worker/mcp-config.ts) in one WorkerMcpHost — started lazily by the first Turn
// (its lease waits, bounded, for the first attempts) or the first MCP route, never at wake —
// the routes' operations over it (worker/mcp-routes.ts), and — when HARNESS_MCP_CALLBACK_BASE_URL
// is set — the server-wide OAuth lifecycle its OAuth references resolve through (worker/oauth.ts).
// A bad variable throws the tagged refusal the object answers to every request as a 503.
import type { WorkerMcpOAuth } from "./mcp.js";
import { WorkerMcpHost } from "./mcp.js";
import { readMcpVariable } from "./mcp-config.js";
import { WorkerMcpOperations } from "./mcp-routes.js";
import { RELEASE } from "./release.js";
import type { FilesStorageInput } from "./files/index.js";
import { answerCallback, composeWorkerOAuth, readCallbackBase, type SessionCallbackTarget, type WorkerOAuthEnv } from "./oauth.js";
import { forgetSessionCredentials, migrateOAuthStore } from "./oauth-store.js";
import type { McpOAuth } from "../services/mcp/oauth.js";

export interface WorkerMcpEnv {
  /** JSON array of the config file's `mcp` entries (absent: no MCP servers). */
  readonly HARNESS_MCP?: string;
}

export interface ComposedMcp {
  readonly host: WorkerMcpHost;
  readonly operations: WorkerMcpOperations;
  /** Answers a forwarded `GET /oauth/callback/:server` (worker/oauth.ts); `sessions` finds a Session's own servers. */
  callback(request: Request, sessions?: (sessionId: string) => Promise<SessionCallbackTarget | undefined>): Promise<Response>;
  /** The OAuth lifecycle of a Session's own servers (absent without HARNESS_MCP_CALLBACK_BASE_URL). */
  readonly sessionOAuth: ((sessionId: string, host: () => WorkerMcpHost) => McpOAuth) | undefined;
  /** Deletes a deleted Session's own MCP credentials. */
  forgetSession(sessionId: string): void;
}

export interface ComposeMcpInput {
  readonly env: WorkerMcpEnv & WorkerOAuthEnv & { readonly [name: string]: unknown };
  /** The object's storage: the OAuth credential store's table lives in its SQLite. */
  readonly storage: FilesStorageInput;
  /** The server name the object is bound to (the callback address names it). */
  readonly serverName: () => string;
}

/** The object's MCP host, operations and OAuth lifecycle (throws a `ConfigInvalid`-tagged error for a bad HARNESS_MCP or HARNESS_MCP_CALLBACK_BASE_URL). */
export function composeWorkerMcp(input: ComposeMcpInput): ComposedMcp {
  const read = readMcpVariable(input.env.HARNESS_MCP);
  if (!read.ok) throw Object.assign(new Error(read.message), { _tag: read.tag });
  const base = readCallbackBase(input.env.HARNESS_MCP_CALLBACK_BASE_URL);
  if (!base.ok) throw Object.assign(new Error(base.message), { _tag: base.tag });
  // The credential tables (worker/oauth-store.ts), server-wide and per Session: a deleted Session's rows are deleted with or without a lifecycle.
  migrateOAuthStore(input.storage);
  // One server-wide lifecycle when the callback origin is configured; without it OAuth references are `authorization_required`.
  let host: WorkerMcpHost | undefined;
  const composed = base.origin !== undefined ? composeWorkerOAuth({ storage: input.storage, origin: base.origin, serverName: input.serverName, host: () => host! }) : undefined;
  // `environment` credential references read the Worker's string bindings.
  const strings = Object.fromEntries(Object.entries(input.env).filter((entry): entry is [string, string] => typeof entry[1] === "string"));
  const oauth: WorkerMcpOAuth | undefined = composed?.lifecycle;
  const made = new WorkerMcpHost({ servers: read.servers, env: strings, clientInfo: { name: "ze-harness", version: RELEASE }, ...(oauth !== undefined ? { oauth } : {}) });
  host = made;
  const operations = new WorkerMcpOperations(made, composed?.lifecycle);
  return {
    host: made,
    operations,
    callback: (request, sessions) => answerCallback(request, composed, operations, made, sessions),
    sessionOAuth: composed?.sessionLifecycle,
    forgetSession: (sessionId) => forgetSessionCredentials(input.storage, sessionId),
  };
}
