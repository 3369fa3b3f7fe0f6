// Remote MCP servers over streamable HTTP: the everything server in its streamableHttp mode.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { everythingHttp, freePort, host, remote, toolContext } from "./support.js";

let server: Awaited<ReturnType<typeof everythingHttp>>;

beforeAll(async () => {
  server = await everythingHttp();
});
afterAll(async () => {
  await server.close();
});

describe("streamable HTTP servers", () => {
  it("connects, lists the catalog and calls Tools", async () => {
    const mcp = host({ servers: [remote("web", server.endpoint)] });
    await mcp.start();
    expect(mcp.servers()[0]!.status).toEqual({ state: "connected", protocolVersion: "2025-06-18" });
    const [entry] = mcp.catalog().servers;
    expect(entry).toMatchObject({ serverId: "web", name: "web", protocolVersion: "2025-06-18" });
    expect(entry!.catalog.tools.map((tool) => tool.name)).toContain("get-sum");
    const sum = mcp.tools().find((tool) => tool.id === "web_get-sum")!;
    const out = await sum.execute({ a: 2, b: 3 }, toolContext());
    expect(out.result.format).toBe("text");
    expect(out.result.value).toContain("5");
    expect(await mcp.prompt("web", "simple-prompt")).toEqual([{ type: "text", text: "This is a simple prompt without arguments." }]);
    const read = await mcp.readResource("web", "demo://resource/dynamic/text/3");
    expect(read.contents[0]).toMatchObject({ uri: "demo://resource/dynamic/text/3" });
  });

  it("reports an unreachable endpoint and does not retry with a manual policy", async () => {
    const port = await freePort();
    const mcp = host({ servers: [remote("gone", `http://127.0.0.1:${port}/mcp`, { reconnect: { kind: "manual" } })] });
    await mcp.start();
    expect(mcp.servers()[0]!.status).toMatchObject({ state: "failed", reason: "connection_failed", retrying: false, attempts: 1 });
  });

  it("retries a retryable failure up to maxAttempts", async () => {
    const port = await freePort();
    const mcp = host({
      servers: [remote("later", `http://127.0.0.1:${port}/mcp`, { reconnect: { kind: "retry", delayMs: 1, maxAttempts: { kind: "finite", value: 3 } } })],
    });
    await mcp.start();
    expect(mcp.servers()[0]!.status).toMatchObject({ state: "failed", attempts: 1, retrying: true });
    await mcp.until((h) => {
      const status = h.servers()[0]!.status;
      return status.state === "failed" && !status.retrying;
    });
    expect(mcp.servers()[0]!.status).toMatchObject({ state: "failed", attempts: 3, retrying: false });
  });

  it("refuses an endpoint with credentials in it as a config error", async () => {
    const { McpHost } = await import("../../services/mcp/index.js");
    expect(() => new McpHost({ env: {}, cwd: "/", servers: [remote("x", "https://user:pw@example.com/mcp")] })).toThrow(/\/mcp\/0\/transport\/endpoint: .*credentials/);
    expect(() => new McpHost({ env: {}, cwd: "/", servers: [remote("x", "https://example.com/mcp?api_key=1")] })).toThrow(/\/mcp\/0\/transport\/endpoint: .*api_key/);
  });
});
