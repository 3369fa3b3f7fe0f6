// The MCP servers an ACP client sends with session/new, load, resume and fork. They belong to
// that one Session and live only in this process's memory (their header and environment values
// are never written anywhere; the client resends them on every load or resume). What cannot
// connect is reported on stderr by name, never with a value: SSE and MCP-over-ACP servers are not
// supported, and an `http://` server with headers does not connect (Ze sends MCP credential
// headers only over HTTPS).
//
// Attaching the accepted servers to the Session needs a host seam the contract does not offer
// yet (see README.md, "MCP servers"): until then every accepted server is reported as not attached.
import type * as acp from "@agentclientprotocol/sdk/unstable";

export interface AcceptedMcpServers {
  /** Servers that could connect, kept in memory for this Session only. */
  readonly servers: readonly acp.McpServer[];
}

export function acceptMcpServers(servers: readonly acp.McpServer[] | undefined, sessionId: string, log: (line: string) => void): AcceptedMcpServers {
  const accepted: acp.McpServer[] = [];
  for (const server of servers ?? []) {
    const name = JSON.stringify(server.name);
    const type = "type" in server ? server.type : "stdio";
    if (type === "sse") {
      log(`ze-harness acp: session ${sessionId}: MCP server ${name} not connected: SSE MCP servers are not supported`);
      continue;
    }
    if (type !== "stdio" && type !== "http") {
      log(`ze-harness acp: session ${sessionId}: MCP server ${name} not connected: ${type} MCP servers are not supported`);
      continue;
    }
    if (type === "http") {
      const http = server as acp.McpServerHttp;
      let protocol: string;
      try {
        protocol = new URL(http.url).protocol;
      } catch {
        log(`ze-harness acp: session ${sessionId}: MCP server ${name} not connected: its URL is not valid`);
        continue;
      }
      if (protocol !== "https:" && protocol !== "http:") {
        log(`ze-harness acp: session ${sessionId}: MCP server ${name} not connected: its URL is not http(s)`);
        continue;
      }
      if (protocol === "http:" && http.headers.length > 0) {
        log(`ze-harness acp: session ${sessionId}: MCP server ${name} not connected: Ze sends MCP credential headers only over HTTPS, and its URL is http://`);
        continue;
      }
    }
    accepted.push(server);
  }
  for (const server of accepted) {
    log(`ze-harness acp: session ${sessionId}: MCP server ${JSON.stringify(server.name)} not attached: this host cannot attach MCP servers to a single Session yet`);
  }
  return { servers: accepted };
}
