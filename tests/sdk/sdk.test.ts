// `ze-harness/sdk`: the embedded harness through its method client, inline config and plugins,
// a loopback listener on the same instance, the auth file override, typed startup errors, and
// the runnable example in clients/examples/ executed as a user would (the built package export).
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  DAEMON_BASE_PORT,
  DAEMON_FILE_NAME,
  DAEMON_LOG_FILE_NAME,
  DAEMON_MAX_PORT,
  daemonDirectory,
  EmbeddedHarnessError,
  ServerListenError,
  authFileDataRoot,
  createEmbeddedHarness,
  defaultAuthFilePath,
  listenEmbeddedHarness,
  sdk,
  textPrompt,
  unwrap,
  type EmbeddedHarness,
} from "../../sdk/index.js";
import { createZeClient } from "../../clients/index.js";
import { startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { credentialHash } from "../../tools/test-model/server.js";
import { assertBuilt, runProcess } from "../support/cli.js";
import { repoRoot, tempHome, type TempHome } from "../support/harness.js";
import { TEST_MODEL, testProviderConfig, writeGlobalConfig } from "../support/model.js";

let model: TestModel;
let home: TempHome;
let harness: EmbeddedHarness | undefined;

beforeAll(async () => {
  model = await startTestModel();
});
afterAll(async () => {
  await model.close();
});
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  home?.cleanup();
});

const inlineConfig = () => ({ model: TEST_MODEL, providers: testProviderConfig(model) });

async function runTurn(h: EmbeddedHarness, text: string) {
  const session = await h.createSession();
  const turnId = crypto.randomUUID();
  await h.submitPrompt(session.id, { delivery: "queue", turnId, prompt: textPrompt(text) });
  return { session, turn: await h.watchTurn(session.id, turnId) };
}

