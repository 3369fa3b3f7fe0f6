// The runtime and Session plugin operations through the generated client, against a minimal Fetch
// handler composed here (Session operations, the plugin handlers, every other operation 503), with
// real storage and real plugin files: recording, idempotency, activation and its failures,
// reload, refresh, removal, leases and a restart that rebuilds the recorded revision.
import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createZeClient, sdk, type ZeClient } from "../../clients/index.js";
import { SessionService } from "../../services/core/sessions.js";
import { sessionHandlers } from "../../services/host/handlers.js";
import { createPluginServices } from "../../services/host/plugin-handlers.js";
import { pluginHandlers } from "../../services/host/plugin-routes.js";
import { unavailableHandlers } from "../../services/host/unavailable.js";
import { createFetchHandler, type RequestContext } from "../../services/http/handler.js";
import { inlineCandidate, PluginRuntime, SessionPluginService, unavailableCapabilities, type PluginCandidate } from "../../services/plugins/index.js";
import { openDatabase, type StorageHandle } from "../../services/storage/index.js";
import { failure, ok } from "../support/calls.js";
import { contractFetch } from "../support/contract.js";
import { tempHome } from "../support/harness.js";
import { doublingPlugin, pluginDir, type PluginDir } from "./helpers.js";

const server = "local";
let dir: PluginDir;
let storage: StorageHandle;
let runtime: PluginRuntime;
let sessions: SessionPluginService;
let api: ZeClient;
let hostCandidates: PluginCandidate[];

function compose(service: SessionPluginService): ZeClient {
  const fetch = createFetchHandler({
    handlers: {
      ...unavailableHandlers<RequestContext>(),
      ...sessionHandlers({ sessions: new SessionService({ storage, serverRoot: dir.dir }), release: "0.0.0-test" }),
      ...pluginHandlers({ services: async () => ({ runtime, sessions: service }) }),
    },
    release: "0.0.0-test",
    servers: (name) => name === server,
    openapi: () => "{}",
  });
  return createZeClient({ baseUrl: "http://localhost", fetch: contractFetch(fetch) });
}

const service = () => new SessionPluginService({ storage, runtime, capabilities: unavailableCapabilities(), projectDirectory: dir.dir, reservedToolIds: ["read"] });

beforeEach(async () => {
  dir = pluginDir();
  storage = await openDatabase({ url: join(dir.dir, "test.db"), stateDirectory: dir.dir });
  hostCandidates = [inlineCandidate({ id: "host.tools", setup: (c: any) => c.tools.register({ id: "host_tool", description: "d", inputSchema: { type: "object" }, execute: async () => 1 }) })];
  const started = await PluginRuntime.start({ source: () => ({ ok: true, candidates: hostCandidates }), capabilities: unavailableCapabilities() });
  if (!started.ok) throw new Error(started.message);
  runtime = started.runtime;
  sessions = service();
  api = compose(sessions);
});
afterEach(async () => {
  await sessions.close();
  await runtime.close();
  await storage.close();
  dir.cleanup();
});

async function createSession(): Promise<string> {
  const sessionId = randomUUID();
  await ok(sdk.createSession({ client: api.client, path: { server, sessionId }, body: {} }));
  return sessionId;
}

const fileSource = (path: string) => ({ _tag: "File" as const, uri: pathToFileURL(path).href });
const put = (sessionId: string, body: Record<string, unknown>) =>
  sdk.addSessionPlugin({ client: api.client, path: { server, sessionId }, body: { resolved: { pluginId: "session.tools" }, options: {}, mcpServers: [], skills: [], ...body } as never });
const hostPlugins = [{ source: "inline:host.tools", generationId: "host-1", pluginId: "host.tools", status: "active", registrations: ["tool:host_tool"] }];

