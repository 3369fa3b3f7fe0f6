// The agent catalog against real temporary directories: config files loaded by services/config,
// Markdown agents under $XDG_DATA_HOME/ze-harness/agents, symlinks, and the default rules.
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadConfig, type ConfigLayer } from "../../services/config/index.js";
import { evaluatePermission, isToolHidden } from "../../services/core/permissions/index.js";
import { MAX_AGENT_SCAN_DIRECTORIES } from "../../services/workspace/agent-files.js";
import {
  agentsDirectory,
  describeAgentCatalogError,
  isAgentId,
  loadAgentCatalog,
  type AgentCatalog,
  type AgentCatalogError,
  type AgentConfigLayer,
  type AgentDefinition,
  type LoadAgentCatalogOptions,
} from "../../services/workspace/agents.js";

let root: string;
let env: Record<string, string>;
let agentsDir: string;
let project: string;

beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "ze-agents-test-")));
  env = { HOME: join(root, "home"), XDG_CONFIG_HOME: join(root, "config"), XDG_DATA_HOME: join(root, "data") };
  agentsDir = join(root, "data", "ze-harness", "agents");
  project = join(root, "project");
  mkdirSync(env["HOME"]!, { recursive: true });
  mkdirSync(project, { recursive: true });
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function write(file: string, content: string): string {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, content);
  return file;
}
const md = (relative: string, content: string): string => write(join(agentsDir, relative), content);
const globalJson = (config: unknown): string => write(join(root, "config", "ze-harness", "config.json"), JSON.stringify(config));
const projectJson = (config: unknown): string => write(join(project, "ze-harness.config.json"), JSON.stringify(config));

/** The real layers services/config produces for the files written so far. */
function layers(): readonly ConfigLayer[] {
  const loaded = loadConfig({ cwd: project, env });
  if (!loaded.ok) throw new Error(`config failed: ${JSON.stringify(loaded.error)}`);
  return loaded.value.layers;
}

function catalog(extra: Partial<LoadAgentCatalogOptions> = {}): AgentCatalog {
  const result = loadAgentCatalog({ configLayers: layers(), env, ...extra });
  if (!result.ok) throw new Error(describeAgentCatalogError(result.error));
  return result.value;
}
function failure(extra: Partial<LoadAgentCatalogOptions> = {}): AgentCatalogError {
  const result = loadAgentCatalog({ configLayers: layers(), env, ...extra });
  if (result.ok) throw new Error(`expected a failure; agents: ${result.value.list().map((a) => a.id).join(", ")}`);
  return result.error;
}
const ids = (c: AgentCatalog): string[] => c.list().map((agent) => agent.id);
const agent = (c: AgentCatalog, id: string): AgentDefinition => {
  const found = c.get(id);
  if (found === undefined) throw new Error(`no agent ${id}; have ${ids(c).join(", ")}`);
  return found;
};
const layer = (file: string, config: AgentConfigLayer["config"], scope: AgentConfigLayer["scope"] = "project"): AgentConfigLayer => ({ file, scope, config });
const rule = (action: string, resource: string, effect: "allow" | "ask" | "deny") => ({ action, resource, effect });

