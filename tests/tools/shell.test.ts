import { chmodSync, existsSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MAX_SHELL_OUTPUT_BYTES, shellTool } from "../../services/tools/index.js";
import { call, context, expectCode, isAlive, text, workspace, type Workspace } from "./helpers.js";

let ws: Workspace;
const leftovers: number[] = [];
beforeEach(() => {
  ws = workspace();
});
afterEach(() => {
  for (const pid of leftovers.splice(0)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone
    }
  }
  ws.dispose();
});

describe("shell: running commands", () => {
  it("returns combined stdout and stderr with the exit code (non-zero is not a failure)", async () => {
    const out = await call(shellTool, { command: "echo out; echo err >&2; exit 3" }, context(ws.workdir));
    expect(text(out)).toBe("out\nerr\n(exit code 3)");
    expect(out.artifact).toBeUndefined();
  });

  it("runs in the workdir with an allowlisted environment", async () => {
    process.env["ZE_TEST_SECRET"] = "leak";
    try {
      const out = text(await call(shellTool, { command: 'pwd; echo "[$ZE_TEST_SECRET]"; echo "$PATH" | grep -c bin' }, context(ws.workdir)));
      expect(out).toBe(`${ws.workdir}\n[]\n1\n(exit code 0)`);
    } finally {
      delete process.env["ZE_TEST_SECRET"];
    }
  });

  it("reports a signal that ended the shell", async () => {
    expect(text(await call(shellTool, { command: "kill -TERM $$" }, context(ws.workdir)))).toBe("(terminated by SIGTERM)");
  });

  it("reports activity: a start update, then a final one", async () => {
    const ctx = context(ws.workdir);
    await call(shellTool, { command: "echo hi", description: "Say hi" }, ctx);
    expect(ctx.activity[0]).toEqual({ message: "Say hi", observedBytes: 0, truncated: false });
    expect(ctx.activity.at(-1)).toEqual({ message: "Say hi", observedBytes: 3, truncated: false, preview: "hi\n" });
  });
});

