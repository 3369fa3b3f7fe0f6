// MCP servers that accept and never answer: a real stdio process that reads and never writes
// (fixtures/silent.mjs) and a real HTTP server that takes requests and never responds. Status reads
// wait for first connection attempts only until DEFAULT_READY_WAIT_MS after the servers started
// (before: every `GET …/mcp` waited 30 s on its own timer), list the hung servers as `connecting`
// (then `failed` with a reason once a startupMs limit is reached), and a Turn runs without their
// Tools instead of waiting (the reference: each model request uses the servers connected then).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createZeClient, sdk } from "../../clients/index.js";
import { DEFAULT_READY_WAIT_MS } from "../../services/mcp/index.js";
import { contractFetch } from "../support/contract.js";
import { ok } from "../support/calls.js";
import { startModelHarness, type ModelHarness } from "../support/model.js";
import { queue, runToEnd, server } from "../turns/helpers.js";
import { composeMcpHandler, everything, fixture, host, processesWith, remote } from "./support.js";

// The hang guard: well under the 30 s each read waited before, above the 5 s first-look bound.
vi.setConfig({ testTimeout: 20_000 });

/** An HTTP server that accepts every request and never answers it (held until close). */
async function unresponsiveHttp(): Promise<{ readonly endpoint: string; readonly requests: () => number; close(): Promise<void> }> {
  const held: ServerResponse[] = [];
  let received = 0;
  const http: Server = createServer((_request: IncomingMessage, response: ServerResponse) => {
    received += 1;
    held.push(response);
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as { port: number };
  return {
    endpoint: `http://127.0.0.1:${port}/mcp`,
    requests: () => received,
    close: () =>
      new Promise((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const unlimited = { startupMs: { kind: "unlimited" }, catalogMs: { kind: "unlimited" }, executionMs: { kind: "unlimited" } } as const;

describe("hung MCP servers", () => {
  it("getMcpCatalog answers with the hung servers as connecting, the first read within the first-look bound and every later one at once", async () => {
    expect(DEFAULT_READY_WAIT_MS).toBe(5_000);
    const hungHttp = await unresponsiveHttp();
    cleanups.push(() => hungHttp.close());
    const marker = `ze-hung-${process.pid}-${randomUUID()}`;
    // The reference's default limits (unlimited): nothing but the read's own bound ends the wait.
    const mcp = host({ servers: [everything(), fixture("silent", "silent.mjs", [marker], { limits: unlimited }), remote("stalled", hungHttp.endpoint, { limits: unlimited, reconnect: { kind: "manual" } })] });
    const session = randomUUID();
    const { client } = createZeClient({ baseUrl: "http://localhost", fetch: contractFetch(composeMcpHandler(mcp, new Set([session]), [])) });
    const path = { server: "local", sessionId: session };

    for (let read = 0; read < 3; read += 1) {
      const { catalog } = await ok(sdk.getMcpCatalog({ client, path }));
      expect(catalog.servers.map((entry) => entry.name)).toEqual(["everything"]);
      expect(catalog.unavailable).toEqual([
        { origin: "host", serverId: "silent", name: "silent", order: 0, state: "connecting" },
        { origin: "host", serverId: "stalled", name: "stalled", order: 0, state: "connecting" },
      ]);
    }
    // Both really are hung, not failed: the process runs and the HTTP server holds the request.
    expect(processesWith(marker)).toHaveLength(1);
    expect(hungHttp.requests()).toBeGreaterThan(0);
    expect(mcp.servers().map((entry) => entry.status.state)).toEqual(["connected", "connecting", "connecting"]);
    // Their Tools are absent; the connected server's are offered.
    expect(mcp.tools().every((tool) => tool.id.startsWith("everything_"))).toBe(true);
    // A prompt of a hung server is an immediate 503 after the bound, not another wait.
    const prompt = await sdk.submitMcpPrompt({ client, path: { ...path, serverName: "silent", promptName: "p" }, headers: { "x-ze-harness-client-id": "c" }, body: { turnId: randomUUID() } });
    expect(prompt.response.status).toBe(503);
    expect(prompt.error).toMatchObject({ _tag: "UnavailableError", message: expect.stringContaining("still connecting") });
    await mcp.close();
    expect(processesWith(marker)).toEqual([]);
  });

  it("reports a hung server failed with its reason once its startupMs is reached", async () => {
    const hungHttp = await unresponsiveHttp();
    cleanups.push(() => hungHttp.close());
    const limited = { ...unlimited, startupMs: { kind: "finite", value: 200 } } as const;
    const mcp = host({ servers: [fixture("silent", "silent.mjs", [], { limits: limited }), remote("stalled", hungHttp.endpoint, { limits: limited, reconnect: { kind: "manual" } })] });
    await mcp.start();
    const { catalog } = await ok(sdk.getMcpCatalog({ client: createZeClient({ baseUrl: "http://localhost", fetch: contractFetch(composeMcpHandler(mcp, new Set(["00000000-0000-4000-8000-000000000001"]), [])) }).client, path: { server: "local", sessionId: "00000000-0000-4000-8000-000000000001" } }));
    expect(catalog.servers).toEqual([]);
    expect(catalog.unavailable).toEqual([
      { origin: "host", serverId: "silent", name: "silent", order: 0, state: "failed", reason: "limit_reached", retrying: false },
      { origin: "host", serverId: "stalled", name: "stalled", order: 0, state: "failed", reason: "limit_reached", retrying: false },
    ]);
  });

  describe("in a host that runs Turns", () => {
    let h: ModelHarness | undefined;
    afterEach(async () => {
      await h?.close();
      h = undefined;
    });

    it("serves the catalog and runs a Turn without the hung servers' Tools", async () => {
      const hungHttp = await unresponsiveHttp();
      cleanups.push(() => hungHttp.close());
      const marker = `ze-hung-turn-${process.pid}-${randomUUID()}`;
      h = await startModelHarness({
        config: {
          mcp: [
            { kind: "local", id: "silent", name: "silent", transport: { kind: "stdio", command: process.execPath, arguments: [fixture("x", "silent.mjs").transport.arguments![0]!, marker] } },
            { kind: "remote", id: "stalled", name: "stalled", transport: { kind: "streamable-http", endpoint: hungHttp.endpoint } },
          ],
        },
      });
      const sessionId = await h.createSession();
      const { catalog } = await ok(sdk.getMcpCatalog({ client: h.api.client, path: { server, sessionId } }));
      expect(catalog.unavailable.map((entry) => [entry.name, entry.state])).toEqual([
        ["silent", "connecting"],
        ["stalled", "connecting"],
      ]);
      h.model.enqueue({ events: [{ type: "text", text: "fine without them" }] });
      const { turn } = await runToEnd(h, sessionId, (await queue(h, sessionId, "hello")).turnId);
      expect(turn.outcome).toMatchObject({ kind: "completed", text: "fine without them" });
      const offered = ((h.model.requests.at(-1)!.body as { tools?: { function: { name: string } }[] }).tools ?? []).map((tool) => tool.function.name);
      expect(offered.some((name) => name.startsWith("silent_") || name.startsWith("stalled_"))).toBe(false);
      expect(processesWith(marker)).toHaveLength(1);
      await h.close();
      h = undefined;
      expect(processesWith(marker)).toEqual([]);
    });
  });
});
