// The pure parts of services/mcp: config checks, result mapping, the callback query and limits.
import { describe, expect, it } from "vitest";
import type { McpServer } from "../../services/config/types.js";
import { bounded } from "../../services/mcp/limits.js";
import { mapToolResult, MAX_MCP_BINARY_BYTES, McpConfigError, parseCallbackQuery, resolveMcpServers, sanitizeToolName, toolInputSchema } from "../../services/mcp/index.js";
import { everything, remote } from "./support.js";

const TINY_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

function configError(servers: McpServer[]): McpConfigError {
  try {
    resolveMcpServers(servers);
  } catch (error) {
    if (error instanceof McpConfigError) return error;
    throw error;
  }
  throw new Error("expected a config error");
}

describe("mcp config", () => {
  it("applies the documented defaults and orders servers by order, then name", () => {
    const [a, b, c] = resolveMcpServers([everything({ id: "c", name: "c" }), everything({ id: "b", name: "b", order: -1 }), remote("a", "https://example.com/mcp")]);
    expect([a!.name, b!.name, c!.name]).toEqual(["b", "a", "c"]);
    expect(b).toMatchObject({ enabled: true, resourceReadTool: false, protocolVersions: ["2025-06-18"], reconnect: { kind: "retry", delayMs: 1000, maxAttempts: undefined } });
    expect(b!.limits).toEqual({ startupMs: undefined, catalogMs: undefined, executionMs: undefined });
  });

  it("refuses duplicate ids and names, unsupported versions, credentials in endpoints and owned headers, naming the pointer", () => {
    expect(configError([everything(), everything({ name: "other" })]).path).toBe("/mcp/1/id");
    expect(configError([everything(), everything({ id: "other" })]).path).toBe("/mcp/1/name");
    expect(configError([everything({ protocolVersions: ["2025-06-18", "2025-11-25"] })]).path).toBe("/mcp/0/protocolVersions/1");
    expect(configError([remote("r", "https://u:p@example.com/mcp")]).path).toBe("/mcp/0/transport/endpoint");
    expect(configError([remote("r", "https://example.com/mcp?token=abc")]).message).toContain('"token"');
    expect(configError([remote("r", "ftp://example.com/mcp")]).message).toContain("http://");
    expect(configError([remote("r", "https://example.com/mcp", {}, { headers: { "Mcp-Session-Id": { kind: "environment", reference: "X" } } })]).path).toBe("/mcp/0/transport/headers/Mcp-Session-Id");
    expect(
      configError([remote("r", "https://example.com/mcp", {}, { headers: { Authorization: { kind: "environment", reference: "X" } }, oauth: { kind: "oauth", reference: "o" } })]).message,
    ).toContain("Authorization");
    expect(configError([everything({}, { "BAD-NAME": { kind: "environment", reference: "X" } })]).path).toBe("/mcp/0/transport/environment/BAD-NAME");
  });

  it("sanitizes tool names to A-Z a-z 0-9 _ -", () => {
    expect(sanitizeToolName("my.server/v2 beta")).toBe("my_server_v2_beta");
    expect(sanitizeToolName("ok_name-1")).toBe("ok_name-1");
  });
});