describe("built-in agents", () => {
  it("ships build, plan, general and explore with build as the default", () => {
    const c = catalog();
    expect(ids(c)).toEqual(["build", "explore", "general", "plan"]);
    expect(c.defaultAgent).toBe("build");
    expect(c.list().map((a) => [a.id, a.mode, a.origin])).toEqual([
      ["build", "primary", "builtin"],
      ["explore", "subagent", "builtin"],
      ["general", "subagent", "builtin"],
      ["plan", "primary", "builtin"],
    ]);
    expect(agent(c, "build")).toMatchObject({ fallbackDefault: true, tools: { mode: "all" }, permissions: [] });
    expect(agent(c, "general")).toMatchObject({ tools: { mode: "all" }, permissions: [] });
    for (const a of c.list()) {
      expect(a.description.length).toBeGreaterThan(20);
      expect(a.system.length).toBeGreaterThan(20);
    }
  });

  it("offers plan and explore no write or edit tool, and plan no delegation to general", () => {
    const c = catalog();
    expect(agent(c, "plan").tools).toEqual({ mode: "include", names: ["read", "shell", "webfetch", "question", "pause"], optionalNames: ["task", "skill"] });
    expect(agent(c, "explore").tools).toEqual({ mode: "include", names: ["read", "shell", "webfetch"] });
    const plan = { agent: agent(c, "plan").permissions };
    expect(evaluatePermission({ action: "task", resource: "general" }, plan).effect).toBe("deny");
    expect(evaluatePermission({ action: "task", resource: "explore" }, plan).effect).toBe("allow");
  });

  it("plan denies edits, allows read-only commands and asks for the rest", () => {
    const layers = { agent: agent(catalog(), "plan").permissions };
    const effect = (action: string, resource: string) => evaluatePermission({ action, resource }, layers).effect;
    expect(effect("edit", "src/index.ts")).toBe("deny");
    expect(effect("read", "src/index.ts")).toBe("allow");
    expect(effect("webfetch", "https://example.com/")).toBe("allow");
    for (const command of ["ls", "ls -la src", "git status", "git diff HEAD~1", "rg TODO", "find . -name '*.ts'", "git branch"]) {
      expect(effect("shell", command), command).toBe("allow");
    }
    for (const command of ["rm -rf build", "lsof", "npm test", "git commit -m x", "git branch new", "find . -delete", "find -exec rm {} ;", "sort -o out.txt in.txt", "git diff --output=x", "ls src; rm x", "ls && rm x", "grep x a | sh", "ls > out", "ls $(rm x)", "ls `rm x`", "ls src\nrm x"]) {
      expect(effect("shell", command), command).toBe("ask");
    }
    expect(isToolHidden("shell", layers)).toBe(false);
    expect(isToolHidden("edit", layers)).toBe(true);
  });

  it("explore is read-only: read-only commands run, everything else is denied", () => {
    const layers = { agent: agent(catalog(), "explore").permissions };
    const effect = (action: string, resource: string) => evaluatePermission({ action, resource }, layers).effect;
    expect(effect("edit", "a.txt")).toBe("deny");
    expect(effect("shell", "grep -rn useState src")).toBe("allow");
    expect(effect("shell", "git log --oneline")).toBe("allow");
    for (const command of ["rm a.txt", "touch a", "ls | xargs rm", "find . -delete", "tree -o out.txt"]) {
      expect(effect("shell", command), command).toBe("deny");
    }
    expect(isToolHidden("shell", layers)).toBe(false);
  });

  it("applies the mode rules for primary and spawnable agents", () => {
    const c = catalog();
    expect(c.primary("build")?.id).toBe("build");
    expect(c.primary("explore")).toBeUndefined();
    expect(c.spawnable("explore")?.id).toBe("explore");
    expect(c.spawnable("plan")).toBeUndefined();
    expect(c.subagents().map((a) => a.id)).toEqual(["explore", "general"]);
    expect(c.get("nope")).toBeUndefined();
  });

  it("returns frozen definitions", () => {
    const build = agent(catalog(), "build");
    expect(Object.isFrozen(build)).toBe(true);
    expect(Object.isFrozen(build.permissions)).toBe(true);
    expect(() => (build.permissions as unknown as unknown[]).push(rule("*", "*", "allow"))).toThrow(TypeError);
  });

  it("answers the SessionAgentsResponse shape", () => {
    projectJson({ agents: { writer: { system: "Write.", model: "openai/gpt-5-mini", mode: "all" } } });
    expect(catalog().toSessionAgentsResponse()).toEqual({
      defaultAgent: "build",
      agents: [
        { id: "build", displayName: "Build", description: expect.any(String), mode: "primary", origin: "host" },
        { id: "explore", displayName: "Explore", description: expect.any(String), mode: "subagent", origin: "host" },
        { id: "general", displayName: "General", description: expect.any(String), mode: "subagent", origin: "host" },
        { id: "plan", displayName: "Plan", description: expect.any(String), mode: "primary", origin: "host" },
        { id: "writer", displayName: "writer", description: 'Custom agent "writer".', model: "openai/gpt-5-mini", mode: "all", origin: "host" },
      ],
    });
  });
});

describe("agentsDirectory", () => {
  it("uses an absolute XDG_DATA_HOME, else ~/.local/share", () => {
    expect(agentsDirectory({ HOME: "/h", XDG_DATA_HOME: "/d" })).toBe("/d/ze-harness/agents");
    expect(agentsDirectory({ HOME: "/h", XDG_DATA_HOME: "relative" })).toBe("/h/.local/share/ze-harness/agents");
    expect(agentsDirectory({ HOME: "/h" })).toBe("/h/.local/share/ze-harness/agents");
  });
});

