// MCP servers attached to one Session alone, by an embedding surface (the ACP agent attaches the
// servers its client sends). They live only in this process: the definitions and a secret
// resolver are held in memory, never written to the database, config or events; their
// `environment` and `headers` are `secret` credential references the resolver answers. Each
// Session gets its own McpHost (stdio servers run as children of this process, in the Session's
// workdir); its tools join the host's for that Session's Turns only. Attaching again replaces the
// Session's servers; the MCP client room loads on the first attach.
import type { McpServer } from "../config/types.js";
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

  /** What the Session's attached servers offer its Turn right now. */
  offer(sessionId: string): McpOffer | undefined {
    const host = this.hosts.get(sessionId);
    return host ? { tools: host.toolEntries(), instructions: host.instructions() } : undefined;
  }

  async close(): Promise<void> {
    const hosts = [...this.hosts.values()];
    this.hosts.clear();
    await Promise.all(hosts.map((host) => host.close()));
  }
}

/** The host's offer and a Session's own, together (either may be absent). */
export function combineOffers(host: McpOffer | undefined, session: McpOffer | undefined): McpOffer | undefined {
  if (!host) return session;
  if (!session) return host;
  return { tools: [...host.tools, ...session.tools], instructions: [...host.instructions, ...session.instructions] };
}
