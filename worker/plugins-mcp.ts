// Overlay-declared MCP servers on the Worker: the `mcpServers` of a Session's active plugin
// revision (registered, through the host's checks, into that Session's overlay generation) get a
// WorkerMcpHost of their own per Session — its Turns are offered their Tools (`<server>_<tool>`,
// through the ordinary permission flow) after the server's host-configured ones, and its
// `GET .../mcp` catalog lists them with origin `session` (services/host/mcp-session-operations.ts,
// shared with the Node host). Another Session never sees them. A stdio entry is the reference's
// unavailable outcome (worker/mcp.ts). The host is made on the Session's first lease of that
// overlay, replaced when the declared servers change and closed when they go (a revision without
// servers, or the overlay removed).
//
// Credentials: a client declares these entries, so they never read the Worker's bindings (an
// `environment` reference is `credential_unresolved`: a binding's value would otherwise go to an
// endpoint the client chose), and never the server-wide credential namespace. With
// HARNESS_MCP_CALLBACK_BASE_URL set, each Session's servers get an OAuth lifecycle of their own
// (worker/oauth.ts `sessionLifecycle`) over that Session's credential rows in the object's SQLite
// (worker/oauth-store.ts): the Session's `mcp-credentials/:name` routes authorize, report, cancel
// and forget them, the gateway's callback completes them, and deleting the Session deletes its
// rows. Without the variable an OAuth reference is `authorization_required` and the credential
// routes on them are a typed 503.
import type { Handlers } from "../generated/server/routes.js";
import type { McpServer } from "../services/config/types.js";
import type { McpOffer } from "../services/core/turns/environment.js";
import type { McpOperationsHost } from "../services/host/mcp-handlers.js";
import { SessionScopedMcpOperations } from "../services/host/mcp-session-operations.js";
import type { RequestContext } from "../services/http/handler.js";
import type { McpOAuth } from "../services/mcp/oauth.js";
import type { PluginMcpServer } from "../services/plugins/generation.js";
import { WorkerMcpHost } from "./mcp.js";
import { WorkerMcpOperations } from "./mcp-routes.js";
import type { SessionCallbackTarget } from "./oauth.js";
import { RELEASE } from "./release.js";

interface Held {
  readonly key: string;
  readonly host: WorkerMcpHost;
}

/** The OAuth lifecycle of one Session's own servers (worker/oauth.ts), when the object composes one. */
export type SessionOAuthFactory = (sessionId: string, host: () => WorkerMcpHost) => McpOAuth;

/** Each Session host's own lifecycle (set where the host is made). */
const lifecycles = new WeakMap<WorkerMcpHost, McpOAuth>();

/** The per-Session WorkerMcpHosts of a server object's overlay-declared MCP servers. */
export class WorkerSessionMcp {
  readonly #hosts = new Map<string, Held>();
  constructor(private readonly options: { readonly oauth?: SessionOAuthFactory | undefined } = {}) {}

  /**
   * The Session's host for `servers` (its overlay's declared servers), made or reused; none
   * declared, undefined (a host it had is closed).
   */
  hostFor(sessionId: string, servers: readonly PluginMcpServer[]): WorkerMcpHost | undefined {
    const definitions = servers.map((server) => server.definition as unknown as McpServer);
    const key = JSON.stringify(definitions);
    const held = this.#hosts.get(sessionId);
    if (held?.key === key) return held.host;
    if (held !== undefined) {
      this.#hosts.delete(sessionId);
      void held.host.close();
    }
    if (definitions.length === 0) return undefined;
    let host: WorkerMcpHost | undefined;
    const oauth = this.options.oauth?.(sessionId, () => host!);
    host = new WorkerMcpHost({ servers: definitions, env: {}, clientInfo: { name: "ze-harness", version: RELEASE }, ...(oauth !== undefined ? { oauth } : {}) });
    if (oauth !== undefined) lifecycles.set(host, oauth);
    this.#hosts.set(sessionId, { key, host });
    return host;
  }

  /** Closes and forgets the Session's host (its overlay or the Session is gone). */
  async forget(sessionId: string): Promise<void> {
    const held = this.#hosts.get(sessionId);
    this.#hosts.delete(sessionId);
    await held?.host.close();
  }
}

/** A Turn's MCP offer: the server's host-configured servers, then the Session's own. */
export function combinedOffer(shared: WorkerMcpHost | undefined, own: WorkerMcpHost | undefined): McpOffer | undefined {
  const offers = [shared, own].filter((host): host is WorkerMcpHost => host !== undefined);
  if (offers.length === 0) return undefined;
  return { tools: offers.flatMap((host) => host.toolEntries()), instructions: offers.flatMap((host) => host.instructions()) };
}

/** The Session's own servers' operations, with their own OAuth lifecycle (absent: the credential operations are a typed 503). */
const ownOperations = (host: WorkerMcpHost): WorkerMcpOperations => new WorkerMcpOperations(host, lifecycles.get(host));

/** The Session MCP routes' view: the server's operations, with the Session's own servers when its overlay declares some. */
export function sessionMcpOperations(plugins: { sessionMcp(sessionId: string): Promise<WorkerMcpHost | undefined> }) {
  return async (sessionId: string, shared: WorkerMcpOperations): Promise<McpOperationsHost> => {
    const host = await plugins.sessionMcp(sessionId);
    if (host === undefined) return shared;
    return new SessionScopedMcpOperations({ shared, own: ownOperations(host), owns: (name) => host.slot(name) !== undefined });
  };
}

/** What the OAuth callback completes for a Session (worker/oauth.ts): its own servers, if its overlay declares some. */
export function sessionCallbackTargets(plugins: { sessionMcp(sessionId: string): Promise<WorkerMcpHost | undefined> }) {
  return async (sessionId: string): Promise<SessionCallbackTarget | undefined> => {
    const host = await plugins.sessionMcp(sessionId).catch(() => undefined);
    return host === undefined ? undefined : { host, operations: ownOperations(host) };
  };
}

/** `handlers` whose `deleteSession` also closes the deleted Session's own MCP servers and deletes their credentials. */
export function closingSessionMcp<T extends Pick<Handlers<RequestContext>, "deleteSession">>(handlers: T, plugins: { forgetSession(sessionId: string): Promise<void> }, credentials?: { forgetSession(sessionId: string): void }): T {
  return {
    ...handlers,
    deleteSession: async (request, context) => {
      const answer = await handlers.deleteSession(request, context);
      await plugins.forgetSession(request.path.sessionId);
      credentials?.forgetSession(request.path.sessionId);
      return answer;
    },
  };
}

/** A requested reconnect of the server's MCP server `name`, or with `sessionId` of that Session's own. */
export function reconnectingMcp(shared: WorkerMcpHost, plugins: { sessionMcp(sessionId: string): Promise<WorkerMcpHost | undefined> }) {
  return async (name: string, sessionId?: string): Promise<boolean> => {
    const host = sessionId === undefined ? shared : await plugins.sessionMcp(sessionId);
    return (await host?.reconnect(name)) ?? false;
  };
}
