// MCP over Streamable HTTP from the Worker (worker/mcp.ts) in workerd: a real
// @modelcontextprotocol/server-everything in its streamable HTTP mode, started here in Node, is
// connected through the SDK's StreamableHTTPClientTransport over workerd's fetch; its Tools are
// offered as `<server>_<tool>` (and `<server>_read-resource`) and run (a structured result validated against the tool's output
// schema without code generation); a local stdio entry is the reference's typed "unavailable"
// outcome and is never started; an OAuth reference without a composed lifecycle is
// `authorization_required`, an unset credential variable `credential_unresolved`, an unreachable
// endpoint `connection_failed` — each failure that server's alone.
import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { McpServer } from "../../services/config/types.js";
import { everythingHttp, freePort, processesWith, remote } from "../mcp/support.js";
import { bundle, miniflare } from "./support.js";

let server: Awaited<ReturnType<typeof everythingHttp>>;
let mf: Miniflare;
/** A pass-through proxy in front of the everything server, recording the headers it was sent. */
let proxy: Server;
let proxied: string;
const seenTokens: (string | undefined)[] = [];

function startProxy(target: URL): Promise<string> {
  proxy = createServer((incoming, outgoing) => {
    seenTokens.push(incoming.headers["x-worker-token"] as string | undefined);
    const upstream = httpRequest({ host: target.hostname, port: target.port, path: incoming.url, method: incoming.method, headers: incoming.headers }, (answer) => {
      outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(outgoing);
    });
    upstream.on("error", () => outgoing.destroy());
    incoming.pipe(upstream);
  });
  return new Promise((resolve) => proxy.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(proxy.address() as AddressInfo).port}/mcp`)));
}

beforeAll(async () => {
  const [script, started] = await Promise.all([bundle("tests/worker/mcp-fixture.ts"), everythingHttp()]);
  server = started;
  proxied = await startProxy(new URL(server.endpoint));
  mf = miniflare(script, { bindings: { WEB_TOKEN: "token-from-a-worker-secret" } });
  await mf.ready;
}, 60_000);

afterAll(async () => {
  await mf?.dispose();
  proxy?.closeAllConnections();
  await new Promise((resolve) => (proxy ? proxy.close(resolve) : resolve(undefined)));
  await server?.close();
});

interface Ran {
  readonly statuses: { id: string; name: string; status: Record<string, unknown> }[];
  readonly tools: { id: string; inputSchema: Record<string, unknown>; permissions: unknown[] }[];
  readonly results: Record<string, unknown>[];
  readonly closed: { id: string; status: Record<string, unknown> }[];
}

async function run(servers: McpServer[], calls: { tool: string; input: Record<string, unknown> }[] = []): Promise<Ran> {
  const response = await mf.dispatchFetch("http://worker/run", { method: "POST", body: JSON.stringify({ servers, calls }) });
  expect(response.status).toBe(200);
  return (await response.json()) as Ran;
}

describe("MCP over Streamable HTTP in the Worker (workerd)", () => {
  it("connects a remote server over fetch, offers its Tools as <server>_<tool> and runs them", async () => {
    const ran = await run(
      [remote("web", proxied, { resourceReadTool: true }, { headers: { "X-Worker-Token": { kind: "environment", reference: "WEB_TOKEN" } } })],
      [
        { tool: "web_echo", input: { message: "hello from workerd" } },
        { tool: "web_get-structured-content", input: { location: "Chicago" } },
        { tool: "web_get-sum", input: { a: 2, b: 40 } },
        { tool: "web_read-resource", input: { uri: "demo://resource/dynamic/text/3" } },
        { tool: "web_echo", input: {} },
      ],
    );
    expect(ran.statuses).toEqual([{ id: "web", name: "web", status: { state: "connected", protocolVersion: "2025-06-18" } }]);
    const ids = ran.tools.map((tool) => tool.id);
    expect(ids).toContain("web_echo");
    expect(ids).toContain("web_get-structured-content");
    expect(ids.every((id) => /^web_[A-Za-z0-9_-]+$/.test(id))).toBe(true);
    const echo = ran.tools.find((tool) => tool.id === "web_echo")!;
    expect(echo.inputSchema).toMatchObject({ type: "object", properties: { message: { type: "string" } }, required: ["message"] });
    expect(echo.inputSchema["$schema"]).toBeUndefined();
    expect(echo.permissions).toEqual([{ action: "web_echo", resources: ["*"], save: ["*"], metadata: { mcpServer: "web", mcpTool: "echo" } }]);
    expect(ran.results[0]).toEqual({ ok: { format: "text", value: "Echo: hello from workerd" } });
    expect(ran.results[1]).toEqual({ ok: { format: "json", value: { temperature: 36, conditions: "Light rain / drizzle", humidity: 82 } } });
    expect(JSON.stringify(ran.results[2])).toContain("42");
    expect(ids).toContain("web_read-resource");
    expect(ran.results[3]).toMatchObject({ ok: { format: "text" } });
    expect(String((ran.results[3]!["ok"] as { value: string }).value)).toMatch(/^Resource 3: This is a plaintext resource/);
    // The server's refusal of bad arguments is the Tool's typed failure.
    expect(ran.results[4]).toMatchObject({ failed: "mcp_tool_error", message: expect.stringContaining("Invalid arguments for tool echo") });
    // Every request carried the header resolved from the Worker secret.
    expect(seenTokens.length).toBeGreaterThan(3);
    expect(new Set(seenTokens)).toEqual(new Set(["token-from-a-worker-secret"]));
    // Closing ends the session.
    expect(ran.closed).toEqual([{ id: "web", name: "web", status: { state: "closed" } }]);
  });

  it("answers local stdio with the reference's typed outcome, and each remote failure is that server's own", async () => {
    const marker = `never-started-${process.pid}`;
    const unreachable = `http://127.0.0.1:${await freePort()}/mcp`;
    const ran = await run(
      [
        { kind: "local", id: "local", name: "local", transport: { kind: "stdio", command: process.execPath, arguments: ["-e", `/* ${marker} */ setInterval(() => {}, 1000)`] } },
        remote("oauth", server.endpoint, {}, { oauth: { kind: "oauth", reference: "web-login" } }),
        remote("nokey", server.endpoint, {}, { headers: { Authorization: { kind: "environment", reference: "UNSET_VARIABLE" } } }),
        remote("down", unreachable),
        remote("web", server.endpoint),
      ],
      [
        { tool: "web_echo", input: { message: "still served" } },
        { tool: "local_echo", input: { message: "x" } },
      ],
    );
    const status = (id: string) => ran.statuses.find((entry) => entry.id === id)!.status;
    expect(status("local")).toEqual({
      state: "failed",
      reason: "spawn_failed",
      message: "Local stdio is unavailable because Workers cannot spawn local processes; the Worker does not emulate stdio or silently fall back to HTTP",
      attempts: 0,
      retrying: false,
    });
    expect(processesWith(marker)).toEqual([]);
    expect(status("oauth")).toMatchObject({ state: "failed", reason: "authorization_required" });
    expect(status("nokey")).toMatchObject({ state: "failed", reason: "credential_unresolved" });
    expect(String(status("nokey")["message"])).toContain("UNSET_VARIABLE");
    expect(status("down")).toMatchObject({ state: "failed", reason: "connection_failed" });
    expect(status("web")).toEqual({ state: "connected", protocolVersion: "2025-06-18" });
    // Only the connected server's Tools are offered.
    expect(new Set(ran.tools.map((tool) => tool.id.split("_")[0]))).toEqual(new Set(["web"]));
    expect(ran.results).toEqual([{ ok: { format: "text", value: "Echo: still served" } }, { missing: "local_echo" }]);
  });
});
