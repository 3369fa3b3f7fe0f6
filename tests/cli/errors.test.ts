// One-line errors through the built binary: a busy port, an invalid provider entry naming its
// config file, and — from the shared daemon, only when it is true — the hint to restart the
// service after a config edit. The daemon here lives in this suite's own temp home and is stopped.
import { writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { assertBuilt, runCli, scriptByPrompt, type CliOptions } from "../support/cli.js";
import { tempHome, type TempHome } from "../support/harness.js";
import { TEST_MODEL, testProviderConfig, writeGlobalConfig } from "../support/model.js";

vi.setConfig({ testTimeout: 90_000, hookTimeout: 90_000 });

let model: TestModel;
let home: TempHome;
let options: CliOptions;

beforeAll(async () => {
  assertBuilt();
  model = await startTestModel();
  scriptByPrompt(model)("Hello daemon", { events: [{ type: "text", text: "Hi." }] });
  home = tempHome("ze-cli-errors-");
  writeGlobalConfig(home, { model: TEST_MODEL, providers: testProviderConfig(model) });
  options = { env: home.env, cwd: home.root };
});
afterAll(async () => {
  await runCli(["service", "stop"], options);
  await model?.close();
  home?.cleanup();
});

describe("serve on a busy port", () => {
  let taken: Server;
  beforeAll(async () => {
    taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
  });
  afterAll(() => new Promise<void>((resolve) => taken.close(() => resolve())));

  it("is one AddressInUse line that says how to get a free port", async () => {
    const port = (taken.address() as { port: number }).port;
    const result = await runCli(["serve", "--port", String(port), "--database", join(home.dir, "busy.db")], options);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toBe(`error: AddressInUse: 127.0.0.1:${port} is in use; pass --port 0 for any free port\n`);
  });
});

describe("configuration errors", () => {
  it("ProviderInvalid names the config file the entry came from", async () => {
    const bad = join(home.dir, "bad-provider.json");
    writeFileSync(bad, JSON.stringify({ providers: { broken: { definition: { baseURL: "ftp://x.example", protocol: "chat", authentication: { kind: "none" } } } } }));
    const result = await runCli(["--embedded", "--config", bad, "provider", "list"], options);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`error: ProviderInvalid: ${bad}: /providers/broken/definition/baseURL: a base URL must use http or https\n`);
  });

  it("from the daemon: an unknown model says to restart the service only after the config was edited", async () => {
    expect((await runCli(["run", "Hello daemon"], options)).code).toBe(0); // starts the daemon
    const before = await runCli(["run", "--model", "test/added", "Hello again"], options);
    expect(before.code).toBe(1);
    expect(before.stderr).toMatch(/^error: UnavailableError: Model test\/added is unavailable: [^\n]*"test\/added"\.\n$/);
    expect(before.stderr).not.toContain("service restart");

    // The model is added to the config the daemon started with: it keeps the old providers.
    const definition = testProviderConfig(model) as { test: { definition: { models: Record<string, unknown> } } };
    definition.test.definition.models["added"] = { displayName: "Added" };
    writeGlobalConfig(home, { model: TEST_MODEL, providers: definition });
    const after = await runCli(["run", "--model", "test/added", "Hello again"], options);
    expect(after.code).toBe(1);
    expect(after.stderr).toMatch(/^error: UnavailableError: Model test\/added is unavailable: [^\n]*; run `ze-harness service restart` after editing the config\n$/);
    // Embedded reads the file itself: no hint there.
    const embedded = await runCli(["--embedded", "run", "--model", "test/nope", "Hello again"], options);
    expect(embedded.stderr).not.toContain("service restart");
  });
});