describe("JSON agents", () => {
  it("patches a built-in: given fields replace, omitted stay, permissions append in layer order", () => {
    globalJson({ agents: { build: { description: "Global build", permissions: [rule("shell", "git push *", "ask")] } } });
    projectJson({ agents: { build: { model: "openai/gpt-5", permissions: [rule("shell", "rm *", "deny")] } } });
    const build = agent(catalog(), "build");
    expect(build).toMatchObject({ displayName: "Build", description: "Global build", model: "openai/gpt-5", origin: "builtin", fallbackDefault: true });
    expect(build.system).toContain("build agent");
    expect(build.permissions).toEqual([rule("shell", "git push *", "ask"), rule("shell", "rm *", "deny")]);
    // Appended after plan's own rules, so they win for what they match.
    projectJson({ agents: { plan: { permissions: [rule("shell", "npm test", "allow")] } } });
    const plan = agent(catalog(), "plan");
    expect(plan.permissions.at(-1)).toEqual(rule("shell", "npm test", "allow"));
    expect(evaluatePermission({ action: "shell", resource: "npm test" }, { agent: plan.permissions }).effect).toBe("allow");
  });

  it("an empty system removes inherited instructions", () => {
    projectJson({ agents: { build: { system: "" } } });
    expect(agent(catalog(), "build").system).toBe("");
  });

  it("defines a new agent with the documented defaults", () => {
    const file = projectJson({ agents: { writer: { system: "Write clear docs." } } });
    const writer = agent(catalog(), "writer");
    expect(writer).toEqual({
      id: "writer",
      displayName: "writer",
      description: 'Custom agent "writer".',
      system: "Write clear docs.",
      mode: "primary",
      permissions: [],
      tools: { mode: "all" },
      origin: "config",
    });
    expect(file).toContain("ze-harness.config.json");
  });

  it("requires instructions for a new agent, naming the file and pointer", () => {
    const file = projectJson({ agents: { writer: { description: "Writes", system: "   " } } });
    expect(failure()).toMatchObject({ _tag: "AgentConfigInvalid", file, pointer: "/agents/writer/system", agent: "writer" });
  });

  it("rejects OpenCode options: the schema for files, this module for hand-built layers", () => {
    const file = projectJson({ agents: { build: { color: "#ff0000" } } });
    const loaded = loadConfig({ cwd: project, env });
    expect(loaded.ok ? undefined : loaded.error).toMatchObject({ _tag: "ConfigInvalid", file, path: "/agents/build/color" });
    for (const key of ["hidden", "steps", "temperature", "top_p", "tools", "prompt"]) {
      const result = loadAgentCatalog({ configLayers: [layer("/etc/x.json", { agents: { build: { [key]: 1 } } })], env });
      expect(result.ok ? undefined : result.error, key).toMatchObject({ _tag: "AgentConfigInvalid", file: "/etc/x.json", pointer: `/agents/build/${key}` });
      expect(result.ok ? "" : result.error.message).toContain(key);
    }
  });

  it("rejects malformed values in unvalidated layers", () => {
    const bad = (agents: Record<string, unknown>) => {
      const result = loadAgentCatalog({ configLayers: [], env, programmatic: { agents } });
      return result.ok ? undefined : result.error;
    };
    expect(bad({ x: "not an object" })).toMatchObject({ file: "<programmatic configuration>", pointer: "/agents/x" });
    expect(bad({ build: { mode: "sometimes" } })).toMatchObject({ pointer: "/agents/build/mode" });
    expect(bad({ build: { model: "no-slash" } })).toMatchObject({ pointer: "/agents/build/model" });
    expect(bad({ build: { permissions: [{ action: "read", resource: "*", effect: "maybe" }] } })).toMatchObject({ pointer: "/agents/build/permissions" });
    expect(bad({ build: { displayName: "  " } })).toMatchObject({ pointer: "/agents/build/displayName" });
    expect(bad({ build: { disabled: "yes" } })).toMatchObject({ pointer: "/agents/build/disabled" });
  });

  it("rejects an ID the schema lets through but the reference does not", () => {
    const file = projectJson({ agents: { "9lives": { system: "Meow." } } });
    expect(failure()).toMatchObject({ _tag: "AgentConfigInvalid", file, pointer: "/agents/9lives", agent: "9lives" });
    const nested = loadAgentCatalog({ configLayers: [layer("/p.json", { agents: { "team/x--y": { system: "S" } } })], env });
    expect(nested.ok ? undefined : nested.error).toMatchObject({ pointer: "/agents/team~1x--y" });
  });
});