describe("runtime operations", () => {
  it("lists the host generation's plugins and reloads it", async () => {
    expect(await ok(sdk.plugins({ client: api.client }))).toEqual({ plugins: hostPlugins });
    hostCandidates = [inlineCandidate({ id: "host.other", setup: () => undefined })];
    const reloaded = await ok(sdk.reload({ client: api.client, body: {} }));
    expect(reloaded).toEqual({ result: "reloaded", plugins: [{ source: "inline:host.other", generationId: "host-2", pluginId: "host.other", status: "active", registrations: [] }] });
    hostCandidates = [inlineCandidate({ id: "host.broken", setup: (c: any) => c.hooks.register("bad.hook", async () => undefined) })];
    const rejected = await ok(sdk.reload({ client: api.client, body: {} }));
    expect(rejected.result).toBe("rejected");
    expect((await ok(sdk.plugins({ client: api.client }))).plugins.map((plugin) => plugin.generationId)).toEqual(["host-2"]);
  });
});

describe("Session plugins", () => {
  it("records an idempotent File revision, activates it and leases it to Turns", async () => {
    const sessionId = await createSession();
    expect(await ok(sdk.sessionPlugins({ client: api.client, path: { server, sessionId } }))).toEqual({ status: { sessionId, plugins: hostPlugins } });
    const file = dir.write("session-plugin.mjs", doublingPlugin("session.tools", "session_double"));
    const body = { id: "rev-1", source: fileSource(file), options: { n: 1 } };
    const { status } = await ok(put(sessionId, body));
    expect(status.desired).toMatchObject({ id: "rev-1", sequence: 1, source: fileSource(file), resolved: { pluginId: "session.tools", version: expect.stringMatching(/^file-sha256:[0-9a-f]{64}$/), integrity: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) }, mcpServers: [], skills: [] });
    expect(status.desiredActivation).toEqual({ revisionId: "rev-1", state: "active" });
    expect(status.active).toEqual(status.desired);
    expect(status.plugins).toEqual([...hostPlugins, { source: fileSource(file).uri, generationId: "rev-1", pluginId: "session.tools", status: "active", registrations: ["tool:session_double"] }]);

    // The same id and body answer the recorded revision; another body under that id conflicts.
    expect((await ok(put(sessionId, body))).status).toEqual(status);
    expect(await failure(put(sessionId, { ...body, options: { n: 2 } }))).toMatchObject({ status: 409, body: { _tag: "ConflictError" } });

    const lease = await sessions.lease(sessionId);
    expect(lease.host.id).toBe("host-1");
    expect(lease.session?.tools.map((tool) => tool.id)).toEqual(["session_double"]);
    lease.release();
    const other = await sessions.lease(await createSession());
    expect(other.session).toBeUndefined();
    other.release();
  });

  it("a revision that fails to activate leaves the active one; reload and refresh follow the recorded artifact", async () => {
    const sessionId = await createSession();
    const file = dir.write("p.mjs", doublingPlugin("session.tools", "v_one"));
    await ok(put(sessionId, { id: "rev-1", source: fileSource(file) }));
    const clash = dir.write("clash.mjs", doublingPlugin("session.tools", "host_tool"));
    const failed = (await ok(put(sessionId, { id: "rev-2", source: fileSource(clash) }))).status;
    expect(failed.desiredActivation).toEqual({ revisionId: "rev-2", state: "failed", failure: expect.stringContaining('a tool named "host_tool" is already registered') });
    expect(failed.active?.id).toBe("rev-1");
    expect((await sessions.lease(sessionId)).session?.tools.map((tool) => tool.id)).toEqual(["v_one"]);

    // Back to rev-1's file, changed on disk: the recorded artifact no longer matches.
    await ok(put(sessionId, { id: "rev-3", source: fileSource(file) }));
    dir.write("p.mjs", doublingPlugin("session.tools", "v_two"));
    const reloaded = (await ok(sdk.reloadSessionPlugin({ client: api.client, path: { server, sessionId }, body: {} }))).status;
    expect(reloaded.desiredActivation).toEqual({ revisionId: "rev-3", state: "failed", failure: expect.stringContaining("changed since the revision was recorded") });
    expect(reloaded.active?.id).toBe("rev-3");

    // Refresh adopts the newer, unpinned file as a new revision.
    expect(await failure(sdk.refreshSessionPlugin({ client: api.client, path: { server, sessionId }, body: { id: "rev-1" } }))).toMatchObject({ status: 409 });
    const refreshed = (await ok(sdk.refreshSessionPlugin({ client: api.client, path: { server, sessionId }, body: { id: "rev-3" } }))).status;
    expect(refreshed.desiredActivation).toEqual({ revisionId: refreshed.desired?.id, state: "active" });
    expect(refreshed.active).toMatchObject({ sequence: 4, source: fileSource(file) });
    expect(refreshed.active?.id).not.toBe("rev-3");
    expect(refreshed.plugins.at(-1)).toMatchObject({ registrations: ["tool:v_two"], status: "active" });

    // A revision that declared its integrity is pinned: refresh keeps it.
    const pinnedFile = dir.write("pinned.mjs", doublingPlugin("session.tools", "pinned"));
    const integrity = (await ok(put(sessionId, { id: "rev-pinned", source: fileSource(pinnedFile) }))).status.active!.resolved.integrity!;
    await ok(put(sessionId, { id: "rev-pin", source: fileSource(pinnedFile), resolved: { pluginId: "session.tools", integrity } }));
    dir.write("pinned.mjs", doublingPlugin("session.tools", "pinned_changed"));
    const kept = (await ok(sdk.refreshSessionPlugin({ client: api.client, path: { server, sessionId }, body: { id: "rev-pin" } }))).status;
    expect(kept.active?.id).toBe("rev-pin");
    expect(kept.desired?.id).toBe("rev-pin");
  });

  it("removal clears the overlay; a running Turn keeps its lease until it ends", async () => {
    const sessionId = await createSession();
    let closed!: () => void;
    const cleanedUp = new Promise<void>((resolve) => (closed = resolve));
    (globalThis as Record<string, unknown>)["__zeSessionCleanup"] = () => closed();
    const file = dir.write("cleanup.mjs", `export default { id: "session.tools", setup: () => () => globalThis.__zeSessionCleanup() };`);
    await ok(put(sessionId, { id: "rev-1", source: fileSource(file) }));
    const lease = await sessions.lease(sessionId);
    const removed = (await ok(sdk.removeSessionPlugin({ client: api.client, path: { server, sessionId }, body: {} }))).status;
    expect(removed).toEqual({ sessionId, plugins: hostPlugins });
    expect(lease.session?.id).toBe("rev-1");
    const after = await sessions.lease(sessionId);
    expect(after.session).toBeUndefined();
    after.release();
    lease.release();
    await cleanedUp;
  });

  it("a restarted host rebuilds the active revision from storage", async () => {
    const sessionId = await createSession();
    const file = dir.write("p.mjs", doublingPlugin("session.tools", "durable"));
    await ok(put(sessionId, { id: "rev-1", source: fileSource(file) }));
    const restarted = service();
    try {
      const lease = await restarted.lease(sessionId);
      expect(lease.session?.tools.map((tool) => tool.id)).toEqual(["durable"]);
      lease.release();
      const restartedApi = compose(restarted);
      const { status } = await ok(sdk.sessionPlugins({ client: restartedApi.client, path: { server, sessionId } }));
      expect(status.active?.id).toBe("rev-1");
      expect(status.plugins.at(-1)).toMatchObject({ generationId: "rev-1", registrations: ["tool:durable"] });
    } finally {
      await restarted.close();
    }
  });

  it("refuses what this host cannot resolve, with typed errors", async () => {
    const sessionId = await createSession();
    const file = dir.write("p.mjs", doublingPlugin("session.tools"));
    expect(await failure(put(sessionId, { id: "r", source: { _tag: "Bundle", url: "https://plugins.example.com/x.js" } }))).toMatchObject({ status: 503, body: { _tag: "UnavailableError" } });
    expect(await failure(put(sessionId, { id: "r", source: { _tag: "Git", url: "ssh://git@example.com/x.git" } }))).toMatchObject({ status: 400, body: { _tag: "ValidationError" } });
    expect(await failure(put(sessionId, { id: "r", source: { _tag: "Git", url: "https://user:secret@example.com/x.git" } }))).toMatchObject({ status: 400, body: { message: expect.not.stringContaining("secret") } });
    expect(await failure(put(sessionId, { id: "r", source: { _tag: "File", uri: "relative/p.mjs" } }))).toMatchObject({ status: 400, body: { _tag: "ValidationError" } });
    expect(await failure(put(sessionId, { id: "r", source: fileSource(join(dir.dir, "missing.mjs")) }))).toMatchObject({ status: 400 });
    const mismatch = await failure(put(sessionId, { id: "r", source: fileSource(file), resolved: { pluginId: "session.tools", integrity: `sha256:${"0".repeat(64)}` } }));
    expect(mismatch).toMatchObject({ status: 409, body: { message: expect.stringContaining("declared_mismatch") } });
    expect(await failure(put(sessionId, { id: "r", source: fileSource(file), options: [] }))).toMatchObject({ status: 400 });
    const wrongId = (await ok(put(sessionId, { id: "r2", source: fileSource(file), resolved: { pluginId: "other.id" } }))).status;
    expect(wrongId.desiredActivation).toMatchObject({ state: "failed", failure: expect.stringContaining('declares plugin "session.tools", not "other.id"') });
    expect(await failure(sdk.sessionPlugins({ client: api.client, path: { server, sessionId: randomUUID() } }))).toMatchObject({ status: 404 });
  });
});

