// A server's private status and the error of a request to a server that is not connected: shared
// by every MCP host without importing a transport (connection.ts brings in the stdio one, which
// needs node:child_process; the Worker host imports this module and tools.ts instead).
import type { McpUnavailableServer } from "../../generated/client/types.gen.js";
import type { ResolvedMcpServer } from "./config.js";

export type McpFailureReason =
  | "spawn_failed"
  | "credential_unresolved"
  | "authorization_required"
  | "protocol_version"
  | "limit_reached"
  | "catalog_failed"
  | "connection_failed"
  | "disconnected";

/** A server's private status (not part of the contract's catalog, which lists connected servers only). */
export type McpServerState =
  | { readonly state: "disabled" }
  | { readonly state: "connecting"; readonly attempt: number }
  | { readonly state: "connected"; readonly protocolVersion: string }
  | { readonly state: "failed"; readonly reason: McpFailureReason; readonly message: string; readonly attempts: number; readonly retrying: boolean }
  | { readonly state: "closed" };

/** The server is not connected right now. */
export class ServerUnavailable extends Error {
  readonly _tag = "ServerUnavailable" as const;
  constructor(
    readonly server: string,
    readonly status: McpServerState,
  ) {
    super(
      `MCP server ${JSON.stringify(server)} is not connected` +
        (status.state === "failed" ? ` (${status.reason}: ${status.message})` : status.state === "disabled" ? " (it is disabled)" : status.state === "connecting" ? " (it is still connecting)" : ""),
    );
    this.name = "ServerUnavailable";
  }
}

/** A configured server that is not connected, as the catalog reports it: state and reason code only (messages stay in the host's log). */
export function unavailableServer(server: ResolvedMcpServer, status: McpServerState): McpUnavailableServer {
  const base = { origin: "host" as const, serverId: server.id, name: server.name, order: server.order };
  if (status.state === "failed") return { ...base, state: "failed", reason: status.reason, retrying: status.retrying };
  if (status.state === "disabled") return { ...base, state: "disabled" };
  // `connected` cannot reach here (it has a catalog); `closed` is the host shutting down.
  return { ...base, state: status.state === "closed" ? "failed" : "connecting", ...(status.state === "closed" ? { reason: "disconnected" as const, retrying: false } : {}) };
}
