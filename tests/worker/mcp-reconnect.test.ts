// The MCP reconnect policy on the Worker (worker/mcp.ts), in workerd through an embedding host
// Durable Object (tests/worker/fixtures/mcp-reconnect-object.ts) whose HARNESS_MCP names three
// Streamable HTTP servers that are down at first: `flaky` (`retry` every 1 ms, unlimited) comes
// up and is reconnected by the next uses; `capped` (`retry`, `maxAttempts` 2) answers 503 to
// everything and is tried exactly twice, then reports `retrying: false`; `manual` comes up too
// but stays unavailable through every read until the host requests its reconnect. Retries run on
// use, never on a timer: a resource read of a server waits for its due retry, so the reads are
// the test's clock.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sdk, type McpCatalogSnapshot } from "../../clients/index.js";
import { failure, ok } from "../support/calls.js";
import { networkClient } from "../support/harness.js";
import { everythingHttp, freePort, remote } from "../mcp/support.js";
import { bundle, miniflare } from "./support.js";

const SERVER = "mcp";
let mf: Miniflare;
let url: string;
let flakyPort: number;
let manualPort: number;
let refusing: Server;
let refusedPosts = 0;
const started: Awaited<ReturnType<typeof everythingHttp>>[] = [];

beforeAll(async () => {
  [flakyPort, manualPort] = await Promise.all([freePort(), freePort()]);
  // Answers 503 to everything: a retryable connection failure on every attempt.
  refusing = createServer((request, response) => {
    if (request.method === "POST") refusedPosts += 1;
    request.resume();
    response.writeHead(503).end();
  });
  await new Promise<void>((resolve) => refusing.listen(0, "127.0.0.1", resolve));
  const servers = [
    remote("flaky", `http://127.0.0.1:${flakyPort}/mcp`, { protocolVersions: ["2025-06-18"], reconnect: { kind: "retry", delayMs: 1, maxAttempts: { kind: "unlimited" } } }),
    remote("capped", `http://127.0.0.1:${(refusing.address() as AddressInfo).port}/mcp`, { protocolVersions: ["2025-06-18"], reconnect: { kind: "retry", delayMs: 1, maxAttempts: { kind: "finite", value: 2 } } }),
    remote("manual", `http://127.0.0.1:${manualPort}/mcp`, { protocolVersions: ["2025-06-18"], reconnect: { kind: "manual" } }),
  ];
  const script = await bundle("tests/worker/fixtures/mcp-reconnect-object.ts");
  mf = miniflare(script, {
    durableObjects: { OBJECT: { className: "McpReconnectObject", useSQLite: true } },
    bindings: { FIXTURE_MCP: JSON.stringify(servers) },
    host: "127.0.0.1",
    port: 0,
  });
  url = (await mf.ready).origin;
}, 60_000);

afterAll(async () => {
  await mf?.dispose();
  await Promise.all(started.map((server) => server.close()));
  await new Promise((resolve) => refusing?.close(resolve));
});

describe("the MCP reconnect policy on the Worker", () => {
  it("retries a retryable failure on use until maxAttempts, and a manual server only when the host asks", async () => {
    const client = networkClient(url).client;
    const sessionId = crypto.randomUUID();
    await ok(sdk.createSession({ client, path: { server: SERVER, sessionId }, body: {} }));
    const catalog = async (): Promise<McpCatalogSnapshot> => (await ok(sdk.getMcpCatalog({ client, path: { server: SERVER, sessionId } }))).catalog;
    const unavailable = (snapshot: McpCatalogSnapshot, name: string) => snapshot.unavailable.find((entry) => entry.name === name);

    // The first attempts: every server down. Under `retry` another attempt is due (1 ms later: the
    // read itself may have started it in the background, so the server may be `connecting` again).
    const first = await catalog();
    expect(first.servers).toEqual([]);
    for (const name of ["flaky", "capped"]) {
      const entry = unavailable(first, name)!;
      if (entry.state === "connecting") continue;
      expect(entry).toMatchObject({ state: "failed", reason: "connection_failed", retrying: true });
    }
    expect(unavailable(first, "manual")).toMatchObject({ state: "failed", reason: "connection_failed", retrying: false });
    expect(refusedPosts).toBeGreaterThanOrEqual(1);

    started.push(...(await Promise.all([everythingHttp(flakyPort), everythingHttp(manualPort)])));
    // A resource read of a server is a use that waits for its due retry (bounded): `flaky` connects and answers.
    const read = (serverName: string) => sdk.readMcpResource({ client, path: { server: SERVER, sessionId, serverName }, body: { uri: "demo://resource/dynamic/text/1" } });
    let answered = await read("flaky");
    for (let i = 0; answered.response.status !== 200; i += 1) {
      expect(i, JSON.stringify(answered.error)).toBeLessThan(20);
      answered = await read("flaky");
    }
    expect(answered.data?.resource.contents[0]).toMatchObject({ uri: "demo://resource/dynamic/text/1" });
    // `capped` is tried until maxAttempts (2, counting the first), then no longer, however often it is used.
    let reads = 0;
    while (unavailable(await catalog(), "capped")?.retrying !== false) {
      reads += 1;
      expect(reads).toBeLessThan(20);
      expect((await failure(read("capped"))).status).toBe(503);
    }
    expect((await failure(read("capped"))).status).toBe(503);
    expect((await failure(read("capped"))).status).toBe(503);
    expect(refusedPosts).toBe(2);
    // `manual` is up but never tried again: its read is a 503 naming its state.
    const manual = await failure(read("manual"));
    expect(manual).toMatchObject({ status: 503, body: { _tag: "UnavailableError", message: expect.stringMatching(/^MCP server "manual" is not connected \(connection_failed: /) } });
    const snapshot = await catalog();
    expect(snapshot.servers.map((entry) => entry.name)).toEqual(["flaky"]);
    expect(unavailable(snapshot, "manual")).toMatchObject({ state: "failed", reason: "connection_failed", retrying: false });
    expect(unavailable(snapshot, "capped")).toMatchObject({ state: "failed", reason: "connection_failed", retrying: false });

    // The host's requested reconnect: `manual` connects; an unknown name is said so.
    const asked = await fetch(`${url}/fixture/reconnect?name=manual`, { method: "POST" });
    expect(await asked.json()).toEqual({ known: true });
    const after = await catalog();
    expect(after.servers.map((entry) => entry.name)).toEqual(["flaky", "manual"]);
    expect(after.unavailable.map((entry) => entry.name)).toEqual(["capped"]);
    expect((await ok(read("manual"))).resource.contents[0]).toMatchObject({ uri: "demo://resource/dynamic/text/1" });
    expect(await (await fetch(`${url}/fixture/reconnect?name=nope`, { method: "POST" })).json()).toEqual({ known: false });
    // A requested reconnect counts `capped`'s attempts from zero again: two more, then it stops.
    expect(await (await fetch(`${url}/fixture/reconnect?name=capped`, { method: "POST" })).json()).toEqual({ known: true });
    expect(refusedPosts).toBe(3);
    for (let i = 0; unavailable(await catalog(), "capped")?.retrying !== false; i += 1) {
      expect(i).toBeLessThan(20);
      await failure(read("capped"));
    }
    expect(refusedPosts).toBe(4);
  });
});
