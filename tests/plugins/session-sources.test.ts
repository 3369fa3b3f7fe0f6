// Session plugin sources from an npm registry and Git, against local stand-ins on 127.0.0.1 (a
// static registry serving an `npm pack` tarball of a fixture plugin; `git http-backend` serving a
// real repository): a package installs at the registry's integrity into the artifact cache and a
// Turn uses its tool; a tarball that does not match its integrity is refused and nothing is
// cached or activated; no package script ever runs; Git sources resolve to exact commits, an
// unknown commit is refused; the cache frees what no revision references and reinstalls (and
// re-verifies) a freed artifact a restarted host loads; the built CLI reads the registry from
// ZE_HARNESS_NPM_REGISTRY (run `npm run build` first).
// (Over 400 lines: every suite here shares the fixture tarballs and registry built once.)
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { promisify } from "node:util";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { createZeClient, sdk, type ZeClient } from "../../clients/index.js";
import type { ToolTurnPart } from "../../clients/index.js";
import { createEmbeddedHarness, EmbeddedHarnessError, textPrompt, type EmbeddedHarness } from "../../sdk/index.js";
import { SessionService } from "../../services/core/sessions.js";
import { sessionHandlers } from "../../services/host/handlers.js";
import { pluginHandlers } from "../../services/host/plugin-routes.js";
import { unavailableHandlers } from "../../services/host/unavailable.js";
import { createFetchHandler, type RequestContext } from "../../services/http/handler.js";
import { artifactSettingsFrom, defaultArtifactCacheDirectory, PluginRuntime, SessionPluginService, unavailableCapabilities, type ArtifactSettings } from "../../services/plugins/index.js";
import { openDatabase, type StorageHandle } from "../../services/storage/index.js";
import { startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { failure, ok } from "../support/calls.js";
import { contractFetch } from "../support/contract.js";
import { assertBuilt, jsonOf, runCli } from "../support/cli.js";
import { tempHome, type TempHome } from "../support/harness.js";
import { TEST_MODEL, testProviderConfig } from "../support/model.js";
import { doublingPlugin, pluginDir, type PluginDir } from "./helpers.js";
import { gitIn, npmPack, rawTarball, sriOf, startGitServer, startRegistry, type GitServer, type Registry } from "./source-servers.js";

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const server = "local";
const NAME = "ze-fixture-plugin";
let fixtures: PluginDir;
let registry: Registry;
let marker: string;
let tarballs: { v1: Buffer; v2: Buffer; v3: Buffer; dependent: Buffer };

/** A plugin package whose lifecycle scripts would write `marker` if anything ran them. */
function writePackage(directory: string, version: string, toolId: string, extra: Record<string, unknown> = {}): void {
  mkdirSync(directory, { recursive: true });
  const script = `node ${JSON.stringify(join(directory, "marker.cjs"))}`;
  writeFileSync(
    join(directory, "package.json"),
    JSON.stringify({ name: NAME, version, type: "module", main: "index.js", scripts: { preinstall: script, install: script, postinstall: script, prepare: script }, ...extra }),
  );
  writeFileSync(join(directory, "marker.cjs"), `require("node:fs").writeFileSync(${JSON.stringify(marker)}, "a package script ran");\n`);
  writeFileSync(join(directory, "index.js"), doublingPlugin("fixture.tools", toolId));
}

beforeAll(async () => {
  fixtures = pluginDir("ze-sources-fixtures-");
  marker = join(fixtures.dir, "script-ran.marker");
  writePackage(join(fixtures.dir, "pkg1"), "1.0.0", "fixture_double");
  writePackage(join(fixtures.dir, "pkg2"), "2.0.0", "fixture_double_v2");
  writePackage(join(fixtures.dir, "pkg3"), "3.0.0", "fixture_double_v3");
  writePackage(join(fixtures.dir, "dependent"), "4.0.0", "fixture_dependent", { dependencies: { "left-pad": "1.3.0" } });
  tarballs = {
    v1: await npmPack(join(fixtures.dir, "pkg1")),
    v2: await npmPack(join(fixtures.dir, "pkg2")),
    v3: await npmPack(join(fixtures.dir, "pkg3")),
    dependent: await npmPack(join(fixtures.dir, "dependent")),
  };
  // Control: a package manager installing the fixture does run its scripts (the marker appears).
  const control = join(fixtures.dir, "control");
  mkdirSync(control);
  await promisify(execFile)("npm", ["install", "--offline", "--no-audit", "--no-fund", "--no-save", join(fixtures.dir, "pkg1", `${NAME}-1.0.0.tgz`)], { cwd: control, env: { ...process.env, npm_config_update_notifier: "false" } });
  expect(existsSync(marker)).toBe(true);
  rmSync(marker);
  registry = await startRegistry();
});
afterAll(async () => {
  await registry.close();
  fixtures.cleanup();
});

describe("Session plugin sources (service)", () => {
  let dir: PluginDir;
  let storage: StorageHandle;
  let runtime: PluginRuntime;
  let sessions: SessionPluginService;
  let api: ZeClient;
  let artifacts: ArtifactSettings;
  let cacheDirectory: string;

  const service = () => new SessionPluginService({ storage, runtime, capabilities: unavailableCapabilities(), projectDirectory: dir.dir, artifacts });

  beforeEach(async () => {
    dir = pluginDir("ze-sources-");
    cacheDirectory = join(dir.dir, "cache");
    artifacts = artifactSettingsFrom({ cacheDirectory, packageManager: { registry: registry.url } }, {}, dir.dir);
    storage = await openDatabase({ url: join(dir.dir, "test.db"), stateDirectory: dir.dir });
    const started = await PluginRuntime.start({ source: () => ({ ok: true, candidates: [] }), capabilities: unavailableCapabilities() });
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

  function compose(plugins: SessionPluginService): ZeClient {
    const fetch = createFetchHandler({
      handlers: {
        ...unavailableHandlers<RequestContext>(),
        ...sessionHandlers({ sessions: new SessionService({ storage, serverRoot: dir.dir }), release: "0.0.0-test" }),
        ...pluginHandlers({ services: async () => ({ runtime, sessions: plugins }) }),
      },
      release: "0.0.0-test",
      servers: (name) => name === server,
      openapi: () => "{}",
    });
    return createZeClient({ baseUrl: "http://localhost", fetch: contractFetch(fetch) });
  }

  async function createSession(): Promise<string> {
    const sessionId = randomUUID();
    await ok(sdk.createSession({ client: api.client, path: { server, sessionId }, body: {} }));
    return sessionId;
  }

  const put = (sessionId: string, body: Record<string, unknown>) =>
    sdk.addSessionPlugin({ client: api.client, path: { server, sessionId }, body: { resolved: { pluginId: "fixture.tools" }, options: {}, mcpServers: [], skills: [], ...body } as never });
  const cached = (kind: "npm" | "git") => (existsSync(join(cacheDirectory, kind)) ? readdirSync(join(cacheDirectory, kind)) : []);
  const toolsOf = async (sessionId: string) => {
    const lease = await sessions.lease(sessionId);
    try {
      return lease.session?.tools.map((tool) => tool.id);
    } finally {
      lease.release();
    }
  };

  it("installs a package at the registry's integrity, runs none of its scripts, frees it when unreferenced and reinstalls it verified", async () => {
    registry.publish(NAME, { "1.0.0": { tarball: tarballs.v1 }, "2.0.0": { tarball: tarballs.v2 } }, { latest: "1.0.0", next: "2.0.0" });
    const sessionId = await createSession();
    const { status } = await ok(put(sessionId, { id: "r1", source: { _tag: "Package", name: NAME } }));
    expect(status.active?.resolved).toEqual({ pluginId: "fixture.tools", version: "1.0.0", integrity: sriOf(tarballs.v1) });
    expect(status.plugins.at(-1)).toMatchObject({ source: NAME, pluginId: "fixture.tools", packageVersion: "1.0.0", status: "active", registrations: ["tool:fixture_double"] });
    expect(await toolsOf(sessionId)).toEqual(["fixture_double"]);
    // Installed in the cache with its scripts, none of which ran.
    const [entry] = cached("npm");
    expect(readdirSync(join(cacheDirectory, "npm", entry!, "package")).sort()).toEqual(["index.js", "marker.cjs", "package.json"]);
    expect(existsSync(marker)).toBe(false);

    // A dist-tag resolves to its exact version; the first version's entry is freed once no revision references it.
    const next = (await ok(put(sessionId, { id: "r2", source: { _tag: "Package", name: NAME, requestedVersion: "next" } }))).status;
    expect(next.active?.resolved).toMatchObject({ version: "2.0.0", integrity: sriOf(tarballs.v2) });
    expect(cached("npm")).toHaveLength(1);
    expect(cached("npm")).not.toContain(entry);

    // A restarted host whose cache lost the artifact installs it again from the recorded tarball, verified.
    await sessions.close();
    rmSync(cacheDirectory, { recursive: true, force: true });
    const before = registry.requests.length;
    sessions = service();
    api = compose(sessions);
    expect(await toolsOf(sessionId)).toEqual(["fixture_double_v2"]);
    expect(registry.requests.slice(before)).toEqual([`/${NAME}/-/${NAME}-2.0.0.tgz`]);

    // Removal frees the last entry.
    await ok(sdk.removeSessionPlugin({ client: api.client, path: { server, sessionId }, body: {} }));
    expect(cached("npm")).toEqual([]);
    expect(existsSync(marker)).toBe(false);
  });

  it("refuses a tarball that does not match the registry's integrity, or a declared pin, and caches and activates nothing", async () => {
    // The registry claims v1's integrity but serves other bytes.
    registry.publish(NAME, { "1.0.0": { tarball: tarballs.v2, integrity: sriOf(tarballs.v1) } });
    const sessionId = await createSession();
    const tampered = await failure(put(sessionId, { id: "r1", source: { _tag: "Package", name: NAME, requestedVersion: "1.0.0" } }));
    expect(tampered).toMatchObject({ status: 409, body: { _tag: "ConflictError", message: expect.stringContaining("declared_mismatch") } });
    expect(tampered.body.message).toContain(sriOf(tarballs.v1));
    expect(cached("npm")).toEqual([]);
    expect(readdirSync(join(cacheDirectory, ".staging"))).toEqual([]);
    expect((await ok(sdk.sessionPlugins({ client: api.client, path: { server, sessionId } }))).status).toEqual({ sessionId, plugins: [] });

    // A declared integrity the registry contradicts is refused before the tarball is downloaded.
    registry.publish(NAME, { "1.0.0": { tarball: tarballs.v1 } });
    const before = registry.requests.length;
    const declared = await failure(put(sessionId, { id: "r2", source: { _tag: "Package", name: NAME }, resolved: { pluginId: "fixture.tools", integrity: sriOf(tarballs.v2) } }));
    expect(declared).toMatchObject({ status: 409, body: { _tag: "ConflictError", message: expect.stringContaining("declared_mismatch") } });
    expect(registry.requests.slice(before)).toEqual([`/${NAME}`]);
    const wrongVersion = await failure(put(sessionId, { id: "r3", source: { _tag: "Package", name: NAME }, resolved: { pluginId: "fixture.tools", version: "9.9.9" } }));
    expect(wrongVersion).toMatchObject({ status: 409, body: { message: expect.stringContaining("declared_mismatch") } });
    expect(cached("npm")).toEqual([]);

    // What the registry does not have, and names that are not exact, are validation errors.
    expect(await failure(put(sessionId, { id: "r4", source: { _tag: "Package", name: "ze-not-published" } }))).toMatchObject({ status: 400, body: { _tag: "ValidationError" } });
    expect(await failure(put(sessionId, { id: "r5", source: { _tag: "Package", name: NAME, requestedVersion: "3.0.0" } }))).toMatchObject({ status: 400, body: { message: expect.stringContaining("no version 3.0.0") } });
    expect(await failure(put(sessionId, { id: "r6", source: { _tag: "Package", name: NAME, requestedVersion: "^1.0.0" } }))).toMatchObject({ status: 400 });
    expect((await ok(sdk.sessionPlugins({ client: api.client, path: { server, sessionId } }))).status.desired).toBeUndefined();
    expect(existsSync(marker)).toBe(false);
  });

  it("refresh adopts a newer latest; a package that does not bundle its dependencies is refused", async () => {
    registry.publish(NAME, { "1.0.0": { tarball: tarballs.v1 } });
    const sessionId = await createSession();
    await ok(put(sessionId, { id: "r1", source: { _tag: "Package", name: NAME } }));
    registry.publish(NAME, { "1.0.0": { tarball: tarballs.v1 }, "3.0.0": { tarball: tarballs.v3 } });
    const refreshed = (await ok(sdk.refreshSessionPlugin({ client: api.client, path: { server, sessionId }, body: { id: "r1" } }))).status;
    expect(refreshed.active).toMatchObject({ sequence: 2, resolved: { version: "3.0.0", integrity: sriOf(tarballs.v3) } });
    expect(await toolsOf(sessionId)).toEqual(["fixture_double_v3"]);
    expect(cached("npm")).toHaveLength(1);

    registry.publish(NAME, { "4.0.0": { tarball: tarballs.dependent } });
    const dependent = await failure(put(sessionId, { id: "r2", source: { _tag: "Package", name: NAME, requestedVersion: "4.0.0" } }));
    expect(dependent).toMatchObject({ status: 400, body: { _tag: "ValidationError", message: expect.stringContaining("depends on left-pad without bundling it") } });
    expect(cached("npm")).toHaveLength(1);
    expect(await toolsOf(sessionId)).toEqual(["fixture_double_v3"]);
  });

  it("writes only regular files inside the package: a path that climbs out is refused, links are left out", async () => {
    const manifest = JSON.stringify({ name: NAME, version: "5.0.0", type: "module", main: "index.js" });
    const escape = join(dir.dir, "escaped.txt");
    const climbing = rawTarball([
      { name: "package/package.json", body: manifest },
      { name: "package/index.js", body: doublingPlugin("fixture.tools", "fixture_raw") },
      { name: `package/../../../../../../../../..${escape}`, body: "outside" },
    ]);
    registry.publish(NAME, { "5.0.0": { tarball: climbing } });
    const sessionId = await createSession();
    expect(await failure(put(sessionId, { id: "r1", source: { _tag: "Package", name: NAME } }))).toMatchObject({ status: 400, body: { _tag: "ValidationError" } });
    expect(existsSync(escape)).toBe(false);
    expect(cached("npm")).toEqual([]);

    const linked = rawTarball([
      { name: "package/package.json", body: manifest },
      { name: "package/index.js", body: doublingPlugin("fixture.tools", "fixture_raw") },
      { name: "package/secrets", link: "/etc/passwd" },
    ]);
    registry.publish(NAME, { "5.0.0": { tarball: linked } });
    await ok(put(sessionId, { id: "r2", source: { _tag: "Package", name: NAME } }));
    expect(await toolsOf(sessionId)).toEqual(["fixture_raw"]);
    expect(readdirSync(join(cacheDirectory, "npm", cached("npm")[0]!, "package")).sort()).toEqual(["index.js", "package.json"]);
  });

  it("a registry that does not answer within resolveTimeoutMs is a 503 and changes nothing", async () => {
    const held: import("node:http").ServerResponse[] = [];
    const silent = createServer((_request, response) => void held.push(response));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    try {
      artifacts = artifactSettingsFrom({ cacheDirectory, packageManager: { registry: `http://127.0.0.1:${(silent.address() as AddressInfo).port}` }, resolveTimeoutMs: 200 }, {}, dir.dir);
      await sessions.close();
      sessions = service();
      api = compose(sessions);
      const sessionId = await createSession();
      const slow = await failure(put(sessionId, { id: "r1", source: { _tag: "Package", name: NAME } }));
      expect(slow).toMatchObject({ status: 503, body: { _tag: "UnavailableError", message: expect.stringContaining("did not answer within 200 ms") } });
      expect(held).toHaveLength(1);
      expect((await ok(sdk.sessionPlugins({ client: api.client, path: { server, sessionId } }))).status.desired).toBeUndefined();
    } finally {
      for (const response of held) response.destroy();
      silent.closeAllConnections();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  describe("Git", () => {
    let git: GitServer;
    let repo: string;
    let work: string;
    let commits: { first: string; second: string };

    beforeEach(async () => {
      const root = join(dir.dir, "repos");
      repo = join(root, "plugin.git");
      work = join(dir.dir, "work");
      mkdirSync(work, { recursive: true });
      await gitIn(work, "init", "-q", "-b", "main");
      writeFileSync(join(work, "package.json"), JSON.stringify({ name: "git-plugin", version: "0.1.0", type: "module", main: "plugin.js", scripts: { postinstall: `node -e "require('fs').writeFileSync('${marker}','ran')"` } }));
      writeFileSync(join(work, "plugin.js"), doublingPlugin("fixture.tools", "git_first"));
      await gitIn(work, "add", "-A");
      await gitIn(work, "commit", "-q", "-m", "first");
      const first = await gitIn(work, "rev-parse", "HEAD");
      writeFileSync(join(work, "plugin.js"), doublingPlugin("fixture.tools", "git_second"));
      await gitIn(work, "commit", "-q", "-am", "second");
      const second = await gitIn(work, "rev-parse", "HEAD");
      commits = { first, second };
      mkdirSync(root, { recursive: true });
      await gitIn(root, "clone", "-q", "--bare", work, repo);
      git = await startGitServer(root);
    });
    afterEach(async () => {
      await git.close();
    });

    it("checks out the exact commit, a branch at its commit, and refuses an unknown commit", async () => {
      const url = `${git.url}/plugin.git`;
      const sessionId = await createSession();
      const pinned = (await ok(put(sessionId, { id: "r1", source: { _tag: "Git", url, ref: commits.first } }))).status;
      expect(pinned.active?.resolved).toEqual({ pluginId: "fixture.tools", version: `git-sha1:${commits.first}`, integrity: `git-sha1:${commits.first}` });
      expect(pinned.plugins.at(-1)).toMatchObject({ source: `${url}#${commits.first}`, status: "active", registrations: ["tool:git_first"] });
      expect(await toolsOf(sessionId)).toEqual(["git_first"]);
      const [entry] = cached("git");
      expect(entry).toMatch(new RegExp(`-${commits.first}$`));
      expect(readdirSync(join(cacheDirectory, "git", entry!)).sort()).toEqual(["package.json", "plugin.js"]);

      // A branch resolves to its commit now; refreshing a pinned commit keeps it.
      const branch = (await ok(put(sessionId, { id: "r2", source: { _tag: "Git", url, ref: "main" } }))).status;
      expect(branch.active?.resolved.integrity).toBe(`git-sha1:${commits.second}`);
      expect(await toolsOf(sessionId)).toEqual(["git_second"]);
      expect(cached("git")).toEqual([expect.stringMatching(new RegExp(`-${commits.second}$`))]);

      // A full commit the repository does not have is refused; nothing changes.
      const unknown = "0123456789abcdef0123456789abcdef01234567";
      expect(await failure(put(sessionId, { id: "r3", source: { _tag: "Git", url, ref: unknown } }))).toMatchObject({ status: 400, body: { _tag: "ValidationError", message: expect.stringContaining(`no commit ${unknown}`) } });
      expect(await failure(put(sessionId, { id: "r4", source: { _tag: "Git", url, ref: "no-such-branch" } }))).toMatchObject({ status: 400 });
      const after = (await ok(sdk.sessionPlugins({ client: api.client, path: { server, sessionId } }))).status;
      expect(after.desired?.id).toBe("r2");
      expect(cached("git")).toHaveLength(1);

      // A declared integrity that is another commit is a declared_mismatch.
      const mismatch = await failure(put(sessionId, { id: "r5", source: { _tag: "Git", url }, resolved: { pluginId: "fixture.tools", integrity: `git-sha1:${commits.first}` } }));
      expect(mismatch).toMatchObject({ status: 409, body: { message: expect.stringContaining("declared_mismatch") } });

      // Refresh follows the branch to its new commit; the old checkout is freed.
      writeFileSync(join(work, "plugin.js"), doublingPlugin("fixture.tools", "git_third"));
      await gitIn(work, "commit", "-q", "-am", "third");
      const third = await gitIn(work, "rev-parse", "HEAD");
      await gitIn(work, "push", "-q", repo, "main");
      const refreshed = (await ok(sdk.refreshSessionPlugin({ client: api.client, path: { server, sessionId }, body: { id: "r2" } }))).status;
      expect(refreshed.active?.resolved.integrity).toBe(`git-sha1:${third}`);
      expect(await toolsOf(sessionId)).toEqual(["git_third"]);
      expect(cached("git")).toEqual([expect.stringMatching(new RegExp(`-${third}$`))]);
      expect(existsSync(marker)).toBe(false);
    });
  });
});

describe("the CLI (embedded)", () => {
  it("plugins add --package installs from ZE_HARNESS_NPM_REGISTRY into the database's cache in the state directory", async () => {
    registry.publish(NAME, { "1.0.0": { tarball: tarballs.v1 } });
    assertBuilt();
    const home = tempHome("ze-sources-cli-");
    try {
      const options = { env: { ...home.env, ZE_HARNESS_NPM_REGISTRY: registry.url }, cwd: home.root };
      const created = await runCli(["session", "create", "--embedded"], options);
      expect(created).toMatchObject({ code: 0, stderr: "" });
      const sessionId = (jsonOf(created) as { id: string }).id;
      const added = await runCli(["plugins", "add", "--embedded", "--session", sessionId, "--package", NAME, "--plugin-id", "fixture.tools", "--revision", "r1"], options);
      expect(added).toMatchObject({ code: 0, stderr: "" });
      expect(jsonOf(added)).toMatchObject({ desiredActivation: { state: "active" }, active: { id: "r1", resolved: { version: "1.0.0", integrity: sriOf(tarballs.v1) } } });
      const root = join(home.env["XDG_DATA_HOME"]!, "ze-harness", "plugin-artifacts");
      const [database] = readdirSync(root);
      expect(readdirSync(join(root, database!, "npm"))).toHaveLength(1);
      const wrong = await runCli(["plugins", "add", "--embedded", "--session", sessionId, "--package", NAME, "--plugin-id", "fixture.tools", "--integrity", sriOf(tarballs.v2)], options);
      expect(wrong.code).toBe(1);
      expect(wrong.stderr).toMatch(/^error: ConflictError: declared_mismatch/);
      expect(existsSync(marker)).toBe(false);
    } finally {
      home.cleanup();
    }
  });
});

describe("the default artifact cache", () => {
  it("is one directory per database under the state directory", () => {
    const state = "/data/ze-harness";
    const own = defaultArtifactCacheDirectory(state, "ze-harness.db");
    expect(own).toMatch(/^\/data\/ze-harness\/plugin-artifacts\/[0-9a-f]{16}$/);
    expect(defaultArtifactCacheDirectory(state, "/data/ze-harness/ze-harness.db")).toBe(own);
    expect(defaultArtifactCacheDirectory(state, "other.db")).not.toBe(own);
    expect(defaultArtifactCacheDirectory(state, "libsql://db.example.com")).not.toBe(own);
    expect(defaultArtifactCacheDirectory(state, ":memory:")).not.toBe(defaultArtifactCacheDirectory(state, ":memory:"));
  });
});

describe("Session plugin sources (embedded SDK)", () => {
  let model: TestModel;
  let home: TempHome;
  let harness: EmbeddedHarness | undefined;

  beforeAll(async () => {
    model = await startTestModel();
  });
  afterAll(async () => {
    await harness?.close();
    await model.close();
    home?.cleanup();
  });

  it("a Turn uses the tool of a package installed through sessionPluginArtifacts", async () => {
    registry.publish(NAME, { "1.0.0": { tarball: tarballs.v1 } });
    home = tempHome("ze-sources-sdk-");
    const cacheDirectory = join(home.dir, "artifacts");
    const config = { model: TEST_MODEL, providers: testProviderConfig(model), permissions: [{ action: "*", resource: "*", effect: "allow" }] };
    await expect(createEmbeddedHarness({ cwd: home.root, databaseFilename: ":memory:", env: home.env, sessionPluginArtifacts: { resolveTimeoutMs: 0 } })).rejects.toBeInstanceOf(EmbeddedHarnessError);
    harness = await createEmbeddedHarness({
      cwd: home.root,
      databaseFilename: "sources.db",
      config,
      env: home.env,
      sessionPluginArtifacts: { cacheDirectory, packageManager: { command: "npm", registry: registry.url }, resolveTimeoutMs: 30_000, installTimeoutMs: 30_000 },
    });
    const session = await harness.createSession();
    const added = await ok(
      sdk.addSessionPlugin({
        client: harness.api.client,
        path: { server, sessionId: session.id },
        body: { id: "r1", source: { _tag: "Package", name: NAME, requestedVersion: "1.0.0" }, resolved: { pluginId: "fixture.tools" }, options: {}, mcpServers: [], skills: [] },
      }),
    );
    expect(added.status.active?.resolved).toEqual({ pluginId: "fixture.tools", version: "1.0.0", integrity: sriOf(tarballs.v1) });
    expect(readdirSync(join(cacheDirectory, "npm"))).toHaveLength(1);

    model.enqueue({ events: [{ type: "tool_call", name: "fixture_double", arguments: { value: 21 } }] }, { events: [{ type: "text", text: "It is 42." }] });
    const turnId = randomUUID();
    await harness.submitPrompt(session.id, { delivery: "queue", turnId, prompt: textPrompt("Double 21") });
    const turn = await harness.watchTurn(session.id, turnId);
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "It is 42." });
    const tool = turn.parts.find((part): part is ToolTurnPart => part.type === "tool");
    expect(tool).toMatchObject({ toolId: "fixture_double", state: "completed" });
    expect(tool!.canonicalResult).toMatchObject({ value: { value: 42, by: "fixture.tools" } });
    expect(existsSync(marker)).toBe(false);
  });
});
