// A plugin dropped into a project's config, end to end through the built CLI: its tool is offered
// and runs, its `tool.execute.before` hook approves an `ask` without asking, the plugin imports the
// contract by the reference's package name, `plugins list` shows it, and a plugin whose setup
// throws is reported without stopping anything else.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { Turn } from "../../clients/index.js";
import { startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { assertBuilt, jsonOf, runCli, scriptByPrompt, type CliOptions } from "../support/cli.js";
import { tempHome, type TempHome } from "../support/harness.js";
import { TEST_MODEL, testProviderConfig, writeGlobalConfig } from "../support/model.js";

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

let model: TestModel;
let script: ReturnType<typeof scriptByPrompt>;
let home: TempHome;
let options: CliOptions;

const PLUGIN = `
import { definePlugin } from "@zephyrcloudio/harness-plugin";

export default definePlugin({
  id: "example.approval-hook",
  setup: (context) => {
    context.tools.register({
      id: "double",
      description: "Double a number",
      inputSchema: { type: "object", properties: { value: { type: "number" } }, required: ["value"], additionalProperties: false },
      execute: async (input) => ({ value: input["value"] * 2 }),
    });
    context.hooks.register("tool.execute.before", async () => ({ approval: "allow" }));
  },
});
`;

const BROKEN = `export default { id: "example.broken", setup: () => { throw new Error("secret detail"); } };`;

beforeAll(async () => {
  assertBuilt();
  model = await startTestModel();
  script = scriptByPrompt(model);
  home = tempHome("ze-plugins-e2e-");
  writeGlobalConfig(home, { model: TEST_MODEL, providers: testProviderConfig(model) });
  const project = join(home.root, "project");
  mkdirSync(project, { recursive: true });
  writeFileSync(join(project, "plugin.mjs"), PLUGIN);
  writeFileSync(join(project, "broken.mjs"), BROKEN);
  writeFileSync(
    join(project, "ze-harness.config.json"),
    JSON.stringify({ permissions: [{ action: "double", resource: "*", effect: "ask" }], plugins: ["./plugin.mjs", "./broken.mjs"] }),
  );
  options = { env: home.env, cwd: project };
});
afterAll(async () => {
  await model?.close();
  home?.cleanup();
});

describe("a plugin from the project config", () => {
  it("offers its tool, its hook approves the ask, and the result reaches the model", async () => {
    script("Double 21", { events: [{ type: "tool_call", name: "double", arguments: { value: 21 } }] }, { events: [{ type: "text", text: "It is 42." }] });
    const result = await runCli(["--embedded", "run", "--json", "Double 21"], options);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const turn = jsonOf<Turn>(result);
    const part = turn.parts.find((candidate) => candidate.type === "tool");
    expect(part).toMatchObject({ toolId: "double", state: "completed", approval: { state: "resolved", decision: "allow", source: "hook" }, canonicalResult: { format: "json", value: { value: 42 } } });
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "It is 42." });
    const offered = (model.requests.at(-2)!.body as { tools: { function: { name: string } }[] }).tools.map((tool) => tool.function.name);
    expect(offered).toContain("double");
  });

  it("plugins list reports the active plugin and the failed one with a safe message", async () => {
    const listed = jsonOf<{ plugins: { source: string; status: string; error?: string; registrations: string[] }[] }>(await runCli(["--embedded", "plugins", "list"], options)).plugins;
    const active = listed.find((entry) => entry.source.endsWith("plugin.mjs"));
    const broken = listed.find((entry) => entry.source.endsWith("broken.mjs"));
    expect(active).toMatchObject({ status: "active", registrations: expect.arrayContaining(["tool:double", "hook:tool.execute.before"]) });
    expect(broken).toMatchObject({ status: "failed" });
    expect(JSON.stringify(broken)).not.toContain("secret detail");
  });
});
