// `--sandbox MODE` through the built binary: `run --embedded` sandboxes the Turn's shell call
// (and `--sandbox off` overrides a config that turns it on); a --remote command refuses the flag
// (the remote server's own config decides); through the daemon the flag is one the daemon starts
// with, and a command asking for another is refused rather than run unsandboxed.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { assertBuilt, jsonOf, runCli, scriptByPrompt } from "../support/cli.js";
import { tempHome, type TempHome } from "../support/harness.js";
import { TEST_MODEL, testProviderConfig, writeGlobalConfig } from "../support/model.js";
import { cleanupDaemonHome, daemonHome, type DaemonHome } from "../daemon/support.js";
import { SECRET } from "./support.js";

vi.setConfig({ testTimeout: 90_000, hookTimeout: 90_000 });

let model: TestModel;
let script: ReturnType<typeof scriptByPrompt>;
beforeAll(async () => {
  assertBuilt();
  model = await startTestModel();
  script = scriptByPrompt(model);
});
afterAll(async () => {
  await model?.close();
});

/** The tool result the model saw in the request after its shell call for `marker`. */
function toolResultFor(marker: string): string {
  const request = [...model.requests].reverse().find((candidate) => JSON.stringify(candidate.body).includes(marker) && JSON.stringify(candidate.body).includes('"tool"'));
  const messages = (request!.body as { messages: { role: string; content: unknown }[] }).messages;
  return JSON.stringify(messages.filter((message) => message.role === "tool").map((message) => message.content));
}

/** A prompt whose Turn runs one shell call reading the secret by a path the heuristic does not see, then answers. */
function scriptLeak(marker: string, secretFile: string): void {
  const [head, tail] = [secretFile.slice(0, 4), secretFile.slice(4)];
  script(marker, { events: [{ type: "tool_call", name: "shell", arguments: { command: `cat $(printf ${head})${tail}; echo "cat: $?"` } }] }, { events: [{ type: "text", text: "Done." }] });
}

describe("run --sandbox (embedded)", () => {
  let home: TempHome;
  let secretFile: string;
  beforeAll(() => {
    home = tempHome("ze-sandbox-cli-");
    writeGlobalConfig(home, { model: TEST_MODEL, providers: testProviderConfig(model), sandbox: { mode: "workspace-write" } });
    secretFile = join(home.dir, "secret.txt");
    writeFileSync(secretFile, `${SECRET}\n`);
  });
  afterAll(() => home?.cleanup());

  it("the config's sandbox applies: the shell call cannot read the file outside the workdir", async () => {
    scriptLeak("Sandboxed by config", secretFile);
    const result = await runCli(["--embedded", "run", "Sandboxed by config"], { env: home.env, cwd: home.root });
    expect(result).toMatchObject({ code: 0, stdout: "Done.\n" });
    const seen = toolResultFor("Sandboxed by config");
    expect(seen).not.toContain(SECRET);
    expect(seen).toContain("cat: 1");
  });

  it("--sandbox off overrides it (the reference's behaviour: the read succeeds)", async () => {
    scriptLeak("Unsandboxed by flag", secretFile);
    const result = await runCli(["--embedded", "run", "--sandbox", "off", "Unsandboxed by flag"], { env: home.env, cwd: home.root });
    expect(result).toMatchObject({ code: 0 });
    expect(toolResultFor("Unsandboxed by flag")).toContain(SECRET);
  });

  it("an unknown mode is a usage error", async () => {
    const result = await runCli(["--embedded", "run", "--sandbox", "strict", "x"], { env: home.env, cwd: home.root });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/workspace-write/);
  });

  it("--remote refuses --sandbox: the remote server decides, and nothing is sent", async () => {
    const result = await runCli(["--remote", "http://127.0.0.1:9", "run", "--sandbox", "read-only", "x"], { env: home.env, cwd: home.root });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--sandbox applies to a local host/);
  });
});

describe("run --sandbox through the daemon", () => {
  let h: DaemonHome;
  let secretFile: string;
  beforeAll(() => {
    h = daemonHome(model);
    secretFile = join(h.dir, "secret.txt");
    writeFileSync(secretFile, `${SECRET}\n`);
  });
  afterAll(async () => cleanupDaemonHome(h));

  it("the daemon starts with it, reports it, runs shell calls in it, and refuses a command asking for another mode", async () => {
    const started = jsonOf(await h.cli(["service", "start", "--sandbox", "workspace-write"]));
    expect(started).toMatchObject({ running: true, sandbox: "workspace-write" });
    scriptLeak("Through the daemon", secretFile);
    expect(await h.cli(["run", "--sandbox", "workspace-write", "Through the daemon"])).toMatchObject({ code: 0, stdout: "Done.\n" });
    expect(toolResultFor("Through the daemon")).not.toContain(SECRET);
    const other = await h.cli(["run", "--sandbox", "read-only", "Never run"]);
    expect(other).toMatchObject({ code: 1, stdout: "" });
    expect(other.stderr).toMatch(/^error: DaemonMismatch: the local daemon already runs with --sandbox workspace-write, not --sandbox read-only: run `ze-harness service restart --sandbox read-only`.*--embedded/);
    // service restart keeps it.
    expect(jsonOf(await h.cli(["service", "restart"]))).toMatchObject({ sandbox: "workspace-write" });
  });
});