describe("createEmbeddedHarness", () => {
  it("runs a Turn in process with an inline config and a file database in cwd", async () => {
    home = tempHome();
    model.enqueue({ events: [{ type: "text", text: "Embedded hello." }] });
    harness = await createEmbeddedHarness({ cwd: home.root, databaseFilename: "embedded.db", config: inlineConfig(), env: home.env });
    const { session, turn } = await runTurn(harness, "Say hello");
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "Embedded hello." });
    expect(session.workdir).toBeDefined();
    expect((await harness.listSessions()).map((entry) => entry.id)).toEqual([session.id]);
    expect((await harness.getTurn(session.id, turn.id)).outcome).toEqual(turn.outcome);
    // The model catalog and providers through the same client.
    const snapshot = await harness.getRuntimeModels();
    expect(snapshot.defaultModel).toBe("test/scripted");
    expect(await harness.watchRuntimeModels()).toBe(snapshot.hostRevision);
    expect((await harness.getSessionModels(session.id)).models.map((model) => model.ref)).toContain("test/scripted");
    expect((await harness.listProviders()).map((provider) => provider.id)).toEqual(["test"]);
    // The relative databaseFilename resolved against cwd.
    expect(readdirSync(home.root)).toContain("embedded.db");
  });

  it("loads inline plugins after the configured ones", async () => {
    home = tempHome();
    const plugin = {
      id: "example.inline",
      setup(context: { agents: { register(agent: unknown): void } }) {
        context.agents.register({ id: "inline-reviewer", displayName: "Inline reviewer", description: "Reviews", mode: "primary", instructions: [{ role: "system", text: "INLINE" }] });
      },
    };
    harness = await createEmbeddedHarness({ cwd: home.root, databaseFilename: ":memory:", config: inlineConfig(), inlinePlugins: [plugin], env: home.env });
    const session = await harness.createSession();
    const agents = await unwrap(sdk.sessionAgents({ client: harness.api.client, path: { server: "local", sessionId: session.id } }));
    expect(agents.agents.map((agent) => agent.id)).toContain("inline-reviewer");
  });

  it("refuses a missing databaseFilename and an invalid config with a typed error", async () => {
    home = tempHome();
    await expect(createEmbeddedHarness({ cwd: home.root, databaseFilename: "" })).rejects.toBeInstanceOf(EmbeddedHarnessError);
    const invalid = createEmbeddedHarness({ cwd: home.root, databaseFilename: "never.db", config: { permissions: "everything" }, env: home.env });
    await expect(invalid).rejects.toMatchObject({ _tag: "ConfigInvalid" });
    await expect(invalid).rejects.toThrow(/\(inline config\)/);
    expect(readdirSync(home.root)).not.toContain("never.db");
  });

  it("reads provider keys from authFilePath", async () => {
    home = tempHome();
    const authFile = join(home.dir, "keys", "auth.json");
    mkdirSync(join(home.dir, "keys"));
    writeFileSync(authFile, JSON.stringify({ keyed: { type: "api", key: "sk-from-custom-auth-file" } }), { mode: 0o600 });
    const providers = {
      keyed: {
        definition: {
          displayName: "Keyed test model",
          baseURL: model.openaiBaseURL,
          protocol: "chat",
          authentication: { kind: "bearer" },
          models: { scripted: { displayName: "Scripted", limits: { contextUnits: 200000, outputUnits: 8192 } } },
        },
      },
    };
    harness = await createEmbeddedHarness({ cwd: home.root, databaseFilename: ":memory:", config: { model: "keyed/scripted", providers }, authFilePath: authFile, env: home.env });
    model.enqueue({ events: [{ type: "text", text: "Keyed." }] });
    const before = model.requests.length;
    const { turn } = await runTurn(harness, "With a key");
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "Keyed." });
    expect(model.requests[before]!.headers["authorization"]).toBe(`Bearer ${credentialHash("sk-from-custom-auth-file")}`);
  });

  it("names the daemon's files and ports", () => {
    expect([DAEMON_BASE_PORT, DAEMON_MAX_PORT, DAEMON_FILE_NAME, DAEMON_LOG_FILE_NAME]).toEqual([4096, 4295, "server.json", "daemon.log"]);
    expect(daemonDirectory({ XDG_DATA_HOME: "/data" })).toBe("/data/ze-harness");
  });

  it("resolves the default auth file under the data root", () => {
    expect(defaultAuthFilePath({ XDG_DATA_HOME: "/data" })).toBe("/data/ze-harness/auth.json");
    expect(authFileDataRoot({ XDG_DATA_HOME: "/data" })).toBe("/data");
    expect(defaultAuthFilePath({ XDG_DATA_HOME: "relative", HOME: "/home/u" })).toBe("/home/u/.local/share/ze-harness/auth.json");
  });
});

describe("listenEmbeddedHarness", () => {
  it("serves the same instance on loopback and closes with it", async () => {
    home = tempHome();
    harness = await createEmbeddedHarness({ cwd: home.root, databaseFilename: ":memory:", config: inlineConfig(), env: home.env });
    const created = await harness.createSession({ systemPrompt: "shared" });
    const listener = await listenEmbeddedHarness(harness);
    expect(listener.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const remote = createZeClient({ baseUrl: listener.url });
    const listed = await unwrap(sdk.listSessions({ client: remote.client, path: { server: "local" } }));
    expect(listed.sessions.map((session) => session.id)).toEqual([created.id]);
    await expect(listenEmbeddedHarness(harness, { hostname: "0.0.0.0" })).rejects.toBeInstanceOf(ServerListenError);
    await harness.close();
    harness = undefined;
    await expect(fetch(`${listener.url}/v1/health`)).rejects.toThrow();
  });
});

describe("clients/examples/embedded.mjs", () => {
  it("runs against the built package export and prints the answer", async () => {
    assertBuilt();
    home = tempHome();
    writeGlobalConfig(home, { model: TEST_MODEL, providers: testProviderConfig(model) });
    model.enqueue({ events: [{ type: "text", text: "Hello from the example." }] });
    const result = await runProcess(process.execPath, [join(repoRoot, "clients", "examples", "embedded.mjs"), "Say hello"], { env: home.env, cwd: home.root });
    expect(result).toMatchObject({ code: 0, stdout: "Hello from the example.\n" });
  });
});
