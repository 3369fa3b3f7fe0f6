// Loading host plugins from config: real modules in temp directories (a `.mjs` path plugin, an
// npm-style package in node_modules, a plain object), layered entries, and every way a plugin can
// fail without taking the others down — or, where the reference says so, the whole activation.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { definePlugin, PluginError } from "../../plugin/index.js";
import { inlineCandidate, LEGACY_CORE_TOOLS_PACKAGE, loadPluginGeneration, unavailableCapabilities, type PluginGeneration } from "../../services/plugins/index.js";
import { contractUrl, doublingPlugin, hostActivation, loadFromLayers, pluginDir, toolContext, type PluginDir } from "./helpers.js";

let dir: PluginDir;
beforeEach(() => {
  dir = pluginDir();
});
afterEach(() => dir.cleanup());

const layer = (file: string, plugins: unknown[]) => ({ file, config: { plugins: plugins as never } });
const ok = (result: Awaited<ReturnType<typeof loadPluginGeneration>>): PluginGeneration => {
  if (!result.ok) throw new Error(`expected the generation to activate: ${result.message}`);
  return result.generation;
};

describe("config entries", () => {
  it("loads a .mjs path plugin relative to the declaring file and runs its tool", async () => {
    dir.write("project/plugins/basic.mjs", `import { definePlugin } from ${JSON.stringify(contractUrl)};\nexport default definePlugin(${doublingPlugin("example.basic").replace("export default", "").replace(/;\s*$/, "")});`);
    const generation = ok(await loadFromLayers([layer(`${dir.dir}/project/ze-harness.config.json`, ["./plugins/basic.mjs"])], dir.dir));
    expect(generation.plugins).toEqual([
      { source: `${dir.dir}/project/plugins/basic.mjs`, generationId: "host-1", pluginId: "example.basic", status: "active", registrations: ["tool:double"] },
    ]);
    const [tool] = generation.tools;
    expect(tool).toMatchObject({ id: "double", pluginId: "example.basic", description: "Double a number" });
    expect(await tool!.permissions({ value: 2 }, toolContext())).toEqual([{ action: "double", resources: ["*"], save: ["*"] }]);
    expect(await tool!.execute({ value: 21 }, toolContext())).toEqual({ result: { format: "json", value: { value: 42, by: "example.basic" } } });
  });

  it("resolves an exact npm package name from the project's node_modules and reports its version", async () => {
    dir.write("node_modules/@acme/ze-shout/package.json", JSON.stringify({ name: "@acme/ze-shout", version: "1.4.2", type: "module", exports: { ".": { types: "./index.d.ts", import: "./dist/index.js" } } }));
    dir.write("node_modules/@acme/ze-shout/dist/index.js", doublingPlugin("acme.shout", "shout"));
    dir.write("project/sub/.keep", "");
    const generation = ok(await loadFromLayers([layer(`${dir.dir}/project/ze-harness.config.json`, ["@acme/ze-shout"])], `${dir.dir}/project/sub`));
    expect(generation.plugins[0]).toEqual({ source: "@acme/ze-shout", generationId: "host-1", pluginId: "acme.shout", packageVersion: "1.4.2", status: "active", registrations: ["tool:shout"] });

    const missing = await loadFromLayers([layer(`${dir.dir}/c.json`, ["not-installed-pkg", "Not A Name"])], dir.dir);
    const plugins = ok(missing).plugins;
    expect(plugins.map((plugin) => [plugin.status, plugin.error])).toEqual([
      ["failed", `Plugin package not-installed-pkg is not installed (searched node_modules from ${dir.dir} upwards).`],
      ["failed", 'Plugin source "Not A Name" is neither a local path (./, ../ or /) nor an exact npm package name.'],
    ]);
  });

  it("accepts a plain object of the plugin's shape, with options as an owned copy", async () => {
    const seen: unknown[] = [];
    const options = { greeting: "hi", nested: { n: 1 } };
    const plain = { id: "plain.object", setup: (context: { options: unknown }) => void seen.push(context.options) };
    const generation = ok(await loadPluginGeneration({ activation: hostActivation(), candidates: [inlineCandidate(plain, { options })], capabilities: unavailableCapabilities() }));
    expect(generation.plugins[0]).toMatchObject({ source: "inline:plain.object", pluginId: "plain.object", status: "active", registrations: [] });
    expect(seen).toEqual([options]);
    expect(seen[0]).not.toBe(options);
    // definePlugin keeps only id and setup, frozen; a bad definition throws a PluginError.
    const defined = definePlugin({ id: "x", setup: () => undefined, extra: 1 } as never);
    expect(Object.keys(defined)).toEqual(["id", "setup"]);
    expect(Object.isFrozen(defined)).toBe(true);
    expect(() => definePlugin({ id: "", setup: () => undefined })).toThrow(PluginError);
  });

  it("merges layers by source: a later layer's enabled: false removes the earlier entry, options replace", async () => {
    const a = dir.write("global/a.mjs", doublingPlugin("plugin.a", "tool_a"));
    dir.write("global/b.mjs", `export default { id: "plugin.b", setup(context) { if (context.options.mark !== "project") throw new Error("wrong options"); } };`);
    const layers = [
      layer(`${dir.dir}/global/config.json`, ["./a.mjs", { source: "./b.mjs", options: { mark: "global" } }]),
      layer(`${dir.dir}/project/ze-harness.config.json`, [{ source: a, enabled: false }, { source: "../global/b.mjs", options: { mark: "project" } }]),
    ];
    const generation = ok(await loadFromLayers(layers, dir.dir));
    expect(generation.plugins.map((plugin) => [plugin.pluginId, plugin.status])).toEqual([["plugin.b", "active"]]);
    expect(generation.tools).toEqual([]);
  });

  it("ignores the legacy core-tools entry, and fails closed when it is given options", async () => {
    dir.write("a.mjs", doublingPlugin("plugin.a"));
    const ignored = ok(await loadFromLayers([layer(`${dir.dir}/c.json`, [LEGACY_CORE_TOOLS_PACKAGE, "./a.mjs"])], dir.dir));
    expect(ignored.plugins.map((plugin) => plugin.source)).toEqual([`${dir.dir}/a.mjs`]);
    const withOptions = await loadFromLayers([layer(`${dir.dir}/c.json`, ["./a.mjs", { source: LEGACY_CORE_TOOLS_PACKAGE, options: { read: false } }])], dir.dir);
    expect(withOptions.ok).toBe(false);
    if (withOptions.ok) return;
    expect(withOptions.plugins[1]).toMatchObject({ source: LEGACY_CORE_TOOLS_PACKAGE, status: "failed", error: expect.stringContaining("takes no options") });
    expect(withOptions.plugins[0]).toMatchObject({ pluginId: "plugin.a", status: "failed", error: expect.stringContaining("Not activated") });
  });
});

