// Plugins of an embedding host (worker/host-plugins.ts), in workerd through miniflare with its
// Worker Loader, one start: the fixture object tests/worker/fixtures/plugins-host-object.ts embeds
// WorkerHarnessHost with a linked static Session plugin and server plugins served by a local HTTP
// server (loopback knob). Server plugins load at wake (a good one active with its pinned integrity,
// an unreachable one failed and left out) and a new Session's Turn calls their tool; a Session adds
// the static plugin by its source id and the scripted model calls its tool, and the Session's
// Turns still see the /workspace store's agents; a changed list is a distinct host generation
// that an existing Session uses from its next Turn; a list naming a Session's own plugin id is
// `WorkerServerPluginConflict`, one whose generation does not activate `WorkerServerPluginRejected`
// (the previous list stays); after a restart given the same list the pinned bytes load from the
// cache with the URL gone; and the bundle cache's fair bounds on a real Durable Object SQLite.
import { createHash, randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { build } from "esbuild";
import type { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sdk, type AddSessionPluginRequest, type SessionPluginsStatus, type Turn, type TurnStreamEvent, type ZeClient } from "../../clients/index.js";
import { startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { failure, ok } from "../support/calls.js";
import { networkClient } from "../support/harness.js";
import { testProviderConfig } from "../support/model.js";
import { readSse } from "../support/terminals.js";
import { bundle, miniflare } from "./support.js";

const SERVER = "plugins";
let model: TestModel;
let mf: Miniflare;
let url: string;
let client: ZeClient["client"];
let files: Server;
let base: string;
let v1: Uint8Array;
let v2: Uint8Array;
let script: string;
let persist: string;
/** What the local server answers, by path (absent: 404). */
let served: Record<string, Uint8Array | string | ((response: import("node:http").ServerResponse) => void)>;

/** A self-contained plugin module with no imports. */
const OTHER = `export default { id: "test.other", setup(context) { context.tools.register({ id: "other_tool", description: "Other", inputSchema: { type: "object" }, execute: async () => "other" }); } };`;
/** Its setup registers a hook name that does not exist: fatal, so the generation does not activate. */
const BAD_HOOK = `export default { id: "test.badhook", setup(context) { context.hooks.register("no.such.hook", async () => undefined); } };`;

async function buildFixture(version: string): Promise<Uint8Array> {
  const result = await build({
    entryPoints: [resolve("tests/worker/fixtures/bundle-plugin.mjs")],
    bundle: true,
    format: "esm",
    platform: "neutral",
    write: false,
    logLevel: "silent",
    alias: { "@zephyrcloudio/harness-plugin": resolve("plugin/index.ts") },
    define: { __FIXTURE_VERSION__: JSON.stringify(version), __FIXTURE_MCP__: "false" },
  });
  return result.outputFiles[0]!.contents;
}

const sha256 = (bytes: Uint8Array | string): string => createHash("sha256").update(bytes).digest("hex");

/** Starts workerd on the persisted state with `serverPlugins` as the embedder's list. */
async function start(serverPlugins: unknown[]): Promise<void> {
  mf = miniflare(script, {
    durableObjects: { HOST: { className: "PluginsHostObject", useSQLite: true }, CACHE: { className: "CacheObject", useSQLite: true } },
    durableObjectsPersist: persist,
    workerLoaders: { LOADER: {} },
    bindings: { EMBED_PROVIDERS: JSON.stringify(testProviderConfig(model)), SERVER_PLUGINS: JSON.stringify(serverPlugins) },
    host: "127.0.0.1",
    port: 0,
  });
  url = (await mf.ready).origin;
  client = networkClient(url).client;
}

beforeAll(async () => {
  [model, script, v1, v2] = await Promise.all([startTestModel(), bundle("tests/worker/fixtures/plugins-host-object.ts"), buildFixture("1"), buildFixture("2")]);
  served = { "/notes-v1.js": v1, "/notes-v2.js": v2, "/other.js": OTHER, "/badhook.js": BAD_HOOK };
  files = createServer((request, response) => {
    const body = served[request.url ?? ""];
    if (body === undefined) return void response.writeHead(404).end();
    if (typeof body === "function") return void body(response);
    response.writeHead(200, { "content-type": "text/javascript" }).end(Buffer.from(body));
  });
  await new Promise<void>((done) => files.listen(0, "127.0.0.1", done));
  base = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
  persist = mkdtempSync(join(tmpdir(), "zh-worker-host-plugins-"));
  await start([
    { url: `${base}/notes-v1.js`, pluginId: "test.notes", options: { folder: "notes" } },
    { url: `${base}/missing.js`, pluginId: "test.missing" },
  ]);
}, 90_000);

afterAll(async () => {
  await mf?.dispose();
  await model?.close();
  await new Promise((done) => (files ? files.close(done) : done(undefined)));
  if (persist) rmSync(persist, { recursive: true, force: true });
});

async function createSession(): Promise<string> {
  const sessionId = randomUUID();
  await ok(sdk.createSession({ client, path: { server: SERVER, sessionId }, body: {} }));
  return sessionId;
}

async function runTurn(sessionId: string, text: string, extra: Record<string, unknown> = {}): Promise<Turn> {
  const turnId = randomUUID();
  await ok(
    sdk.submitPrompt({
      client,
      path: { server: SERVER, sessionId },
      headers: { "x-ze-harness-client-id": "worker-host-plugins-test" },
      body: { delivery: "queue", turnId, prompt: [{ type: "text", text }], ...extra } as never,
    }),
  );
  const path = `/v1/servers/${SERVER}/sessions/${sessionId}/turns/${turnId}/events`;
  await readSse<TurnStreamEvent>(await fetch(`${url}${path}?afterRevision=0`), path, (event) => event.type === "turn.finished");
  return (await ok(sdk.getTurn({ client, path: { server: SERVER, sessionId, turnId } }))).turn;
}

const toolParts = (turn: Turn): string => JSON.stringify(turn.parts.filter((part) => part.type === "tool"));
const status = async (sessionId: string): Promise<SessionPluginsStatus> => (await ok(sdk.sessionPlugins({ client, path: { server: SERVER, sessionId } }))).status;

/** The server plugins (GET), or the answer to replacing them (POST). */
async function serverPlugins(entries?: unknown[]): Promise<any> {
  const response = await fetch(`${url}/fixture/server-plugins`, entries === undefined ? {} : { method: "POST", body: JSON.stringify(entries) });
  expect(response.status).toBe(200);
  return response.json();
}

const request = (source: AddSessionPluginRequest["source"], pluginId: string, extra: Partial<AddSessionPluginRequest["resolved"]> = {}): AddSessionPluginRequest => ({
  id: randomUUID(),
  source,
  resolved: { pluginId, ...extra },
  options: {},
  mcpServers: [],
  skills: [],
});

/** Doubles 21 through the server plugin's tool; the tool's `version` (the bundle's build). */
async function doubledBy(sessionId: string): Promise<string> {
  model.enqueue({ events: [{ type: "tool_call", name: "double", arguments: { value: 21 } }] }, { events: [{ type: "text", text: "Doubled." }] });
  const turn = await runTurn(sessionId, "Double 21");
  expect(turn.outcome).toMatchObject({ kind: "completed", text: "Doubled." });
  const parts = toolParts(turn);
  expect(parts).toContain('"value":42');
  return /"version":"(\d)"/.exec(parts)?.[1] ?? "none";
}

describe("plugins of an embedding host (WorkerHarnessHost in workerd)", () => {
  let plain: string;
  let generation: string;
  let shouter: string;

  it("loads the server plugins at wake: a good entry active with its pinned integrity, an unreachable one failed; a new Session's Turn calls its tool", async () => {
    const listed = (await serverPlugins()).plugins;
    expect(listed).toEqual([
      { url: `${base}/notes-v1.js`, pluginId: "test.notes", integrity: `sha256:${sha256(v1)}`, state: "active" },
      { url: `${base}/missing.js`, pluginId: "test.missing", state: "failed", error: expect.stringContaining("HTTP 404") },
    ]);
    plain = await createSession();
    // A Session without a plugin of its own sees the host generation: the plugin's tool runs.
    expect(await doubledBy(plain)).toBe("1");
    const inventory = (await status(plain)).plugins;
    const notes = inventory.find((plugin) => plugin.pluginId === "test.notes");
    expect(notes).toMatchObject({ status: "active", source: `${base}/notes-v1.js` });
    // The generation id carries a digest of the loaded list.
    generation = notes!.generationId;
    expect(generation).toMatch(/^host-1-[0-9a-f]{16}$/);
    expect(inventory.find((plugin) => plugin.source === `${base}/missing.js`)).toMatchObject({ status: "failed" });
  });

  it("adds a linked static Session plugin by its source id; the model calls its tool and the server plugin's, and the Session's Turns see the store's agents", async () => {
    const sessionId = await createSession();
    shouter = sessionId;
    const added = await ok(sdk.addSessionPlugin({ client, path: { server: SERVER, sessionId }, body: request({ _tag: "Static", id: "fixture-static" }, "fixture.static") }));
    expect(added.status.desiredActivation).toMatchObject({ state: "active" });
    expect(added.status.active?.resolved).toEqual({ pluginId: "fixture.static", version: "1.0.0" });
    expect(added.status.plugins.find((plugin) => plugin.pluginId === "fixture.static")).toMatchObject({ status: "active", source: "static:fixture-static", registrations: ["tool:shout"] });

    model.enqueue(
      { events: [{ type: "tool_call", name: "shout", arguments: { text: "ahoy" } }, { type: "tool_call", name: "double", arguments: { value: 2 } }] },
      { events: [{ type: "tool_call", name: "write", arguments: { filePath: ".ze-harness/agents/lookout.md", content: "---\ndescription: Keeps watch\n---\n\nYou keep watch from the crow's nest." } }] },
      { events: [{ type: "text", text: "Shouted." }] },
    );
    const turn = await runTurn(sessionId, "Shout ahoy");
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "Shouted." });
    const parts = toolParts(turn);
    expect(parts).toContain("AHOY!");
    expect(parts).toContain('"by":"static"');
    expect(parts).toContain('"value":4');

    // The agent file the Turn wrote is the Session's from its next Turn, beside its plugin.
    model.enqueue({ events: [{ type: "text", text: "Watching." }] });
    expect((await runTurn(sessionId, "Keep watch", { agent: "lookout" })).outcome).toMatchObject({ kind: "completed", text: "Watching." });
    expect(JSON.stringify(model.requests.at(-1)!.body)).toContain("You keep watch from the crow's nest.");

    // An id the host does not link is a 400; another plugin id or version a declared_mismatch 409.
    const unknown = await failure(sdk.addSessionPlugin({ client, path: { server: SERVER, sessionId }, body: request({ _tag: "Static", id: "no-such-source" }, "fixture.static") }));
    expect(unknown.status).toBe(400);
    const mismatch = await failure(sdk.addSessionPlugin({ client, path: { server: SERVER, sessionId }, body: request({ _tag: "Static", id: "fixture-static" }, "fixture.static", { version: "2.0.0" }) }));
    expect(mismatch.status).toBe(409);
    expect(mismatch.body.message).toContain("declared_mismatch");
    expect((await status(sessionId)).active?.resolved).toEqual({ pluginId: "fixture.static", version: "1.0.0" });
  });

  it("replaces the list: a distinct generation, used by an existing Session from its next Turn", async () => {
    const replaced = (await serverPlugins([{ url: `${base}/notes-v2.js`, pluginId: "test.notes", options: { folder: "notes" } }])).plugins;
    expect(replaced).toEqual([{ url: `${base}/notes-v2.js`, pluginId: "test.notes", integrity: `sha256:${sha256(v2)}`, state: "active" }]);
    expect(await doubledBy(plain)).toBe("2");
    const next = (await status(plain)).plugins.find((plugin) => plugin.pluginId === "test.notes")!.generationId;
    expect(next).toMatch(/^host-2-[0-9a-f]{16}$/);
    expect(next.slice(7)).not.toBe(generation.slice(7));
  });

  it("refuses a list naming a Session's own plugin (WorkerServerPluginConflict) and one whose generation does not activate (WorkerServerPluginRejected); the previous list stays", async () => {
    const owner = await createSession();
    const added = await ok(sdk.addSessionPlugin({ client, path: { server: SERVER, sessionId: owner }, body: request({ _tag: "Bundle", url: `${base}/other.js` }, "test.other") }));
    expect(added.status.desiredActivation).toMatchObject({ state: "active" });
    const before = (await serverPlugins()).plugins;

    const conflicting = await serverPlugins([{ url: `${base}/notes-v2.js`, pluginId: "test.notes" }, { url: `${base}/other.js`, pluginId: "test.other" }]);
    expect(conflicting.error).toMatchObject({ _tag: "WorkerServerPluginConflict", pluginIds: ["test.other"] });
    expect((await serverPlugins()).plugins).toEqual(before);

    const rejected = await serverPlugins([{ url: `${base}/notes-v2.js`, pluginId: "test.notes" }, { url: `${base}/badhook.js`, pluginId: "test.badhook" }]);
    expect(rejected.error._tag).toBe("WorkerServerPluginRejected");
    expect(rejected.error.message).toContain("no.such.hook");
    expect(rejected.error.plugins.find((plugin: { pluginId: string }) => plugin.pluginId === "test.badhook")).toMatchObject({ state: "failed", integrity: `sha256:${sha256(BAD_HOOK)}` });
    expect((await serverPlugins()).plugins).toEqual(before);
    expect(await doubledBy(plain)).toBe("2");

    // A malformed list changes nothing either.
    expect((await serverPlugins([{ url: 7 }])).error._tag).toBe("WorkerServerPluginRejected");
    // The reverse: a server plugin's id cannot become a Session's own.
    const taken = await failure(sdk.addSessionPlugin({ client, path: { server: SERVER, sessionId: owner }, body: request({ _tag: "Bundle", url: `${base}/notes-v1.js` }, "test.notes") }));
    expect(taken.status).toBe(409);
    expect((await status(owner)).active?.resolved.pluginId).toBe("test.other");
  });

  it("after a restart given the same list, loads the pinned bytes from the cache with the URL gone; the static Session plugin loads again", async () => {
    await mf.dispose();
    delete served["/notes-v2.js"];
    await start([{ url: `${base}/notes-v2.js`, pluginId: "test.notes", options: { folder: "notes" } }]);
    expect((await serverPlugins()).plugins).toEqual([{ url: `${base}/notes-v2.js`, pluginId: "test.notes", integrity: `sha256:${sha256(v2)}`, state: "active" }]);
    expect(await doubledBy(plain)).toBe("2");
    model.enqueue({ events: [{ type: "tool_call", name: "shout", arguments: { text: "again" } }] }, { events: [{ type: "text", text: "Again." }] });
    const turn = await runTurn(shouter, "Shout again");
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "Again." });
    expect(toolParts(turn)).toContain("AGAIN!");
    // Another list at the next wake is resolved afresh: the URL that is gone fails its entry; a
    // generation that does not activate leaves the server serving with none, each entry failed.
    await mf.dispose();
    await start([{ url: `${base}/notes-v2.js`, pluginId: "test.notes" }, { url: `${base}/badhook.js`, pluginId: "test.badhook" }]);
    expect((await serverPlugins()).plugins).toEqual([
      { url: `${base}/notes-v2.js`, pluginId: "test.notes", state: "failed", error: expect.stringContaining("HTTP 404") },
      { url: `${base}/badhook.js`, pluginId: "test.badhook", integrity: `sha256:${sha256(BAD_HOOK)}`, state: "failed", error: expect.stringContaining("no.such.hook") },
    ]);
    model.enqueue({ events: [{ type: "text", text: "Still serving." }] });
    expect((await runTurn(plain, "Hello")).outcome).toMatchObject({ kind: "completed", text: "Still serving." });
    const offered = (model.requests.at(-1)!.body as { tools: { function: { name: string } }[] }).tools.map((tool) => tool.function.name);
    expect(offered).toContain("read");
    expect(offered).not.toContain("double");
    served["/notes-v2.js"] = v2;
  }, 60_000);

  it("bounds the bundle cache fairly: a Session's own quota is a typed refusal, a full pool leaves a bundle uncached and evicts nothing", async () => {
    const put = async (query: string): Promise<any> => (await fetch(`${url}/cache/put?${query}`)).json();
    const entries = async (): Promise<{ digest: string; owner: string }[]> => ((await (await fetch(`${url}/cache/entries`)).json()) as { entries: { digest: string; owner: string }[] }).entries;
    // Limits in the fixture: 100-byte bundles, 200 bytes per Session, 250 for the Sessions together.
    expect(await put("owner=s1&digest=a&size=100")).toEqual({ result: "cached" });
    expect(await put("owner=s1&digest=b&size=100&keep=a")).toEqual({ result: "cached" });
    // A third while both are still needed: past its quota, refused and nothing stored.
    const refused = await put("owner=s1&digest=c&size=100&keep=a,b");
    expect(refused.error._tag).toBe("PluginCacheQuotaExceeded");
    expect((await entries()).map((entry) => entry.digest)).toEqual(["a", "b"]);
    // Its own entry nothing needs any more is freed first, so its next add fits.
    expect(await put("owner=s1&digest=c&size=100&keep=b")).toEqual({ result: "cached" });
    expect((await entries()).map((entry) => entry.digest)).toEqual(["b", "c"]);
    // Another Session: the pool is full, its bundle is not refused, just not cached; nothing evicted.
    expect(await put("owner=s2&digest=d&size=100&keep=b,c")).toEqual({ result: "uncached" });
    // A digest already cached is shared, whoever stored it.
    expect(await put("owner=s2&digest=b&size=100&keep=b,c")).toEqual({ result: "cached" });
    // The server list's bundles count against no Session and survive a prune while pinned.
    expect(await put("owner=server&digest=e&size=100&pin=true&prune=b")).toEqual({ result: "cached", freed: ["c"] });
    expect(await entries()).toEqual([
      { digest: "b", owner: "session:s1", size: 100 },
      { digest: "e", owner: "server", size: 100 },
    ]);
    // Too large for any owner.
    expect((await put("owner=server&digest=f&size=101")).error._tag).toBe("PluginCacheFull");
  });

  it("a Session's plugin change while a new server list is fetched frees none of the list's bytes: they load from the cache after a restart with the URL gone", async () => {
    const RACE = `export default { id: "test.race", setup(context) { context.tools.register({ id: "race_tool", description: "Race", inputSchema: { type: "object" }, execute: async () => "raced" }); } };`;
    const SLOW = `export default { id: "test.slow", setup() {} };`;
    const digest = sha256(RACE);
    served["/race.js"] = RACE;
    let release!: () => void;
    const released = new Promise<void>((done) => (release = done));
    served["/slow.js"] = (response) => void released.then(() => response.writeHead(200, { "content-type": "text/javascript" }).end(SLOW));
    const cached = async (): Promise<boolean> => ((await (await fetch(`${url}/fixture/cached?digest=${digest}`)).json()) as { cached: boolean }).cached;
    const replacing = serverPlugins([
      { url: `${base}/race.js`, pluginId: "test.race" },
      { url: `${base}/slow.js`, pluginId: "test.slow" },
    ]);
    // The first entry's bytes are stored while the second is still being fetched.
    await expect.poll(cached, { timeout: 20_000 }).toBe(true);
    // Meanwhile a Session changes its plugins (its change prunes the bundle cache).
    const sessionId = await createSession();
    await ok(sdk.addSessionPlugin({ client, path: { server: SERVER, sessionId }, body: request({ _tag: "Static", id: "fixture-static" }, "fixture.static") }));
    expect(await cached()).toBe(true);
    release();
    expect((await replacing).plugins).toMatchObject([
      { pluginId: "test.race", integrity: `sha256:${digest}`, state: "active" },
      { pluginId: "test.slow", state: "active" },
    ]);
    // Restarted with the same list and the URL gone: the pinned bytes come from the cache.
    await mf.dispose();
    delete served["/race.js"];
    served["/slow.js"] = SLOW;
    await start([
      { url: `${base}/race.js`, pluginId: "test.race" },
      { url: `${base}/slow.js`, pluginId: "test.slow" },
    ]);
    expect((await serverPlugins()).plugins).toMatchObject([
      { pluginId: "test.race", integrity: `sha256:${digest}`, state: "active" },
      { pluginId: "test.slow", state: "active" },
    ]);
  }, 60_000);
});
