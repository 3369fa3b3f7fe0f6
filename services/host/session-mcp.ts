// MCP servers attached to one Session alone, by an embedding surface (the ACP agent attaches the
// servers its client sends). They live only in this process: the definitions and a secret
// resolver are held in memory, never written to the database, config or events; their
// `environment` and `headers` are `secret` credential references the resolver answers. Each
// Session gets its own McpHost (stdio servers run as children of this process, in the Session's
// workdir); its tools join the host's for that Session's Turns only. Attaching again replaces the
// Session's servers; the MCP client room loads on the first attach.
import type { Handlers } from "../../generated/server/routes.js";
import type { McpServer } from "../config/types.js";
import type { RequestContext } from "../http/handler.js";
import type { McpOperationsHost } from "./mcp-handlers.js";
import { SessionScopedMcpOperations } from "./mcp-session-operations.js";
import type { HostPlugins } from "./plugin-host.js";
import { getSession, type StorageHandle } from "../storage/index.js";
import type { Env } from "../config/index.js";
import type { McpHost } from "../mcp/index.js";
import type { McpOffer } from "../core/turns/environment.js";
import { release } from "./version.js";
import type { SandboxResolver } from "../sandbox/index.js";

export interface SessionMcpAttachment {
  readonly servers: readonly McpServer[];
  /** Answers the servers' `secret` references (values held in the caller's memory only). */
  readonly secret: (reference: string) => string | undefined;
  /** Where stdio servers run: the Session's workdir. */
  readonly cwd: string;
}

/** A server's state after its first connection attempt (no values, only names and reasons). */
export interface SessionMcpStatus {
  readonly name: string;
  readonly state: string;
  readonly reason?: string | undefined;
}

export interface SessionMcp {
  /** Replaces the Session's attached servers and waits for each first connection attempt. */
  attach(sessionId: string, attachment: SessionMcpAttachment): Promise<SessionMcpStatus[]>;
  /** Stops and forgets the Session's attached servers. */
  detach(sessionId: string): Promise<void>;
}

export class SessionMcpHosts implements SessionMcp {
  private readonly hosts = new Map<string, McpHost>();
  /** Each Session's overlay-declared servers: the definitions' key and their host. */
  private readonly declaredHosts = new Map<string, { readonly key: string; readonly host: Promise<McpHost>; loaded?: McpHost }>();

  constructor(private readonly options: { readonly env: Env; readonly onWarning?: ((message: string) => void) | undefined; readonly sandbox?: SandboxResolver | undefined }) {}

  async attach(sessionId: string, attachment: SessionMcpAttachment): Promise<SessionMcpStatus[]> {
    await this.detach(sessionId);
    if (attachment.servers.length === 0) return [];
    const { McpHost: Host } = await import("../mcp/index.js");
    const host = new Host({
      servers: attachment.servers,
      env: this.options.env,
      cwd: attachment.cwd,
      sandbox: this.options.sandbox?.(attachment.cwd),
      secrets: attachment.secret,
      clientInfo: { name: "ze-harness", version: release() },
      ...(this.options.onWarning ? { onWarning: this.options.onWarning } : {}),
    });
    this.hosts.set(sessionId, host);
    await host.start();
    return host.servers().map(({ name, status }) => ({ name, state: status.state, ...(status.state === "failed" ? { reason: status.reason } : {}) }));
  }

  async detach(sessionId: string): Promise<void> {
    const host = this.hosts.get(sessionId);
    this.hosts.delete(sessionId);
    await host?.close();
  }

  /**
   * The Session's host for the servers its plugin overlay declares, made (and started) or reused;
   * none declared: undefined, and a host it had is closed. Stdio servers run in `cwd`.
   */
  async declared(sessionId: string, servers: readonly McpServer[], cwd: string): Promise<McpHost | undefined> {
    const key = JSON.stringify([cwd, servers]);
    const held = this.declaredHosts.get(sessionId);
    if (held?.key === key) return held.host;
    if (held !== undefined) void this.forgetDeclared(sessionId);
    if (servers.length === 0) return undefined;
    const host = import("../mcp/index.js").then(({ McpHost: Host }) => {
      const created = new Host({
        servers,
        env: this.options.env,
        cwd,
        sandbox: this.options.sandbox?.(cwd),
        clientInfo: { name: "ze-harness", version: release() },
        ...(this.options.onWarning ? { onWarning: this.options.onWarning } : {}),
      });
      void created.start();
      return created;
    });
    const entry: { key: string; host: Promise<McpHost>; loaded?: McpHost } = { key, host };
    this.declaredHosts.set(sessionId, entry);
    // A definition the host refuses fails this lease, and the next one tries again.
    host.then(
      (loaded) => (entry.loaded = loaded),
      () => {
        if (this.declaredHosts.get(sessionId) === entry) this.declaredHosts.delete(sessionId);
      },
    );
    return host;
  }

