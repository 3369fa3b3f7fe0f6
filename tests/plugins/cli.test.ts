// `ze-harness plugins list|add|remove|reload|refresh` (the built binary) against a server
// composed here: the plugin handlers and Session operations over real storage, on a loopback
// listener, reached with --remote.
import { locatePackage } from "../../services/contract/package.js";
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createZeClient, sdk } from "../../clients/index.js";
import { SessionService } from "../../services/core/sessions.js";
import { sessionHandlers } from "../../services/host/handlers.js";
import { listen, type Listener } from "../../services/host/listen.js";
import { pluginHandlers } from "../../services/host/plugin-routes.js";
import { unavailableHandlers } from "../../services/host/unavailable.js";
import { createFetchHandler, type RequestContext } from "../../services/http/handler.js";
import { inlineCandidate, PluginRuntime, SessionPluginService, unavailableCapabilities, type PluginCandidate } from "../../services/plugins/index.js";
import { openDatabase, type StorageHandle } from "../../services/storage/index.js";
import { ok } from "../support/calls.js";
import { jsonOf, runCli, type CliOptions } from "../support/cli.js";
import { binPath, repoRoot, tempHome, type TempHome } from "../support/harness.js";
import { doublingPlugin, pluginDir, type PluginDir } from "./helpers.js";

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

let dir: PluginDir;
let home: TempHome;
let storage: StorageHandle;
let runtime: PluginRuntime;
let sessions: SessionPluginService;
let listener: Listener;
let options: CliOptions;
let hostCandidates: PluginCandidate[] = [inlineCandidate({ id: "host.one", setup: () => undefined })];

beforeAll(async () => {
  if (!existsSync(join(repoRoot, "dist", "bundle", "main.js")) || !existsSync(binPath)) throw new Error("dist/ is missing: run `npm run build` before this suite");
  dir = pluginDir("ze-plugin-cli-");
  home = tempHome("ze-plugin-cli-home-");
  storage = await openDatabase({ url: join(dir.dir, "cli.db"), stateDirectory: dir.dir });
  const started = await PluginRuntime.start({ source: () => ({ ok: true, candidates: hostCandidates }), capabilities: unavailableCapabilities() });
  if (!started.ok) throw new Error(started.message);
  runtime = started.runtime;
  sessions = new SessionPluginService({ storage, runtime, capabilities: unavailableCapabilities(), projectDirectory: dir.dir });
  const fetch = createFetchHandler({
    handlers: { ...unavailableHandlers<RequestContext>(), ...sessionHandlers({ sessions: new SessionService({ storage, serverRoot: dir.dir }), release: locatePackage().release }), ...pluginHandlers({ services: async () => ({ runtime, sessions }) }) },
    release: locatePackage().release,
    servers: (name) => name === "local",
    openapi: () => "{}",
  });
  listener = await listen(fetch, { port: 0, hostname: "127.0.0.1" });
  options = { env: home.env, cwd: dir.dir };
});
afterAll(async () => {
  await listener?.close();
  await sessions?.close();
  await runtime?.close();
  await storage?.close();
  dir?.cleanup();
  home?.cleanup();
});

const cli = (...args: string[]) => runCli([...args, "--remote", listener.url], options);

async function session(): Promise<string> {
  const sessionId = randomUUID();
  await ok(sdk.createSession({ client: createZeClient({ baseUrl: listener.url }).client, path: { server: "local", sessionId }, body: {} }));
  return sessionId;
}

describe("ze-harness plugins", () => {
  it("lists and reloads the runtime plugins; a rejected reload exits 1", async () => {
    const listed = await cli("plugins", "list");
    expect(listed).toMatchObject({ code: 0, stderr: "" });
    expect(jsonOf(listed)).toEqual({ plugins: [{ source: "inline:host.one", generationId: "host-1", pluginId: "host.one", status: "active", registrations: [] }] });
    hostCandidates = [inlineCandidate({ id: "host.two", setup: () => undefined })];
    const reloaded = await cli("plugins", "reload");
    expect(reloaded.code).toBe(0);
    expect(jsonOf(reloaded)).toMatchObject({ result: "reloaded", plugins: [{ pluginId: "host.two", generationId: "host-2" }] });
    hostCandidates = [inlineCandidate({ id: "BAD", setup: () => undefined })];
    const rejected = await cli("plugins", "reload");
    expect(rejected.code).toBe(1);
    expect(jsonOf(rejected).result).toBe("rejected");
  });

  it("adds, shows, refreshes, reloads and removes a Session plugin", async () => {
    const sessionId = await session();
    dir.write("notes.mjs", doublingPlugin("example.notes", "notes_v1"));
    const added = await cli("plugins", "add", "--session", sessionId, "--file", "./notes.mjs", "--plugin-id", "example.notes", "--options", '{"folder":"notes"}', "--revision", "r1");
    expect(added).toMatchObject({ code: 0, stderr: "" });
    expect(jsonOf(added)).toMatchObject({ sessionId, desired: { id: "r1", source: { _tag: "File", uri: `file://${dir.dir}/notes.mjs` } }, desiredActivation: { state: "active" }, active: { id: "r1" } });
    expect(jsonOf(await cli("plugins", "list", "--session", sessionId)).plugins.at(-1)).toMatchObject({ generationId: "r1", registrations: ["tool:notes_v1"] });

    dir.write("notes.mjs", doublingPlugin("example.notes", "notes_v2"));
    const refreshed = jsonOf(await cli("plugins", "refresh", "--session", sessionId));
    expect(refreshed.active.id).not.toBe("r1");
    expect(refreshed.plugins.at(-1)).toMatchObject({ registrations: ["tool:notes_v2"] });
    const reloaded = await cli("plugins", "reload", "--session", sessionId);
    expect(reloaded.code).toBe(0);
    expect(jsonOf(reloaded).desiredActivation.state).toBe("active");

    const removed = await cli("plugins", "remove", "--session", sessionId);
    expect(jsonOf(removed)).toEqual({ sessionId, plugins: jsonOf(await cli("plugins", "list")).plugins });
  });

  it("reports usage errors and API errors on one stderr line", async () => {
    const noSource = await cli("plugins", "add", "--session", randomUUID(), "--plugin-id", "a.b");
    expect(noSource).toMatchObject({ code: 2, stdout: "" });
    expect(noSource.stderr).toMatch(/^error: .*give exactly one source: --file, --package, --git, --bundle, --static\n$/);
    expect((await cli("plugins", "remove")).code).toBe(2);
    const bundle = await cli("plugins", "add", "--session", await session(), "--bundle", "https://plugins.example.com/notes.js", "--plugin-id", "example.notes");
    expect(bundle.code).toBe(1);
    expect(bundle.stderr).toMatch(/^error: UnavailableError: Bundle plugin sources are a Worker host capability/);
    const missing = await cli("plugins", "list", "--session", randomUUID());
    expect(missing.stderr).toMatch(/^error: NotFoundError: /);
  });
});
