// The `mcp` commands of the BUILT binary, with --remote against a loopback server that serves
// services/host/mcp-handlers.ts over a real McpHost (the everything server, and the OAuth test
// server's protected MCP endpoint).
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { listen, type Listener } from "../../services/host/listen.js";
import { McpHost } from "../../services/mcp/index.js";
import { assertBuilt, jsonOf, runCli, succeeded } from "../support/cli.js";
import { binPath } from "../support/harness.js";
import { startOAuthServer, type OAuthTestServer } from "./oauth-server.js";
import { composeMcpHandler, everything, freePort, remote, repoRoot, type Submitted } from "./support.js";

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const SESSION = randomUUID();
const submitted: Submitted[] = [];
let as: OAuthTestServer;
let mcp: McpHost;
let server: Listener;
const options = () => ({ env: { PATH: process.env["PATH"] ?? "", HOME: mkdtempSync(join(tmpdir(), "ze-mcp-cli-")) }, cwd: repoRoot });
const remoteFlags = () => ["--remote", server.url];

beforeAll(async () => {
  assertBuilt();
  as = await startOAuthServer();
  mcp = new McpHost({
    env: { PATH: process.env["PATH"] ?? "" },
    cwd: repoRoot,
    servers: [everything(), remote("secure", as.mcpUrl, { reconnect: { kind: "manual" } }, { oauth: { kind: "oauth", reference: "secure-cli" } })],
    authFile: { path: join(mkdtempSync(join(tmpdir(), "ze-mcp-cli-auth-")), "auth.json") },
    callbackPort: await freePort(),
  });
  server = await listen(composeMcpHandler(mcp, new Set([SESSION]), submitted), { port: 0, hostname: "127.0.0.1" });
});
afterAll(async () => {
  await server?.close();
  await mcp?.close();
  await as?.close();
});

describe("ze-harness mcp", () => {
  it("list prints the catalog of the connected servers", async () => {
    const catalog = await succeeded<{ servers: { name: string; catalog: { tools: { name: string }[] } }[] }>(runCli(["mcp", "list", SESSION, ...remoteFlags()], options()));
    expect(catalog.servers.map((entry) => entry.name)).toEqual(["everything"]);
    expect(catalog.servers[0]!.catalog.tools.map((tool) => tool.name)).toContain("echo");
  });

  it("resource prints a resource's contents", async () => {
    const resource = await succeeded<{ contents: { uri: string; text: string }[] }>(runCli(["mcp", "resource", SESSION, "everything", "demo://resource/dynamic/text/5", ...remoteFlags()], options()));
    expect(resource.contents[0]).toMatchObject({ uri: "demo://resource/dynamic/text/5", text: expect.any(String) });
  });

  it("prompt resolves a prompt and prints the receipt of its Turn", async () => {
    const turn = randomUUID();
    const receipt = await succeeded<{ delivery: string; turnId: string }>(runCli(["mcp", "prompt", SESSION, "everything", "args-prompt", "--arg", "city=Rome", "--turn", turn, ...remoteFlags()], options()));
    expect(receipt).toMatchObject({ delivery: "queue", turnId: turn });
    expect(submitted.at(-1)?.request.prompt).toEqual([{ type: "text", text: "What's weather in Rome?" }]);
    const bad = await runCli(["mcp", "prompt", SESSION, "everything", "args-prompt", "--arg", "city", ...remoteFlags()], options());
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("NAME=VALUE");
  });

  it("names an unknown server in one error line, exit 1", async () => {
    const result = await runCli(["mcp", "resource", SESSION, "nobody", "x://y", ...remoteFlags()], options());
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error: NotFoundError: No MCP server is named "nobody"\n$/);
  });

  it("auth waits for the browser's callback and stores the credential; status and logout follow it", async () => {
    expect(await succeeded(runCli(["mcp", "status", SESSION, "secure", ...remoteFlags()], options()))).toEqual({ kind: "absent", generation: 0 });
    const child = spawn(process.execPath, [binPath, "mcp", "auth", SESSION, "secure", ...remoteFlags()], { ...options(), stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    const url = await new Promise<string>((resolve, reject) => {
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
        stderr += chunk;
        const found = /^(http:\/\/\S+\/authorize\?\S+)$/m.exec(stderr);
        if (found) resolve(found[1]!);
      });
      child.once("exit", (code) => reject(new Error(`mcp auth exited (${code}): ${stderr}`)));
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    // The "browser": the authorization server approves and redirects to the CLI's loopback listener.
    const approval = await fetch(url, { redirect: "manual" });
    const page = await fetch(approval.headers.get("location")!);
    expect(page.status).toBe(200);
    expect(await exited).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ kind: "authorized", generation: 1 });
    expect(stdout).not.toContain("access-");

    expect(mcp.servers().find((entry) => entry.name === "secure")!.status.state).toBe("connected");
    expect(await succeeded(runCli(["mcp", "status", SESSION, "secure", ...remoteFlags()], options()))).toEqual({ kind: "authorized", generation: 1 });
    const logout = await runCli(["mcp", "logout", SESSION, "secure", ...remoteFlags()], options());
    expect(logout.code).toBe(0);
    expect(jsonOf(logout)).toEqual({ generation: 1, revocation: "completed" });
  });
});
