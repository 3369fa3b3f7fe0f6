// Overlay-declared MCP servers on the Worker host, in workerd through miniflare (one start): a
// fixture Bundle plugin (tests/worker/fixtures/bundle-plugin.mjs, served from a local HTTP server
// the loopback knob admits) is added to a Session with a revision declaring a real
// @modelcontextprotocol/server-everything over Streamable HTTP, plus a stdio entry. A Turn of that
// Session is offered `everything_echo`, asks its permission (answered over the API) and gets the
// server's answer; the Session's `GET .../mcp` catalog lists the server with origin `session` and
// the stdio entry as `spawn_failed`; its credential operations are a typed 503. A second Session
// of the same server without the plugin is offered none of it and its catalog is empty; removing
// the overlay takes the servers away from the first Session too.
import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { resolve } from "node:path";
import { build } from "esbuild";
import type { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sdk, type AddSessionPluginRequest, type TurnStreamEvent, type ZeClient } from "../../clients/index.js";
import { startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { everythingHttp } from "../mcp/support.js";
import { failure, ok } from "../support/calls.js";
import { networkClient } from "../support/harness.js";
import { testProviderConfig } from "../support/model.js";
import { readSse } from "../support/terminals.js";
import { bundle, miniflare } from "./support.js";

const SERVER = "local";
const LOCAL_STDIO = "Local stdio is unavailable because Workers cannot spawn local processes";
let model: TestModel;
let everything: Awaited<ReturnType<typeof everythingHttp>>;
let script: string;
let mf: Miniflare;
let url: string;
let client: ZeClient["client"];
let files: Server;
let bundleUrl: string;

beforeAll(async () => {
  let plugin: Uint8Array;
  [model, everything, script, plugin] = await Promise.all([
    startTestModel(),
    everythingHttp(),
    bundle("worker/index.ts"),
    build({
      entryPoints: [resolve("tests/worker/fixtures/bundle-plugin.mjs")],
      bundle: true,
      format: "esm",
      platform: "neutral",
      write: false,
      logLevel: "silent",
      alias: { "@zephyrcloudio/harness-plugin": resolve("plugin/index.ts") },
      define: { __FIXTURE_VERSION__: JSON.stringify("1"), __FIXTURE_MCP__: "false" },
    }).then((result) => result.outputFiles[0]!.contents),
  ]);
  files = createServer((request, response) => {
    if (request.url !== "/notes.js") return void response.writeHead(404).end();
    response.writeHead(200, { "content-type": "text/javascript" }).end(Buffer.from(plugin));
  });
  await new Promise<void>((done) => files.listen(0, "127.0.0.1", done));
  bundleUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}/notes.js`;
  mf = miniflare(script, {
    durableObjects: { HARNESS_SERVERS: { className: "HarnessServerObject", useSQLite: true } },
    workerLoaders: { LOADER: {} },
    bindings: {
      HARNESS_PROVIDERS: JSON.stringify(testProviderConfig(model)),
      HARNESS_PLUGIN_BUNDLE_LOOPBACK_HTTP: "true",
      HARNESS_PERMISSIONS: JSON.stringify([{ action: "everything_echo", resource: "*", effect: "ask" }]),
    },
    host: "127.0.0.1",
    port: 0,
  });
  url = (await mf.ready).origin;
  client = networkClient(url).client;
}, 90_000);

afterAll(async () => {
  await mf?.dispose();
  await Promise.all([model?.close(), everything?.close()]);
  await new Promise((done) => (files ? files.close(done) : done(undefined)));
});

async function createSession(): Promise<string> {
  const sessionId = randomUUID();
  await ok(sdk.createSession({ client, path: { server: SERVER, sessionId }, body: {} }));
  return sessionId;
}

async function queue(sessionId: string, text: string): Promise<string> {
  const turnId = randomUUID();
  await ok(sdk.submitPrompt({ client, path: { server: SERVER, sessionId }, headers: { "x-ze-harness-client-id": "worker-plugins-mcp-test" }, body: { delivery: "queue", turnId, prompt: [{ type: "text", text }] } as never }));
  return turnId;
}

async function watch(sessionId: string, turnId: string, stop: (event: TurnStreamEvent) => boolean): Promise<TurnStreamEvent[]> {
  const path = `/v1/servers/${SERVER}/sessions/${sessionId}/turns/${turnId}/events`;
  return readSse<TurnStreamEvent>(await fetch(`${url}${path}?afterRevision=0`), path, stop);
}

/** The tool names the model request at `index` offered. */
const offeredTools = (index: number): string[] => ((model.requests[index]!.body as { tools?: { function: { name: string } }[] }).tools ?? []).map((tool) => tool.function.name);

const finished = (event: TurnStreamEvent): boolean => event.type === "turn.finished";

const withServers = (): AddSessionPluginRequest =>
  ({
    id: randomUUID(),
    source: { _tag: "Bundle", url: bundleUrl },
    resolved: { pluginId: "test.notes" },
    options: { folder: "notes" },
    mcpServers: [
      { kind: "remote", id: "everything", name: "everything", protocolVersions: ["2025-06-18"], transport: { kind: "streamable-http", endpoint: everything.endpoint, headers: {} } },
      { kind: "local", id: "stdio", name: "stdio", protocolVersions: ["2025-06-18"], transport: { kind: "stdio", command: "node", arguments: [], environment: {} } },
    ],
    skills: [],
  }) as AddSessionPluginRequest;

describe("overlay-declared MCP servers on the Worker host", () => {
  it("offers a Session's plugin-declared server to its Turns and catalog only; removing the overlay takes it away", async () => {
    const sessionId = await createSession();
    const other = await createSession();
    const added = (await ok(sdk.addSessionPlugin({ client, path: { server: SERVER, sessionId }, body: withServers() }))).status;
    expect(added.desiredActivation).toMatchObject({ state: "active" });
    expect(added.active?.mcpServers).toEqual([
      { serverId: "everything", name: "everything", kind: "remote", resourceReadTool: false },
      { serverId: "stdio", name: "stdio", kind: "local", resourceReadTool: false },
    ]);

    // A Turn of the Session: offered the server's Tools, the call asks its permission and answers.
    model.enqueue({ events: [{ type: "tool_call", name: "everything_echo", arguments: { message: "hello from an overlay" } }] }, { events: [{ type: "text", text: "Echoed." }] });
    const before = model.requests.length;
    const turnId = await queue(sessionId, "Echo something");
    const asked = (await watch(sessionId, turnId, (event) => event.type === "turn.approval.requested" || finished(event))).at(-1)!;
    expect(asked).toMatchObject({ type: "turn.approval.requested", request: { action: "everything_echo", toolId: "everything_echo" } });
    expect(offeredTools(before)).toEqual(expect.arrayContaining(["everything_echo", "everything_get-sum", "notes_save"]));
    const requestId = (asked as Extract<TurnStreamEvent, { type: "turn.approval.requested" }>).request.id;
    await ok(sdk.replyPermission({ client, path: { server: SERVER, sessionId, permissionRequestId: requestId }, body: { reply: "once" } }));
    expect((await watch(sessionId, turnId, finished)).at(-1)).toMatchObject({ type: "turn.finished", outcome: { kind: "completed", text: "Echoed." } });
    expect(JSON.stringify(model.requests.at(-1)!.body)).toContain("Echo: hello from an overlay");

    // The Session's catalog: the server with origin `session`, the stdio entry unavailable.
    const { catalog } = await ok(sdk.getMcpCatalog({ client, path: { server: SERVER, sessionId } }));
    expect(catalog.servers.map((server) => [server.name, server.origin])).toEqual([["everything", "session"]]);
    expect(catalog.servers[0]!.catalog.tools.map((tool) => tool.name)).toContain("echo");
    expect(catalog.unavailable).toEqual([expect.objectContaining({ serverId: "stdio", state: "failed", reason: "spawn_failed" })]);
    const stdio = await failure(sdk.readMcpResource({ client, path: { server: SERVER, sessionId, serverName: "stdio" }, body: { uri: "demo://resource/static/document/x" } }));
    expect(stdio.status).toBe(503);
    expect(stdio.body.message).toContain(LOCAL_STDIO);
    const read = await ok(sdk.readMcpResource({ client, path: { server: SERVER, sessionId, serverName: "everything" }, body: { uri: "demo://resource/dynamic/text/3" } }));
    expect(read.resource.contents[0]).toMatchObject({ uri: "demo://resource/dynamic/text/3" });
    // Its credentials are not the server-wide namespace's: a typed 503, nothing started.
    const credential = await failure(sdk.getMcpCredential({ client, path: { server: SERVER, sessionId, serverName: "everything" } }));
    expect(credential.status).toBe(503);

    // A second Session of the same server without the plugin: not offered, not listed, not found.
    model.enqueue({ events: [{ type: "text", text: "Nothing to echo with." }] });
    const plainBefore = model.requests.length;
    const plainTurn = await queue(other, "Echo something");
    expect((await watch(other, plainTurn, finished)).at(-1)).toMatchObject({ type: "turn.finished", outcome: { kind: "completed" } });
    expect(offeredTools(plainBefore)).toContain("read");
    expect(offeredTools(plainBefore)).not.toContain("everything_echo");
    const otherCatalog = (await ok(sdk.getMcpCatalog({ client, path: { server: SERVER, sessionId: other } }))).catalog;
    expect(otherCatalog.servers).toEqual([]);
    expect(otherCatalog.unavailable).toEqual([]);
    expect((await failure(sdk.readMcpResource({ client, path: { server: SERVER, sessionId: other, serverName: "everything" }, body: { uri: "demo://resource/dynamic/text/3" } }))).status).toBe(404);

    // Removing the overlay takes its servers from the Session's next Turn and catalog.
    await ok(sdk.removeSessionPlugin({ client, path: { server: SERVER, sessionId }, body: {} }));
    model.enqueue({ events: [{ type: "text", text: "Gone." }] });
    const afterBefore = model.requests.length;
    const afterTurn = await queue(sessionId, "Echo again");
    expect((await watch(sessionId, afterTurn, finished)).at(-1)).toMatchObject({ type: "turn.finished", outcome: { kind: "completed", text: "Gone." } });
    expect(offeredTools(afterBefore)).not.toContain("everything_echo");
    expect((await ok(sdk.getMcpCatalog({ client, path: { server: SERVER, sessionId } }))).catalog.servers).toEqual([]);
  });
});
