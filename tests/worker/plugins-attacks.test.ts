// Attacks on Bundle plugin sources in workerd through miniflare (with the test knob
// HARNESS_PLUGIN_BUNDLE_LOOPBACK_HTTP, so loopback http:// URLs stand for https:// ones): a
// caller's bundle URL redirects through an address this host never fetches bundles from (an
// internal, non-loopback http:// host) back to an accepted URL. Every hop is checked before it is
// requested, so the internal host is never contacted and the source is a typed 400 naming no hop;
// a redirect between accepted URLs still resolves. The same bytes added on two servers run in two
// isolates: module state one server's Sessions leave is never seen by another server's. A redirect
// loop and a body past the 8 MiB bound are typed 400s.
import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { networkInterfaces } from "node:os";
import type { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sdk, type AddSessionPluginRequest, type TurnStreamEvent, type ZeClient } from "../../clients/index.js";
import { startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { failure, ok } from "../support/calls.js";
import { readSse } from "../support/terminals.js";
import { networkClient } from "../support/harness.js";
import { testProviderConfig } from "../support/model.js";
import { bundle, miniflare } from "./support.js";

const SERVER = "local";
let model: TestModel;
let mf: Miniflare;
let client: ZeClient["client"];
/** The accepted (loopback) server: `/start` redirects to the internal one, `/notes.js` is the bundle. */
let accepted: Server;
/** The internal server (a non-loopback address): it must never be asked anything. */
let internal: Server;
const internalRequests: string[] = [];
let startUrl: string;
let origin: string;

/** A non-loopback IPv4 address of this machine (the internal host), else 0.0.0.0. */
const internalHost = (): string =>
  Object.values(networkInterfaces())
    .flat()
    .find((address) => address !== undefined && address.family === "IPv4" && !address.internal)?.address ?? "0.0.0.0";

beforeAll(async () => {
  let acceptedOrigin = "";
  let internalOrigin = "";
  internal = createServer((request, response) => {
    internalRequests.push(request.url ?? "");
    response.writeHead(302, { location: `${acceptedOrigin}/notes.js` }).end();
  });
  accepted = createServer((request, response) => {
    if (request.url === "/start") return void response.writeHead(302, { location: `${internalOrigin}/metadata` }).end();
    if (request.url === "/loop") return void response.writeHead(302, { location: "/loop" }).end();
    if (request.url === "/huge.js") {
      // Past the 8 MiB bound, streamed without a length.
      response.writeHead(200, { "content-type": "text/javascript" });
      const chunk = Buffer.alloc(1024 * 1024, 0x20);
      for (let i = 0; i < 9; i++) response.write(chunk);
      return void response.end();
    }
    if (request.url === "/moved") return void response.writeHead(301, { location: "/notes.js" }).end();
    if (request.url === "/memory.js") return void response.writeHead(200, { "content-type": "text/javascript" }).end(MEMORY_PLUGIN);
    if (request.url === "/notes.js") return void response.writeHead(200, { "content-type": "text/javascript" }).end("export default {};\n");
    response.writeHead(404).end();
  });
  await Promise.all([new Promise<void>((done) => internal.listen(0, "0.0.0.0", done)), new Promise<void>((done) => accepted.listen(0, "127.0.0.1", done))]);
  internalOrigin = `http://${internalHost()}:${(internal.address() as AddressInfo).port}`;
  acceptedOrigin = `http://127.0.0.1:${(accepted.address() as AddressInfo).port}`;
  startUrl = `${acceptedOrigin}/start`;
  model = await startTestModel();
  mf = miniflare(await bundle("worker/index.ts"), {
    durableObjects: { HARNESS_SERVERS: { className: "HarnessServerObject", useSQLite: true } },
    workerLoaders: { LOADER: {} },
    bindings: { HARNESS_PROVIDERS: JSON.stringify(testProviderConfig(model)), HARNESS_PLUGIN_BUNDLE_LOOPBACK_HTTP: "true" },
    host: "127.0.0.1",
    port: 0,
  });
  origin = (await mf.ready).origin;
  client = networkClient(origin).client;
}, 90_000);

afterAll(async () => {
  await mf?.dispose();
  await model?.close();
  await Promise.all([accepted, internal].map((server) => new Promise((done) => (server ? server.close(done) : done(undefined)))));
});

/** A plugin whose tool keeps the last value it was given in module state and answers the one before. */
const MEMORY_PLUGIN = `let last = null;
export default Object.freeze({ id: "test.memory", setup(context) {
  context.tools.register({ id: "remember", description: "Remember a value", inputSchema: { type: "object", properties: { value: { type: "string" } }, required: ["value"], additionalProperties: false },
    execute: async (input) => { const previous = last; last = input.value; return { previous }; } });
} });
`;

const request = (url: string): AddSessionPluginRequest => ({
  id: randomUUID(),
  source: { _tag: "Bundle", url },
  resolved: { pluginId: "test.notes" },
  options: {},
  mcpServers: [],
  skills: [],
});

describe("Bundle plugin URLs under attack (workerd)", () => {
  it("checks every redirect hop before requesting it: an internal http:// hop is never contacted, the source is a 400 naming no hop", async () => {
    const sessionId = randomUUID();
    await ok(sdk.createSession({ client, path: { server: SERVER, sessionId }, body: {} }));
    const refused = await failure(sdk.addSessionPlugin({ client, path: { server: SERVER, sessionId }, body: request(startUrl) }));
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ _tag: "ValidationError", message: expect.stringContaining("redirected to a URL this host does not fetch bundles from") });
    expect(JSON.stringify(refused.body)).not.toContain("metadata");
    expect(internalRequests).toEqual([]);
    // Nothing was recorded for the Session.
    expect((await ok(sdk.sessionPlugins({ client, path: { server: SERVER, sessionId } }))).status).not.toHaveProperty("active");
  });

  it("still follows a redirect between accepted URLs (relative Location), pinning the bytes it reached", async () => {
    const sessionId = randomUUID();
    await ok(sdk.createSession({ client, path: { server: SERVER, sessionId }, body: {} }));
    const added = await ok(sdk.addSessionPlugin({ client, path: { server: SERVER, sessionId }, body: request(startUrl.replace("/start", "/moved")) }));
    expect(added.status.desired?.resolved.integrity).toBe("sha256:450f0af4f4c1ecc4c7180f2e364c8a59bfed69dd350fb6b47bce8641c2a37786");
    expect(internalRequests).toEqual([]);
  });

  it("runs one server's bundle apart from another server's: the same bytes share no module state across server objects", async () => {
    const remember = async (server: string, value: string): Promise<string> => {
      const sessionId = randomUUID();
      await ok(sdk.createSession({ client, path: { server, sessionId }, body: {} }));
      const added = await ok(sdk.addSessionPlugin({ client, path: { server, sessionId }, body: { ...request(startUrl.replace("/start", "/memory.js")), resolved: { pluginId: "test.memory" } } }));
      expect(added.status.desiredActivation).toMatchObject({ state: "active" });
      model.enqueue({ events: [{ type: "tool_call", name: "remember", arguments: { value } }] }, { events: [{ type: "text", text: "Remembered." }] });
      const turnId = randomUUID();
      await ok(sdk.submitPrompt({ client, path: { server, sessionId }, headers: { "x-ze-harness-client-id": "worker-plugins-attacks" }, body: { delivery: "queue", turnId, prompt: [{ type: "text", text: "Remember" }] } as never }));
      const path = `/v1/servers/${server}/sessions/${sessionId}/turns/${turnId}/events`;
      await readSse<TurnStreamEvent>(await fetch(`${origin}${path}?afterRevision=0`), path, (event) => event.type === "turn.finished");
      const turn = (await ok(sdk.getTurn({ client, path: { server, sessionId, turnId } }))).turn;
      return JSON.stringify(turn.parts.filter((part) => part.type === "tool"));
    };
    expect(await remember("tenant-a", "a-private-value")).toContain('"previous":null');
    // The same server keeps its own state (one isolate per bundle per server object)…
    expect(await remember("tenant-a", "a-second-value")).toContain('"previous":"a-private-value"');
    // …and another server's isolate never saw it.
    const other = await remember("tenant-b", "b-value");
    expect(other).toContain('"previous":null');
    // The other server's values by name: a bare "a-" also matches random ids ("…45fa-b5ae…").
    expect(other).not.toContain("a-private-value");
    expect(other).not.toContain("a-second-value");
  });

  it("refuses a redirect loop and a body past the bound as typed 400s, recording nothing", async () => {
    const sessionId = randomUUID();
    await ok(sdk.createSession({ client, path: { server: SERVER, sessionId }, body: {} }));
    const loop = await failure(sdk.addSessionPlugin({ client, path: { server: SERVER, sessionId }, body: request(startUrl.replace("/start", "/loop")) }));
    expect(loop.status).toBe(400);
    expect(loop.body).toMatchObject({ _tag: "ValidationError", message: expect.stringContaining("redirected to a URL this host does not fetch bundles from") });
    const huge = await failure(sdk.addSessionPlugin({ client, path: { server: SERVER, sessionId }, body: request(startUrl.replace("/start", "/huge.js")) }));
    expect(huge.status).toBe(400);
    expect(huge.body).toMatchObject({ _tag: "ValidationError", message: expect.stringContaining("is larger than 8388608 bytes") });
    expect((await ok(sdk.sessionPlugins({ client, path: { server: SERVER, sessionId } }))).status).not.toHaveProperty("desired");
  });
});
