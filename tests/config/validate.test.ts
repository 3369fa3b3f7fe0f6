import { describe, expect, it } from "vitest";
import { validateConfig, type Config } from "../../services/config/index.js";

const FILE = "/project/ze-harness.config.json";

/** Every field of the hand-written `Config` type, so the type and the generated schema cannot drift apart unnoticed. */
const everything: Config = {
  $schema: "https://ze.dev/ze-harness.config.schema.json",
  model: "openai/gpt-5-mini",
  agents: {
    writer: {
      displayName: "Writer",
      description: "Writes documentation",
      system: "Write clear, concise documentation.",
      model: "openai/gpt-5-mini",
      mode: "primary",
      permissions: [{ action: "edit", resource: "docs/*", effect: "allow" }],
      disabled: false,
    },
    "team/reviewer": { mode: "subagent" },
    "my_agent.v2-beta": { disabled: true },
  },
  defaultAgent: "writer",
  mcp: [
    {
      kind: "local",
      id: "fs",
      name: "filesystem",
      enabled: true,
      order: 1,
      resourceReadTool: true,
      protocolVersions: ["2025-06-18"],
      clientCapabilities: { roots: false, sampling: false, elicitation: false },
      limits: { startupMs: { kind: "finite", value: 10_000 }, catalogMs: { kind: "unlimited" }, executionMs: { kind: "finite", value: 1 } },
      reconnect: { kind: "retry", delayMs: 1000, maxAttempts: { kind: "finite", value: 5 } },
      transport: {
        kind: "stdio",
        command: "npx",
        arguments: ["-y", "@modelcontextprotocol/server-filesystem", "."],
        environment: { TOKEN: { kind: "environment", reference: "FS_TOKEN" }, KEY: { kind: "secret", reference: "fs-key" } },
      },
    },
    {
      kind: "remote",
      id: "docs",
      name: "docs",
      reconnect: { kind: "manual" },
      transport: {
        kind: "streamable-http",
        endpoint: "https://mcp.example.com/mcp?x=1",
        headers: { "X-Api-Key": { kind: "secret", reference: "docs-key" } },
        oauth: { kind: "oauth", reference: "docs-oauth" },
      },
    },
  ],
  plugins: ["./plugin.mjs", "@scope/pkg", { source: "other-pkg", options: { a: [1, "two", null, { b: true }] }, enabled: true }],
  skills: ["./team-skills", "~/shared/skills"],
  providers: {
    openai: true,
    openrouter: false,
    deepseek: {},
    ollama: {
      options: { baseURL: "http://127.0.0.1:11434/v1", timeout: 60000 },
      enabled: true,
      definition: {
        displayName: "Local Ollama",
        baseURL: "http://127.0.0.1:11434/v1",
        protocol: "chat",
        routes: { chat: "/chat/completions" },
        authentication: { kind: "header", name: "x-api-key", prefix: "Key " },
        headers: { "X-Team": "docs" },
        credentials: { environment: ["OLLAMA_KEY"] },
        models: { "llama3.1": { displayName: "Llama 3.1", capabilities: { input: ["text", "image"], tools: true }, limits: { contextUnits: 131072, outputUnits: 8192 } } },
        discovery: true,
        login: { device: { discoveryURL: "/device", notice: { text: "Sign in", links: [{ label: "Docs", url: "https://example.com" }] } } },
      },
    },
    "openai-work": { base: "openai", via: "tap" },
  },
  observerBufferSize: 128,
  contentFlushMillis: 0,
  codemode: { enabled: false },
  steering: { maxBatches: { kind: "finite", value: 0 } },
  subagents: { maxDepth: { kind: "unlimited" } },
  permissions: [
    { action: "*", resource: "*", effect: "ask" },
    { action: "read", resource: "*", effect: "allow" },
  ],
  permissionMatching: { caseSensitive: true },
  approval: { timeoutMs: { kind: "unlimited" } },
  timeouts: { turnMs: { kind: "finite", value: 600_000 } },
  provider: {
    maxAttempts: { kind: "finite", value: 3 },
    attemptTimeoutMs: { kind: "unlimited" },
    elapsedMs: { kind: "finite", value: 120_000 },
    pacing: { kind: "exponential", initialDelayMs: 100, maximumDelayMs: 5000, jitter: true },
  },
  context: { safetyReserveUnits: 1024 },
  images: { maxBase64Bytes: { kind: "finite", value: 5_242_880 } },
  sandbox: { mode: "workspace-write", network: ["registry.npmjs.org", "*.example.com", "127.0.0.1"] },
};

