// `run`'s permission prompt on a real terminal (node-pty): one key answers it, no Enter.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { assertBuilt, scriptByPrompt } from "../support/cli.js";
import { tempHome, type TempHome } from "../support/harness.js";
import { TEST_MODEL, testProviderConfig, writeGlobalConfig } from "../support/model.js";
import { startPty } from "../support/pty.js";

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

let model: TestModel;
let script: ReturnType<typeof scriptByPrompt>;
let home: TempHome;

beforeAll(async () => {
  assertBuilt();
  model = await startTestModel();
  script = scriptByPrompt(model);
  home = tempHome("ze-cli-approval-key-");
  writeGlobalConfig(home, { model: TEST_MODEL, providers: testProviderConfig(model) });
});
afterAll(async () => {
  await model?.close();
  home?.cleanup();
});

describe("run's approval prompt on a terminal", () => {
  it.each([
    ["o", "once", "It says raw secret."],
    ["R", "reject", "error: Turn failed: tool_denied"],
  ])("takes %s as a single key (no Enter) and replies %s", async (key, reply, answer) => {
    const outside = join(home.dir, `outside-${key}.txt`);
    writeFileSync(outside, "raw secret\n");
    const prompt = `Read ${key} raw`;
    script(prompt, { events: [{ type: "tool_call", name: "read", arguments: { filePath: outside } }] }, { events: [{ type: "text", text: answer }] });
    const before = model.requests.length;
    const pty = startPty(["--embedded", "run", prompt], { env: home.env, cwd: home.root });
    await pty.waitFor(/Allow external_directory \S+\? \[o\]nce\/\[a\]lways\/\[r\]eject $/m, 30_000);
    pty.write(key); // no Enter
    const exited = await pty.exited;
    expect(exited.exitCode).toBe(reply === "once" ? 0 : 1); // a rejected read fails the Turn
    expect(pty.screen()).toMatch(new RegExp(`\\[r\\]eject ${key.toLowerCase()}\\n`));
    expect(pty.screen()).toContain(answer);
    if (reply === "once") expect(JSON.stringify(model.requests[before + 1]!.body)).toContain("raw secret");
    else expect(model.requests.length).toBe(before + 1); // no second model call
  });

  it("ignores other keys until one of o, a, r", async () => {
    const outside = join(home.dir, "outside-x.txt");
    writeFileSync(outside, "other secret\n");
    script("Read x raw", { events: [{ type: "tool_call", name: "read", arguments: { filePath: outside } }] }, { events: [{ type: "text", text: "Read it." }] });
    const pty = startPty(["--embedded", "run", "Read x raw"], { env: home.env, cwd: home.root });
    await pty.waitFor(/\[r\]eject $/m, 30_000);
    pty.write("xz\r");
    pty.write("a");
    const exited = await pty.exited;
    expect(exited.exitCode).toBe(0);
    expect(pty.screen()).toMatch(/\[r\]eject a\n/);
    expect(pty.screen()).toContain("Read it.");
  });
});
