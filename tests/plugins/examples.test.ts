// The runnable examples (examples/, `npm run example:NAME`), each run the way a user runs it —
// `npm run --silent example:NAME -- --model test/scripted` in a fresh process against the built
// package — with the scripted test model as the configured provider (no network). One example per
// registration kind, so each kind `plugins list` reports is shown doing what it says: a tool from
// config (basic), an awaited hook approving a call (approval-hook), an inline plugin in the
// embedded SDK (plugin-tool), an Agent, a Skill, a Skill source, a Skill transform, an MCP server,
// a plugin model, a journal kind, and an event subscriber.
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startTestModel, type ScriptedResponse, type TestModel } from "../../tools/test-model/index.js";
import { assertBuilt, runProcess } from "../support/cli.js";
import { repoRoot, tempHome, type TempHome } from "../support/harness.js";
import { TEST_MODEL, testProviderConfig, writeGlobalConfig } from "../support/model.js";

let model: TestModel;
let home: TempHome;
beforeAll(async () => {
  assertBuilt();
  model = await startTestModel();
});
afterAll(async () => {
  await model.close();
});
beforeEach(() => {
  home?.cleanup();
  home = tempHome();
  writeGlobalConfig(home, { model: TEST_MODEL, providers: testProviderConfig(model) });
});

async function example(name: string, ...responses: ScriptedResponse[]) {
  const before = model.requests.length;
  model.enqueue(...responses);
  const result = await runProcess("npm", ["run", "--silent", `example:${name}`, "--", "--model", TEST_MODEL], { env: home.env, cwd: repoRoot });
  const requests = model.requests.slice(before).map((request) => JSON.stringify(request.body));
  return { ...result, requests };
}

const toolCall = (name: string, args: Record<string, unknown>): ScriptedResponse => ({ events: [{ type: "tool_call", name, arguments: args }] });
const say = (text: string): ScriptedResponse => ({ events: [{ type: "text", text }] });

describe("examples", () => {
  it("basic: a tool from a plugin loaded by config; its result reaches the model", async () => {
    const run = await example("basic", toolCall("double", { value: 21 }), say("21 doubled is 42."));
    expect(run).toMatchObject({ code: 0, stdout: "21 doubled is 42.\n" });
    expect(run.requests[0]).toContain('"name":"double"');
    expect(run.requests[1]).toContain('{\\"value\\":42}');
  });

  it("approval-hook: the hook answers the permission ask, so the call runs without a terminal", async () => {
    const run = await example("approval-hook", toolCall("double", { value: 21 }), say("It is 42."));
    expect(run).toMatchObject({ code: 0, stdout: "It is 42.\n" });
    expect(run.stderr).not.toContain("no interactive terminal");
    expect(run.requests[1]).toContain('{\\"value\\":42}');
  });

  it("plugin-tool: the same plugin object inline in the embedded SDK", async () => {
    const run = await example("plugin-tool", toolCall("double", { value: 2 }), say("4"));
    expect(run).toMatchObject({ code: 0, stdout: "4\n" });
    expect(run.requests[1]).toContain('{\\"value\\":4}');
  });

  it("agent: the Agent's instructions come first and it offers only its tools", async () => {
    const run = await example("agent", say("Grey waves fold and break"));
    expect(run).toMatchObject({ code: 0, stdout: "Grey waves fold and break\n" });
    const body = JSON.parse(run.requests[0]!) as { messages: { content: unknown }[]; tools?: { function: { name: string } }[] };
    expect(JSON.stringify(body.messages[0])).toContain("Answer in exactly one haiku");
    // Only read (and CodeMode's execute, which can call only read).
    expect(body.tools?.map((tool) => tool.function.name)).toEqual(["read", "execute"]);
  });

  it("skill: the registered Skill is advertised and loaded by the skill tool", async () => {
    const run = await example("skill", toolCall("skill", { name: "release-notes" }), say("Added: --json."));
    expect(run).toMatchObject({ code: 0, stdout: "Added: --json.\n" });
    expect(run.requests[0]).toContain("release-notes");
    expect(run.requests[1]).toContain("Start each line with Added, Changed or Fixed.");
  });

  it("skill-source: a SKILL.md from the workspace directory the source names", async () => {
    const run = await example("skill-source", toolCall("skill", { name: "greeting" }), say("Hello Ada!"));
    expect(run).toMatchObject({ code: 0, stdout: "Hello Ada!\n" });
    expect(run.requests[1]).toContain("Greet the visitor by name and offer the README first.");
  });

  it("skill-transform: the transform's patch is what the model loads", async () => {
    const run = await example("skill-transform", toolCall("skill", { name: "code-review" }), say("Looks good (a.ts:1)."));
    expect(run).toMatchObject({ code: 0, stdout: "Looks good (a.ts:1).\n" });
    expect(run.requests[1]).toContain("Read the tests first.");
    expect(run.requests[1]).toContain("House rule: cite the file and line you mean.");
  });

  it("mcp: the plugin's stdio MCP server is started and its tool offered as calc_add", async () => {
    const run = await example("mcp", toolCall("calc_add", { a: 2, b: 40 }), say("2 + 40 = 42"));
    expect(run).toMatchObject({ code: 0, stdout: "2 + 40 = 42\n" });
    expect(run.requests[0]).toContain('"name":"calc_add"');
    expect(run.requests[1]).toMatch(/"role":"tool"[^}]*42/);
  });

  it("model: a plugin model answers the Turn itself (the provider model is its sibling, never called)", async () => {
    const result = await runProcess("npm", ["run", "--silent", "example:model"], { env: home.env, cwd: repoRoot });
    expect(result).toMatchObject({ code: 0, stdout: "MAKE SOME NOISE\n" });
  });

  it("journal: the tool's report is stored and read back", async () => {
    const run = await example("journal", toolCall("deploy", { environment: "staging" }), say("Deployed."));
    expect(run).toMatchObject({ code: 0, stdout: "example.journal deployment: Deployed to staging\n" });
  });

  it("events: the subscriber sees the Turn's events through turn.terminal", async () => {
    const run = await example("events", say("Hello!"));
    expect(run.code).toBe(0);
    const lines = run.stdout.trim().split("\n");
    expect(lines[0]).toBe("turn.started");
    expect(lines).toContain("model.text.delta");
    expect(lines.slice(-2)).toEqual(["turn.terminal", "outcome: completed"]);
  });

  it("plugins list reports exactly what each example's tests above show in use", async () => {
    const expected: Record<string, string[]> = {
      basic: ["tool:double"],
      "approval-hook": ["tool:double", "hook:tool.execute.before"],
      agent: ["agent:haiku"],
      skill: ["skill:release-notes"],
      "skill-source": ["skill-source:example.local-skills"],
      "skill-transform": ["skill:code-review", "skill-transform:example.house-rules"],
      mcp: ["mcp:example.calc"],
      model: ["model:example.loud/shout"],
      journal: ["tool:deploy", "journal-kind:deployment"],
    };
    for (const [name, registrations] of Object.entries(expected)) {
      const listed = await runProcess(process.execPath, [join(repoRoot, "bin", "ze-harness.js"), "plugins", "list", "--embedded"], { env: home.env, cwd: join(repoRoot, "examples", name) });
      expect(listed.code, listed.stderr).toBe(0);
      const { plugins } = JSON.parse(listed.stdout) as { plugins: { pluginId: string; status: string; registrations: string[] }[] };
      expect(plugins, name).toEqual([expect.objectContaining({ pluginId: `example.${name}`, status: "active", registrations })]);
    }
  });
});
