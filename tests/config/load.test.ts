import { join } from "node:path";
import { tmpdir } from "node:os";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  describeConfigError,
  discoverConfigFiles,
  findProjectConfig,
  loadConfig,
  MAX_CONFIG_DEPTH,
  type ConfigError,
  type ConfigResult,
  type LoadedConfig,
} from "../../services/config/index.js";
import { sandbox, type Sandbox } from "./helpers.js";

let box: Sandbox;
beforeEach(() => {
  box = sandbox();
});
afterEach(() => {
  box.dispose();
});

const GLOBAL = "xdg-config/ze-harness/config.json";
/** A project file somewhere above the system temp directory would leak into "no project" cases. */
const ambientProjectFile = findProjectConfig(tmpdir());

function loaded(result: ConfigResult<LoadedConfig>): LoadedConfig {
  if (!result.ok) throw new Error(`expected a loaded config, got ${describeConfigError(result.error)}`);
  return result.value;
}

describe("discovery", () => {
  it("finds nothing in an empty tree and loads an empty config", () => {
    const cwd = box.dir("work");
    // A project file somewhere above the temp directory is legitimately found; nothing else is.
    const expected = ambientProjectFile === undefined ? [] : [{ scope: "project", file: ambientProjectFile }];
    expect(discoverConfigFiles({ cwd, env: box.env })).toEqual(expected);
    if (ambientProjectFile === undefined) expect(loaded(loadConfig({ cwd, env: box.env }))).toEqual({ config: {}, layers: [] });
  });

  it("orders the global config.json before the project file", () => {
    const global = box.write(GLOBAL, { model: "openai/gpt-5-mini" });
    const project = box.write("repo/ze-harness.config.json", { model: "deepseek/deepseek-v4-flash" });
    const cwd = box.dir("repo/src/deep");
    expect(discoverConfigFiles({ cwd, env: box.env })).toEqual([
      { scope: "global", file: global },
      { scope: "project", file: project },
    ]);
    const result = loaded(loadConfig({ cwd, env: box.env }));
    expect(result.config.model).toBe("deepseek/deepseek-v4-flash");
    expect(result.layers.map((layer) => layer.scope)).toEqual(["global", "project"]);
  });

  it("reads the global file from ~/.config/ze-harness when XDG_CONFIG_HOME is relative", () => {
    const global = box.write("home/.config/ze-harness/config.json", { defaultAgent: "writer" });
    const cwd = box.dir("work");
    const env = { HOME: box.home, XDG_CONFIG_HOME: "relative" };
    expect(discoverConfigFiles({ cwd, env })[0]).toEqual({ scope: "global", file: global });
    expect(loaded(loadConfig({ cwd, env })).config.defaultAgent).toBe("writer");
  });

  it("uses the nearest project file walking up from the working directory", () => {
    box.write("repo/ze-harness.config.json", { model: "outer/model" });
    const inner = box.write("repo/packages/app/ze-harness.config.json", { model: "inner/model" });
    const cwd = box.dir("repo/packages/app/src/components");
    expect(findProjectConfig(cwd)).toBe(inner);
    const result = loaded(loadConfig({ cwd, env: box.env }));
    expect(result.config.model).toBe("inner/model");
    expect(result.layers).toHaveLength(1);
    expect(result.layers[0]!.file).toBe(inner);
  });

  it("finds a project file in the working directory itself", () => {
    const here = box.write("repo/ze-harness.config.json", {});
    expect(findProjectConfig(join(box.root, "repo"))).toBe(here);
  });

  it("an explicit --config file replaces the project layer but keeps the global one", () => {
    box.write(GLOBAL, { skills: ["global-skills"], contentFlushMillis: 50 });
    box.write("repo/ze-harness.config.json", { model: "project/model" });
    const explicit = box.write("elsewhere/custom.json", { model: "explicit/model" });
    const cwd = box.dir("repo");
    const result = loaded(loadConfig({ cwd, env: box.env, configFile: "../elsewhere/custom.json" }));
    expect(result.layers.map((layer) => [layer.scope, layer.file])).toEqual([
      ["global", join(box.xdgConfig, "ze-harness", "config.json")],
      ["explicit", explicit],
    ]);
    expect(result.config).toEqual({ skills: ["global-skills"], contentFlushMillis: 50, model: "explicit/model" });
  });

  it("a missing explicit --config file is unreadable, not skipped", () => {
    const cwd = box.dir("repo");
    const result = loadConfig({ cwd, env: box.env, configFile: "missing.json" });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toMatchObject({ _tag: "ConfigUnreadable", file: join(cwd, "missing.json") });
    expect(result.error.message).toMatch(/ENOENT/);
  });
});