  /**
   * The Session MCP routes' view: the project's servers (`shared`), with the Session's
   * overlay-declared ones (read by `overlay`) when it declares some — listed with origin `session`,
   * looked up first by name, their credentials their own host's.
   */
  async operations(sessionId: string, shared: McpOperationsHost, overlay: () => Promise<readonly McpServer[]>, cwd: string): Promise<McpOperationsHost> {
    const own = await this.declared(sessionId, await overlay(), cwd);
    if (own === undefined) return shared;
    return new SessionScopedMcpOperations({ shared, own, owns: (name) => own.servers().some((server) => server.name === name) });
  }

  /** Closes and forgets the Session's overlay-declared servers (its overlay or the Session is gone). */
  async forgetDeclared(sessionId: string): Promise<void> {
    const held = this.declaredHosts.get(sessionId);
    if (held === undefined) return;
    this.declaredHosts.delete(sessionId);
    await (await held.host.catch(() => undefined))?.close();
  }

  /** What the Session's attached and overlay-declared servers offer its Turn right now. */
  offer(sessionId: string): McpOffer | undefined {
    const host = this.hosts.get(sessionId);
    const attached = host ? { tools: host.toolEntries(), instructions: host.instructions() } : undefined;
    return combineOffers(attached, this.declaredOffer(sessionId));
  }

  private declaredOffer(sessionId: string): McpOffer | undefined {
    const host = this.declaredHosts.get(sessionId)?.loaded;
    return host ? { tools: host.toolEntries(), instructions: host.instructions() } : undefined;
  }

  async close(): Promise<void> {
    const hosts = [...this.hosts.values()];
    const declared = [...this.declaredHosts.keys()];
    this.hosts.clear();
    await Promise.all([...hosts.map((host) => host.close()), ...declared.map((sessionId) => this.forgetDeclared(sessionId))]);
  }
}

/** The MCP servers a Session's overlay generation declares (none without an overlay). */
export function declaredMcpServers(generation: { readonly mcpServers: readonly { readonly definition: unknown }[] } | undefined): McpServer[] {
  return generation?.mcpServers.map((server) => server.definition as McpServer) ?? [];
}

/**
 * The MCP servers the Session's active plugin overlay declares, for the Session MCP routes: none
 * when its row says it has no overlay (no plugin statement then), else a lease of the overlay.
 */
export async function overlayMcpServers(storage: StorageHandle, plugins: HostPlugins, server: string, sessionId: string): Promise<McpServer[]> {
  const row = await getSession(storage, server, sessionId);
  if (!row?.pluginOverlay) return [];
  const lease = await (await plugins.get()).sessions.lease(sessionId);
  try {
    return declaredMcpServers(lease.session);
  } finally {
    lease.release();
  }
}

/** The host's offer and a Session's own, together (either may be absent). */
export function combineOffers(host: McpOffer | undefined, session: McpOffer | undefined): McpOffer | undefined {
  if (!host) return session;
  if (!session) return host;
  return { tools: [...host.tools, ...session.tools], instructions: [...host.instructions, ...session.instructions] };
}

/** `handlers` whose `deleteSession` and `removeSessionPlugin` also close the Session's overlay-declared MCP servers. */
export function closingDeclaredMcp<T extends Pick<Handlers<RequestContext>, "deleteSession" | "removeSessionPlugin">>(handlers: T, sessionMcp: Pick<SessionMcpHosts, "forgetDeclared"> | undefined): T {
  if (sessionMcp === undefined) return handlers;
  return {
    ...handlers,
    deleteSession: async (request, context) => {
      const answer = await handlers.deleteSession(request, context);
      await sessionMcp.forgetDeclared(request.path.sessionId);
      return answer;
    },
    removeSessionPlugin: async (request, context) => {
      const answer = await handlers.removeSessionPlugin(request, context);
      await sessionMcp.forgetDeclared(request.path.sessionId);
      return answer;
    },
  };
}
