// Binds the contract's MCP operations to the host's McpHost: the catalog, prompt submission
// (resolved by the server, then admitted through the ordinary prompt path), resource reads and
// the OAuth credential lifecycle. Every operation is Session-scoped: the Session must exist
// (404 session); the servers of a Session's project (its nearest project file) and their
// credentials are shared by every Session of that project.
// Typed failures thrown by the services are encoded by the HTTP edge.
import type { PromptReceipt, QueuePromptRequest, SubmitMcpPromptRequest } from "../../generated/client/types.gen.js";
import type { Handlers } from "../../generated/server/routes.js";
import type { RequestContext } from "../http/handler.js";
import type { McpHost } from "../mcp/index.js";

/** What the operations use of a host's MCP servers: Node's McpHost, or the Worker's (worker/mcp-routes.ts). */
export type McpOperationsHost = Pick<McpHost, "ready" | "catalog" | "prompt" | "readResource" | "authorize" | "credentialStatus" | "completeAuthorization" | "cancelAuthorization" | "forgetCredential">;

export interface McpHandlerServices {
  /** The MCP servers of the Session's project (loaded on first use when its configuration declares none); rejects with the contract's 404 when the Session does not exist. */
  readonly mcp: (server: string, sessionId: string) => Promise<McpOperationsHost>;
  /** The ordinary prompt admission (TurnService.submit). */
  readonly turns: { submit(server: string, sessionId: string, clientId: string, request: QueuePromptRequest): Promise<PromptReceipt> };
}

type McpOperations = Pick<
  Handlers<RequestContext>,
  | "getMcpCatalog"
  | "submitMcpPrompt"
  | "readMcpResource"
  | "startMcpCredential"
  | "getMcpCredential"
  | "completeMcpCredentialCallback"
  | "cancelMcpCredential"
  | "forgetMcpCredential"
>;

/** The prompt request an MCP prompt submission admits: the resolved parts plus the caller's Turn identity and options. */
function queueRequest(body: SubmitMcpPromptRequest, prompt: QueuePromptRequest["prompt"]): QueuePromptRequest {
  return {
    delivery: "queue",
    turnId: body.turnId,
    prompt,
    ...(body.model !== undefined ? { model: body.model } : {}),
    ...(body.providerOptions !== undefined ? { providerOptions: body.providerOptions as QueuePromptRequest["providerOptions"] } : {}),
  };
}

export function mcpHandlers({ mcp: load, turns }: McpHandlerServices): McpOperations {
  const session = (path: { server: string; sessionId: string }): Promise<McpOperationsHost> => load(path.server, path.sessionId);
  return {
    getMcpCatalog: async ({ path }) => {
      const mcp = await session(path);
      await mcp.ready();
      return { status: 200, body: { catalog: mcp.catalog() } };
    },
    submitMcpPrompt: async ({ path, headers, body }, context) => {
      const mcp = await session(path);
      const prompt = await mcp.prompt(path.serverName, path.promptName, body.arguments ?? {}, context.signal);
      return { status: 202, body: { receipt: await turns.submit(path.server, path.sessionId, headers["x-ze-harness-client-id"], queueRequest(body, prompt)) } };
    },
    readMcpResource: async ({ path, body }, context) => {
      const mcp = await session(path);
      return { status: 200, body: { resource: await mcp.readResource(path.serverName, body.uri, context.signal) } };
    },
    startMcpCredential: async ({ path, body }) => {
      const mcp = await session(path);
      return { status: 202, body: await mcp.authorize(path.serverName, body ?? {}) };
    },
    getMcpCredential: async ({ path }) => {
      const mcp = await session(path);
      return { status: 200, body: { status: await mcp.credentialStatus(path.serverName) } };
    },
    completeMcpCredentialCallback: async ({ path, body }) => {
      const mcp = await session(path);
      return { status: 200, body: { status: await mcp.completeAuthorization(path.serverName, body.callback) } };
    },
    cancelMcpCredential: async ({ path, body }) => {
      const mcp = await session(path);
      return { status: 200, body: { status: await mcp.cancelAuthorization(path.serverName, body?.generation) } };
    },
    forgetMcpCredential: async ({ path }) => {
      const mcp = await session(path);
      return { status: 200, body: await mcp.forgetCredential(path.serverName) };
    },
  };
}
