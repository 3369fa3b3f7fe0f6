// Runtime plugins on the Worker host, in workerd through miniflare with its Worker Loader: a
// fixture bundle (tests/worker/fixtures/bundle-plugin.mjs, built here with esbuild, the contract
// inlined) served from a local HTTP server — reachable because the test sets the loopback knob
// HARNESS_PLUGIN_BUNDLE_LOOPBACK_HTTP — is added to a Session with the built CLI; the scripted
// model calls its tools in a Turn (a hook rewrites one call's input, a tool projects its own
// permission through workspaceFiles and writes the /workspace store, its Skill is listed); a
// changed file at the same URL changes nothing until `plugins refresh`; a declared integrity that
// does not match is `declared_mismatch` and changes nothing; Package, File and Git sources are
// typed unsupported; after a restart the cached bytes load with the URL gone, and a lost cache is
// fetched again only when the bytes still have the recorded digest; and a Worker
// without the LOADER binding answers Bundle sources as typed unsupported (static-only).
import { createHash, randomUUID } from "node:crypto";
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { build } from "esbuild";
import Database from "libsql";
import type { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sdk, type AddSessionPluginRequest, type SessionPluginsStatus, type Turn, type TurnStreamEvent, type ZeClient } from "../../clients/index.js";
import { startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { failure, ok } from "../support/calls.js";
import { assertBuilt, runCli } from "../support/cli.js";
import { networkClient, tempHome, type TempHome } from "../support/harness.js";
import { testProviderConfig } from "../support/model.js";
import { readSse } from "../support/terminals.js";
import { bundle, miniflare } from "./support.js";

const SERVER = "local";
let model: TestModel;
let script: string;
let persist: string;
let home: TempHome;
let mf: Miniflare;
let url: string;
let client: ZeClient["client"];
/** What the local server answers for the bundle (undefined: 404). */
let served: Uint8Array | undefined;
/** Requests the fixture's wait_abort tool makes (`/signal/started`, `/signal/aborted`), each resolving its waiter. */
const signals = new Map<string, () => void>();
const heard = (name: string): Promise<void> => new Promise((resolve) => signals.set(name, resolve));
/** A build whose setup registers an MCP server (served at /mcp.js). */
let withMcp: Uint8Array;
let files: Server;
let bundleUrl: string;
let v1: Uint8Array;
let v2: Uint8Array;

/** The fixture bundle with `version` compiled in: one self-contained ES module. */
async function buildFixture(version: string, mcp = false): Promise<Uint8Array> {
  const result = await build({
    entryPoints: [resolve("tests/worker/fixtures/bundle-plugin.mjs")],
    bundle: true,
    format: "esm",
    platform: "neutral",
    write: false,
    logLevel: "silent",
    alias: { "@zephyrcloudio/harness-plugin": resolve("plugin/index.ts") },
    define: { __FIXTURE_VERSION__: JSON.stringify(version), __FIXTURE_MCP__: JSON.stringify(mcp) },
  });
  return result.outputFiles[0]!.contents;
}

/** The server object's SQLite file under a persisted directory (the one server of this test). */
function serverDatabase(directory: string): string {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith(".sqlite") && dir.includes("HarnessServerObject")) found.push(path);
    }
  };
  walk(directory);
  if (found.length !== 1) throw new Error(`expected one server database under ${directory}, found ${JSON.stringify(found)}`);
  return found[0]!;
}

const sha256 = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex");

async function start(options: { loader: boolean; directory?: string }): Promise<{ mf: Miniflare; url: string }> {
  const instance = miniflare(script, {
    durableObjects: { HARNESS_SERVERS: { className: "HarnessServerObject", useSQLite: true } },
    ...(options.directory !== undefined ? { durableObjectsPersist: options.directory } : {}),
    ...(options.loader ? { workerLoaders: { LOADER: {} } } : {}),
    bindings: { HARNESS_PROVIDERS: JSON.stringify(testProviderConfig(model)), HARNESS_PLUGIN_BUNDLE_LOOPBACK_HTTP: "true" },
    host: "127.0.0.1",
    port: 0,
  });
  return { mf: instance, url: (await instance.ready).origin };
}

