// What both MCP hosts answer alike, in one place: the contract's credential operations by server
// name over an OAuth lifecycle (McpOAuth), and the mapping of a failed prompt or resource request
// to the contract's typed failures. Node's McpHost (host.ts) and the Worker's WorkerMcpOperations
// (worker/mcp-routes.ts) both delegate here. No Node-only import: the Worker bundle includes it.
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import type { McpCredentialCallback, McpCredentialForgetResponse, McpCredentialStartResponse, McpCredentialStatus, StartMcpCredentialRequest } from "../../generated/client/types.gen.js";
import { notFound, unavailable } from "../contract/failure.js";
import type { ResolvedMcpServer } from "./config.js";
import { isLimitReached } from "./limits.js";
import type { McpOAuth } from "./oauth.js";
import { ServerUnavailable } from "./status.js";

/** The credential operations of the contract (`mcp-credentials/:serverName/...`). */
export interface McpCredentialOperations {
  credentialStatus(serverName: string): Promise<McpCredentialStatus>;
  authorize(serverName: string, request?: StartMcpCredentialRequest): Promise<McpCredentialStartResponse>;
  completeAuthorization(serverName: string, callback: McpCredentialCallback): Promise<McpCredentialStatus>;
  cancelAuthorization(serverName: string, generation?: number): Promise<McpCredentialStatus>;
  forgetCredential(serverName: string): Promise<McpCredentialForgetResponse>;
}

/**
 * The credential operations over `lifecycle()` (which may throw the host's typed refusal when it
 * has none) for the server `server(name)` resolves (which throws the 404 of an unknown name).
 */
export function credentialOperations(lifecycle: () => McpOAuth, server: (serverName: string) => ResolvedMcpServer): McpCredentialOperations {
  return {
    credentialStatus: async (serverName) => lifecycle().status(server(serverName)),
    authorize: async (serverName, request) => lifecycle().start(server(serverName), request),
    completeAuthorization: async (serverName, callback) => lifecycle().callback(server(serverName), callback),
    cancelAuthorization: async (serverName, generation) => lifecycle().cancel(server(serverName), generation),
    forgetCredential: async (serverName) => lifecycle().forget(server(serverName)),
  };
}

/**
 * A prompt or resource request that failed, as the contract's failure: a limit or a server that
 * is not connected is a 503, an MCP "not found" (resource -32002; a prompt's -32602) the 404 of
 * `missing`, another MCP error a 503 naming the server; anything else is rethrown as it is.
 */
export function requestFailure(error: unknown, serverName: string, missing: "mcp_prompt" | "mcp_resource"): unknown {
  const name = JSON.stringify(serverName);
  if (isLimitReached(error)) return unavailable(`MCP server ${name} did not answer within its execution limit (${error.value} ms)`);
  if (error instanceof ServerUnavailable) return unavailable(error.message);
  if (error instanceof McpError && (error.code === -32002 || (missing === "mcp_prompt" && error.code === -32602))) return notFound(missing, `MCP server ${name}: ${error.message}`);
  if (error instanceof McpError) return unavailable(`MCP server ${name} failed the request: ${error.message}`);
  return error;
}