describe("layered merge", () => {
  it("merges objects deeply, replaces arrays and lets later scalars win", () => {
    box.write(GLOBAL, {
      model: "openai/gpt-5-mini",
      skills: ["a", "b"],
      providers: { openai: { options: { baseURL: "https://global.example/v1", timeout: 1000 } }, openrouter: true },
      agents: { writer: { description: "Writes", system: "Be brief." } },
      codemode: { enabled: false },
      provider: { maxAttempts: { kind: "finite", value: 3 } },
    });
    box.write("repo/ze-harness.config.json", {
      skills: ["c"],
      providers: { openai: { options: { timeout: 5000 }, enabled: true }, deepseek: {} },
      agents: { writer: { model: "deepseek/deepseek-v4-flash" } },
      provider: { pacing: { kind: "fixed", delayMs: 250 } },
    });
    const result = loaded(loadConfig({ cwd: box.dir("repo"), env: box.env }));
    expect(result.config).toEqual({
      model: "openai/gpt-5-mini",
      skills: ["c"],
      providers: {
        openai: { options: { baseURL: "https://global.example/v1", timeout: 5000 }, enabled: true },
        openrouter: true,
        deepseek: {},
      },
      agents: { writer: { description: "Writes", system: "Be brief.", model: "deepseek/deepseek-v4-flash" } },
      codemode: { enabled: false },
      provider: { maxAttempts: { kind: "finite", value: 3 }, pacing: { kind: "fixed", delayMs: 250 } },
    });
  });

  it("appends permission rules in layer order, top-level and per agent", () => {
    box.write(GLOBAL, {
      permissions: [{ action: "*", resource: "*", effect: "ask" }],
      agents: { build: { permissions: [{ action: "shell", resource: "rm *", effect: "deny" }] } },
    });
    box.write("repo/ze-harness.config.json", {
      permissions: [{ action: "read", resource: "*", effect: "allow" }],
      agents: { build: { permissions: [{ action: "shell", resource: "git *", effect: "allow" }] } },
    });
    const result = loaded(loadConfig({ cwd: box.dir("repo"), env: box.env }));
    expect(result.config.permissions).toEqual([
      { action: "*", resource: "*", effect: "ask" },
      { action: "read", resource: "*", effect: "allow" },
    ]);
    expect(result.config.agents?.["build"]?.permissions).toEqual([
      { action: "shell", resource: "rm *", effect: "deny" },
      { action: "shell", resource: "git *", effect: "allow" },
    ]);
  });

  it("expands ~ and $HOME in read/edit/external_directory resources, never in shell", () => {
    box.write("repo/ze-harness.config.json", {
      permissions: [
        { action: "read", resource: "~/notes/*", effect: "allow" },
        { action: "edit", resource: "$HOME", effect: "deny" },
        { action: "external_directory", resource: "$HOME/src/*", effect: "allow" },
        { action: "shell", resource: "ls ~/x", effect: "allow" },
        { action: "read", resource: "~other/x", effect: "allow" },
      ],
    });
    const result = loaded(loadConfig({ cwd: box.dir("repo"), env: box.env }));
    expect(result.config.permissions?.map((rule) => rule.resource)).toEqual([
      `${box.home}/notes/*`,
      box.home,
      `${box.home}/src/*`,
      "ls ~/x",
      "~other/x",
    ]);
  });

  it("resolves local plugin paths from the declaring file and merges plugins by source", () => {
    box.write(GLOBAL, { plugins: ["./global-plugin.mjs", "shared-pkg", { source: "removed-pkg" }] });
    box.write("repo/ze-harness.config.json", {
      plugins: [
        { source: "shared-pkg", options: { level: 2 } },
        { source: "removed-pkg", enabled: false },
        "../outside/plugin.mjs",
      ],
    });
    const result = loaded(loadConfig({ cwd: box.dir("repo/src"), env: box.env }));
    expect(result.config.plugins).toEqual([
      join(box.xdgConfig, "ze-harness", "global-plugin.mjs"),
      { source: "shared-pkg", options: { level: 2 } },
      join(box.root, "outside", "plugin.mjs"),
    ]);
  });
});

