// Overlay-declared MCP servers on the Worker: the `mcpServers` of a Session's active plugin
// revision (registered, through the host's checks, into that Session's overlay generation) get a
// WorkerMcpHost of their own per Session — its Turns are offered their Tools (`<server>_<tool>`,
// through the ordinary permission flow) after the server's host-configured ones, and its
// `GET .../mcp` catalog lists them with origin `session`. Another Session never sees them. A
// stdio entry is the reference's unavailable outcome (worker/mcp.ts). The host is made on the
// Session's first lease of that overlay, replaced when the declared servers change and closed
// when they go (a revision without servers, or the overlay removed). Credentials: a client
// declares these entries, so they never read the Worker's bindings (an `environment` reference is
// `credential_unresolved`: a binding's value would otherwise go to an endpoint the client chose),
// and no OAuth lifecycle is composed for them (an OAuth reference is `authorization_required`,
// nothing is sent): the server-wide host credential namespace is never used for them.
import type { McpCatalogSnapshot, McpCredentialForgetResponse, McpCredentialStartResponse, McpCredentialStatus, McpResourceReadResult, PromptPart, StartMcpCredentialRequest, McpCredentialCallback } from "../generated/client/types.gen.js";
import type { Handlers } from "../generated/server/routes.js";
import { unavailable } from "../services/contract/failure.js";
import type { McpServer } from "../services/config/types.js";
import type { McpOffer } from "../services/core/turns/environment.js";
import type { McpOperationsHost } from "../services/host/mcp-handlers.js";
import type { RequestContext } from "../services/http/handler.js";
import type { PluginMcpServer } from "../services/plugins/generation.js";
import { WorkerMcpHost } from "./mcp.js";
import { WorkerMcpOperations } from "./mcp-routes.js";
import { RELEASE } from "./release.js";

interface Held {
  readonly key: string;
  readonly host: WorkerMcpHost;
}

/** The per-Session WorkerMcpHosts of a server object's overlay-declared MCP servers. */
export class WorkerSessionMcp {
  readonly #hosts = new Map<string, Held>();

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
    const host = new WorkerMcpHost({ servers: definitions, env: {}, clientInfo: { name: "ze-harness", version: RELEASE } });
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

const OVERLAY_CREDENTIALS = "MCP OAuth credentials of servers a Session plugin declares are not provided by this Cloudflare Worker host";

/**
 * The Session MCP operations over the server's host-configured servers and the Session's own:
 * the catalog lists both (the Session's with origin `session`); a name is looked up among the
 * Session's servers first, then the server's. Credential operations on a Session's own server
 * are a typed 503.
 */
export class WorkerSessionMcpOperations implements McpOperationsHost {
  readonly #own: WorkerMcpOperations;
  constructor(
    private readonly shared: WorkerMcpOperations,
    private readonly host: WorkerMcpHost,
  ) {
    this.#own = new WorkerMcpOperations(host);
  }

  async ready(): Promise<void> {
    await Promise.all([this.shared.ready(), this.#own.ready()]);
  }

  catalog(): McpCatalogSnapshot {
    const shared = this.shared.catalog();
    const own = this.#own.catalog();
    return {
      revision: shared.revision + own.revision,
      servers: [...shared.servers, ...own.servers.map((server) => ({ ...server, origin: "session" as const }))],
      unavailable: [...shared.unavailable, ...own.unavailable],
    };
  }

  #owns(serverName: string): boolean {
    return this.host.slot(serverName) !== undefined;
  }

  prompt(serverName: string, promptName: string, args?: Readonly<Record<string, string>>, signal?: AbortSignal): Promise<PromptPart[]> {
    return (this.#owns(serverName) ? this.#own : this.shared).prompt(serverName, promptName, args, signal);
  }
  readResource(serverName: string, uri: string, signal?: AbortSignal): Promise<McpResourceReadResult> {
    return (this.#owns(serverName) ? this.#own : this.shared).readResource(serverName, uri, signal);
  }
  #credentials(serverName: string): WorkerMcpOperations {
    if (this.#owns(serverName)) throw unavailable(OVERLAY_CREDENTIALS);
    return this.shared;
  }
  async credentialStatus(serverName: string): Promise<McpCredentialStatus> {
    return this.#credentials(serverName).credentialStatus(serverName);
  }
  async authorize(serverName: string, request?: StartMcpCredentialRequest): Promise<McpCredentialStartResponse> {
    return this.#credentials(serverName).authorize(serverName, request);
  }
  async completeAuthorization(serverName: string, callback: McpCredentialCallback): Promise<McpCredentialStatus> {
    return this.#credentials(serverName).completeAuthorization(serverName, callback);
  }
  async cancelAuthorization(serverName: string, generation?: number): Promise<McpCredentialStatus> {
    return this.#credentials(serverName).cancelAuthorization(serverName, generation);
  }
  async forgetCredential(serverName: string): Promise<McpCredentialForgetResponse> {
    return this.#credentials(serverName).forgetCredential(serverName);
  }
}

/** The Session MCP routes' view: the server's operations, with the Session's own servers when its overlay declares some. */
export function sessionMcpOperations(plugins: { sessionMcp(sessionId: string): Promise<WorkerMcpHost | undefined> }) {
  return async (sessionId: string, shared: WorkerMcpOperations): Promise<McpOperationsHost> => {
    const host = await plugins.sessionMcp(sessionId);
    return host !== undefined ? new WorkerSessionMcpOperations(shared, host) : shared;
  };
}

/** `handlers` whose `deleteSession` also closes the deleted Session's own MCP servers. */
export function closingSessionMcp<T extends Pick<Handlers<RequestContext>, "deleteSession">>(handlers: T, plugins: { forgetSession(sessionId: string): Promise<void> }): T {
  return {
    ...handlers,
    deleteSession: async (request, context) => {
      const answer = await handlers.deleteSession(request, context);
      await plugins.forgetSession(request.path.sessionId);
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