describe("createPluginServices", () => {
  it("loads host plugins from configuration, re-reads it on reload, and layers Session Agents over the host's", async () => {
    const home = tempHome("ze-plugin-services-");
    const agentPlugin = (pluginId: string, agentId: string) =>
      `export default { id: ${JSON.stringify(pluginId)}, setup(c) { c.agents.register({ id: ${JSON.stringify(agentId)}, displayName: ${JSON.stringify(agentId)}, description: "d", instructions: [{ role: "system", text: "Work." }] }); } };`;
    writeFileSync(join(home.root, "host.mjs"), agentPlugin("host.agents", "writer"));
    writeFileSync(join(home.root, "session.mjs"), agentPlugin("session.agents", "reviewer"));
    const config = join(home.root, "ze-harness.config.json");
    writeFileSync(config, JSON.stringify({ plugins: ["./host.mjs"], agents: { writer: { description: "Patched by config" } } }));
    const created = await createPluginServices({ storage, serverRoot: home.root, env: home.env, reservedToolIds: ["read"] });
    if (!created.ok) throw new Error(created.message);
    const { runtime: hostRuntime, sessions: overlays } = created.services;
    try {
      expect(hostRuntime.current.agentCatalog?.get("writer")).toMatchObject({ origin: "plugin", description: "Patched by config" });
      const sessionId = randomUUID();
      const client = compose(overlays).client;
      await ok(sdk.createSession({ client, path: { server, sessionId }, body: {} }));
      await ok(sdk.addSessionPlugin({ client, path: { server, sessionId }, body: { id: "r1", source: fileSource(join(home.root, "session.mjs")), resolved: { pluginId: "session.agents" }, options: {}, mcpServers: [], skills: [] } }));
      const lease = await overlays.lease(sessionId);
      expect(lease.session?.agentCatalog?.get("reviewer")?.origin).toBe("session");
      expect(lease.session?.agentCatalog?.get("writer")?.description).toBe("Patched by config");
      expect(lease.session?.agentCatalog?.toSessionAgentsResponse().agents.find((agent) => agent.id === "reviewer")?.origin).toBe("session");
      lease.release();

      writeFileSync(config, JSON.stringify({ plugins: [] }));
      expect((await hostRuntime.reload()).result).toBe("reloaded");
      expect(hostRuntime.current.agentCatalog?.get("writer")).toBeUndefined();
      writeFileSync(config, "{ not json");
      const rejected = await hostRuntime.reload();
      expect(rejected.result).toBe("rejected");
      expect(hostRuntime.lastRejection?.message).toContain("ze-harness.config.json");
    } finally {
      await overlays.close();
      await hostRuntime.close();
      home.cleanup();
    }
  });
});
