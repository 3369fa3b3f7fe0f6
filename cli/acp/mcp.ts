// The MCP servers an ACP client sends with session/new, load, resume and fork. They belong to
// that one Session and live only in this process's memory (their header and environment values
// are never written anywhere; the client resends them on every load or resume). What cannot
// connect is reported on stderr by name, never with a value: SSE and MCP-over-ACP servers are not
// supported, and an `http://` server with headers does not connect (Ze sends MCP credential
// headers only over HTTPS). The accepted ones are attached to that Session alone through the
// embedded host (`Harness.sessionMcp`): their values become `secret` references answered from
// this process's memory.
import type * as acp from "@agentclientprotocol/sdk/unstable";
import type { SessionMcp, SessionMcpAttachment } from "../../services/host/session-mcp.js";

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
  return { servers: accepted };
}

const ENVIRONMENT_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

type ServerDefinition = SessionMcpAttachment["servers"][number];

/** The accepted servers as host MCP definitions whose values are secret references into `secrets`. */
export function attachment(accepted: AcceptedMcpServers, sessionId: string, cwd: string, log: (line: string) => void): SessionMcpAttachment {
  const secrets = new Map<string, string>();
  const servers: ServerDefinition[] = [];
  const names = new Set<string>();
  accepted.servers.forEach((server, index) => {
    let name = server.name.trim() === "" ? `server-${index + 1}` : server.name;
    for (let n = 2; names.has(name); n++) name = `${server.name}-${n}`;
    names.add(name);
    const reference = (kind: string, key: string): { kind: "secret"; reference: string } => {
      const ref = `acp/${index}/${kind}/${key}`;
      return { kind: "secret", reference: ref };
    };
    const values = (entries: readonly { name: string; value: string }[], kind: "env" | "header", pattern: RegExp) => {
      const out: Record<string, { kind: "secret"; reference: string }> = {};
      for (const entry of entries) {
        if (!pattern.test(entry.name)) {
          log(`ze-harness acp: session ${sessionId}: MCP server ${JSON.stringify(name)}: ${kind === "env" ? "environment variable" : "header"} ${JSON.stringify(entry.name)} is not a valid name and is left out`);
          continue;
        }
        const ref = reference(kind, entry.name);
        secrets.set(ref.reference, entry.value);
        out[entry.name] = ref;
      }
      return out;
    };
    const id = `acp-${index + 1}`;
    if ("type" in server && server.type === "http") {
      servers.push({ kind: "remote", id, name, transport: { kind: "streamable-http", endpoint: server.url, headers: values(server.headers, "header", HEADER_NAME) } });
    } else {
      const stdio = server as acp.McpServerStdio;
      servers.push({ kind: "local", id, name, transport: { kind: "stdio", command: stdio.command, arguments: [...stdio.args], environment: values(stdio.env, "env", ENVIRONMENT_NAME) } });
    }
  });
  return { servers, cwd, secret: (reference) => secrets.get(reference) };
}

/** Attaches the accepted servers to the Session (replacing earlier ones) and reports those that did not connect. */
export async function attachMcpServers(host: SessionMcp, accepted: AcceptedMcpServers, sessionId: string, cwd: string, log: (line: string) => void): Promise<void> {
  try {
    const statuses = await host.attach(sessionId, attachment(accepted, sessionId, cwd, log));
    for (const status of statuses) {
      if (status.state !== "connected") log(`ze-harness acp: session ${sessionId}: MCP server ${JSON.stringify(status.name)} not connected: ${status.reason ?? status.state}`);
    }
  } catch (error) {
    // A definition the host refuses (a bad endpoint, say): its message names the field, never a value.
    log(`ze-harness acp: session ${sessionId}: MCP servers not attached: ${error instanceof Error ? error.message : String(error)}`);
  }
}