describe("agent IDs", () => {
  it.each(["review", "team/review-docs", "a.b_c-d", "a1", "a/b/c", `a${"b".repeat(127)}`])("accepts %s", (id) => {
    expect(isAgentId(id)).toBe(true);
  });
  it.each(["", "Review", "9a", "a--b", "a._b", "a-", "-a", "a/", "/a", "a//b", "a/9b", "a b", "a.md/", `a${"b".repeat(128)}`])("rejects %j", (id) => {
    expect(isAgentId(id)).toBe(false);
  });
});

describe("Markdown agents", () => {
  it("loads nested IDs; a non-empty body replaces frontmatter system, an empty one leaves it", () => {
    md("team/reviewer.md", "---\ndescription: Reviews changes\nmode: subagent\nsystem: From frontmatter\n---\n\n  Review the changes.  \n");
    md("keeper.md", "---\nsystem: Kept instructions\n---\n\n\n");
    md("plan.md", "---\ndescription: Our plan mode\n---\n");
    const c = catalog();
    expect(agent(c, "team/reviewer")).toMatchObject({ mode: "subagent", description: "Reviews changes", system: "Review the changes.", origin: "markdown", displayName: "team/reviewer" });
    expect(agent(c, "keeper").system).toBe("Kept instructions");
    // A patch of a registered agent needs no instructions.
    expect(agent(c, "plan")).toMatchObject({ description: "Our plan mode", origin: "builtin" });
    expect(agent(c, "plan").system).toContain("plan mode");
    expect(c.skipped).toEqual([]);
  });

  it("reads CRLF files and expands ~ in file rules but not in shell rules", () => {
    md("crlf.md", "---\r\nmode: all\r\npermissions:\r\n  - { action: read, resource: ~/notes/*, effect: allow }\r\n  - { action: shell, resource: ~/bin/x, effect: deny }\r\n---\r\nBody\r\n");
    const crlf = agent(catalog(), "crlf");
    expect(crlf.system).toBe("Body");
    expect(crlf.permissions).toEqual([rule("read", `${env["HOME"]}/notes/*`, "allow"), rule("shell", "~/bin/x", "deny")]);
  });

  it("follows symlinked files and directories, skipping broken links and cycles", () => {
    const outside = write(join(root, "elsewhere", "linked.md"), "---\nmode: all\n---\nLinked agent.\n");
    md("real/inner.md", "---\n---\nInner agent.\n");
    mkdirSync(agentsDir, { recursive: true });
    symlinkSync(outside, join(agentsDir, "linked.md"));
    symlinkSync(join(agentsDir, "real"), join(agentsDir, "alias"));
    symlinkSync(join(root, "missing.md"), join(agentsDir, "broken.md"));
    symlinkSync(agentsDir, join(agentsDir, "real", "loop"));
    symlinkSync(join(agentsDir, "real"), join(agentsDir, "real", "self"));
    const c = catalog();
    expect(ids(c).filter((id) => !["build", "explore", "general", "plan"].includes(id))).toEqual(["alias/inner", "linked", "real/inner"]);
    expect(agent(c, "linked")).toMatchObject({ mode: "all", system: "Linked agent." });
  });

  it("stops a link-multiplied scan at MAX_AGENT_SCAN_DIRECTORIES and says so", () => {
    // Each level links twice to the next: 2^14 paths through 15 real directories, no cycle.
    const level = (n: number) => join(root, "levels", `l${n}`);
    for (let n = 0; n <= 14; n++) mkdirSync(level(n), { recursive: true });
    for (let n = 0; n < 14; n++) for (const name of ["a", "b"]) symlinkSync(level(n + 1), join(level(n), name));
    write(join(level(1), "top.md"), "---\n---\nTop.\n");
    mkdirSync(dirname(agentsDir), { recursive: true });
    symlinkSync(level(0), agentsDir);
    const c = catalog();
    expect(agent(c, "a/top").system).toBe("Top.");
    expect(c.skipped.filter((s) => s.reason === "scan-limit")).toHaveLength(1);
    expect(MAX_AGENT_SCAN_DIRECTORIES).toBe(10_000);
  });

  it("follows a symlinked agents directory", () => {
    write(join(root, "shared", "agents", "shared.md"), "---\n---\nShared.\n");
    mkdirSync(dirname(agentsDir), { recursive: true });
    symlinkSync(join(root, "shared", "agents"), agentsDir);
    expect(agent(catalog(), "shared").system).toBe("Shared.");
  });

  it("ignores and skips files that cannot become agents, keeping the rest", () => {
    md("good.md", "---\nmode: primary\n---\nGood.\n");
    md("notes.md", "# Just notes\n\nNo frontmatter here.\n");
    md("Bad-Name.md", "---\n---\nBad.\n");
    md("9lives.md", "---\n---\nBad.\n");
    md("readme.txt", "---\n---\nNot markdown.\n");
    md("unclosed.md", "---\nmode: primary\nBody without a closing delimiter.\n");
    md("yaml.md", "---\nmode: [primary\n---\nBody.\n");
    md("duplicate.md", "---\nmode: primary\nmode: all\n---\nBody.\n");
    md("list.md", "---\n- a\n- b\n---\nBody.\n");
    md("badmode.md", "---\nmode: sometimes\n---\nBody.\n");
    md("nobody.md", "---\ndescription: A new agent without instructions\n---\n");
    let bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
    for (let i = 1; i < 6; i++) bomb += `a${i}: &a${i} [${Array(10).fill(`*a${i - 1}`).join(", ")}]\n`;
    md("bomb.md", `---\n${bomb}---\nBody.\n`);
    const c = catalog();
    expect(ids(c)).toEqual(["build", "explore", "general", "good", "plan"]);
    const reasons = Object.fromEntries(c.skipped.map((s) => [s.file.slice(agentsDir.length + 1), s.reason]));
    expect(reasons).toEqual({
      "9lives.md": "invalid-id",
      "Bad-Name.md": "invalid-id",
      "badmode.md": "malformed-options",
      "bomb.md": "invalid-frontmatter",
      "duplicate.md": "invalid-frontmatter",
      "list.md": "invalid-frontmatter",
      "nobody.md": "missing-instructions",
      "notes.md": "no-frontmatter",
      "unclosed.md": "invalid-frontmatter",
      "yaml.md": "invalid-frontmatter",
    });
  });

  it.skipIf(!existsSync("/proc/self/mem"))("skips an unreadable file", () => {
    md("good.md", "---\n---\nGood.\n");
    mkdirSync(agentsDir, { recursive: true });
    // A regular file by stat that fails to read (EIO), even for root.
    symlinkSync("/proc/self/mem", join(agentsDir, "mem.md"));
    const c = catalog();
    expect(c.get("good")).toBeDefined();
    expect(c.skipped).toEqual([{ file: join(agentsDir, "mem.md"), reason: "unreadable", message: expect.any(String) }]);
  });

  it.each([
    ["color", 'color: "#ff0000"'],
    ["hidden", "hidden: true"],
    ["steps", "steps: 5"],
    ["temperature", "temperature: 0.2"],
    ["top_p", "top_p: 0.9"],
    ["tools", "tools:\n  write: false"],
    ["permission", "permission:\n  edit: deny"],
  ])("rejects the unsupported option %s, naming the file and key", (key, line) => {
    const file = md("team/reviewer.md", `---\ndescription: Reviews\n${line}\n---\nReview.\n`);
    const error = failure();
    expect(error).toMatchObject({ _tag: "AgentConfigInvalid", file, pointer: `/${key}`, agent: "team/reviewer" });
    expect(describeAgentCatalogError(error)).toBe(`${file}: /${key}: ${error.message}`);
    expect(error.message).toContain(JSON.stringify(key));
  });
});

