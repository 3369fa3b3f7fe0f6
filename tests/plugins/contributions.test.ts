// What a generation makes of a plugin's registrations: adapted tools (safe failures, projections,
// JSON results), hooks in a frozen pipeline, Agents as a catalog layer, Skills and transforms,
// MCP servers and models checked in full.
import { describe, expect, it } from "vitest";
import { PluginError } from "../../plugin/index.js";
import { HookPipeline, inlineCandidate, loadPluginGeneration, renderPluginSkill, unavailableCapabilities, type PluginGeneration } from "../../services/plugins/index.js";
import { loadAgentCatalog } from "../../services/workspace/agents.js";
import { hostActivation, toolContext } from "./helpers.js";

type Setup = (context: any) => unknown;
const load = (setups: Record<string, Setup>, extra: Partial<Parameters<typeof loadPluginGeneration>[0]> = {}) =>
  loadPluginGeneration({
    activation: hostActivation(),
    candidates: Object.entries(setups).map(([id, setup]) => inlineCandidate({ id, setup })),
    capabilities: unavailableCapabilities(),
    ...extra,
  });
async function generation(setups: Record<string, Setup>, extra: Partial<Parameters<typeof loadPluginGeneration>[0]> = {}): Promise<PluginGeneration> {
  const result = await load(setups, extra);
  if (!result.ok) throw new Error(result.message);
  return result.generation;
}
const schema = { type: "object", properties: { value: {} } };

describe("tools", () => {
  it("maps results and failures to what the model may see", async () => {
    const g = await generation({
      "p.tools": (c) => {
        c.tools.register({ id: "text", description: "d", inputSchema: schema, execute: async (input: { value: string }) => `got ${input.value}` });
        c.tools.register({ id: "public", description: "d", inputSchema: schema, execute: async () => { throw new PluginError({ message: "db password wrong", publicMessage: " Deploy target is locked. " }); } });
        c.tools.register({ id: "private", description: "d", inputSchema: schema, execute: async () => { throw new Error("stack trace with secrets"); } });
        c.tools.register({ id: "undef", description: "d", inputSchema: schema, execute: async () => ({ a: undefined }) });
        c.tools.register({ id: "date", description: "d", inputSchema: schema, execute: async () => new Date(0) });
        c.tools.register({ id: "mutate", description: "d", inputSchema: schema, execute: async (input: { value: number[] }) => { input.value.push(9); return input.value; } });
      },
    });
    const byId = new Map(g.tools.map((tool) => [tool.id, tool]));
    const run = (id: string, input: unknown, ctx = toolContext()) => byId.get(id)!.execute(input, ctx);
    expect(await run("text", { value: "x" })).toEqual({ result: { format: "text", value: "got x" } });
    await expect(run("public", {})).rejects.toMatchObject({ _tag: "ToolFailure", code: "tool_error", message: "Deploy target is locked." });
    await expect(run("private", {})).rejects.toMatchObject({ code: "tool_error", message: "Tool execution failed." });
    await expect(run("undef", {})).rejects.toMatchObject({ code: "invalid_output" });
    await expect(run("date", {})).rejects.toMatchObject({ code: "invalid_output" });
    const input = { value: [1] };
    expect(await run("mutate", input)).toEqual({ result: { format: "json", value: [1, 9] } });
    expect(input).toEqual({ value: [1] });
    const aborted = new AbortController();
    aborted.abort();
    await expect(run("private", {}, toolContext({ signal: aborted.signal }))).rejects.toMatchObject({ code: "interrupted" });
  });

  it("validates and de-duplicates projected permissions, and hands the approved ones to execute", async () => {
    let seen: unknown;
    const g = await generation({
      "p.perm": (c) => {
        c.tools.register({
          id: "deploy",
          description: "d",
          inputSchema: schema,
          permissions: async (input: { value: string }) => [
            { action: "deploy", resources: [input.value], save: [input.value], metadata: { env: input.value } },
            { action: "deploy", resources: [input.value], save: [input.value], metadata: { env: input.value } },
          ],
          execute: async (_input: unknown, ctx: { permissions: unknown }) => ((seen = ctx.permissions), "ok"),
        });
        c.tools.register({ id: "empty", description: "d", inputSchema: schema, permissions: async () => [], execute: async () => 1 });
        c.tools.register({ id: "undefsave", description: "d", inputSchema: schema, permissions: async () => [{ action: "a", resources: ["r"], save: undefined }], execute: async () => 1 });
        c.tools.register({ id: "throws", description: "d", inputSchema: schema, permissions: async () => { throw new PluginError({ message: "x", publicMessage: "No such environment." }); }, execute: async () => 1 });
      },
    });
    const [deploy, empty, undefsave, throws] = g.tools;
    const projections = await deploy!.permissions({ value: "prod" }, toolContext());
    expect(projections).toEqual([{ action: "deploy", resources: ["prod"], save: ["prod"], metadata: { env: "prod" } }]);
    await deploy!.execute({ value: "prod" }, toolContext({ permissions: projections }));
    expect(seen).toEqual(projections);
    await expect(empty!.permissions({}, toolContext())).rejects.toMatchObject({ code: "invalid_permissions" });
    await expect(undefsave!.permissions({}, toolContext())).rejects.toMatchObject({ code: "invalid_permissions" });
    await expect(throws!.permissions({}, toolContext())).rejects.toMatchObject({ code: "tool_error", message: "No such environment." });
  });

  it("checks activity updates and forwards valid ones", async () => {
    const reported: unknown[] = [];
    const g = await generation({
      "p.activity": (c) =>
        c.tools.register({
          id: "act",
          description: "d",
          inputSchema: schema,
          execute: async (_input: unknown, ctx: { reportActivity(u: unknown): Promise<void> }) => {
            await ctx.reportActivity({ observedBytes: 3, truncated: false, message: "working" });
            await ctx.reportActivity({ observedBytes: -1, truncated: false }).catch((error: unknown) => reported.push((error as { _tag: string })._tag));
            return "done";
          },
        }),
    });
    await g.tools[0]!.execute({}, toolContext({ reportActivity: (update) => void reported.push(update) }));
    expect(reported).toEqual([{ observedBytes: 3, truncated: false, message: "working" }, "PluginError"]);
  });
});

