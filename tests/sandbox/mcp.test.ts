// MCP stdio servers under the OS sandbox: the real filesystem server, told it may use `/`, still
// cannot write outside the workdir or read the secret beside it; a server's process tree is
// reaped through bubblewrap; where bubblewrap cannot run the server fails spawn_failed and
// nothing starts.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { LocalMcpServer } from "../../services/config/types.js";
import type { HostSandboxSetup } from "../../services/host/sandbox-host.js";
import { FILESYSTEM, fixture, EVERYTHING, host, processesWith, toolContext } from "../mcp/support.js";
import { SECRET, hostSandbox, layout, type Layout } from "./support.js";

vi.setConfig({ testTimeout: 30_000 });

let ws: Layout;
const setups: HostSandboxSetup[] = [];
beforeEach(() => {
  ws = layout("ze-sandbox-mcp-");
});
afterEach(async () => {
  for (const setup of setups.splice(0)) await setup.sandbox.close();
  ws.dispose();
});

const files: LocalMcpServer = { kind: "local", id: "files", name: "files", reconnect: { kind: "manual" }, transport: { kind: "stdio", command: process.execPath, arguments: [FILESYSTEM, "/"] } };

function sandbox(env: Record<string, string> = ws.env): HostSandboxSetup {
  const setup = hostSandbox(env);
  setups.push(setup);
  return setup;
}

async function callTool(mcp: ReturnType<typeof host>, id: string, input: Record<string, unknown>): Promise<string> {
  const tool = mcp.tools().find((candidate) => candidate.id === id);
  if (!tool) throw new Error(`no tool ${id}`);
  try {
    const output = await tool.execute(input, toolContext());
    return JSON.stringify(output.result);
  } catch (error) {
    return `failed: ${(error as Error).message}`;
  }
}

describe("MCP stdio servers in the sandbox", () => {
  it("the filesystem server allowed `/` writes outside and reads the secret unsandboxed, and cannot in the sandbox", async () => {
    const open = host({ servers: [files], cwd: ws.workdir });
    await open.start();
    expect(await callTool(open, "files_read_text_file", { path: ws.secretFile })).toContain(SECRET);
    await callTool(open, "files_write_file", { path: join(ws.outside, "from-mcp.txt"), content: "x" });
    expect(readFileSync(join(ws.outside, "from-mcp.txt"), "utf8")).toBe("x");
    await open.close();

    const boxed = host({ servers: [files], cwd: ws.workdir, sandbox: sandbox().sandbox });
    await boxed.start();
    expect(boxed.servers()[0]!.status.state).toBe("connected");
    expect(await callTool(boxed, "files_read_text_file", { path: ws.secretFile })).not.toContain(SECRET);
    await callTool(boxed, "files_write_file", { path: join(ws.outside, "boxed.txt"), content: "x" });
    expect(existsSync(join(ws.outside, "boxed.txt"))).toBe(false);
    // Its working directory is writable, as a shell command's is.
    await callTool(boxed, "files_write_file", { path: join(ws.workdir, "inside.txt"), content: "y" });
    expect(readFileSync(join(ws.workdir, "inside.txt"), "utf8")).toBe("y");
  });

  it("close reaps the server's whole process tree through bubblewrap", async () => {
    const marker = `ze-sandbox-mcp-tree-${process.pid}-${Date.now()}`;
    const mcp = host({ servers: [fixture("tree", "tree.mjs", [marker, EVERYTHING])], cwd: ws.workdir, sandbox: sandbox().sandbox });
    await mcp.start();
    expect(mcp.servers()[0]!.status.state).toBe("connected");
    expect(processesWith(marker).length).toBeGreaterThan(0);
    await mcp.close();
    expect(processesWith(marker)).toEqual([]);
  });

  it("without bubblewrap the server fails spawn_failed naming the sandbox, and nothing starts", async () => {
    const marker = `ze-sandbox-mcp-none-${process.pid}-${Date.now()}`;
    const mcp = host({ servers: [fixture("tree", "tree.mjs", [marker, EVERYTHING])], cwd: ws.workdir, sandbox: sandbox({ ...ws.env, ZE_HARNESS_BWRAP: join(ws.root, "missing-bwrap") }).sandbox });
    await mcp.start();
    const status = mcp.servers()[0]!.status;
    expect(status).toMatchObject({ state: "failed", reason: "spawn_failed", retrying: false });
    expect((status as { message: string }).message).toContain("sandbox_unavailable");
    expect((status as { message: string }).message).toContain("bubblewrap cannot run here");
    expect(processesWith(marker)).toEqual([]);
  });
});