describe("precedence", () => {
  it("built-in → global JSON → global Markdown → project JSON → programmatic", () => {
    globalJson({ agents: { build: { description: "global", model: "openai/gpt-5", system: "global system", permissions: [rule("read", "g", "deny")] } } });
    md("build.md", "---\ndescription: markdown\npermissions:\n  - { action: read, resource: m, effect: deny }\n---\nmarkdown system\n");
    projectJson({ agents: { build: { description: "project", permissions: [rule("read", "p", "deny")] } } });
    let build = agent(catalog(), "build");
    expect(build).toMatchObject({ description: "project", model: "openai/gpt-5", system: "markdown system" });
    expect(build.permissions.map((r) => r.resource)).toEqual(["g", "m", "p"]);
    build = agent(catalog({ programmatic: { agents: { build: { description: "code", permissions: [rule("read", "c", "deny")] } } } }), "build");
    expect(build.description).toBe("code");
    expect(build.permissions.map((r) => r.resource)).toEqual(["g", "m", "p", "c"]);
  });

  it("places Markdown after every global layer and before the others, whatever order they come in", () => {
    md("build.md", "---\ndescription: markdown\n---\n");
    const g = layer("/g.json", { agents: { build: { description: "global" } } }, "global");
    const p = layer("/p.json", { agents: { build: { displayName: "Project build" } } }, "explicit");
    const result = loadAgentCatalog({ configLayers: [p, g], env });
    expect(result.ok && agent(result.value, "build")).toMatchObject({ description: "markdown", displayName: "Project build" });
  });
});