describe("hooks", () => {
  it("runs plugin handlers in plugin order with owned copies, in a frozen pipeline", async () => {
    const calls: string[] = [];
    const g = await generation({
      "p.first": (c) => c.hooks.register("tool.execute.before", async (event: { input: { n: number } }) => { calls.push("first"); event.input.n = 99; return { approval: "allow" }; }),
      "p.second": (c) => {
        c.hooks.register("tool.execute.before", async (event: { input: { n: number } }) => { calls.push(`second saw ${event.input.n}`); return { input: { n: 2 } }; });
        c.hooks.register("turn.before", async () => void calls.push("turn"));
      },
    });
    expect(g.plugins.map((plugin) => plugin.registrations)).toEqual([["hook:tool.execute.before"], ["hook:tool.execute.before", "hook:turn.before"]]);
    const input = { turnId: "t", toolId: "x", toolCallId: "c", input: { n: 1 } };
    const outcome = await g.hooks.trigger("tool.execute.before", input, (replacement) => ({ ok: true, input: replacement }));
    expect(outcome).toEqual({ kind: "proceed", input: { n: 2 }, approval: "allow" });
    expect(calls).toEqual(["first", "second saw 1"]);
    expect(input.input).toEqual({ n: 1 });
    expect(() => g.hooks.register("turn.before", async () => undefined)).toThrow("frozen");

    const embedder = new HookPipeline();
    embedder.register("turn.before", async () => void calls.push("embedder"));
    await HookPipeline.combine(embedder, g.hooks).trigger("turn.before", { turnId: "t", prompt: [], model: { providerId: "p", modelId: "m" } });
    expect(calls.slice(-2)).toEqual(["embedder", "turn"]);
  });
});