beforeAll(async () => {
  [model, script, v1, v2, withMcp] = await Promise.all([startTestModel(), bundle("worker/index.ts"), buildFixture("1"), buildFixture("2"), buildFixture("3", true)]);
  files = createServer((request, response) => {
    if (request.url === "/hello.txt") return void response.writeHead(200, { "content-type": "text/plain" }).end("hello from the web");
    const signal = request.url?.startsWith("/signal/") ? signals.get(request.url.slice("/signal/".length)) : undefined;
    if (signal !== undefined) return void (signal(), response.writeHead(204).end());
    const body = request.url === "/notes.js" ? served : request.url === "/mcp.js" ? withMcp : undefined;
    if (body === undefined) return void response.writeHead(404).end();
    response.writeHead(200, { "content-type": "text/javascript" }).end(Buffer.from(body));
  });
  await new Promise<void>((done) => files.listen(0, "127.0.0.1", done));
  bundleUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}/notes.js`;
  persist = mkdtempSync(join(tmpdir(), "zh-worker-plugins-"));
  home = tempHome("zh-worker-plugins-cli-");
  ({ mf, url } = await start({ loader: true, directory: persist }));
  client = networkClient(url).client;
}, 90_000);

afterAll(async () => {
  await mf?.dispose();
  await model?.close();
  await new Promise((done) => (files ? files.close(done) : done(undefined)));
  if (persist) rmSync(persist, { recursive: true, force: true });
  home?.cleanup();
});

async function createSession(api = client): Promise<string> {
  const sessionId = randomUUID();
  await ok(sdk.createSession({ client: api, path: { server: SERVER, sessionId }, body: {} }));
  return sessionId;
}

const status = async (sessionId: string): Promise<SessionPluginsStatus> => (await ok(sdk.sessionPlugins({ client, path: { server: SERVER, sessionId } }))).status;

/** Queues a prompt and reads its Turn stream (checked against the contract) until it finishes. */
async function runTurn(sessionId: string, text: string): Promise<Turn> {
  const turnId = randomUUID();
  await ok(
    sdk.submitPrompt({
      client,
      path: { server: SERVER, sessionId },
      headers: { "x-ze-harness-client-id": "worker-plugins-test" },
      body: { delivery: "queue", turnId, prompt: [{ type: "text", text }] } as never,
    }),
  );
  const path = `/v1/servers/${SERVER}/sessions/${sessionId}/turns/${turnId}/events`;
  await readSse<TurnStreamEvent>(await fetch(`${url}${path}?afterRevision=0`), path, (event) => event.type === "turn.finished");
  return (await ok(sdk.getTurn({ client, path: { server: SERVER, sessionId, turnId } }))).turn;
}

/** The Turn's tool parts, as JSON text (their results included). */
const toolParts = (turn: Turn): string => JSON.stringify(turn.parts.filter((part) => part.type === "tool"));

const bundleRequest = (integrity?: string): AddSessionPluginRequest => ({
  id: randomUUID(),
  source: { _tag: "Bundle", url: bundleUrl },
  resolved: { pluginId: "test.notes", ...(integrity !== undefined ? { integrity } : {}) },
  options: { folder: "notes" },
  mcpServers: [],
  skills: [],
});

describe("runtime plugins on the Worker host (Bundle sources through LOADER)", () => {
  let sessionId: string;

  it("adds a Bundle plugin with the built CLI, pinned by the SHA-256 of its bytes, and runs its tools, hook and Skill in a Turn", async () => {
    assertBuilt();
    served = v1;
    sessionId = await createSession();
    const added = await runCli(["--remote", url, "plugins", "add", "--session", sessionId, "--bundle", bundleUrl, "--plugin-id", "test.notes", "--options", '{"folder":"notes"}'], {
      env: home.env,
      cwd: home.root,
    });
    expect(added.stderr).toBe("");
    expect(added.code).toBe(0);
    const current = await status(sessionId);
    expect(current.desiredActivation).toMatchObject({ state: "active" });
    expect(current.active?.source).toEqual({ _tag: "Bundle", url: bundleUrl });
    expect(current.active?.resolved).toEqual({ pluginId: "test.notes", version: `bundle-sha256:${sha256(v1)}`, integrity: `sha256:${sha256(v1)}` });
    const plugin = current.plugins.find((entry) => entry.pluginId === "test.notes");
    expect(plugin).toMatchObject({ status: "active", source: bundleUrl });
    expect(plugin?.registrations).toEqual(expect.arrayContaining(["tool:double", "tool:notes_save", "hook:tool.execute.before", "skill:note-taking", "agent:note-keeper"]));

    // The model calls both tools: the hook lower-cases and trims the title before the permission
    // is projected (through workspaceFiles in the isolate) and the tool writes the store.
    model.enqueue(
      { events: [{ type: "tool_call", name: "double", arguments: { value: 21 } }, { type: "tool_call", name: "notes_save", arguments: { title: "  Groceries ", body: "- milk" } }] },
      { events: [{ type: "text", text: "Done." }] },
    );
    const turn = await runTurn(sessionId, "Double 21 and save a note");
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "Done." });
    const parts = toolParts(turn);
    expect(parts).toContain('"value":42');
    expect(parts).toContain('"version":"1"');
    expect(parts).toContain("/workspace/notes/groceries.md");
    // The first request offered the plugin's tools and listed its Skill.
    const offered = JSON.stringify(model.requests.at(-2)!.body);
    expect(offered).toContain("notes_save");
    expect(offered).toContain("note-taking");
    // webFetch from the isolate runs on the host: a page's text, a failure's safe code.
    model.enqueue(
      {
        events: [
          { type: "tool_call", name: "fetch_text", arguments: { url: bundleUrl.replace("/notes.js", "/hello.txt") } },
          { type: "tool_call", name: "fetch_text", arguments: { url: bundleUrl.replace("/notes.js", "/missing.txt") } },
        ],
      },
      { events: [{ type: "text", text: "Fetched." }] },
    );
    const fetched = toolParts(await runTurn(sessionId, "Fetch two pages"));
    expect(fetched).toContain('"content":"hello from the web"');
    expect(fetched).toContain('"failed":"http_status"');
    // A cancelled Turn reaches the tool's signal in the isolate, and does not wait for the tool.
    const started = heard("started");
    const aborted = heard("aborted");
    model.enqueue({ events: [{ type: "tool_call", name: "wait_abort", arguments: { base: bundleUrl.replace("/notes.js", "/signal") } }] });
    const turnId = randomUUID();
    await ok(sdk.submitPrompt({ client, path: { server: SERVER, sessionId }, headers: { "x-ze-harness-client-id": "worker-plugins-test" }, body: { delivery: "queue", turnId, prompt: [{ type: "text", text: "Wait" }] } as never }));
    await started;
    await ok(sdk.cancelTurn({ client, path: { server: SERVER, sessionId, turnId }, body: { reason: "enough" } }));
    await aborted;
    const path = `/v1/servers/${SERVER}/sessions/${sessionId}/turns/${turnId}/events`;
    const events = await readSse<TurnStreamEvent>(await fetch(`${url}${path}?afterRevision=0`), path, (event) => event.type === "turn.finished");
    expect(events.at(-1)).toMatchObject({ type: "turn.finished", outcome: { kind: "cancelled" } });
    // What the tool wrote is in the server's /workspace: the built-in `read` finds it.
    model.enqueue({ events: [{ type: "tool_call", name: "read", arguments: { filePath: "notes/groceries.md" } }] }, { events: [{ type: "text", text: "Read." }] });
    expect((await runTurn(sessionId, "Read the note")).outcome).toMatchObject({ kind: "completed" });
    expect(JSON.stringify(model.requests.at(-1)!.body)).toContain("- milk");
  });

  it("keeps the activated bytes when the file at the URL changes; a mismatching declared integrity changes nothing; refresh adopts the new file", async () => {
    served = v2;
    model.enqueue({ events: [{ type: "tool_call", name: "double", arguments: { value: 1 } }] }, { events: [{ type: "text", text: "Still one." }] });
    expect(toolParts(await runTurn(sessionId, "Double one"))).toContain('"version":"1"');

    const before = await status(sessionId);
    const refused = await failure(sdk.addSessionPlugin({ client, path: { server: SERVER, sessionId }, body: bundleRequest(`sha256:${"0".repeat(64)}`) }));
    expect(refused.status).toBe(409);
    expect(JSON.stringify(refused.body)).toContain("declared_mismatch");
    expect(await status(sessionId)).toEqual(before);

    const refreshed = (await ok(sdk.refreshSessionPlugin({ client, path: { server: SERVER, sessionId }, body: { id: before.active!.id } }))).status;
    expect(refreshed.active?.id).not.toBe(before.active!.id);
    expect(refreshed.active?.resolved).toEqual({ pluginId: "test.notes", version: `bundle-sha256:${sha256(v2)}`, integrity: `sha256:${sha256(v2)}` });
    model.enqueue({ events: [{ type: "tool_call", name: "double", arguments: { value: 1 } }] }, { events: [{ type: "text", text: "Now two." }] });
    expect(toolParts(await runTurn(sessionId, "Double one again"))).toContain('"version":"2"');

    // A declared integrity that matches is accepted and pinned.
    const pinned = (await ok(sdk.addSessionPlugin({ client, path: { server: SERVER, sessionId }, body: bundleRequest(`sha256:${sha256(v2)}`) }))).status;
    expect(pinned.desiredActivation).toMatchObject({ state: "active" });
    expect(pinned.active?.resolved.integrity).toBe(`sha256:${sha256(v2)}`);
  });

  it("answers Package, File, Git and Static sources as typed unsupported capabilities, recording nothing", async () => {
    const other = await createSession();
    for (const source of [
      { _tag: "Package", name: "left-pad" },
      { _tag: "File", uri: "file:///workspace/plugin.mjs" },
      { _tag: "Git", url: "https://example.com/plugin.git" },
    ] as const) {
      const refused = await failure(sdk.addSessionPlugin({ client, path: { server: SERVER, sessionId: other }, body: { ...bundleRequest(), source } }));
      expect(refused.status).toBe(503);
      expect(refused.body).toMatchObject({ _tag: "UnavailableError", message: expect.stringContaining(`${source._tag} plugin sources are an unsupported capability on the Cloudflare Worker host`) });
    }
    const staticSource = await failure(sdk.addSessionPlugin({ client, path: { server: SERVER, sessionId: other }, body: { ...bundleRequest(), source: { _tag: "Static", id: "x" } } }));
    expect(staticSource.status).toBe(503);
    // A URL that is not https (nor the loopback the knob allows) is a bad request.
    const insecure = await failure(sdk.addSessionPlugin({ client, path: { server: SERVER, sessionId: other }, body: { ...bundleRequest(), source: { _tag: "Bundle", url: "http://plugins.example.com/x.js" } } }));
    expect(insecure.status).toBe(400);
    const withCredentials = await failure(sdk.addSessionPlugin({ client, path: { server: SERVER, sessionId: other }, body: { ...bundleRequest(), source: { _tag: "Bundle", url: "https://user:pw@plugins.example.com/x.js" } } }));
    expect(withCredentials.status).toBe(400);
    expect(JSON.stringify(withCredentials.body)).not.toContain("pw@");
    // What a Worker plugin cannot register fails its setup explicitly: the revision is failed, none active.
    const mcp = (await ok(sdk.addSessionPlugin({ client, path: { server: SERVER, sessionId: other }, body: { ...bundleRequest(), source: { _tag: "Bundle", url: bundleUrl.replace("/notes.js", "/mcp.js") } } }))).status;
    expect(mcp.desiredActivation).toMatchObject({ state: "failed", failure: expect.stringContaining("MCP servers cannot be registered by a plugin on the Cloudflare Worker host") });
    expect(mcp.active).toBeUndefined();
  });

  it("after a restart loads the cached bytes with the URL gone, refetches a lost cache verified by digest; bytes no revision references were freed", async () => {
    served = undefined;
    await mf.dispose();
    // The object's SQLite holds only the bundles recorded revisions reference: v1 was freed by the
    // refresh; v2 is active, the MCP build the other Session's failed desired revision.
    const database = new Database(serverDatabase(persist));
    try {
      const digests = (database.prepare("SELECT digest FROM worker_plugin_bundle ORDER BY digest").all() as { digest: string }[]).map((row) => row.digest);
      expect(digests).toEqual([sha256(v2), sha256(withMcp)].sort());
    } finally {
      database.close();
    }
    ({ mf, url } = await start({ loader: true, directory: persist }));
    client = networkClient(url).client;
    model.enqueue({ events: [{ type: "tool_call", name: "double", arguments: { value: 5 } }] }, { events: [{ type: "text", text: "Recovered." }] });
    const turn = await runTurn(sessionId, "Double five");
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "Recovered." });
    expect(toolParts(turn)).toContain('"value":10');
    expect(toolParts(turn)).toContain('"version":"2"');

    // A lost cache refetches and verifies the digest: other bytes at the URL fail the Turn (and
    // are not cached); the recorded bytes load again.
    await mf.dispose();
    const lost = new Database(serverDatabase(persist));
    try {
      lost.prepare("DELETE FROM worker_plugin_chunk").run();
      lost.prepare("DELETE FROM worker_plugin_bundle").run();
    } finally {
      lost.close();
    }
    served = v1;
    ({ mf, url } = await start({ loader: true, directory: persist }));
    client = networkClient(url).client;
    const refused = await runTurn(sessionId, "Double six");
    expect(refused.outcome).toMatchObject({ kind: "failed" });
    expect(JSON.stringify(refused.outcome)).toContain("changed since the revision was recorded");
    served = v2;
    model.enqueue({ events: [{ type: "tool_call", name: "double", arguments: { value: 6 } }] }, { events: [{ type: "text", text: "Refetched." }] });
    const refetched = await runTurn(sessionId, "Double six again");
    expect(refetched.outcome).toMatchObject({ kind: "completed", text: "Refetched." });
    expect(toolParts(refetched)).toContain('"value":12');
    // Removing the plugin: later Turns use the host baseline only.
    const removed = (await ok(sdk.removeSessionPlugin({ client, path: { server: SERVER, sessionId }, body: {} }))).status;
    expect(removed.active).toBeUndefined();
  });

  it("without the LOADER binding answers Bundle sources as a typed unsupported capability (static-only)", async () => {
    const bare = await start({ loader: false });
    try {
      const api = networkClient(bare.url).client;
      served = v1;
      const other = await createSession(api);
      const refused = await failure(sdk.addSessionPlugin({ client: api, path: { server: SERVER, sessionId: other }, body: bundleRequest() }));
      expect(refused.status).toBe(503);
      expect(refused.body).toMatchObject({ _tag: "UnavailableError", message: expect.stringContaining("no worker_loaders binding named LOADER") });
    } finally {
      await bare.mf.dispose();
    }
  });
});