describe("disabling", () => {
  it("hides an agent and a later disabled: false restores its earlier patches", () => {
    globalJson({ agents: { plan: { description: "Patched plan", disabled: true } } });
    let c = catalog();
    expect(c.get("plan")).toBeUndefined();
    expect(c.primary("plan")).toBeUndefined();
    expect(ids(c)).not.toContain("plan");
    projectJson({ agents: { plan: { disabled: false } } });
    c = catalog();
    expect(agent(c, "plan").description).toBe("Patched plan");
  });

  it("Markdown can disable an agent too", () => {
    md("explore.md", "---\ndisabled: true\n---\n");
    const c = catalog();
    expect(c.spawnable("explore")).toBeUndefined();
    expect(c.subagents().map((a) => a.id)).toEqual(["general"]);
  });

  it("disabling or re-enabling an absent agent is a no-op", () => {
    globalJson({ agents: { ghost: { disabled: true, description: "never defined" }, phantom: { disabled: false } } });
    expect(ids(catalog())).toEqual(["build", "explore", "general", "plan"]);
    projectJson({ agents: { ghost: { system: "Now defined." } } });
    expect(agent(catalog(), "ghost")).toMatchObject({ description: 'Custom agent "ghost".', mode: "primary" });
  });
});

describe("default agent", () => {
  it("uses a configured primary-capable agent; the last layer that sets it wins", () => {
    globalJson({ defaultAgent: "plan" });
    expect(catalog().defaultAgent).toBe("plan");
    projectJson({ defaultAgent: "writer", agents: { writer: { system: "Write.", mode: "all" } } });
    expect(catalog().defaultAgent).toBe("writer");
  });

  it("fails when the configured default is missing, naming the agent and the file", () => {
    const file = projectJson({ defaultAgent: "writer" });
    const error = failure();
    expect(error).toMatchObject({ _tag: "AgentDefaultInvalid", file, pointer: "/defaultAgent", agent: "writer", reason: "missing" });
    expect(describeAgentCatalogError(error)).toContain(`${file}: /defaultAgent:`);
    expect(error.message).toContain('"writer"');
  });

  it("fails when the configured default is subagent-only", () => {
    const file = projectJson({ defaultAgent: "explore" });
    expect(failure()).toMatchObject({ _tag: "AgentDefaultInvalid", file, agent: "explore", reason: "subagent" });
    projectJson({ defaultAgent: "build", agents: { build: { mode: "subagent" } } });
    expect(failure()).toMatchObject({ agent: "build", reason: "subagent" });
  });

  it("fails when a later layer disables the configured default without selecting another", () => {
    const global = globalJson({ defaultAgent: "plan" });
    const projectFile = projectJson({ agents: { plan: { disabled: true } } });
    expect(failure()).toMatchObject({ _tag: "AgentDefaultInvalid", file: global, agent: "plan", reason: "disabled", disabledIn: projectFile });
    md("plan.md", "---\ndisabled: true\n---\n");
    projectJson({ defaultAgent: "build" });
    expect(catalog().defaultAgent).toBe("build");
  });

  it("without a configured default prefers the fallback agent, then the first primary-capable ID", () => {
    projectJson({ agents: { aardvark: { system: "A." }, build: { disabled: true } } });
    expect(catalog().defaultAgent).toBe("aardvark");
    projectJson({ agents: { aardvark: { system: "A.", mode: "subagent" }, build: { mode: "subagent" } } });
    expect(catalog().defaultAgent).toBe("plan");
    projectJson({ agents: { aardvark: { system: "A." } } });
    expect(catalog().defaultAgent).toBe("build");
  });

  it("has no default when no enabled agent is primary-capable", () => {
    projectJson({ agents: { build: { disabled: true }, plan: { mode: "subagent" } } });
    const c = catalog();
    expect(c.defaultAgent).toBeUndefined();
    expect(c.toSessionAgentsResponse()).not.toHaveProperty("defaultAgent");
  });
});
