// The retained supervisor of a local MCP server ("MCP stdio lifecycle", Unix): a small Node
// program (run with `node -e`, so it ships inside the bundle) that the host starts detached, so
// it leads a new process group before anything else runs in it. It starts with only the
// temporary-directory variables; the target's command, arguments, environment (credentials
// included) and working directory arrive afterwards over its control socket (fd 3), so nothing of
// them can run in the supervisor. It then starts
//   - the watchdog, `/bin/sh` in the same group, holding the control socket too: if the supervisor
//     dies without standing it down (its stdin pipe reaches EOF), it SIGKILLs its own group;
//   - the target in the same group, on the host's pipes (fds 4, 5, 6 become its 0, 1, 2; the
//     supervisor closes its copies, so EOF on stdout means the target side closed).
// Messages are JSON lines. Host → supervisor: `start`, `term` (SIGTERM to the own group, which the
// supervisor and watchdog ignore), `kill` (SIGKILL to the own group, the supervisor included: the
// final signal). Supervisor → host: `spawned` {pid}, `spawn_error` {code}, `exit` {code, signal}.
// Once the target exited and no other member of the group is alive (read from /proc while the
// supervisor, the group leader, lives, so the id cannot have been reused), the supervisor stands
// the watchdog down and exits 0. The host retires ownership only when the supervisor exited and
// the control socket closed (held by supervisor and watchdog: the settlement pipe). The control
// socket reaching EOF means the host is gone: the group is killed at once. Signals only ever
// address the supervisor's own current group (`kill(0, …)`), never a numeric id.

/** What the host sends to start the target. */
export interface SupervisorStart {
  readonly type: "start";
  readonly file: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly cwd: string | undefined;
}

export type SupervisorCommand = SupervisorStart | { readonly type: "term" } | { readonly type: "kill" };

export type SupervisorReport =
  | { readonly type: "spawned"; readonly pid: number }
  | { readonly type: "spawn_error"; readonly code: string }
  | { readonly type: "exit"; readonly code: number | null; readonly signal: string | null };

/** The watchdog: ignores SIGTERM (the group's termination signal); kills the group when the supervisor vanishes. */
const WATCHDOG = `trap '' TERM INT HUP; if read line; then exit 0; fi; kill -9 0`;

export const SUPERVISOR_SOURCE = `"use strict";
const { spawn } = require("node:child_process");
const { closeSync, readdirSync, readFileSync } = require("node:fs");
const { Socket } = require("node:net");
for (const signal of ["SIGTERM", "SIGINT", "SIGHUP", "SIGPIPE"]) process.on(signal, () => undefined);
const control = new Socket({ fd: 3, readable: true, writable: true });
const report = (message) => { if (!control.destroyed) control.write(JSON.stringify(message) + "\\n"); };
let watchdog;
let targetExited = false;
let watching = false;
let finishing = false;
const killGroup = () => { try { process.kill(0, "SIGKILL"); } finally { process.exit(137); } };
const others = () => {
  let entries;
  try { entries = readdirSync("/proc"); } catch { return 0; }
  let count = 0;
  for (const entry of entries) {
    if (!/^[0-9]+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid || (watchdog && pid === watchdog.pid)) continue;
    try {
      const stat = readFileSync("/proc/" + entry + "/stat", "latin1");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) === process.pid && fields[0] !== "Z" && fields[0] !== "X") count += 1;
    } catch {}
  }
  return count;
};
const finish = () => {
  if (finishing) return;
  finishing = true;
  const done = () => control.end(() => process.exit(0));
  if (!watchdog || watchdog.exitCode !== null || watchdog.signalCode !== null) return done();
  watchdog.once("exit", done);
  watchdog.stdin.end("done\\n");
};
const watchEmpty = () => {
  if (watching || !targetExited) return;
  watching = true;
  const check = () => (others() === 0 ? finish() : setTimeout(check, 25));
  check();
};
const start = (message) => {
  watchdog = spawn("/bin/sh", ["-c", ${JSON.stringify(WATCHDOG)}], { stdio: ["pipe", "ignore", "ignore", 3], env: process.env });
  watchdog.stdin.on("error", () => undefined);
  let target;
  try {
    target = spawn(message.file, message.args, { env: message.env, cwd: message.cwd, stdio: [4, 5, 6], shell: false });
  } catch (error) {
    report({ type: "spawn_error", code: (error && error.code) || "error" });
    targetExited = true;
    for (const fd of [4, 5, 6]) try { closeSync(fd); } catch {}
    return finish();
  }
  for (const fd of [4, 5, 6]) try { closeSync(fd); } catch {}
  let spawned = false;
  target.once("spawn", () => { spawned = true; report({ type: "spawned", pid: target.pid }); });
  target.once("error", (error) => {
    if (spawned) return;
    report({ type: "spawn_error", code: error.code || "error" });
    targetExited = true;
    finish();
  });
  target.once("exit", (code, signal) => {
    if (!spawned) return;
    report({ type: "exit", code, signal });
    targetExited = true;
    watchEmpty();
  });
};
let pending = "";
control.setEncoding("utf8");
control.on("data", (chunk) => {
  pending += chunk;
  for (let at = pending.indexOf("\\n"); at !== -1; at = pending.indexOf("\\n")) {
    const message = JSON.parse(pending.slice(0, at));
    pending = pending.slice(at + 1);
    if (message.type === "start") start(message);
    else if (message.type === "term") { try { process.kill(0, "SIGTERM"); } catch {} }
    else if (message.type === "kill") killGroup();
  }
});
control.on("end", () => { if (!finishing) killGroup(); });
control.on("error", () => { if (!finishing) killGroup(); });
`;
