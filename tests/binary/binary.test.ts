// The single executable (npm run build:binary), unpacked from its release archive and run with
// a PATH that has no `node`: every way in works from the executable alone — --version (and the
// first run's extraction to a private versioned cache), run --embedded, CodeMode, serve and a Turn
// over HTTP, the local daemon (the executable spawns itself as `serve --register`), the TUI in a
// PTY, ACP over stdio and an MCP server over stdio (its supervisor is the executable's `-e`).
// The binary is built once for the tree (tests/support/binary.ts, shared with tests/release/native.test.ts);
// the tests share one home and one test model.
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, chownSync, mkdirSync, readdirSync, readFileSync, readlinkSync, statSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { Turn } from "../../clients/index.js";
import { startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { startAcp } from "../acp/client.js";
import { buildBinary, pathWithoutNode, type BuiltBinary } from "../support/binary.js";
import { jsonOf, runProcess, type CliResult } from "../support/cli.js";
import { tempHome, type TempHome } from "../support/harness.js";
import { TEST_MODEL, testProviderConfig, writeGlobalConfig } from "../support/model.js";
import { EVERYTHING } from "../mcp/support.js";
import { startPty } from "../support/pty.js";

vi.setConfig({ testTimeout: 60_000, hookTimeout: 180_000 });

let built: BuiltBinary;
let model: TestModel;
let home: TempHome;
let env: Record<string, string>;

beforeAll(async () => {
  built = await buildBinary();
  model = await startTestModel({ directives: true });
  home = tempHome("ze-binary-");
  writeGlobalConfig(home, { model: TEST_MODEL, providers: testProviderConfig(model), permissions: [{ action: "*", resource: "*", effect: "allow" }] });
  env = { ...home.env, PATH: pathWithoutNode() };
});
afterAll(async () => {
  if (built !== undefined) await exe(["service", "stop"]);
  await model?.close();
  home?.cleanup();
});

const exe = (args: readonly string[], extra: Record<string, string> = {}): Promise<CliResult> =>
  runProcess(built.executable, args, { env: { ...env, ...extra }, cwd: home.root });

describe("the release archive", () => {
  it("holds the executable, LICENSE and THIRD_PARTY_LICENSES.txt with the Node.js notice", () => {
    expect(built.archive).toMatch(/ze-harness-\d+\.\d+\.\d+-linux-x64\.tar\.gz$/);
    expect(built.entries).toEqual(["LICENSE", "THIRD_PARTY_LICENSES.txt", "ze-harness"]);
    expect(readFileSync(join(built.folder, "LICENSE"), "utf8")).toMatch(/^MIT License/);
    const notices = readFileSync(join(built.folder, "THIRD_PARTY_LICENSES.txt"), "utf8");
    expect(notices).toContain("libsql");
    expect(notices).toContain("node-pty");
    expect(notices).toContain(`Node.js ${process.version}`);
    expect(notices).toMatch(/Node\.js is licensed for use as follows/);
  });
});

describe("the executable without node on PATH", () => {
  it("has no node to fall back on", () => {
    expect(spawnSync("sh", ["-c", "command -v node"], { env }).status).not.toBe(0);
  });

  it("--version extracts its files once to a private versioned cache folder", async () => {
    const result = await exe(["--version"]);
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(result.stdout).toMatch(/^ze-harness\/\d+\.\d+\.\d+ linux-x64 node-v20\./);
    const base = join(env["XDG_CACHE_HOME"]!, "ze-harness");
    const [folder, ...others] = readdirSync(base);
    expect(others).toEqual([]);
    expect(folder).toMatch(/^\d+\.\d+\.\d+-[0-9a-f]{16}$/);
    expect(statSync(base).mode & 0o777).toBe(0o700);
    expect(statSync(join(base, folder!)).mode & 0o777).toBe(0o700);
    // Native addons are real files there (they cannot be loaded from inside the executable).
    expect(statSync(join(base, folder!, "node_modules", "node-pty", "build", "Release", "pty.node")).isFile()).toBe(true);
  });

  it("two first runs at once share one extracted folder", async () => {
    const cache = join(home.dir, "race-cache");
    const results = await Promise.all([exe(["--version"], { XDG_CACHE_HOME: cache }), exe(["--version"], { XDG_CACHE_HOME: cache })]);
    for (const result of results) expect(result).toMatchObject({ code: 0, stderr: "" });
    // The loser's temporary folder is gone too.
    expect(readdirSync(join(cache, "ze-harness"))).toEqual(readdirSync(join(env["XDG_CACHE_HOME"]!, "ze-harness")));
  });

  it("refuses a cache folder others can write to", async () => {
    const cache = join(home.dir, "shared-cache");
    mkdirSync(join(cache, "ze-harness"), { recursive: true });
    chmodSync(join(cache, "ze-harness"), 0o777);
    const result = await exe(["--version"], { XDG_CACHE_HOME: cache });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/writable by others; refusing/);
    expect(readdirSync(join(cache, "ze-harness"))).toEqual([]);
  });

  // Only root can give a folder to another user (CI runs as root).
  it.runIf(process.getuid?.() === 0)("refuses a cache folder that belongs to another user", async () => {
    const cache = join(home.dir, "foreign-cache");
    mkdirSync(join(cache, "ze-harness"), { recursive: true, mode: 0o700 });
    chownSync(join(cache, "ze-harness"), 65534, 65534);
    const result = await exe(["--version"], { XDG_CACHE_HOME: cache });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/belongs to another user; refusing/);
  });

  it("run --embedded streams a Turn's answer", async () => {
    const result = await exe(["run", "--embedded", "@say Hello from the executable."]);
    expect(result).toMatchObject({ code: 0, stderr: "", stdout: "Hello from the executable.\n" });
  });

  it("runs a CodeMode script (QuickJS in a worker)", async () => {
    const result = await exe(["run", "--embedded", "--json", '@call execute {"code":"return 6 * 7"}\n@then Computed.']);
    expect(result.code).toBe(0);
    const turn = jsonOf<Turn>(result);
    expect(turn.phase).toBe("completed");
    const script = turn.parts.find((part) => part.type === "tool" && part.toolId === "execute");
    expect(script).toMatchObject({ state: "completed", execution: { result: 42 } });
  });

  it("serves HTTP and runs a Turn over it", async () => {
    const token = "binary-token";
    const serve = spawn(built.executable, ["serve", "--port", "0", "--token", token, "--database", join(home.dir, "serve.db")], { env, cwd: home.root, stdio: ["ignore", "pipe", "pipe"] });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        createInterface({ input: serve.stdout! }).once("line", resolve);
        serve.once("exit", (code) => reject(new Error(`serve exited with ${code}`)));
      });
      const result = await exe(["run", "--remote", url, "--token", token, "@say Hello over HTTP."]);
      expect(result).toMatchObject({ code: 0, stderr: "", stdout: "Hello over HTTP.\n" });
    } finally {
      const exited = new Promise((resolve) => serve.once("exit", resolve));
      serve.kill("SIGTERM");
      await exited;
    }
  });

  it("starts the local daemon (itself, as serve --register) and runs a Turn through it", async () => {
    const result = await exe(["run", "@say Hello from the daemon."]);
    expect(result).toMatchObject({ code: 0, stdout: "Hello from the daemon.\n" });
    const status = jsonOf<{ running: boolean; pid: number }>(await exe(["service", "status"]));
    expect(status.running).toBe(true);
    expect(readlinkSync(`/proc/${status.pid}/exe`)).toBe(built.executable);
    expect((await exe(["service", "stop"])).code).toBe(0);
  });

  it("opens the TUI in a PTY, answers a prompt and quits on Ctrl+C", async () => {
    const tui = startPty(["--embedded"], { env, cwd: home.root, command: [built.executable] });
    try {
      await tui.waitFor(/Ask anything/);
      tui.write("@say Hello in the TUI.\r");
      await tui.waitFor(/Hello in the TUI\.\n+test\/scripted · \d/);
      tui.write("\u0003");
      expect((await tui.exited).exitCode).toBe(0);
    } finally {
      tui.kill();
    }
  });

  it("speaks ACP over stdio", async () => {
    const acp = startAcp({ env, cwd: home.root, command: [built.executable] });
    try {
      await acp.agent.request("initialize", { protocolVersion: 1, clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false }, clientInfo: { name: "ze-binary-test", version: "1.0.0" } });
      const { sessionId } = await acp.agent.request("session/new", { cwd: home.root, mcpServers: [] });
      const response = await acp.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "@say Hello over ACP." }] });
      expect(response.stopReason).toBe("end_turn");
      expect(JSON.stringify(acp.updatesOf(sessionId))).toContain("Hello over ACP.");
    } finally {
      await acp.close();
    }
  });

  it("runs an MCP server over stdio through its supervisor", async () => {
    // The server itself is another program (Node at its absolute path); the supervisor between
    // the CLI and it is the executable's `-e`.
    const config = join(home.dir, "mcp-config");
    const mcpHome = { ...home, env: { ...home.env, XDG_CONFIG_HOME: config } };
    const mcp = [{ kind: "local", id: "everything", name: "everything", transport: { kind: "stdio", command: process.execPath, arguments: [EVERYTHING, "stdio"], environment: {} } }];
    writeGlobalConfig(mcpHome, { model: TEST_MODEL, providers: testProviderConfig(model), mcp });
    const created = await exe(["--embedded", "session", "create"], { XDG_CONFIG_HOME: config });
    const session = jsonOf<{ id: string }>(created);
    const listed = await exe(["--embedded", "mcp", "list", session.id], { XDG_CONFIG_HOME: config });
    expect(listed.code).toBe(0);
    const catalog = jsonOf<{ servers: { name: string; catalog: { tools: { name: string }[] } }[] }>(listed);
    expect(catalog.servers[0]!.catalog.tools.map((tool) => tool.name)).toContain("echo");
  });
});
