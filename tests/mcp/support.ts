// Shared resources of the MCP suites: the real servers from npm, a free port, process checks
// through /proc, and hosts that are always closed after each test.
import { locatePackage } from "../../services/contract/package.js";
import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach } from "vitest";
import { freePort } from "../support/port.js";

export { freePort };
import { randomUUID } from "node:crypto";
import type { PromptReceipt, QueuePromptRequest } from "../../clients/index.js";
import type { LocalMcpServer, RemoteMcpServer } from "../../services/config/types.js";
import { notFound } from "../../services/contract/failure.js";
import { mcpHandlers } from "../../services/host/mcp-handlers.js";
import { unavailableHandlers } from "../../services/host/unavailable.js";
import { createFetchHandler, type RequestContext } from "../../services/http/handler.js";
import { McpHost, type McpHostOptions } from "../../services/mcp/index.js";

export const repoRoot = join(import.meta.dirname, "..", "..");
export const EVERYTHING = join(repoRoot, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");
export const FILESYSTEM = join(repoRoot, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js");
export const FIXTURES = join(import.meta.dirname, "fixtures");

/** The everything server over stdio. */
export function everything(fields: Partial<LocalMcpServer> = {}, environment: LocalMcpServer["transport"]["environment"] = {}): LocalMcpServer {
  return {
    kind: "local",
    id: "everything",
    name: "everything",
    ...fields,
    transport: { kind: "stdio", command: process.execPath, arguments: [EVERYTHING, "stdio"], environment },
  };
}

/** A fixture script as a local server. */
export function fixture(id: string, script: string, args: readonly string[] = [], fields: Partial<LocalMcpServer> = {}): LocalMcpServer {
  return { kind: "local", id, name: id, reconnect: { kind: "manual" }, ...fields, transport: { kind: "stdio", command: process.execPath, arguments: [join(FIXTURES, script), ...args] } };
}

export function remote(id: string, endpoint: string, fields: Partial<RemoteMcpServer> = {}, transport: Partial<RemoteMcpServer["transport"]> = {}): RemoteMcpServer {
  return { kind: "remote", id, name: id, ...fields, transport: { kind: "streamable-http", endpoint, ...transport } };
}

const hosts: McpHost[] = [];

/** An McpHost closed after the test. */
export function host(options: Partial<McpHostOptions> & { servers: McpHostOptions["servers"] }): McpHost {
  const created = new McpHost({ env: { PATH: process.env["PATH"] ?? "" }, cwd: repoRoot, ...options });
  hosts.push(created);
  return created;
}

afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.close()));
});

/** A ToolContext for direct execute() calls. */
export function toolContext(signal: AbortSignal = new AbortController().signal) {
  return {
    workdir: repoRoot,
    sessionId: "00000000-0000-4000-8000-000000000001",
    turnId: "00000000-0000-4000-8000-000000000002",
    toolCallId: "call-1",
    signal,
    artifactsDirectory: join(repoRoot, ".tmp"),
    reportActivity: () => undefined,
    askQuestion: async () => {
      throw new Error("no questions here");
    },
  };
}

/** Live (non-zombie) processes whose command line contains `marker`. */
export function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8");
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const state = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
      if (cmdline.includes(marker) && state !== "Z" && state !== "X") found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}


/** The everything server in its streamable HTTP mode (on `port`, default a free one); resolves once it listens. */
export async function everythingHttp(port?: number): Promise<{ readonly endpoint: string; readonly child: ChildProcess; close(): Promise<void> }> {
  port ??= await freePort();
  const child = spawn(process.execPath, [EVERYTHING, "streamableHttp"], { env: { PATH: process.env["PATH"] ?? "", PORT: String(port) }, stdio: ["ignore", "ignore", "pipe"] });
  await new Promise<void>((resolve, reject) => {
    let seen = "";
    child.stderr!.on("data", (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.includes(`listening on port ${port}`)) resolve();
    });
    child.once("exit", (code) => reject(new Error(`the everything server exited (${code}): ${seen}`)));
  });
  return {
    endpoint: `http://127.0.0.1:${port}/mcp`,
    child,
    close: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGKILL");
      }),
  };
}

export interface Submitted {
  readonly sessionId: string;
  readonly clientId: string;
  readonly request: QueuePromptRequest;
}

/**
 * The HTTP edge with services/host/mcp-handlers.ts over `mcp` (every other operation 503), with
 * stand-ins for the Session service (`sessions` exist) and the prompt admission (recorded).
 */
export function composeMcpHandler(mcp: McpHost, sessions: ReadonlySet<string>, submitted: Submitted[]) {
  return createFetchHandler({
    handlers: {
      ...unavailableHandlers<RequestContext>(),
      ...mcpHandlers({
        mcp: async (_server, sessionId) => {
          if (!sessions.has(sessionId)) throw notFound("session", `Session ${sessionId} does not exist`);
          return mcp;
        },
        turns: {
          submit: async (_server, sessionId, clientId, request): Promise<PromptReceipt> => {
            submitted.push({ sessionId, clientId, request });
            return { delivery: "queue", sessionId, turnId: request.turnId, modelLeaseId: "lease-1", requestOptionsId: randomUUID(), sequence: submitted.length, acceptedAt: Date.now() };
          },
        },
      }),
    },
    release: locatePackage().release,
    servers: (name) => name === "local",
    openapi: () => "{}",
    referencePage: () => "",
  });
}
