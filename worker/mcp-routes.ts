// The Session MCP operations of a server object (spec/mcp.tsp), answered over its WorkerMcpHost
// by the Node host's own handlers (services/host/mcp-handlers.ts): the catalog (`GET .../mcp`:
// connected servers and where the others stand — a stdio entry `failed`/`spawn_failed`), prompt
// submission (resolved here, admitted through the ordinary prompt path), resource reads, and the
// `mcp-credentials` lifecycle when an OAuth lifecycle is composed (worker/oauth.ts); without
// one, the credential operations are a typed 503. The server's MCP servers and their OAuth
// credentials are shared by every Session of the server; the Session must exist (404).
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type {
  McpCatalogServer,
  McpCatalogSnapshot,
  McpCredentialCallback,
  McpCredentialForgetResponse,
  McpCredentialStartResponse,
  McpCredentialStatus,
  McpResourceReadResult,
  McpUnavailableServer,
  PromptPart,
  StartMcpCredentialRequest,
} from "../generated/client/types.gen.js";
import { notFound, unavailable } from "../services/contract/failure.js";
import type { SessionService } from "../services/core/sessions.js";
import type { TurnService } from "../services/core/turns/service.js";
import { mcpHandlers, type McpOperationsHost } from "../services/host/mcp-handlers.js";
import { capabilitiesOf } from "../services/mcp/catalog.js";
import type { ResolvedMcpServer } from "../services/mcp/config.js";
import { credentialOperations, requestFailure } from "../services/mcp/operations.js";
import type { McpOAuth } from "../services/mcp/oauth.js";
import { checkAdvertised, checkedPrompt, promptParts, resourceReadResult } from "../services/mcp/prompts.js";
import { ServerUnavailable, unavailableServer } from "../services/mcp/status.js";
import type { WorkerMcpHost, WorkerMcpSlot } from "./mcp.js";

/** The routes' view of a server object's MCP servers (Node's McpHost operations over a WorkerMcpHost). */
export class WorkerMcpOperations implements McpOperationsHost {
  constructor(
    private readonly host: WorkerMcpHost,
    /** The server-wide OAuth lifecycle (absent: the credential operations are a typed 503). */
    private readonly oauth?: McpOAuth,
  ) {}

  ready(): Promise<void> {
    return this.host.ready();
  }

  catalog(): McpCatalogSnapshot {
    const servers: McpCatalogServer[] = [];
    const unavailableServers: McpUnavailableServer[] = [];
    for (const { server, connected, status } of this.host.slots()) {
      if (connected === undefined) {
        unavailableServers.push(unavailableServer(server, status));
        continue;
      }
      servers.push({
        origin: "host",
        serverId: server.id,
        name: server.name,
        order: server.order,
        protocolVersion: connected.protocolVersion,
        capabilities: capabilitiesOf(connected.capabilities),
        ...(connected.instructions !== undefined ? { instructions: connected.instructions } : {}),
        catalog: { revision: connected.revision, ...connected.lists },
      });
    }
    return { revision: this.host.revision, servers, unavailable: unavailableServers };
  }

  async prompt(serverName: string, promptName: string, args: Readonly<Record<string, string>> = {}, signal?: AbortSignal): Promise<PromptPart[]> {
    const slot = await this.connected(serverName);
    checkedPrompt(slot.connected!.lists.prompts, serverName, promptName, args);
    const result = await this.call(slot, (client, bound) => client.getPrompt({ name: promptName, arguments: { ...args } }, { signal: bound }), signal, "mcp_prompt");
    return promptParts(result, serverName);
  }

  async readResource(serverName: string, uri: string, signal?: AbortSignal): Promise<McpResourceReadResult> {
    const slot = await this.connected(serverName);
    const lists = slot.connected!.lists;
    checkAdvertised(lists, serverName, uri);
    const read = await this.call(slot, (client, bound) => client.readResource({ uri }, { signal: bound }), signal, "mcp_resource");
    return resourceReadResult(read);
  }

  // The credential operations, shared with Node's McpHost (services/mcp/operations.ts).
  private readonly credentials = credentialOperations(() => this.lifecycle(), (serverName) => this.server(serverName));
  credentialStatus(serverName: string): Promise<McpCredentialStatus> {
    return this.credentials.credentialStatus(serverName);
  }
  authorize(serverName: string, request?: StartMcpCredentialRequest): Promise<McpCredentialStartResponse> {
    return this.credentials.authorize(serverName, request);
  }
  completeAuthorization(serverName: string, callback: McpCredentialCallback): Promise<McpCredentialStatus> {
    return this.credentials.completeAuthorization(serverName, callback);
  }
  cancelAuthorization(serverName: string, generation?: number): Promise<McpCredentialStatus> {
    return this.credentials.cancelAuthorization(serverName, generation);
  }
  forgetCredential(serverName: string): Promise<McpCredentialForgetResponse> {
    return this.credentials.forgetCredential(serverName);
  }

  private lifecycle(): McpOAuth {
    if (this.oauth === undefined) throw unavailable("MCP OAuth credentials are not provided by this Cloudflare Worker host: HARNESS_MCP_CALLBACK_BASE_URL is not set");
    return this.oauth;
  }

  private server(serverName: string): ResolvedMcpServer {
    const slot = this.host.slot(serverName);
    if (slot === undefined) throw notFound("mcp_server", `No MCP server is named ${JSON.stringify(serverName)}`);
    return slot.server;
  }

  private async connected(serverName: string): Promise<WorkerMcpSlot> {
    this.server(serverName);
    await this.host.settled(serverName);
    const slot = this.host.slot(serverName)!;
    if (slot.connected === undefined) throw unavailable(new ServerUnavailable(serverName, slot.status).message);
    return slot;
  }

  private async call<T>(slot: WorkerMcpSlot, work: (client: Client, signal: AbortSignal) => Promise<T>, signal: AbortSignal | undefined, missing: "mcp_prompt" | "mcp_resource"): Promise<T> {
    try {
      return await this.host.request(slot, work, signal);
    } catch (error) {
      throw requestFailure(error, slot.server.name, missing);
    }
  }
}

/**
 * The contract's MCP operations of a server object: the Session must exist; every Session shares
 * the server's MCP servers, and `own` adds a Session's overlay-declared ones (worker/plugins-mcp.ts).
 */
export function workerMcpHandlers(input: { readonly sessions: SessionService; readonly turns: TurnService; readonly mcp: WorkerMcpOperations; readonly own?: (sessionId: string, shared: WorkerMcpOperations) => Promise<McpOperationsHost> }) {
  return mcpHandlers({
    mcp: async (server, sessionId) => {
      await input.sessions.get(server, sessionId);
      return input.own !== undefined ? input.own(sessionId, input.mcp) : input.mcp;
    },
    turns: input.turns,
  });
}