function failure(value: unknown): { path: string; message: string } | undefined {
  const result = validateConfig(value, FILE);
  if (result.ok) return undefined;
  expect(result.error._tag).toBe("ConfigInvalid");
  expect(result.error.file).toBe(FILE);
  return result.error._tag === "ConfigInvalid" ? { path: result.error.path, message: result.error.message } : undefined;
}

describe("validateConfig", () => {
  it("accepts every field of the Config type and returns the value unchanged (no defaults filled in)", () => {
    const value = structuredClone(everything);
    const result = validateConfig(value, FILE);
    expect(result).toEqual({ ok: true, value: everything });
  });

  it("accepts the reference's examples", () => {
    for (const example of [
      { model: "deepseek/deepseek-v4-flash", providers: { deepseek: {} } },
      { codemode: { enabled: false } },
      { images: { maxBase64Bytes: { kind: "finite", value: 5242880 } } },
      { model: "openai/gpt-5-mini", approval: { timeoutMs: { kind: "finite", value: 30000 } }, plugins: ["./plugin.mjs"] },
      { defaultAgent: "writer", agents: { writer: { description: "Writes documentation", mode: "primary" }, build: { description: "Ours" } } },
    ]) {
      expect(failure(example)).toBeUndefined();
    }
  });

  it.each([
    ["a non-object document", [], "", "must be object"],
    ["an unknown top-level key", { modle: "x/y" }, "/modle", 'unknown property "modle"'],
    ["an unsupported agent option", { agents: { build: { hidden: true } } }, "/agents/build/hidden", 'unknown property "hidden"'],
    ["an agent ID with upper case", { agents: { Build: {} } }, "/agents/Build", 'invalid key "Build": must match pattern "^[a-z0-9]+(?:[._-][a-z0-9]+)*(?:/[a-z0-9]+(?:[._-][a-z0-9]+)*)*$"'],
    ["an unknown agent mode", { agents: { build: { mode: "main" } } }, "/agents/build/mode", 'must be one of "primary", "subagent", "all"'],
    ["a model without a provider", { model: "gpt-5" }, "/model", 'must match pattern "^[^/]+/.+$"'],
    ["a permission effect", { permissions: [{ action: "read", resource: "*", effect: "yes" }] }, "/permissions/0/effect", 'must be one of "allow", "ask", "deny"'],
    ["a missing rule field", { permissions: [{ action: "read", effect: "allow" }] }, "/permissions/0/resource", 'missing required property "resource"'],
    ["a zero finite limit", { timeouts: { turnMs: { kind: "finite", value: 0 } } }, "/timeouts/turnMs/value", "must be >= 1"],
    ["a fractional limit", { images: { maxBase64Bytes: { kind: "finite", value: 1.5 } } }, "/images/maxBase64Bytes/value", "must be integer"],
    ["a number where a limit belongs", { approval: { timeoutMs: 30000 } }, "/approval/timeoutMs", "must be object"],
    ["an unknown limit kind", { provider: { maxAttempts: { kind: "infinite" } } }, "/provider/maxAttempts/kind", 'unknown kind "infinite": must be one of "unlimited", "finite"'],
    ["a limit without kind", { provider: { elapsedMs: { value: 3 } } }, "/provider/elapsedMs/kind", 'missing required property "kind"'],
    ["a value on an unlimited limit", { provider: { elapsedMs: { kind: "unlimited", value: 3 } } }, "/provider/elapsedMs/value", 'unknown property "value"'],
    ["a negative count", { subagents: { maxDepth: { kind: "finite", value: -1 } } }, "/subagents/maxDepth/value", "must be >= 0"],
    ["exponential pacing without jitter", { provider: { pacing: { kind: "exponential", initialDelayMs: 1, maximumDelayMs: 2 } } }, "/provider/pacing/jitter", 'missing required property "jitter"'],
    ["observerBufferSize below 1", { observerBufferSize: 0 }, "/observerBufferSize", "must be >= 1"],
    ["a negative contentFlushMillis", { contentFlushMillis: -5 }, "/contentFlushMillis", "must be >= 0"],
    ["a string where a number belongs", { context: { safetyReserveUnits: "1024" } }, "/context/safetyReserveUnits", "must be integer"],
    ["a provider entry of the wrong type", { providers: { openai: "yes" } }, "/providers/openai", "must be boolean or object"],
    ["an unknown provider option key", { providers: { openai: { timeout: 5 } } }, "/providers/openai/timeout", 'unknown property "timeout"'],
    ["an unknown provider definition field", { providers: { x: { definition: { baseURL: "http://h/v1", colour: 1 } } } }, "/providers/x/definition/colour", 'unknown property "colour"'],
    ["an unknown authentication kind", { providers: { x: { definition: { authentication: { kind: "basic" } } } } }, "/providers/x/definition/authentication/kind", 'unknown kind "basic": must be one of "none", "bearer", "header"'],
    ["a header authentication without its name", { providers: { x: { definition: { authentication: { kind: "header" } } } } }, "/providers/x/definition/authentication/name", 'missing required property "name"'],
    ["an unknown protocol", { providers: { x: { definition: { protocol: "gemini" } } } }, "/providers/x/definition/protocol", 'must be "chat" or "responses" or "messages"'],
    ["a long provider base", { providers: { x: { base: "b".repeat(129) } } }, "/providers/x/base", "must NOT have more than 128 characters"],
    ["a plugin of the wrong type", { plugins: [42] }, "/plugins/0", "must be string or object"],
    ["a plugin without source", { plugins: [{ options: {} }] }, "/plugins/0/source", 'missing required property "source"'],
    ["an unknown MCP kind", { mcp: [{ kind: "sse", id: "a", name: "a" }] }, "/mcp/0/kind", 'unknown kind "sse": must be one of "local", "remote"'],
    ["an MCP transport that does not match its kind", { mcp: [{ kind: "local", id: "a", name: "a", transport: { kind: "streamable-http", endpoint: "https://x.example" } }] }, "/mcp/0/transport/kind", 'must be "stdio"'],
    ["an MCP endpoint with credentials", { mcp: [{ kind: "remote", id: "a", name: "a", transport: { kind: "streamable-http", endpoint: "https://user:pw@x.example/mcp" } }] }, "/mcp/0/transport/endpoint", 'must match pattern "^[Hh][Tt][Tt][Pp][Ss]?://[^/?#@]+(?:[/?#].*)?$"'],
    ["an MCP endpoint that is not http", { mcp: [{ kind: "remote", id: "a", name: "a", transport: { kind: "streamable-http", endpoint: "ftp://x.example" } }] }, "/mcp/0/transport/endpoint", 'must match pattern "^[Hh][Tt][Tt][Pp][Ss]?://[^/?#@]+(?:[/?#].*)?$"'],
    ["an MCP capability turned on", { mcp: [{ kind: "local", id: "a", name: "a", clientCapabilities: { roots: true, sampling: false, elicitation: false }, transport: { kind: "stdio", command: "x" } }] }, "/mcp/0/clientCapabilities/roots", "must be false"],
    ["partial MCP limits", { mcp: [{ kind: "local", id: "a", name: "a", limits: { startupMs: { kind: "unlimited" } }, transport: { kind: "stdio", command: "x" } }] }, "/mcp/0/limits/catalogMs", 'missing required property "catalogMs"'],
    ["no MCP protocol version", { mcp: [{ kind: "local", id: "a", name: "a", protocolVersions: [], transport: { kind: "stdio", command: "x" } }] }, "/mcp/0/protocolVersions", "must NOT have fewer than 1 items"],
    ["a long credential reference", { mcp: [{ kind: "local", id: "a", name: "a", transport: { kind: "stdio", command: "x", environment: { K: { kind: "environment", reference: "r".repeat(257) } } } }] }, "/mcp/0/transport/environment/K/reference", "must NOT have more than 256 characters"],
    ["a key with a slash (pointer-escaped)", { "a/b~c": 1 }, "/a~1b~0c", 'unknown property "a/b~c"'],
  ])("rejects %s", (_name, value, path, message) => {
    expect(failure(value)).toEqual({ path, message });
  });

  it("rejects duplicate MCP server ids and names", () => {
    const server = (id: string, name: string) => ({ kind: "local", id, name, transport: { kind: "stdio", command: "x" } });
    expect(failure({ mcp: [server("a", "one"), server("a", "two")] })).toEqual({
      path: "/mcp/1/id",
      message: 'duplicate MCP server id "a" (also /mcp/0/id)',
    });
    expect(failure({ mcp: [server("a", "same"), server("b", "other"), server("c", "same")] })).toEqual({
      path: "/mcp/2/name",
      message: 'duplicate MCP server name "same" (also /mcp/0/name)',
    });
  });
});
