// The Worker's MCP variables, read in Node (the same modules run in workerd): HARNESS_MCP is a
// JSON array of the config file's `mcp` entries, checked by the config schema's McpServer
// entries (without Ajv) and the Node host's resolveMcpServers; HARNESS_MCP_CALLBACK_BASE_URL is
// an https origin, or http on a loopback host. Every refusal names its variable and a JSON
// pointer, never a value from it; the gateway's callback path names one server.
import { describe, expect, it } from "vitest";
import { readMcpVariable } from "../../worker/mcp-config.js";
import { callbackServerOf, callbackUrl, readCallbackBase } from "../../worker/oauth.js";

const remote = (id: string, endpoint = "https://mcp.example/mcp", extra: Record<string, unknown> = {}) => ({ kind: "remote", id, name: id, transport: { kind: "streamable-http", endpoint, ...extra } });
const refused = (text: string | undefined) => {
  const read = readMcpVariable(text);
  if (read.ok) throw new Error("expected a refusal");
  expect(read.tag).toBe("ConfigInvalid");
  expect(read.message).toMatch(/^Worker variable HARNESS_MCP: /);
  return read.message;
};

describe("HARNESS_MCP", () => {
  it("reads the config file's mcp entries; absent or blank is none", () => {
    expect(readMcpVariable(undefined)).toEqual({ ok: true, servers: [] });
    expect(readMcpVariable("  ")).toEqual({ ok: true, servers: [] });
    const servers = [remote("web"), { kind: "local", id: "local", name: "local", transport: { kind: "stdio", command: "node" } }, remote("secure", "https://secure.example/mcp", { oauth: { kind: "oauth", reference: "login" } })];
    expect(readMcpVariable(JSON.stringify(servers))).toEqual({ ok: true, servers });
  });

  it("refuses what the config file's checks refuse, naming where and never quoting a value", () => {
    expect(refused("{")).toContain("is not valid JSON");
    expect(refused(JSON.stringify({ web: remote("web") }))).toContain("must be a JSON array");
    const secret = "s3cr3t-header-value";
    const unknownField = refused(JSON.stringify([{ ...remote("web"), token: secret }]));
    expect(unknownField).toContain("/0");
    expect(unknownField).not.toContain(secret);
    const badKind = refused(JSON.stringify([remote("ok"), { ...remote("web"), kind: secret }]));
    expect(badKind).toContain("/1");
    expect(badKind).not.toContain(secret);
    const inQuery = refused(JSON.stringify([remote("web", `https://mcp.example/mcp?api_key=${secret}`)]));
    expect(inQuery).toContain("/0/transport/endpoint");
    expect(inQuery).not.toContain(secret);
    expect(refused(JSON.stringify([remote("web"), remote("web")]))).toContain("/1/id");
    let deep: unknown = 1;
    for (let level = 0; level < 70; level++) deep = [deep];
    expect(refused(JSON.stringify(deep))).toContain("nested deeper than 64 levels");
  });
});

describe("HARNESS_MCP_CALLBACK_BASE_URL", () => {
  it("is an https origin, or http on a loopback host; absent is none", () => {
    expect(readCallbackBase(undefined)).toEqual({ ok: true, origin: undefined });
    expect(readCallbackBase("https://harness.example.com")).toEqual({ ok: true, origin: "https://harness.example.com" });
    expect(readCallbackBase("https://harness.example.com/")).toEqual({ ok: true, origin: "https://harness.example.com" });
    expect(readCallbackBase("http://127.0.0.1:8787")).toEqual({ ok: true, origin: "http://127.0.0.1:8787" });
    expect(readCallbackBase("http://localhost:8787")).toEqual({ ok: true, origin: "http://localhost:8787" });
    expect(callbackUrl("https://harness.example.com", "team a")).toBe("https://harness.example.com/oauth/callback/team%20a");
  });

  it("refuses anything else, naming the variable and never the value", () => {
    for (const value of ["http://harness.example.com", "ftp://127.0.0.1", "not a url", "https://user:pw@harness.example.com", "https://harness.example.com/base", "https://harness.example.com/?x=1", "https://harness.example.com/#f"]) {
      const read = readCallbackBase(value);
      expect(read.ok, value).toBe(false);
      if (read.ok) continue;
      expect(read.message).toMatch(/^Worker variable HARNESS_MCP_CALLBACK_BASE_URL: /);
      expect(read.message).not.toContain(value);
    }
  });

  it("the gateway's callback path names one server", () => {
    expect(callbackServerOf("/oauth/callback/team%20a")).toBe("team a");
    expect(callbackServerOf("/oauth/callback/")).toBeUndefined();
    expect(callbackServerOf("/oauth/callback/a/b")).toBeUndefined();
    expect(callbackServerOf("/oauth/callback/%E0%A4%A")).toBeUndefined();
    expect(callbackServerOf("/v1/servers/a")).toBeUndefined();
  });
});
