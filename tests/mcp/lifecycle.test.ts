// The MCP stdio lifecycle ("MCP stdio lifecycle"): a server's tree is owned by a retained
// supervisor leading its process group, with a watchdog taking the final signal over when the
// supervisor dies; every lifecycle limit is unlimited unless configured (a close SIGTERMs at once
// and waits for the whole tree), the first configured limit reached is the close's outcome, and
// status reads never wait on a close. The grandchild of fixtures/stubborn.mjs ignores SIGTERM and
// reports over TCP, so each step waits on an event (a line, a closed connection), never a sleep.
import { spawn } from "node:child_process";
import { createServer, type Server, type Socket } from "node:net";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { DEFAULT_LIFECYCLE } from "../../services/mcp/index.js";
import { OwnedStdioTransport } from "../../services/mcp/stdio.js";
import { SUPERVISOR_SOURCE } from "../../services/mcp/supervisor.js";
import { assertBuilt } from "../support/cli.js";
import { processResources, serveWithModel } from "../turns/helpers.js";
import { EVERYTHING, FIXTURES, host, processesWith, repoRoot } from "./support.js";

/** A TCP listener the grandchild reports to: its pid, each SIGTERM, and its death (the connection closing). */
interface Grandchild {
  readonly port: number;
  pid(): Promise<number>;
  nextLine(): Promise<string>;
  dead(): Promise<void>;
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});

async function grandchild(): Promise<Grandchild> {
  let connected!: (socket: Socket) => void;
  const socket = new Promise<Socket>((resolve) => (connected = resolve));
  const server = createServer((incoming) => connected(incoming));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const lines: string[] = [];
  const waiters: ((line: string) => void)[] = [];
  let closed!: () => void;
  const gone = new Promise<void>((resolve) => (closed = resolve));
  void socket.then((s) => {
    let pending = "";
    s.setEncoding("utf8");
    s.on("data", (chunk: string) => {
      pending += chunk;
      for (let at = pending.indexOf("\n"); at !== -1; at = pending.indexOf("\n")) {
        const line = pending.slice(0, at);
        pending = pending.slice(at + 1);
        const waiter = waiters.shift();
        if (waiter) waiter(line);
        else lines.push(line);
      }
    });
    s.on("close", () => closed());
  });
  const nextLine = (): Promise<string> => {
    const line = lines.shift();
    return line !== undefined ? Promise.resolve(line) : new Promise((resolve) => waiters.push(resolve));
  };
  const first = nextLine();
  return {
    port: (server.address() as { port: number }).port,
    pid: async () => Number((await first).split(" ")[1]),
    nextLine,
    dead: () => gone,
  };
}

const resources = processResources("ze-mcp-lifecycle-");

const stubborn = (port: number) => ({ kind: "local" as const, id: "stubborn", name: "stubborn", reconnect: { kind: "manual" as const }, transport: { kind: "stdio" as const, command: process.execPath, arguments: [join(FIXTURES, "stubborn.mjs"), String(port), EVERYTHING] } });

/** Process group id of `pid`, from /proc. */
function groupOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
}

/**
 * Resolves once `pid` is no live process. A SIGKILLed process finishes exiting after the signal
 * call returned (and after it closed its sockets), so its end is awaited, not sampled.
 */
const ended = (pid: number): Promise<void> => vi.waitFor(() => expect(alive(pid)).toBe(false), { timeout: 5_000, interval: 10 });

/** Whether `pid` is a live process (a zombie awaiting its reaper is not). */
const alive = (pid: number): boolean => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return !["Z", "X"].includes(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0]!);
  } catch {
    return false;
  }
};

function transport(port: number, limits = {}): OwnedStdioTransport {
  return new OwnedStdioTransport({ command: process.execPath, args: [join(FIXTURES, "stubborn.mjs"), String(port), EVERYTHING], env: { PATH: process.env["PATH"] ?? "" }, cwd: repoRoot, limits });
}