describe("failures", () => {
  it("an invalid file names the file and the JSON pointer, and nothing partial is returned", () => {
    box.write(GLOBAL, { model: "openai/gpt-5-mini" });
    const project = box.write("repo/ze-harness.config.json", {
      model: "deepseek/deepseek-v4-flash",
      providers: { openai: { options: { timeout: 1000 }, timeout: 1000 } },
    });
    const result = loadConfig({ cwd: box.dir("repo"), env: box.env });
    expect(result).toEqual({
      ok: false,
      error: { _tag: "ConfigInvalid", file: project, path: "/providers/openai/timeout", message: 'unknown property "timeout"' },
    });
    expect("value" in result).toBe(false);
  });

  it("validates each file on its own: a bad global file fails even if the project would override it", () => {
    const global = box.write(GLOBAL, { approval: { timeoutMs: { kind: "finite", value: 0 } } });
    box.write("repo/ze-harness.config.json", { approval: { timeoutMs: { kind: "unlimited" } } });
    const result = loadConfig({ cwd: box.dir("repo"), env: box.env });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toEqual({
      _tag: "ConfigInvalid",
      file: global,
      path: "/approval/timeoutMs/value",
      message: "must be >= 1",
    });
    expect(describeConfigError(result.error)).toBe(`${global}: /approval/timeoutMs/value: must be >= 1`);
  });

  it("points into nested option maps", () => {
    const project = box.write("repo/ze-harness.config.json", {
      mcp: [
        {
          kind: "remote",
          id: "docs",
          name: "docs",
          transport: { kind: "streamable-http", endpoint: "https://mcp.example/mcp", headers: { Authorization: { kind: "vault", reference: "x" } } },
        },
      ],
    });
    const result = loadConfig({ cwd: box.dir("repo"), env: box.env });
    expect(result.ok ? undefined : result.error).toEqual({
      _tag: "ConfigInvalid",
      file: project,
      path: "/mcp/0/transport/headers/Authorization/kind",
      message: 'unknown kind "vault": must be one of "environment", "secret", "oauth"',
    });
  });

  it("a file that is not JSON is unreadable", () => {
    const project = box.write("repo/ze-harness.config.json", '{ "model": "openai/gpt-5-mini", }');
    const result = loadConfig({ cwd: box.dir("repo"), env: box.env });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error._tag).toBe("ConfigUnreadable");
    expect(result.error.file).toBe(project);
    expect(result.error.message).toMatch(/^not valid JSON: /);
  });

  it("an empty file is unreadable", () => {
    box.write(GLOBAL, "");
    const result = loadConfig({ cwd: box.dir("repo"), env: box.env });
    expect(result.ok ? undefined : result.error._tag).toBe("ConfigUnreadable");
  });

  it("a directory in place of the project file is unreadable, not skipped", () => {
    const project = box.dir("repo/ze-harness.config.json");
    const result = loadConfig({ cwd: box.dir("repo/src"), env: box.env });
    expect(result.ok ? undefined : result.error).toMatchObject({ _tag: "ConfigUnreadable", file: project });
  });

  it("accepts a UTF-8 byte order mark", () => {
    box.write("repo/ze-harness.config.json", '\uFEFF{ "model": "openai/gpt-5-mini" }');
    expect(loaded(loadConfig({ cwd: box.dir("repo"), env: box.env })).config).toEqual({ model: "openai/gpt-5-mini" });
  });

  describe("a document nested deeper than MAX_CONFIG_DEPTH", () => {
    // 50,000 levels inside free-form maps the schema accepts at any depth: validation and the merge
    // recursed per level and the load died with an unnamed "Maximum call stack size exceeded".
    const nested = (levels: number): string => "[".repeat(levels) + "]".repeat(levels);
    const deepPluginOptions = `{ "plugins": [{ "source": "./p.mjs", "options": { "deep": ${nested(50_000)} } }] }`;
    const deepProviderOptions = `{ "providers": { "openai": { "options": { "deep": { "a": ${nested(50_000)} } } } } }`;

    it("fails the global file as ConfigInvalid naming the file and the first value past the bound", () => {
      const global = box.write(GLOBAL, deepPluginOptions);
      const result = loadConfig({ cwd: box.dir("repo"), env: box.env });
      expect(result.ok ? undefined : result.error).toEqual({
        _tag: "ConfigInvalid",
        file: global,
        // The document is level 1, plugins 2, the entry 3, options 4, the outermost array under deep 5.
        path: `/plugins/0/options/deep${"/0".repeat(MAX_CONFIG_DEPTH - 4)}`,
        message: `nested deeper than ${MAX_CONFIG_DEPTH} levels (objects and arrays)`,
      });
      expect(describeConfigError((result as { error: ConfigError }).error).startsWith(`${global}: /plugins/0/options/deep/0/`)).toBe(true);
    });

    it("fails the project file (and an explicit --config file) the same way", () => {
      box.write(GLOBAL, { model: "openai/gpt-5-mini" });
      const project = box.write("repo/ze-harness.config.json", deepProviderOptions);
      const discovered = loadConfig({ cwd: box.dir("repo/src"), env: box.env });
      expect(discovered.ok ? undefined : discovered.error).toMatchObject({ _tag: "ConfigInvalid", file: project, path: expect.stringMatching(/^\/providers\/openai\/options\/deep\/a(\/0)+$/) });
      const explicit = box.write("elsewhere/custom.json", deepProviderOptions);
      const named = loadConfig({ cwd: box.dir("repo"), env: box.env, configFile: explicit });
      expect(named.ok ? undefined : named.error).toMatchObject({ _tag: "ConfigInvalid", file: explicit });
    });

    it("fails an inline configuration object, cyclic ones included", () => {
      const cyclic: Record<string, unknown> = {};
      cyclic["self"] = cyclic;
      const result = loadConfig({ cwd: box.dir("repo"), env: box.env, inline: { plugins: [{ source: "./p.mjs", options: cyclic }] } });
      expect(result.ok ? undefined : result.error).toMatchObject({ _tag: "ConfigInvalid", file: expect.stringContaining("(inline config)"), path: expect.stringMatching(/^\/plugins\/0\/options(\/self)+$/) });
    });

    it("accepts a document exactly MAX_CONFIG_DEPTH levels deep, and refuses one more", () => {
      const document = (levels: number) => `{ "plugins": [{ "source": "./p.mjs", "options": { "deep": ${nested(levels)} } }] }`;
      box.write("repo/ze-harness.config.json", document(MAX_CONFIG_DEPTH - 4));
      expect(loaded(loadConfig({ cwd: box.dir("repo"), env: box.env })).config.plugins).toHaveLength(1);
      box.write("repo/ze-harness.config.json", document(MAX_CONFIG_DEPTH - 3));
      expect(loadConfig({ cwd: box.dir("repo"), env: box.env })).toMatchObject({ ok: false, error: { _tag: "ConfigInvalid" } });
    });
  });
});
