import { describe, expect, it } from "vitest";
import type { PermissionEffect, PermissionRule } from "../../generated/client/types.gen.js";
import {
  ZE_DEFAULT_RULES,
  combineEffects,
  evaluateConfigured,
  evaluatePermission,
  evaluateProjection,
  isToolHidden,
  type PermissionLayers,
} from "../../services/core/permissions/index.js";

const rule = (action: string, resource: string, effect: PermissionEffect): PermissionRule => ({ action, resource, effect });

describe("Ze defaults", () => {
  const table: [string, string, PermissionEffect][] = [
    ["read", "src/index.ts", "allow"],
    ["edit", "src/index.ts", "allow"],
    ["shell", "rm -rf build", "allow"],
    ["webfetch", "https://example.com/", "allow"],
    ["deploy", "production", "allow"],
    ["read", "/etc/passwd", "allow"], // the outside path itself; its external_directory check asks
    ["external_directory", "/etc/*", "ask"],
    ["external_directory", "/home/user/other/*", "ask"],
    ["read", ".env", "ask"],
    ["read", "config/.env", "ask"],
    ["read", "prod.env", "ask"],
    ["read", ".env.local", "ask"],
    ["read", "sub/.env.production", "ask"],
    ["read", "/abs/outside/.env", "ask"],
    ["read", ".env.example", "allow"],
    ["read", "sub/.env.example", "allow"],
    ["read", "environment.ts", "allow"],
    ["read", "envs/x", "allow"],
    ["edit", ".env", "allow"], // only reads of .env ask
    ["write", ".env", "allow"],
    ["read", ".ENV", "allow"], // case-sensitive by default
  ];
  it.each(table)("%s %j → %s", (action, resource, effect) => {
    expect(evaluatePermission({ action, resource }, {}).effect).toBe(effect);
  });

  it("case-insensitive matching makes .ENV ask and .ENV.EXAMPLE allowed", () => {
    expect(evaluatePermission({ action: "read", resource: ".ENV" }, { caseSensitive: false }).effect).toBe("ask");
    expect(evaluatePermission({ action: "read", resource: "X/.Env.Example" }, { caseSensitive: false }).effect).toBe("allow");
    expect(evaluatePermission({ action: "READ", resource: ".env" }, { caseSensitive: false }).effect).toBe("ask");
  });

  it("reports the deciding default rule", () => {
    const decision = evaluatePermission({ action: "read", resource: ".env" }, {});
    expect(decision).toEqual({ effect: "ask", source: "default", rule: ZE_DEFAULT_RULES[2], index: 2 });
  });
});

describe("layer order: defaults → server → session → agent, last match wins", () => {
  const table: { name: string; layers: PermissionLayers; action: string; resource: string; effect: PermissionEffect; source: string }[] = [
    { name: "server deny overrides default allow", layers: { server: [rule("shell", "rm *", "deny")] }, action: "shell", resource: "rm -rf /", effect: "deny", source: "server" },
    { name: "server rule not matching leaves default", layers: { server: [rule("shell", "rm *", "deny")] }, action: "shell", resource: "ls", effect: "allow", source: "default" },
    { name: "server allow overrides default .env ask", layers: { server: [rule("read", "*.env", "allow")] }, action: "read", resource: ".env", effect: "allow", source: "server" },
    { name: "server allow for external_directory", layers: { server: [rule("external_directory", "/tmp/*", "allow")] }, action: "external_directory", resource: "/tmp/*", effect: "allow", source: "server" },
    { name: "session overrides server", layers: { server: [rule("shell", "*", "deny")], session: [rule("shell", "ls*", "allow")] }, action: "shell", resource: "ls -la", effect: "allow", source: "session" },
    { name: "agent overrides session", layers: { session: [rule("edit", "*", "allow")], agent: [rule("edit", "*", "deny")] }, action: "edit", resource: "a.ts", effect: "deny", source: "agent" },
    { name: "agent overrides server", layers: { server: [rule("*", "*", "deny")], agent: [rule("read", "*", "allow")] }, action: "read", resource: "x", effect: "allow", source: "agent" },
    { name: "agent non-matching leaves server", layers: { server: [rule("*", "*", "deny")], agent: [rule("read", "*", "allow")] }, action: "edit", resource: "x", effect: "deny", source: "server" },
    { name: "within a layer, the later rule wins", layers: { server: [rule("read", "*", "deny"), rule("read", "docs/*", "allow")] }, action: "read", resource: "docs/a.md", effect: "allow", source: "server" },
    { name: "within a layer, a later broader rule wins", layers: { server: [rule("read", "docs/*", "allow"), rule("read", "*", "deny")] }, action: "read", resource: "docs/a.md", effect: "deny", source: "server" },
    { name: "wildcard action", layers: { server: [rule("*", "*", "ask")] }, action: "anything", resource: "x", effect: "ask", source: "server" },
    { name: "action pattern with ?", layers: { server: [rule("rea?", "*", "deny")] }, action: "read", resource: "x", effect: "deny", source: "server" },
    { name: "` *` suffix rule matches the bare command", layers: { server: [rule("shell", "*", "ask"), rule("shell", "git status *", "allow")] }, action: "shell", resource: "git status", effect: "allow", source: "server" },
    { name: "case-sensitive by default", layers: { server: [rule("shell", "RM *", "deny")] }, action: "shell", resource: "rm x", effect: "allow", source: "default" },
    { name: "case-insensitive when configured", layers: { server: [rule("shell", "RM *", "deny")], caseSensitive: false }, action: "shell", resource: "rm x", effect: "deny", source: "server" },
    { name: "no defaults, no rules → ask", layers: { defaults: [] }, action: "read", resource: "x", effect: "ask", source: "none" },
    { name: "no defaults, non-matching rules → ask", layers: { defaults: [], server: [rule("edit", "*", "allow")] }, action: "read", resource: "x", effect: "ask", source: "none" },
  ];
  it.each(table)("$name", ({ layers, action, resource, effect, source }) => {
    const decision = evaluatePermission({ action, resource }, layers);
    expect(decision.effect).toBe(effect);
    expect(decision.source).toBe(source);
  });
});

