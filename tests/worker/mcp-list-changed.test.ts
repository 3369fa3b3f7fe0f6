// List-changed re-reads of MCP catalogs on the Worker (worker/mcp-list-changed.ts), in workerd
// through miniflare: the bundled Worker whose HARNESS_MCP names a real stateful Streamable HTTP
// server (tests/worker/fixtures/list-changed-server.ts, the SDK's McpServer) whose `grow` Tool adds
// a Tool `fresh` and sends `notifications/tools/list_changed`. After a Turn calls `growing_grow`,
// the next Turn's model request offers `growing_fresh`, which answers, and the Session's MCP
// catalog lists it with a new catalog revision.
import { randomUUID } from "node:crypto";
import type { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sdk, type TurnStreamEvent, type ZeClient } from "../../clients/index.js";
import { startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { remote } from "../mcp/support.js";
import { ok } from "../support/calls.js";
import { networkClient } from "../support/harness.js";
import { testProviderConfig } from "../support/model.js";
import { readSse } from "../support/terminals.js";
import { startListChangedServer, type ListChangedServer } from "./fixtures/list-changed-server.js";
import { bundle, miniflare } from "./support.js";

let model: TestModel;
let growing: ListChangedServer;
let mf: Miniflare;
let url: string;
let client: ZeClient["client"];

beforeAll(async () => {
  let script: string;
  [model, growing, script] = await Promise.all([startTestModel(), startListChangedServer(), bundle("worker/index.ts")]);
  mf = miniflare(script, {
    durableObjects: { HARNESS_SERVERS: { className: "HarnessServerObject", useSQLite: true } },
    bindings: {
      HARNESS_PROVIDERS: JSON.stringify(testProviderConfig(model)),
      HARNESS_PERMISSIONS: JSON.stringify([
        { action: "growing_grow", resource: "*", effect: "allow" },
        { action: "growing_fresh", resource: "*", effect: "allow" },
      ]),
      HARNESS_MCP: JSON.stringify([remote("growing", growing.endpoint)]),
    },
    host: "127.0.0.1",
    port: 0,
  });
  url = (await mf.ready).origin;
  client = networkClient(url).client;
}, 60_000);

afterAll(async () => {
  await mf?.dispose();
  await Promise.all([model?.close(), growing?.close()]);
});

async function turn(sessionId: string, text: string): Promise<TurnStreamEvent[]> {
  const turnId = randomUUID();
  await ok(sdk.submitPrompt({ client, path: { server: "lists", sessionId }, headers: { "x-ze-harness-client-id": "worker-list-changed-test" }, body: { delivery: "queue", turnId, prompt: [{ type: "text", text }] } as never }));
  const path = `/v1/servers/lists/sessions/${sessionId}/turns/${turnId}/events`;
  return readSse<TurnStreamEvent>(await fetch(`${url}${path}?afterRevision=0`), path, (event) => event.type === "turn.finished");
}

const offered = (index: number): string[] => {
  const body = model.requests[index]!.body as { tools?: { function?: { name?: string }; name?: string }[] };
  return (body.tools ?? []).map((tool) => tool.function?.name ?? tool.name ?? "");
};

describe("MCP list-changed re-reads on the Worker (workerd)", () => {
  it("re-reads a server's catalog after tools/list_changed: the next Turn is offered the new Tool and the catalog lists it", async () => {
    const sessionId = randomUUID();
    await ok(sdk.createSession({ client, path: { server: "lists", sessionId }, body: {} }));

    model.enqueue({ events: [{ type: "tool_call", name: "growing_grow", arguments: {} }] }, { events: [{ type: "text", text: "Grown." }] });
    const first = model.requests.length;
    const grown = await turn(sessionId, "Grow the server");
    expect(grown.at(-1)).toMatchObject({ type: "turn.finished", outcome: { kind: "completed", text: "Grown." } });
    expect(offered(first)).toContain("growing_grow");
    expect(offered(first)).not.toContain("growing_fresh");
    expect(JSON.stringify(model.requests.at(-1)!.body)).toContain("grown");
    // The catalog route waits for the re-read the notification (sent before `grow`'s result) started.
    const before = (await ok(sdk.getMcpCatalog({ client, path: { server: "lists", sessionId } }))).catalog;

    // The next Turn: its model request lists the new Tool, which answers.
    model.enqueue({ events: [{ type: "tool_call", name: "growing_fresh", arguments: {} }] }, { events: [{ type: "text", text: "Fresh." }] });
    const second = model.requests.length;
    const fresh = await turn(sessionId, "Use the new Tool");
    expect(fresh.at(-1)).toMatchObject({ type: "turn.finished", outcome: { kind: "completed", text: "Fresh." } });
    expect(offered(second)).toEqual(expect.arrayContaining(["growing_grow", "growing_fresh"]));
    expect(JSON.stringify(model.requests.at(-1)!.body)).toContain("fresh answer");

    // The catalog: the same shapes, the new Tool listed; the server's list was read again.
    const { catalog } = await ok(sdk.getMcpCatalog({ client, path: { server: "lists", sessionId } }));
    expect(catalog.servers.map((server) => server.name)).toEqual(["growing"]);
    expect(catalog.servers[0]!.catalog.tools.map((tool) => tool.name).sort()).toEqual(["fresh", "grow"]);
    expect(catalog.servers[0]!.capabilities).toMatchObject({ tools: { supported: true, listChanged: true } });
    expect(catalog.unavailable).toEqual([]);
    expect(growing.listed()).toBeGreaterThanOrEqual(2);
    expect(before.servers[0]!.catalog.tools.map((tool) => tool.name).sort()).toEqual(["fresh", "grow"]);
    // Connected (revision 1), then read again: the server's catalog revision and the snapshot's moved.
    expect(catalog.servers[0]!.catalog.revision).toBeGreaterThan(1);
    expect(catalog.revision).toBeGreaterThan(1);
  });
});