describe("tool results", () => {
  const unlimited = { maxImageBase64Bytes: undefined };

  it("keeps text as text and structured content as JSON when there are no images", () => {
    expect(mapToolResult({ content: [{ type: "text", text: "a" }, { type: "text", text: "b" }] }, unlimited)).toEqual({ format: "text", value: "a\nb" });
    expect(mapToolResult({ content: [{ type: "text", text: '{"n":1}' }], structuredContent: { n: 1, _meta: { secret: true } } }, unlimited)).toEqual({ format: "json", value: { n: 1 } });
    expect(mapToolResult({ content: [] }, unlimited)).toEqual({ format: "text", value: "" });
  });

  it("keeps ordered text and image parts plus structured content, dropping exact JSON duplicates and _meta", () => {
    const result = mapToolResult(
      {
        content: [
          { type: "text", text: "see:" },
          { type: "image", data: TINY_PNG, mimeType: "image/png", _meta: { private: 1 } },
          { type: "text", text: '{ "w": 1 }' },
          { type: "resource_link", uri: "file:///x", name: "x", _meta: { private: 1 } },
        ],
        structuredContent: { w: 1 },
      },
      unlimited,
    );
    expect(result).toEqual({
      format: "content",
      value: [
        { type: "text", text: "see:" },
        { type: "image", source: { type: "base64", data: TINY_PNG, mimeType: "image/png" } },
        { type: "json", value: { type: "resource_link", uri: "file:///x", name: "x" } },
        { type: "json", value: { w: 1 } },
      ],
    });
  });

  it("refuses non-canonical base64 and unsupported image types, and images over the limit", () => {
    expect(() => mapToolResult({ content: [{ type: "image", data: "not base64!", mimeType: "image/png" }] }, unlimited)).toThrow(/unsupported image/);
    expect(() => mapToolResult({ content: [{ type: "image", data: TINY_PNG, mimeType: "image/svg+xml" }] }, unlimited)).toThrow(/image\/svg\+xml/);
    expect(() => mapToolResult({ content: [{ type: "image", data: TINY_PNG, mimeType: "image/png" }] }, { maxImageBase64Bytes: 10 })).toThrow(/images\.maxBase64Bytes/);
  });

  it("replaces audio and blobs over 10 MB decoded with an omission note", () => {
    const big = "A".repeat(Math.ceil(((MAX_MCP_BINARY_BYTES + 3) * 4) / 3 / 4) * 4);
    const result = mapToolResult({ content: [{ type: "image", data: TINY_PNG, mimeType: "image/png" }, { type: "audio", data: big, mimeType: "audio/wav" }] }, unlimited);
    expect(result.format === "content" && result.value[1]).toEqual({ type: "text", text: expect.stringContaining("audio omitted") });
    const small = mapToolResult({ content: [{ type: "image", data: TINY_PNG, mimeType: "image/png" }, { type: "audio", data: "AAAA", mimeType: "audio/wav" }] }, unlimited);
    expect(small.format === "content" && small.value[1]).toEqual({ type: "json", value: { type: "audio", data: "AAAA", mimeType: "audio/wav" } });
  });
});

describe("tool input schemas", () => {
  it("reduces a draft-07 schema to the Turn's keyword set", () => {
    const schema = toolInputSchema({
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object",
      properties: { n: { type: "number", default: 3, format: "int" }, list: { type: "array", items: { type: "string", format: "uri" } }, ref: { $ref: "#/definitions/x" } },
      definitions: { x: { type: "string", examples: ["a"] } },
      required: ["n"],
      additionalProperties: false,
    });
    expect(schema).toEqual({
      type: "object",
      properties: { n: { type: "number" }, list: { type: "array", items: { type: "string" } }, ref: { $ref: "#/$defs/x" } },
      $defs: { x: { type: "string" } },
      required: ["n"],
      additionalProperties: false,
    });
    // A schema the Turn's validator cannot compile is replaced by a plain object schema.
    expect(toolInputSchema({ type: "object", properties: { x: { $ref: "#/nowhere" } } })).toEqual({ type: "object" });
  });
});

describe("callback query", () => {
  it("reads success and denial callbacks", () => {
    expect(parseCallbackQuery(new URLSearchParams("code=c&state=s&iss=https://as"))).toEqual({ kind: "success", state: "s", code: "c", issuer: "https://as" });
    expect(parseCallbackQuery(new URLSearchParams("error=access_denied&state=s"))).toEqual({ kind: "denied", state: "s", error: "access_denied" });
    expect(parseCallbackQuery(new URLSearchParams("error=weird&state=s"))).toEqual({ kind: "denied", state: "s", error: "server_error" });
    expect(parseCallbackQuery(new URLSearchParams("code=c"))).toBeUndefined();
  });
});

describe("bounded", () => {
  it("rejects with the limit when work ignores its signal, and passes results through", async () => {
    await expect(bounded(() => new Promise(() => undefined), { ms: 20, limit: "executionMs" })).rejects.toMatchObject({ _tag: "McpLimitReached", limit: "executionMs", value: 20 });
    expect(await bounded(async () => 7, { ms: 1_000, limit: "executionMs" })).toBe(7);
    const controller = new AbortController();
    const pending = bounded((signal) => new Promise((_, reject) => signal.addEventListener("abort", () => reject(new Error("late")))), { ms: undefined, limit: "executionMs", signal: controller.signal });
    controller.abort(new Error("cancelled"));
    await expect(pending).rejects.toThrow("cancelled");
  });
});