describe("failures", () => {
  it("a setup that throws is reported with a safe message; the other plugins stay active", async () => {
    dir.write("boom.mjs", `export default { id: "plugin.boom", setup() { throw new Error("secret /etc/shadow detail"); } };`);
    dir.write("self.mjs", `export default { id: "plugin.self", setup() { throw { _tag: "PluginError", message: "private", publicMessage: "  The API key option is missing.  " }; } };`);
    dir.write("good.mjs", doublingPlugin("plugin.good"));
    const generation = ok(await loadFromLayers([layer(`${dir.dir}/c.json`, ["./boom.mjs", "./self.mjs", "./good.mjs"])], dir.dir));
    expect(generation.plugins.map((plugin) => [plugin.pluginId, plugin.status, plugin.error])).toEqual([
      ["plugin.boom", "failed", "Plugin setup failed."],
      ["plugin.self", "failed", "The API key option is missing."],
      ["plugin.good", "active", undefined],
    ]);
    expect(JSON.stringify(generation.plugins)).not.toContain("shadow");
    expect(generation.tools.map((tool) => tool.id)).toEqual(["double"]);

    // The reference's stricter rule: only a self-described failure skips the plugin.
    const strict = await loadFromLayers([layer(`${dir.dir}/c.json`, ["./self.mjs", "./boom.mjs", "./good.mjs"])], dir.dir, { failClosed: true });
    expect(strict.ok).toBe(false);
    if (!strict.ok) expect(strict.plugins.map((plugin) => plugin.status)).toEqual(["failed", "failed", "failed"]);
  });

  it("a module that does not load, or is not a plugin, is reported without its error text", async () => {
    dir.write("syntax.mjs", "export default {{ not javascript");
    dir.write("none.mjs", "export const x = 1;");
    const generation = ok(await loadFromLayers([layer(`${dir.dir}/c.json`, ["./syntax.mjs", "./none.mjs", "./missing.mjs"])], dir.dir));
    expect(generation.plugins.map((plugin) => plugin.error)).toEqual([
      expect.stringMatching(/^The plugin module could not be loaded \([A-Za-z]+\)\.$/),
      "The module's default export is not a plugin ({ id, setup }).",
      `Plugin file ${dir.dir}/missing.mjs does not exist.`,
    ]);
  });

  it("a setup that hangs past the timeout is reported, and its late cleanup still runs", async () => {
    const cleaned: string[] = [];
    let finish!: () => void;
    let lateCleanup!: () => void;
    const lateCleaned = new Promise<void>((resolve) => (lateCleanup = resolve));
    const hanging = {
      id: "plugin.hang",
      setup: () =>
        new Promise<() => void>((resolve) => {
          finish = () =>
            resolve(() => {
              cleaned.push("hang");
              lateCleanup();
            });
        }),
    };
    const good = { id: "plugin.good", setup: () => () => void cleaned.push("good") };
    const generation = ok(
      await loadPluginGeneration({ activation: hostActivation(), candidates: [inlineCandidate(hanging), inlineCandidate(good)], capabilities: unavailableCapabilities(), setupTimeoutMs: 50 }),
    );
    expect(generation.plugins.map((plugin) => [plugin.pluginId, plugin.status, plugin.error])).toEqual([
      ["plugin.hang", "failed", "Plugin setup did not finish within 50 ms."],
      ["plugin.good", "active", undefined],
    ]);
    expect(cleaned).toEqual([]);
    // The setup settles after its deadline: the cleanup it returns runs at once (a rollback).
    finish();
    await lateCleaned;
    expect(cleaned).toEqual(["hang"]);
    await generation.close();
    expect(cleaned).toEqual(["hang", "good"]);
  });

  it("an unknown hook name fails the activation after setup; every cleanup runs", async () => {
    const cleaned: string[] = [];
    const first = { id: "plugin.first", setup: () => () => void cleaned.push("first") };
    const bad = { id: "plugin.hooks", setup: (context: { hooks: { register(name: string, fn: unknown): void } }) => { context.hooks.register("tool.before", async () => undefined); return () => void cleaned.push("hooks"); } };
    const result = await loadPluginGeneration({ activation: hostActivation(), candidates: [inlineCandidate(first), inlineCandidate(bad)], capabilities: unavailableCapabilities() });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.message).toContain('Unknown hook "tool.before"');
    expect(result.plugins[1]).toMatchObject({ pluginId: "plugin.hooks", status: "failed", error: expect.stringContaining("Unknown hook") });
    expect(cleaned.sort()).toEqual(["first", "hooks"]);
  });

  it("duplicate and reserved tool ids fail the later plugin; built-in ids are taken", async () => {
    dir.write("one.mjs", doublingPlugin("plugin.one"));
    dir.write("two.mjs", doublingPlugin("plugin.two"));
    dir.write("task.mjs", doublingPlugin("plugin.task", "task"));
    dir.write("read.mjs", doublingPlugin("plugin.read", "read"));
    dir.write("twice.mjs", doublingPlugin("plugin.twice", "same", `context.tools.register({ id: "same", description: "again", inputSchema: { type: "object" }, execute: async () => 1 });`));
    dir.write("pattern.mjs", `export default { id: "plugin.pattern", setup(c) { c.tools.register({ id: "p", description: "d", inputSchema: { type: "object", properties: { s: { type: "string", pattern: "x" } } }, execute: async () => 1 }); } };`);
    const generation = ok(
      await loadFromLayers([layer(`${dir.dir}/c.json`, ["./one.mjs", "./two.mjs", "./task.mjs", "./read.mjs", "./twice.mjs", "./pattern.mjs"])], dir.dir, { reservedToolIds: ["read", "write"] }),
    );
    expect(generation.plugins.map((plugin) => [plugin.pluginId, plugin.status, plugin.error])).toEqual([
      ["plugin.one", "active", undefined],
      ["plugin.two", "failed", 'Tool rejected: a tool named "double" is already registered.'],
      ["plugin.task", "failed", 'Tool rejected: "task" is reserved by Core.'],
      ["plugin.read", "failed", 'Tool rejected: a tool named "read" is already registered.'],
      ["plugin.twice", "failed", 'Tool rejected: "same" is registered twice.'],
      ["plugin.pattern", "failed", expect.stringContaining("/properties/s/pattern")],
    ]);
    expect(generation.tools.map((tool) => `${tool.pluginId}:${tool.id}`)).toEqual(["plugin.one:double"]);
  });

  it("two plugins with one id, or one Agent id, fail the activation", async () => {
    const agent = (pluginId: string) => ({
      id: pluginId,
      setup: (c: { agents: { register(a: unknown): void } }) => c.agents.register({ id: "review", displayName: "Review", description: "Reviews", instructions: [{ role: "system", text: "Review." }] }),
    });
    const sameAgent = await loadPluginGeneration({ activation: hostActivation(), candidates: [inlineCandidate(agent("p.one")), inlineCandidate(agent("p.two"))], capabilities: unavailableCapabilities() });
    expect(sameAgent.ok ? "activated" : sameAgent.message).toContain('Agent "review" is already declared');
    const sameId = await loadPluginGeneration({ activation: hostActivation(), candidates: [inlineCandidate(agent("p.one")), inlineCandidate({ id: "p.one", setup: () => undefined })], capabilities: unavailableCapabilities() });
    expect(sameId.ok ? "activated" : sameId.message).toContain('Plugin id "p.one" is used by another plugin');
  });
});