describe("saved Session grants", () => {
  const grant = (action: string, resource: string) => ({ action, resource });
  const table: { name: string; layers: PermissionLayers; action: string; resource: string; effect: PermissionEffect; source: string }[] = [
    { name: "a grant turns a default ask into allow", layers: { saved: [grant("read", ".env")] }, action: "read", resource: ".env", effect: "allow", source: "saved" },
    { name: "grant patterns match like rules", layers: { saved: [grant("external_directory", "/tmp/*")] }, action: "external_directory", resource: "/tmp/*", effect: "allow", source: "saved" },
    { name: "a grant for another resource does not apply", layers: { saved: [grant("read", ".env")] }, action: "read", resource: ".env.local", effect: "ask", source: "default" },
    { name: "a grant for another action does not apply", layers: { saved: [grant("edit", ".env")] }, action: "read", resource: ".env", effect: "ask", source: "default" },
    { name: "a grant turns a configured ask into allow", layers: { server: [rule("shell", "*", "ask")], saved: [grant("shell", "npm test")] }, action: "shell", resource: "npm test", effect: "allow", source: "saved" },
    { name: "a grant never overrides a configured deny (server)", layers: { server: [rule("shell", "npm *", "deny")], saved: [grant("shell", "npm test")] }, action: "shell", resource: "npm test", effect: "deny", source: "server" },
    { name: "a grant never overrides a configured deny (agent)", layers: { agent: [rule("read", "*.env", "deny")], saved: [grant("read", ".env")] }, action: "read", resource: ".env", effect: "deny", source: "agent" },
    { name: "a deny overridden by a later allow is no longer a deny", layers: { server: [rule("read", "*", "deny")], session: [rule("read", "*", "ask")], saved: [grant("read", "a")] }, action: "read", resource: "a", effect: "allow", source: "saved" },
    { name: "a grant applies when nothing matched", layers: { defaults: [], saved: [grant("read", "x")] }, action: "read", resource: "x", effect: "allow", source: "saved" },
    { name: "allow stays allow with a grant", layers: { saved: [grant("read", "x")] }, action: "read", resource: "x", effect: "allow", source: "default" },
    { name: "grants honour case-insensitive matching", layers: { caseSensitive: false, saved: [grant("read", ".ENV")] }, action: "read", resource: ".env", effect: "allow", source: "saved" },
    { name: "grants are case-sensitive by default", layers: { saved: [grant("read", ".ENV")] }, action: "read", resource: ".env", effect: "ask", source: "default" },
  ];
  it.each(table)("$name", ({ layers, action, resource, effect, source }) => {
    const decision = evaluatePermission({ action, resource }, layers);
    expect(decision.effect).toBe(effect);
    expect(decision.source).toBe(source);
  });

  it("evaluateConfigured ignores grants", () => {
    expect(evaluateConfigured({ action: "read", resource: ".env" }, { saved: [grant("read", ".env")] }).effect).toBe("ask");
  });
});

describe("projections", () => {
  it.each<[PermissionEffect[], PermissionEffect]>([
    [[], "ask"],
    [["allow"], "allow"],
    [["allow", "allow"], "allow"],
    [["allow", "ask"], "ask"],
    [["ask", "deny", "allow"], "deny"],
    [["deny"], "deny"],
  ])("combineEffects(%j) → %s", (effects, result) => {
    expect(combineEffects(effects)).toBe(result);
  });

  it("a projection asks if any resource asks, denies if any is denied", () => {
    const layers: PermissionLayers = { server: [rule("read", "secret/*", "deny")] };
    expect(evaluateProjection({ action: "read", resources: ["a", "b"] }, layers).effect).toBe("allow");
    expect(evaluateProjection({ action: "read", resources: ["a", ".env"] }, layers).effect).toBe("ask");
    const denied = evaluateProjection({ action: "read", resources: [".env", "secret/k", "a"] }, layers);
    expect(denied.effect).toBe("deny");
    expect(denied.resources.map((r) => r.decision.effect)).toEqual(["ask", "deny", "allow"]);
  });
});

describe("isToolHidden", () => {
  const table: [string, PermissionLayers, boolean][] = [
    ["shell", {}, false],
    ["shell", { server: [rule("shell", "*", "deny")] }, true],
    ["shell", { server: [rule("shell", "rm *", "deny")] }, false],
    ["shell", { server: [rule("shell", "*", "deny")], agent: [rule("shell", "ls", "allow")] }, false],
    ["shell", { server: [rule("*", "*", "deny")] }, true],
    ["shell", { server: [rule("*", "*", "deny"), rule("read", "*", "allow")] }, true],
    ["read", { server: [rule("*", "*", "deny"), rule("read", "*", "allow")] }, false],
    ["Shell", { server: [rule("shell", "*", "deny")], caseSensitive: false }, true],
  ];
  it.each(table)("%s with %j → %s", (tool, layers, hidden) => {
    expect(isToolHidden(tool, layers)).toBe(hidden);
  });
});