describe("MCP stdio lifecycle", () => {
  it("has no default limits: a close SIGTERMs the group at once and waits for the whole tree, while status reads answer", async () => {
    expect(DEFAULT_LIFECYCLE).toEqual({});
    const child = await grandchild();
    const mcp = host({ servers: [stubborn(child.port)] });
    await mcp.start();
    expect(mcp.servers()[0]!.status.state).toBe("connected");
    const pid = await child.pid();
    let closed = false;
    const closing = mcp.close().then(() => (closed = true));
    // Termination starts at once; the grandchild ignores it and the close keeps waiting.
    expect(await child.nextLine()).toBe("term");
    expect(closed).toBe(false);
    expect(alive(pid)).toBe(true);
    // Reads do not wait on the close.
    expect(mcp.catalog().servers).toHaveLength(0);
    expect(mcp.servers()).toHaveLength(1);
    // Only when the last member is gone is the close done.
    process.kill(pid, "SIGKILL");
    await closing;
    expect(closed).toBe(true);
    expect(processesWith(`stubborn.mjs ${child.port}`)).toEqual([]);
  });

  it("puts the server in the supervisor's process group and reports the first configured limit reached", async () => {
    const child = await grandchild();
    const owned = transport(child.port, { sigtermMs: 200, cleanupMs: 5_000 });
    await owned.start();
    const pid = await child.pid();
    const supervisor = owned.supervisorPid!;
    expect(groupOf(owned.pid!)).toBe(supervisor);
    expect(groupOf(pid)).toBe(supervisor);
    await owned.close();
    await child.dead();
    expect(owned.outcome).toEqual({ kind: "limit_reached", limit: "sigtermMs", value: 200 });
    await ended(pid);
    await ended(supervisor);
  });

  it("a tree that ends on SIGTERM closes without reaching a limit", async () => {
    const owned = new OwnedStdioTransport({ command: process.execPath, args: [EVERYTHING, "stdio"], env: { PATH: process.env["PATH"] ?? "" }, cwd: repoRoot, limits: { sigtermMs: 60_000 } });
    await owned.start();
    const target = owned.pid!;
    await owned.close();
    expect(owned.outcome).toEqual({ kind: "closed" });
    await ended(target);
  });

  it("the watchdog takes the final signal over when the supervisor dies", async () => {
    const child = await grandchild();
    const owned = transport(child.port);
    let lost!: () => void;
    const closed = new Promise<void>((resolve) => (lost = resolve));
    owned.onclose = () => lost();
    await owned.start();
    const pid = await child.pid();
    const target = owned.pid!;
    process.kill(owned.supervisorPid!, "SIGKILL");
    // The grandchild ignores SIGTERM: only the watchdog's SIGKILL to the group ends it.
    await child.dead();
    await closed;
    await ended(pid);
    await ended(target);
    expect(owned.outcome).toEqual({ kind: "closed" });
  });

  it("a shutdownMs reached ends the tree with the final signal and is the outcome", async () => {
    const child = await grandchild();
    const owned = transport(child.port, { shutdownMs: 300 });
    await owned.start();
    const pid = await child.pid();
    await owned.close();
    expect(owned.outcome).toEqual({ kind: "limit_reached", limit: "shutdownMs", value: 300 });
    await child.dead();
    await ended(pid);
  });

  it("the supervisor kills its group when the host goes away (its control socket closes)", async () => {
    const child = await grandchild();
    // The host's side of a supervisor, by hand: control on fd 3, the target's stdio on 4–6.
    const supervisor = spawn(process.execPath, ["-e", SUPERVISOR_SOURCE], { stdio: ["ignore", "ignore", "ignore", "pipe", "pipe", "pipe", "pipe"], detached: true, env: {} });
    const control = supervisor.stdio[3] as Socket;
    const exited = new Promise<number | null>((resolve) => supervisor.once("exit", (_code, signal) => resolve(signal === "SIGKILL" ? 137 : _code)));
    control.write(`${JSON.stringify({ type: "start", file: process.execPath, args: [join(FIXTURES, "stubborn.mjs"), String(child.port), EVERYTHING], env: { PATH: process.env["PATH"] ?? "" }, cwd: repoRoot })}\n`);
    const pid = await child.pid();
    expect(groupOf(pid)).toBe(supervisor.pid);
    for (const stream of supervisor.stdio.slice(3)) (stream as Socket).destroy();
    // The grandchild ignores SIGTERM: the group's SIGKILL ends it, the supervisor with it.
    await child.dead();
    expect(await exited).toBe(137);
    await ended(pid);
  });

  it("a serve whose MCP server ignores SIGTERM still stops, and the server's tree dies with it", async () => {
    assertBuilt();
    const child = await grandchild();
    const { home, model, database } = await resources.setup();
    const served = await serveWithModel(home, model, database, { mcp: [stubborn(child.port)] });
    resources.cleanups.push(() => served.process.stop("SIGKILL"));
    const pid = await child.pid();
    // The host's stop waits a bounded time for the unlimited close, then exits; the supervisor,
    // seeing its control socket close, kills the whole group, the SIGTERM-proof grandchild too.
    expect(await served.process.stop("SIGTERM")).not.toBeUndefined();
    await child.dead();
    await ended(pid);
  });
});
