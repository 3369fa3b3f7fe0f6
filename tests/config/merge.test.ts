import { describe, expect, it } from "vitest";
import { expandHome, mergeConfigs, normalizeConfig, type Config } from "../../services/config/index.js";

describe("mergeConfigs", () => {
  it("returns {} for no layers", () => {
    expect(mergeConfigs([])).toEqual({});
  });

  it("does not modify its inputs and shares nothing with them", () => {
    const global: Config = { providers: { openai: { options: { timeout: 1 } } }, permissions: [{ action: "*", resource: "*", effect: "ask" }] };
    const project: Config = { providers: { openai: { options: { baseURL: "http://x" } } }, permissions: [{ action: "read", resource: "*", effect: "allow" }] };
    const before = structuredClone([global, project]);
    const merged = mergeConfigs([global, project]);
    expect([global, project]).toEqual(before);
    expect(merged.providers?.["openai"]).toEqual({ options: { timeout: 1, baseURL: "http://x" } });
    expect(merged.permissions).not.toBe(global.permissions);
    expect(merged.permissions?.[0]).not.toBe(global.permissions?.[0]);
  });

  it("a scalar replaces an object and an object replaces a scalar", () => {
    expect(mergeConfigs([{ providers: { openai: { enabled: false } } }, { providers: { openai: true } }]).providers).toEqual({ openai: true });
    expect(mergeConfigs([{ providers: { openai: true } }, { providers: { openai: { via: "tap" } } }]).providers).toEqual({ openai: { via: "tap" } });
  });

  it("replaces arrays other than permissions and plugins", () => {
    const a: Config = { skills: ["a"], mcp: [{ kind: "local", id: "a", name: "a", transport: { kind: "stdio", command: "a" } }] };
    const b: Config = { skills: [], mcp: [{ kind: "local", id: "b", name: "b", transport: { kind: "stdio", command: "b" } }] };
    const merged = mergeConfigs([a, b]);
    expect(merged.skills).toEqual([]);
    expect(merged.mcp?.map((server) => server.id)).toEqual(["b"]);
  });

  it("keeps permissions of a layer that declares none", () => {
    const rules = [{ action: "read", resource: "*", effect: "allow" }] as const;
    expect(mergeConfigs([{ permissions: rules }, { model: "a/b" }]).permissions).toEqual(rules);
    expect(mergeConfigs([{ model: "a/b" }, { permissions: rules }]).permissions).toEqual(rules);
  });

  it("merges agents by ID: specified fields replace, omitted fields remain, permission rules append", () => {
    const merged = mergeConfigs([
      { agents: { build: { system: "A", disabled: true, permissions: [{ action: "edit", resource: "*", effect: "ask" }] } } },
      { agents: { build: { disabled: false, permissions: [{ action: "edit", resource: "src/*", effect: "allow" }] }, plan: { mode: "primary" } } },
    ]);
    expect(merged.agents).toEqual({
      build: {
        system: "A",
        disabled: false,
        permissions: [
          { action: "edit", resource: "*", effect: "ask" },
          { action: "edit", resource: "src/*", effect: "allow" },
        ],
      },
      plan: { mode: "primary" },
    });
  });

  it("merges plugins by source: replace in place, append new, enabled:false removes", () => {
    const merged = mergeConfigs([
      { plugins: ["one", { source: "two", options: { v: 1 } }, "three"] },
      { plugins: [{ source: "two", options: { v: 2 } }, { source: "one", enabled: false }, "four", { source: "never-declared", enabled: false }] },
    ]);
    expect(merged.plugins).toEqual([{ source: "two", options: { v: 2 } }, "three", "four"]);
  });

  it("a later layer can restore a plugin an earlier layer removed", () => {
    expect(mergeConfigs([{ plugins: [{ source: "x", enabled: false }] }, { plugins: ["x"] }]).plugins).toEqual(["x"]);
  });
});

describe("normalizeConfig", () => {
  it("resolves ./ and ../ plugin sources from the declaring file; keeps package names and absolute paths", () => {
    const config = normalizeConfig(
      { plugins: ["./a.mjs", "../b.mjs", "/abs/c.mjs", "pkg", "@scope/pkg", { source: "./d.mjs", options: { k: 1 } }] },
      { file: "/work/repo/ze-harness.config.json", home: "/home/u" },
    );
    expect(config.plugins).toEqual(["/work/repo/a.mjs", "/work/b.mjs", "/abs/c.mjs", "pkg", "@scope/pkg", { source: "/work/repo/d.mjs", options: { k: 1 } }]);
  });

  it("expandHome handles exactly ~, ~/, $HOME and $HOME/", () => {
    expect(expandHome("~", "/home/u")).toBe("/home/u");
    expect(expandHome("~/x/*", "/home/u/")).toBe("/home/u/x/*");
    expect(expandHome("$HOME", "/home/u")).toBe("/home/u");
    expect(expandHome("$HOME/.env", "/home/u")).toBe("/home/u/.env");
    expect(expandHome("$HOMEDIR/x", "/home/u")).toBe("$HOMEDIR/x");
    expect(expandHome("src/~/x", "/home/u")).toBe("src/~/x");
  });
});