describe("shell: large output", () => {
  it("keeps the last 50 KiB in the result and the full output in an artifact file", async () => {
    const ctx = context(ws.workdir);
    const out = await call(shellTool, { command: "seq 1 30000" }, ctx);
    const full = `${Array.from({ length: 30000 }, (_, i) => i + 1).join("\n")}\n`;
    const fullBytes = Buffer.byteLength(full);
    expect(out.artifact).toMatchObject({ observedBytes: fullBytes, state: "complete" });
    const artifact = out.artifact!;
    expect(artifact.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(artifact.path).toBe(`.ze-harness/tool-output/${artifact.id}.log`);
    expect(readFileSync(join(ws.workdir, artifact.path), "utf8")).toBe(full);
    // Private to the user: the archive 0600, its directory 0700.
    expect(statSync(join(ws.workdir, artifact.path)).mode & 0o777).toBe(0o600);
    expect(statSync(join(ws.workdir, ".ze-harness/tool-output")).mode & 0o777).toBe(0o700);

    const result = text(out);
    const [header, ...rest] = result.split("\n");
    expect(header).toBe(`(Output truncated: showing the last ${MAX_SHELL_OUTPUT_BYTES} of ${fullBytes} bytes; the full output is in ${artifact.path}.)`);
    const body = rest.slice(0, -1).join("\n");
    expect(rest.at(-1)).toBe("(exit code 0)");
    expect(full.endsWith(`${body}\n`)).toBe(true);
    expect(Buffer.byteLength(`${body}\n`)).toBe(MAX_SHELL_OUTPUT_BYTES);

    const last = ctx.activity.at(-1)!;
    expect(last).toMatchObject({ observedBytes: fullBytes, truncated: true, artifact: { ...artifact, state: "complete" } });
    for (const update of ctx.activity) expect(Buffer.byteLength(update.preview ?? "")).toBeLessThanOrEqual(MAX_SHELL_OUTPUT_BYTES);
  });

  it("never starts the tail in the middle of a UTF-8 character", async () => {
    const out = text(await call(shellTool, { command: `awk 'BEGIN{for(i=0;i<30000;i++) printf "€"}'` }, context(ws.workdir)));
    const body = out.split("\n")[1]!;
    expect(body).toMatch(/^€+$/);
  });

  it("keeps the result and previews within 50 KiB even for invalid UTF-8 output", async () => {
    const ctx = context(ws.workdir);
    const out = await call(shellTool, { command: "head -c 60000 /dev/zero | tr '\\0' '\\377'" }, ctx);
    const body = text(out).split("\n")[1]!;
    expect(body).toMatch(/^\uFFFD+$/);
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(MAX_SHELL_OUTPUT_BYTES);
    expect(out.artifact!.observedBytes).toBe(60000);
    for (const update of ctx.activity) expect(Buffer.byteLength(update.preview ?? "")).toBeLessThanOrEqual(MAX_SHELL_OUTPUT_BYTES);
  });

  it("tightens an artifacts directory an earlier version left 0755 to 0700", async () => {
    const directory = join(ws.workdir, ".ze-harness/tool-output");
    mkdirSync(directory, { recursive: true });
    chmodSync(directory, 0o755);
    const out = await call(shellTool, { command: "seq 1 20000" }, context(ws.workdir));
    expect(statSync(directory).mode & 0o777).toBe(0o700);
    expect(statSync(join(ws.workdir, out.artifact!.path)).mode & 0o777).toBe(0o600);
  });

  it("reports an absolute artifact path when the artifacts directory is outside the workdir", async () => {
    const artifactsDirectory = join(ws.outside, "artifacts");
    const out = await call(shellTool, { command: "seq 1 20000" }, context(ws.workdir, { artifactsDirectory }));
    expect(out.artifact!.path).toBe(join(artifactsDirectory, `${out.artifact!.id}.log`));
    expect(existsSync(out.artifact!.path)).toBe(true);
  });
});

describe("shell: timeout and abort", () => {
  it("abort kills the whole process group and rejects with interrupted", async () => {
    const ctx = context(ws.workdir);
    const running = call(shellTool, { command: 'sleep 1000 & echo "child:$!"; echo "shell:$$"; wait' }, ctx);
    const update = await ctx.activityWhere((u) => /child:\d+\nshell:\d+/.test(u.preview ?? ""));
    const child = Number(/child:(\d+)/.exec(update.preview!)![1]);
    const shell = Number(/shell:(\d+)/.exec(update.preview!)![1]);
    leftovers.push(child, shell);
    expect(isAlive(child)).toBe(true);
    ctx.controller.abort();
    await expectCode(running, "interrupted");
    expect(isAlive(child)).toBe(false);
    expect(isAlive(shell)).toBe(false);
  });

  it("a timeout kills the process group and still returns the output", async () => {
    const ctx = context(ws.workdir);
    const out = text(await call(shellTool, { command: 'sleep 1000 & echo "child:$!"; wait', timeoutMs: 300 }, ctx));
    const child = Number(/child:(\d+)/.exec(out)![1]);
    leftovers.push(child);
    expect(out).toBe(`child:${child}\n(Timed out after 300 ms; the command and its child processes were stopped.)`);
    expect(isAlive(child)).toBe(false);
  });

  it("does not wait forever on a background process that holds the output pipe", async () => {
    const out = text(await call(shellTool, { command: 'sleep 1000 & echo "child:$!"' }, context(ws.workdir)));
    const child = Number(/child:(\d+)/.exec(out)![1]);
    leftovers.push(child);
    expect(out).toBe(`child:${child}\n(exit code 0)`);
  });

  it("refuses to start when already aborted", async () => {
    const ctx = context(ws.workdir);
    ctx.controller.abort();
    await expectCode(call(shellTool, { command: "echo never > ran.txt" }, ctx), "interrupted");
    expect(existsSync(join(ws.workdir, "ran.txt"))).toBe(false);
  });

  it("a failing activity report stops the command with spawn_failed", async () => {
    const ctx = context(ws.workdir, { reportActivity: () => Promise.reject(new Error("malformed")) });
    await expectCode(call(shellTool, { command: "sleep 1000" }, ctx), "spawn_failed");
  });
});

describe("shell: permissions", () => {
  const projections = (command: string) => shellTool.permissions({ command }, context(ws.workdir));

  it("projects the raw command text, saving it exactly", () => {
    expect(projections("git status --short")).toEqual([{ action: "shell", resources: ["git status --short"], save: ["git status --short"] }]);
  });

  it("adds external_directory for outside paths of file commands and redirections", () => {
    ws.write("inside.txt", "");
    const ext = (command: string) => {
      const p = projections(command);
      return p.length === 2 ? p[0]!.resources : [];
    };
    expect(ext("cat inside.txt")).toEqual([]);
    expect(ext("grep -r foo src")).toEqual([]);
    expect(ext("echo /etc/passwd")).toEqual([]); // not a file command
    expect(ext("cat /etc/hostname")).toEqual(["/etc/*"]);
    expect(ext(`ls ../outside`)).toEqual([`${ws.outside}/*`]);
    expect(ext(`echo hi > ${ws.outside}/f.txt`)).toEqual([`${ws.outside}/*`]);
    expect(ext(`echo hi 2>/dev/null >> ${ws.outside}/log`)).toEqual([`${ws.outside}/*`]);
    expect(ext("ls 2>/dev/null")).toEqual([]);
    expect(ext("cd /usr && ls")).toEqual(["/usr/*"]);
    expect(ext(`rm -f ${ws.outside}/*.log`)).toEqual([`${ws.outside}/*`]);
    expect(ext(`cat "${ws.outside}/with space.txt" '/etc/hosts'`)).toEqual([`${ws.outside}/*`, "/etc/*"]);
    expect(ext('cat "$HOME/.bashrc"')).toEqual([]); // unknown value: skipped
    expect(ext("FOO=1 sudo cat /etc/shadow")).toEqual(["/etc/*"]);
    expect(ext("cat ~/.profile")).toEqual([`${homedir()}/*`]);
    expect(ext("# cat /etc/passwd")).toEqual([]);
    expect(ext(`cp /etc/hosts ${ws.outside}/copy`)).toEqual(["/etc/*", `${ws.outside}/*`]);
    const both = projections("cat /etc/hostname");
    expect(both[0]).toEqual({ action: "external_directory", resources: ["/etc/*"], save: ["/etc/*"] });
    expect(both[1]).toEqual({ action: "shell", resources: ["cat /etc/hostname"], save: ["cat /etc/hostname"] });
  });
});
