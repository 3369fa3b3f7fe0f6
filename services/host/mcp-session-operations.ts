// The Session MCP operations over two sets of servers: the host's (configured, or its plugins')
// and a Session's own (the servers its plugin overlay declares). Both hosts answer with it — the
// Node host over two McpHosts, the Worker over two WorkerMcpHosts (worker/plugins-mcp.ts) — so the
// catalog's order and origins and the name lookup are one rule: servers by `order`, host servers
// before Session servers at the same order (each list arrives sorted by order, then name), the
// Session's with origin `session`; a name is looked up among the Session's servers first. No
// Node-only import: the Worker bundle includes this file.
import type { McpCatalogSnapshot, McpCredentialCallback, McpCredentialForgetResponse, McpCredentialStartResponse, McpCredentialStatus, McpResourceReadResult, PromptPart, StartMcpCredentialRequest } from "../../generated/client/types.gen.js";
import type { McpOperationsHost } from "./mcp-handlers.js";

export interface SessionScopedMcp {
  /** The host's servers (shared by every Session it serves). */
  readonly shared: McpOperationsHost;
  /** The Session's own servers. */
  readonly own: McpOperationsHost;
  /** Whether `serverName` is one of the Session's own servers. */
  owns(serverName: string): boolean;
  /** The credential operations of the Session's own servers (default: `own`'s). */
  readonly ownCredentials?: McpOperationsHost | undefined;
}

const byOrder = <T extends { readonly order: number }>(entries: readonly T[]): T[] => entries.map((entry, index) => ({ entry, index })).sort((a, b) => a.entry.order - b.entry.order || a.index - b.index).map(({ entry }) => entry);

/** The Session MCP operations over the host's servers and the Session's own. */
export class SessionScopedMcpOperations implements McpOperationsHost {
  constructor(private readonly parts: SessionScopedMcp) {}

  async ready(): Promise<void> {
    await Promise.all([this.parts.shared.ready(), this.parts.own.ready()]);
  }

  catalog(): McpCatalogSnapshot {
    const shared = this.parts.shared.catalog();
    const own = this.parts.own.catalog();
    return {
      revision: shared.revision + own.revision,
      servers: byOrder([...shared.servers, ...own.servers.map((server) => ({ ...server, origin: "session" as const }))]),
      unavailable: byOrder([...shared.unavailable, ...own.unavailable.map((server) => ({ ...server, origin: "session" as const }))]),
    };
  }

  #for(serverName: string): McpOperationsHost {
    return this.parts.owns(serverName) ? this.parts.own : this.parts.shared;
  }
  #credentials(serverName: string): McpOperationsHost {
    return this.parts.owns(serverName) ? (this.parts.ownCredentials ?? this.parts.own) : this.parts.shared;
  }

  prompt(serverName: string, promptName: string, args?: Readonly<Record<string, string>>, signal?: AbortSignal): Promise<PromptPart[]> {
    return this.#for(serverName).prompt(serverName, promptName, args, signal);
  }
  readResource(serverName: string, uri: string, signal?: AbortSignal): Promise<McpResourceReadResult> {
    return this.#for(serverName).readResource(serverName, uri, signal);
  }
  credentialStatus(serverName: string): Promise<McpCredentialStatus> {
    return this.#credentials(serverName).credentialStatus(serverName);
  }
  authorize(serverName: string, request?: StartMcpCredentialRequest): Promise<McpCredentialStartResponse> {
    return this.#credentials(serverName).authorize(serverName, request);
  }
  completeAuthorization(serverName: string, callback: McpCredentialCallback): Promise<McpCredentialStatus> {
    return this.#credentials(serverName).completeAuthorization(serverName, callback);
  }
  cancelAuthorization(serverName: string, generation?: number): Promise<McpCredentialStatus> {
    return this.#credentials(serverName).cancelAuthorization(serverName, generation);
  }
  forgetCredential(serverName: string): Promise<McpCredentialForgetResponse> {
    return this.#credentials(serverName).forgetCredential(serverName);
  }
}
