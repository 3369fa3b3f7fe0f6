// A hostile MCP server against the Worker's MCP host, in workerd (miniflare) over the bundle of
// mcp-fixture.ts: an answer larger than the response limit (a Tool list at connection, a Tool
// result at a call) is a typed limit — that server `limit_reached`, that call `mcp_limit_reached` —
// instead of an answer the isolate reads whole into its 128 MB; a malformed answer fails only
// that server; a well-behaved server beside them keeps serving.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { remote } from "../mcp/support.js";
import { bundle, miniflare } from "./support.js";
import { MAX_MCP_RESPONSE_BYTES } from "../../worker/mcp.js";

let mf: Miniflare;
let hostile: Server;
let base: string;

/** Past the limit by a little: what a server that lies about nothing but size sends. */
const HUGE = "x".repeat(MAX_MCP_RESPONSE_BYTES + 1024);

async function answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
  if (request.method !== "POST") {
    response.writeHead(request.method === "DELETE" ? 200 : 405).end();
    return;
  }
  let text = "";
  for await (const chunk of request) text += String(chunk);
  const message = JSON.parse(text) as { id?: number; method: string; params?: { protocolVersion?: string } };
  if (message.id === undefined) {
    response.writeHead(202).end();
    return;
  }
  const reply = (result: unknown): void => {
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", id: message.id, result }));
  };
  const kind = request.url ?? "/";
  if (message.method === "initialize") return reply({ protocolVersion: message.params?.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "hostile", version: "1" } });
  if (message.method === "tools/list") {
    if (kind === "/huge-list") return reply({ tools: [{ name: "big", description: HUGE, inputSchema: { type: "object" } }] });
    if (kind === "/malformed") {
      response.writeHead(200, { "content-type": "application/json" }).end('{"jsonrpc":"2.0","id":');
      return;
    }
    return reply({ tools: [{ name: "big", description: "answers a lot", inputSchema: { type: "object" } }] });
  }
  if (message.method === "tools/call") {
    if (kind === "/huge-call") {
      // Streamed without a Content-Length: the body itself must be counted.
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({ jsonrpc: "2.0", id: message.id, result: { content: [{ type: "text", text: HUGE }] } }));
      return;
    }
    return reply({ content: [{ type: "text", text: "small" }] });
  }
  response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "no such method" } }));
}

beforeAll(async () => {
  hostile = createServer((request, response) => {
    answer(request, response).catch(() => response.destroy());
  });
  await new Promise<void>((resolve) => hostile.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(hostile.address() as AddressInfo).port}`;
  mf = miniflare(await bundle("tests/worker/mcp-fixture.ts"), {});
  await mf.ready;
}, 60_000);

afterAll(async () => {
  await mf?.dispose();
  hostile?.closeAllConnections();
  hostile?.close();
});

interface Ran {
  statuses: { id: string; status: { state: string; reason?: string; message?: string } }[];
  results: { ok?: unknown; failed?: string; message?: string }[];
}

describe("a hostile MCP server against the Worker (workerd)", () => {
  it("answers past the response limit as typed limits, a malformed answer as that server's failure, and the good server serves", async () => {
    const servers = [remote("list", `${base}/huge-list`), remote("call", `${base}/huge-call`), remote("broken", `${base}/malformed`), remote("fine", `${base}/fine`)];
    const calls = [
      { tool: "call_big", input: {} },
      { tool: "fine_big", input: {} },
    ];
    const response = await mf.dispatchFetch("http://worker/run", { method: "POST", body: JSON.stringify({ servers, calls }) });
    expect(response.status).toBe(200);
    const ran = (await response.json()) as Ran;
    const status = (id: string) => ran.statuses.find((entry) => entry.id === id)?.status;
    expect(status("list")).toMatchObject({ state: "failed", reason: "limit_reached" });
    expect(status("list")?.message).toContain(`${MAX_MCP_RESPONSE_BYTES}-byte`);
    expect(status("broken")).toMatchObject({ state: "failed", reason: "connection_failed" });
    expect(status("call")).toMatchObject({ state: "connected" });
    expect(status("fine")).toMatchObject({ state: "connected" });
    expect(ran.results[0]).toMatchObject({ failed: "mcp_limit_reached" });
    expect(ran.results[0]?.message).toContain(`${MAX_MCP_RESPONSE_BYTES}-byte`);
    expect(JSON.stringify(ran.results[1])).toContain("small");
  });
});