describe("agents", () => {
  const review = { id: "review", displayName: "Reviewer", description: "Reviews changes", instructions: [{ role: "system", text: "Review." }, { role: "developer", text: "Be brief." }], mode: "primary" };

  it("become a catalog layer that configuration patches; a plugin default applies unless configuration sets one", async () => {
    const g = await generation({ "p.agents": (c) => { c.agents.register(review); c.agents.setDefault("review"); } });
    expect(g.agents).toEqual({
      agents: [{ pluginId: "p.agents", id: "review", displayName: "Reviewer", description: "Reviews changes", system: "Review.\n\nBe brief.", mode: "primary", permissions: [], tools: { mode: "all" } }],
      defaultAgent: { agent: "review", pluginId: "p.agents" },
    });
    const env = { HOME: "/nonexistent-home", XDG_DATA_HOME: "/nonexistent-data" };
    const catalog = loadAgentCatalog({ configLayers: [{ file: "/p/ze-harness.config.json", scope: "project", config: { agents: { review: { description: "Patched" } } } }], env, plugins: g.agents });
    expect(catalog.ok && catalog.value.get("review")).toMatchObject({ origin: "plugin", description: "Patched", system: "Review.\n\nBe brief." });
    expect(catalog.ok && catalog.value.defaultAgent).toBe("review");
    const configured = loadAgentCatalog({ configLayers: [{ file: "/p/c.json", scope: "project", config: { defaultAgent: "plan" } }], env, plugins: g.agents });
    expect(configured.ok && configured.value.defaultAgent).toBe("plan");
    const clash = loadAgentCatalog({ configLayers: [], env, plugins: { agents: [{ ...g.agents.agents[0]!, id: "build" }] } });
    expect(clash.ok ? "loaded" : clash.error).toMatchObject({ _tag: "AgentConfigInvalid", file: "plugin:p.agents", agent: "build" });
  });

  it("a catalog that fails with the generation's layer fails the generation", async () => {
    const result = await load({ "p.agents": (c) => { c.agents.register({ ...review, mode: "subagent" }); c.agents.setDefault("review"); } }, {
      agentCatalog: (plugins) => loadAgentCatalog({ configLayers: [], env: { HOME: "/nonexistent-home" }, plugins }),
    });
    expect(result.ok ? "activated" : result.message).toContain("subagent-only");
  });
});

describe("skills, MCP servers and models", () => {
  const skill = { id: "note-style", displayName: "Note style", description: "House style for notes.", version: "1.0.0", body: "# Notes\n\n- short", modelAdvertisement: { advertised: true, userInvocable: true }, publicMetadata: { tags: ["notes"] } };

  it("registers Skills, runs the scope's transforms in order, and rejects a bad patch", async () => {
    const g = await generation({
      "p.skills": (c) => c.skills.register(skill),
      "p.transform": (c) => c.skills.registerTransform({ id: "upper", transform: async (s: { description: string }) => ({ description: s.description.toUpperCase() }) }),
    });
    expect(g.skills).toEqual([
      { ...skill, description: "HOUSE STYLE FOR NOTES.", baseLocation: "ze-plugin:p.skills", source: { id: "p.skills", kind: "plugin" }, version: { skillVersion: "1.0.0", sourceVersion: "host-1" }, files: [] },
    ]);
    expect(renderPluginSkill(g.skills[0]!)).toContain("Base location of this Skill: ze-plugin:p.skills");
    const bad = await load({ "p.skills": (c) => c.skills.register(skill), "p.t": (c) => c.skills.registerTransform({ id: "t", transform: async () => ({ id: "renamed" }) }) });
    expect(bad.ok ? "activated" : bad.message).toContain('cannot change "id"');
    const invalid = await load({ "p.skills": (c) => c.skills.register({ ...skill, version: "-1" }) });
    expect(invalid.ok ? "activated" : invalid.message).toContain("version");
  });

  it("checks MCP server definitions and models in full", async () => {
    const server = { id: "docs", name: "docs", kind: "local", protocolVersions: ["2025-06-18"], transport: { kind: "stdio", command: "docs-mcp", arguments: [], environment: { TOKEN: { kind: "environment", reference: "DOCS_TOKEN" } } } };
    const model = {
      providerId: "auto",
      providerDisplayName: "Auto",
      modelId: "router",
      metadata: { displayName: "Router", capabilities: { input: ["text"], output: ["text"], tools: true }, limits: { contextUnits: 0, outputUnits: 0 } },
      stream: async function* () {},
    };
    const g = await generation({ "p.mcp": (c) => { c.mcp.register(server); c.models.register(model); } });
    expect(g.mcpServers).toEqual([{ pluginId: "p.mcp", definition: server }]);
    expect(g.models.map((m) => `${m.declaration.providerId}/${m.declaration.modelId}`)).toEqual(["auto/router"]);
    expect(g.plugins[0]!.registrations).toEqual(["mcp:docs", "model:auto/router"]);
    const reused = await load({ "p.mcp": (c) => c.mcp.register(server) }, { reservedMcp: { ids: [], names: ["docs"] } });
    expect(reused.ok ? "activated" : reused.message).toContain("reuses an id or name");
    const badVersion = await load({ "p.mcp": (c) => c.mcp.register({ ...server, protocolVersions: ["2024-11-05"] }) });
    expect(badVersion.ok ? "activated" : badVersion.message).toContain("not supported");
    const native = await load({ "p.model": (c) => c.models.register({ ...model, providerId: "openai" }) }, { nativeProviders: new Set(["openai"]) });
    expect(native.ok ? "activated" : native.message).toContain("names a native provider");
  });
});
