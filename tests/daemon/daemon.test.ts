// The shared local daemon through the built binary: the first local command (no --embedded, no
// --remote) starts it, later ones reuse it; `service status|start|stop|restart`; first start wins;
// the token on every call; a Turn outliving its client; racing spawners; stale registrations;
// daemon.log and GET /v1/logs. Every test has its own HOME/XDG (so its own daemon) and stops it.
import { randomUUID } from "node:crypto";
import { statSync, writeFileSync, mkdirSync } from "node:fs";
import { get } from "node:http";
import { createServer } from "node:net";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createZeClient, watchTurn, type Session, type Turn } from "../../clients/index.js";
import { startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { assertBuilt, jsonOf, scriptByPrompt, startCli } from "../support/cli.js";
import { startServe } from "../support/harness.js";
import { alive, cleanupDaemonHome, daemonHome, waitUntil, type DaemonHome } from "./support.js";

vi.setConfig({ testTimeout: 90_000, hookTimeout: 60_000 });

let model: TestModel;
let script: ReturnType<typeof scriptByPrompt>;
let home: DaemonHome | undefined;

beforeAll(async () => {
  assertBuilt();
  model = await startTestModel();
  script = scriptByPrompt(model);
});
afterAll(async () => {
  await model?.close();
});
afterEach(async () => {
  await cleanupDaemonHome(home);
  home = undefined;
});

const fresh = (): DaemonHome => (home = daemonHome(model));
const mode = (path: string): number => statSync(path).mode & 0o777;

describe("start and reuse", () => {
  it("the first local command starts one daemon in the background; the next reuses it (same pid)", async () => {
    const h = fresh();
    expect(h.registration()).toBeUndefined();
    const first = await h.cli(["session", "list"]);
    expect(first).toMatchObject({ code: 0, stdout: "[]\n", stderr: "" });
    const registration = h.registration()!;
    expect(Object.keys(registration).sort()).toEqual(["id", "pid", "url", "version"]);
    expect(registration.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(Number(new URL(registration.url).port)).toBeGreaterThanOrEqual(4096);
    expect(registration.pid).not.toBe(process.pid);
    expect(alive(registration.pid)).toBe(true);
    for (const file of ["server.json", "daemon-token", "daemon.log"]) expect(mode(join(h.stateDir, file)), file).toBe(0o600);

    const created = jsonOf<Session>(await h.cli(["session", "create"]));
    expect(jsonOf<Session[]>(await h.cli(["session", "list"])).map((session) => session.id)).toEqual([created.id]);
    expect(h.registration()).toEqual(registration);
    const status = jsonOf(await h.cli(["service", "status"]));
    expect(status).toMatchObject({ running: true, id: registration.id, pid: registration.pid, url: registration.url, version: registration.version, registered: true, runningTurns: [], config: null });
    expect(status.database).toBe(`file://${join(h.stateDir, "ze-harness.db")}`);
    // The Session lives in the daemon's database, which --embedded commands share.
    expect(jsonOf<Session[]>(await h.cli(["session", "list", "--embedded"])).map((session) => session.id)).toEqual([created.id]);
  });

  it("service status without a daemon is { running: false }; service start starts one, a second start reuses it", async () => {
    const h = fresh();
    expect(jsonOf(await h.cli(["service", "status"]))).toEqual({ running: false });
    const started = jsonOf(await h.cli(["service", "start"]));
    expect(started).toMatchObject({ running: true, started: true, pid: h.registration()!.pid });
    const again = jsonOf(await h.cli(["service", "start"]));
    expect(again).toMatchObject({ running: true, started: false, pid: started.pid, id: started.id });
  });

  it("two commands starting at once end with one daemon (the racing spawner that lost exits)", async () => {
    const h = fresh();
    const results = await Promise.all([h.cli(["session", "list"]), h.cli(["session", "list"]), h.cli(["service", "start"])]);
    for (const result of results) expect(result).toMatchObject({ code: 0, stderr: "" });
    const winner = h.registration()!;
    expect(jsonOf(results[2]!)).toMatchObject({ pid: winner.pid });
    const log = h.log();
    expect(log.match(/event=daemon\.start /g)).toHaveLength(1);
    const losers = [...log.matchAll(/event=daemon\.lost_race pid=(\d+)/g)].map((match) => Number(match[1]));
    for (const pid of losers) await waitUntil(() => !alive(pid), `losing daemon ${pid} to exit`);
    expect(jsonOf(await h.cli(["service", "status"]))).toMatchObject({ pid: winner.pid });
  });

  it("a stale server.json (dead pid, or nothing answering at its URL) is replaced by a new daemon", async () => {
    const h = fresh();
    mkdirSync(h.stateDir, { recursive: true });
    // A pid above the kernel's pid_max: certainly no process.
    writeFileSync(join(h.stateDir, "server.json"), JSON.stringify({ id: randomUUID(), version: "0.1.0", url: "http://127.0.0.1:1", pid: 2 ** 22 + 7 }), { mode: 0o600 });
    expect(await h.cli(["session", "list"])).toMatchObject({ code: 0, stderr: "" });
    const first = h.registration()!;
    expect(first.pid).not.toBe(2 ** 22 + 7);
    expect(alive(first.pid)).toBe(true);
    await h.cli(["service", "stop"]);

    // A live pid (this test process) whose URL answers nothing.
    const port = await closedPort();
    writeFileSync(join(h.stateDir, "server.json"), JSON.stringify({ id: randomUUID(), version: "0.1.0", url: `http://127.0.0.1:${port}`, pid: process.pid }), { mode: 0o600 });
    expect(await h.cli(["session", "list"])).toMatchObject({ code: 0, stderr: "" });
    const second = h.registration()!;
    expect(second.pid).not.toBe(process.pid);
    expect(alive(second.pid)).toBe(true);
  });
});

describe("stop and restart", () => {
  it("service stop ends the daemon and reaps its registration; service restart starts a new one", async () => {
    const h = fresh();
    await h.cli(["session", "list"]);
    const first = h.registration()!;
    const stopped = await h.cli(["service", "stop"]);
    expect(stopped).toMatchObject({ code: 0, stderr: "" });
    expect(jsonOf(stopped)).toEqual({ stopped: true, pid: first.pid, endedTurns: [], via: "shutdown" });
    expect(alive(first.pid)).toBe(false);
    expect(h.registration()).toBeUndefined();
    expect(jsonOf(await h.cli(["service", "stop"]))).toEqual({ stopped: false, endedTurns: [] });

    await h.cli(["service", "start"]);
    const second = h.registration()!;
    const restarted = jsonOf(await h.cli(["service", "restart"]));
    const third = h.registration()!;
    expect(restarted).toMatchObject({ restarted: true, running: true, pid: third.pid });
    expect(third.pid).not.toBe(second.pid);
    expect(third.id).not.toBe(second.id);
    expect(alive(second.pid)).toBe(false);
    expect(h.log()).toMatch(/event=daemon\.shutdown reason="service restart"/);
  });

  it("stop names the running Turns it ends (stderr) before ending them; they settle as failed (host_shutdown)", async () => {
    const h = fresh();
    const marker = `hang-${randomUUID()}`;
    script(marker, { hang: true });
    const before = model.requests.length;
    const client = startCli(["run", marker], h.options);
    await model.waitForRequest(before + 1);
    const status = jsonOf(await h.cli(["service", "status"]));
    expect(status.runningTurns).toHaveLength(1);
    const { sessionId, turnId } = (status.runningTurns as { sessionId: string; turnId: string }[])[0]!;

    const stopped = await h.cli(["service", "stop"]);
    expect(stopped.code).toBe(0);
    expect(stopped.stderr).toBe(`stopping the local daemon ends 1 running Turn:\n  session ${sessionId} turn ${turnId}\n`);
    expect(jsonOf(stopped)).toMatchObject({ stopped: true, endedTurns: [{ sessionId, turnId }] });
    // The client, its daemon gone, keeps retrying its event stream for a while: not this test's subject.
    client.child.kill("SIGKILL");
    await client.exited;
    const turn = jsonOf<Turn>(await h.cli(["turn", "show", sessionId, turnId, "--embedded"]));
    expect(turn.phase).toBe("failed");
    expect(JSON.stringify(turn)).toContain("host_shutdown");
  });

  it("restart --if-idle leaves a daemon with running Turns as it is", async () => {
    const h = fresh();
    const marker = `idle-${randomUUID()}`;
    script(marker, { hang: true });
    const before = model.requests.length;
    const client = startCli(["run", marker], h.options);
    await model.waitForRequest(before + 1);
    const pid = h.registration()!.pid;
    const result = await h.cli(["service", "restart", "--if-idle"]);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe("the local daemon has 1 running Turn; not restarting (--if-idle)\n");
    expect(jsonOf(result)).toMatchObject({ restarted: false, pid });
    expect(h.registration()!.pid).toBe(pid);
    client.child.kill("SIGKILL");
    await client.exited;
  });
});

describe("registration heartbeat", () => {
  it("a daemon whose server.json names another daemon shuts itself down gracefully", async () => {
    const h = fresh();
    await h.cli(["service", "start"]);
    const mine = h.registration()!;
    expect(await (await h.call("/_daemon/heartbeat")).json()).toMatchObject({ result: { data: { registered: true } } });
    // Replaced (as by a racing spawner): a registration of another daemon, whose pid is no process.
    writeFileSync(join(h.stateDir, "server.json"), JSON.stringify({ ...mine, id: randomUUID(), pid: 2 ** 22 + 9 }), { mode: 0o600 });
    const beat = await fetch(`${mine.url}/_daemon/heartbeat`, { headers: { authorization: `Bearer ${h.token()}` } });
    expect(await beat.json()).toMatchObject({ result: { data: { registered: false } } });
    await waitUntil(() => !alive(mine.pid), "the replaced daemon to exit");
    expect(h.log()).toMatch(/event=daemon\.shutdown reason="registration replaced"/);
    // It left the other registration alone.
    expect(h.registration()!.pid).toBe(2 ** 22 + 9);
  });
});

describe("first start wins", () => {
  it("a --database or --config that differs from the daemon's is refused, naming service restart and --embedded", async () => {
    const h = fresh();
    await h.cli(["session", "list"]);
    const otherDb = await h.cli(["session", "list", "--database", "other.db"]);
    expect(otherDb).toMatchObject({ code: 1, stdout: "" });
    expect(otherDb.stderr).toMatch(/^error: DaemonMismatch: the local daemon already runs with database file:\/\/\S+ze-harness\.db, not file:\/\/\S+other\.db: run `ze-harness service restart` .*--embedded.*\n$/);
    const config = join(h.dir, "other.config.json");
    writeFileSync(config, JSON.stringify({}));
    const otherConfig = await h.cli(["--config", config, "session", "list"]);
    expect(otherConfig).toMatchObject({ code: 1, stdout: "" });
    expect(otherConfig.stderr).toMatch(/service restart/);
    expect(otherConfig.stderr).toMatch(/--embedded/);
    // The same database named explicitly is fine; --embedded runs that command in-process.
    expect(await h.cli(["session", "list", "--database", "ze-harness.db"])).toMatchObject({ code: 0, stdout: "[]\n" });
    expect(await h.cli(["session", "list", "--database", "other.db", "--embedded"])).toMatchObject({ code: 0, stdout: "[]\n" });
    // service restart with the new database switches the daemon.
    const restarted = jsonOf(await h.cli(["service", "restart", "--database", "other.db"]));
    expect(restarted.database).toBe(`file://${join(h.stateDir, "other.db")}`);
    expect(await h.cli(["session", "list", "--database", "other.db"])).toMatchObject({ code: 0, stdout: "[]\n" });
  });
});

describe("the daemon token", () => {
  it("is demanded on every API and control call: without it 401, with it the call goes through", async () => {
    const h = fresh();
    await h.cli(["service", "start"]);
    const anonymous = await h.call("/v1/servers/local/sessions", { auth: false });
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toMatchObject({ _tag: "UnauthorizedError" });
    expect((await h.call("/v1/servers/local/sessions", { headers: { authorization: "Bearer wrong" }, auth: false })).status).toBe(401);
    expect((await h.call("/v1/servers/local/sessions")).status).toBe(200);
    expect((await h.call("/_daemon/status", { auth: false })).status).toBe(401);
    const status = await h.call("/_daemon/status");
    expect(status.status).toBe(200);
    expect(await status.json()).toMatchObject({ result: { data: { pid: h.registration()!.pid } } });
    // A foreign Host is refused before anything else (DNS rebinding); fetch cannot set Host, node:http can.
    const foreign = await new Promise<number>((resolvePromise, reject) => {
      const url = new URL(`${h.registration()!.url}/_daemon/status`);
      get({ hostname: url.hostname, port: url.port, path: url.pathname, headers: { host: "evil.example", authorization: `Bearer ${h.token()}` } }, (response) => {
        response.resume();
        resolvePromise(response.statusCode ?? 0);
      }).once("error", reject);
    });
    expect(foreign).toBe(403);
  });

  it("POST /_daemon/shutdown answers 202, then the daemon exits and removes its registration", async () => {
    const h = fresh();
    await h.cli(["service", "start"]);
    const { pid } = h.registration()!;
    const anonymous = await h.call("/_daemon/shutdown", { method: "POST", auth: false });
    expect(anonymous.status).toBe(401);
    const response = await h.call("/_daemon/shutdown", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ reason: "test" }) });
    expect(response.status).toBe(202);
    expect(await response.json()).toEqual({ result: { data: { accepted: true, endingTurns: [] } } });
    await waitUntil(() => !alive(pid), "the daemon to exit");
    expect(h.registration()).toBeUndefined();
    expect(h.log()).toMatch(/event=daemon\.stop reason=test/);
  });
});

describe("Turns outlive their client", () => {
  it("a run killed mid-Turn: the Turn completes in the daemon and turn show reports it", async () => {
    const h = fresh();
    const marker = `survive-${randomUUID()}`;
    script(marker, { events: [{ type: "text", text: "First half." }, { type: "delay", ms: 1500 }, { type: "text", text: " Second half." }] });
    const client = startCli(["run", marker], h.options);
    await client.waitFor(/First half\./);
    client.child.kill("SIGKILL");
    await client.exited;

    const [session] = jsonOf<Session[]>(await h.cli(["session", "list"]));
    const listed = jsonOf<{ turns: { turn: Turn }[] }>(await h.cli(["turn", "list", session!.id]));
    const turnId = listed.turns[0]!.turn.id;
    const api = createZeClient({ baseUrl: h.registration()!.url, token: h.token() });
    const watched = await watchTurn(api, { server: "local", sessionId: session!.id, turnId });
    expect(watched.phase).toBe("completed");
    const shown = jsonOf<Turn>(await h.cli(["turn", "show", session!.id, turnId]));
    expect(shown.phase).toBe("completed");
    expect(JSON.stringify(shown)).toContain("First half. Second half.");
    expect(h.log()).toMatch(new RegExp(`event=turn\\.submitted server=local session=${session!.id} turn=${turnId} delivery=queue clientId=ze-harness-cli/\\d+`));
  });
});

describe("daemon.log and GET /v1/logs", () => {
  it("logfmt lines for daemon.start, client.connect/disconnect (durationMs) and turn.submitted, never the prompt", async () => {
    const h = fresh();
    const marker = `secret-prompt-${randomUUID()}`;
    script(marker, { events: [{ type: "text", text: "ok" }] });
    expect(await h.cli(["run", marker])).toMatchObject({ code: 0, stdout: "ok\n" });
    // The client's connections close as it exits; the daemon logs that as it notices.
    await waitUntil(() => (h.log().match(/event=client\.connect /g) ?? []).length === (h.log().match(/event=client\.disconnect /g) ?? []).length, "every connection's client.disconnect line");
    const lines = h.log().split("\n").filter((line) => line.startsWith("timestamp="));
    const prefix = /^timestamp=\d{4}-\d\d-\d\dT\S+Z level=(INFO|WARN|ERROR|DEBUG) run=[0-9a-f]{8} service=daemon event=\S+/;
    for (const line of lines) expect(line).toMatch(prefix);
    const registration = h.registration()!;
    expect(lines.some((line) => line.includes(`event=daemon.start url=${registration.url} pid=${registration.pid}`))).toBe(true);
    expect(lines.some((line) => /event=client\.connect connectionId=\S+ remoteAddr=127\.0\.0\.1 remotePort=\d+$/.test(line))).toBe(true);
    expect(lines.some((line) => /event=client\.disconnect connectionId=\S+ remoteAddr=127\.0\.0\.1 remotePort=\d+ durationMs=\d+$/.test(line))).toBe(true);
    expect(lines.filter((line) => line.includes("event=turn.submitted"))).toHaveLength(1);
    expect(h.log()).not.toContain(marker);
    expect(h.log()).not.toContain(h.token());
  });

  it("GET /v1/logs pages newest first with limit, filters by level, flags truncation, and validates limit", async () => {
    const h = fresh();
    await h.cli(["service", "start"]);
    await h.cli(["session", "list"]);
    const all = await (await h.call("/v1/logs")).json();
    expect(all.truncated).toBe(false);
    expect(all.entries.length).toBeGreaterThanOrEqual(3);
    const stamps = all.entries.map((entry: { timestamp: string }) => entry.timestamp);
    expect([...stamps].sort().reverse()).toEqual(stamps);
    expect(all.entries.at(-1)).toMatchObject({ level: "info", service: "daemon", event: "daemon.start", fields: { pid: String(h.registration()!.pid) } });
    // The URL line the daemon prints on stdout shares the file and is skipped.
    expect(h.log()).toContain(`${h.registration()!.url}\n`);
    const two = await (await h.call("/v1/logs?limit=2")).json();
    expect(two.entries).toHaveLength(2);
    expect(two.truncated).toBe(true);
    // Newest first: the page is two adjacent entries of a later full read (which may have newer ones on top).
    const later = (await (await h.call("/v1/logs")).json()).entries as unknown[];
    const at = later.findIndex((entry) => JSON.stringify(entry) === JSON.stringify(two.entries[0]));
    expect(at).toBeGreaterThanOrEqual(0);
    expect(later[at + 1]).toEqual(two.entries[1]);
    const warnings = await (await h.call("/v1/logs?level=warn")).json();
    expect(warnings).toEqual({ entries: [], truncated: false });
    const bad = await h.call("/v1/logs?limit=0");
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ _tag: "ValidationError" });
    expect((await h.call("/v1/logs?level=loud")).status).toBe(400);
    expect((await h.call("/v1/logs", { auth: false })).status).toBe(401);
  });

  it("a log over 10 MiB is trimmed at start to its newest 5 MiB, line-aligned", async () => {
    const h = fresh();
    mkdirSync(h.stateDir, { recursive: true });
    const line = (index: number): string => `timestamp=2026-01-01T00:00:00.000Z level=INFO run=0000000${index % 10} service=daemon event=old.line index=${index} pad=${"x".repeat(80)}\n`;
    const lines: string[] = [];
    let size = 0;
    for (let index = 0; size < 11 * 1024 * 1024; index++) {
      const next = line(index);
      lines.push(next);
      size += next.length;
    }
    writeFileSync(join(h.stateDir, "daemon.log"), lines.join(""), { mode: 0o600 });
    await h.cli(["service", "start"]);
    const log = h.log();
    expect(log.length).toBeLessThanOrEqual(5 * 1024 * 1024 + 4096);
    expect(log.startsWith("timestamp=2026-01-01T00:00:00.000Z level=INFO")).toBe(true);
    expect(log).toContain(lines.at(-1)!);
    expect(log).not.toContain(lines[0]!);
    expect(log).toMatch(/event=daemon\.start/);
  });

  it("a foreground serve (not the daemon) answers GET /v1/logs 503 service_unavailable", async () => {
    const h = fresh();
    const serve = await startServe(["--database", ":memory:"], h.env, h.root);
    try {
      const response = await fetch(`${serve.url}/v1/logs`);
      expect(response.status).toBe(503);
      expect(await response.json()).toMatchObject({ _tag: "UnavailableError", reason: "service_unavailable" });
      expect((await fetch(`${serve.url}/_daemon/status`)).status).toBe(404);
    } finally {
      await serve.stop();
    }
    expect(h.registration()).toBeUndefined();
  });
});

describe("the daemon client stays thin", () => {
  it("a warm-daemon command loads neither the harness (no storage driver), zod (a same-release daemon's responses are not validated again), undici nor web streams, and loads no ES module (the CommonJS fast path, dist/bundle/local.cjs)", async () => {
    const h = fresh();
    await h.cli(["service", "start"]);
    // Preloaded into the client: at exit, says whether the libSQL driver (only the harness opens
    // it), zod (its global config is set when it loads) and undici (Node's fetch, Request,
    // Headers, Response: services/contract/light-http.ts stands in for them) and Node's web streams
    // (a light response's body is read straight from node:http) were loaded, and whether Node's
    // ES module loader ran (a fast-path command is one CommonJS file: tools/bundle.mjs).
    const probe = join(h.dir, "probe.cjs");
    writeFileSync(
      probe,
      'process.on("exit", () => process.stderr.write("libsql=" + Object.keys(require("node:module")._cache).some((key) => key.includes("libsql")) + " zod=" + ("__zod_globalConfig" in globalThis) + " undici=" + process.moduleLoadList.some((name) => name.includes("undici")) + " webstreams=" + process.moduleLoadList.includes("NativeModule internal/webstreams/readablestream") + " esm=" + process.moduleLoadList.includes("NativeModule internal/modules/esm/translators") + "\\n"));\n',
    );
    const env = { ...h.env, NODE_OPTIONS: `--require ${probe}` };
    expect(await h.cli(["session", "list"], { env })).toMatchObject({ code: 0, stdout: "[]\n", stderr: "libsql=false zod=false undici=false webstreams=false esm=false\n" });
    // An embedded command opens the host (from the one-file dist/bundle/embedded.cjs: no ES module either).
    expect(await h.cli(["session", "list", "--embedded"], { env })).toMatchObject({ code: 0, stdout: "[]\n", stderr: "libsql=true zod=true undici=true webstreams=true esm=false\n" });
  });
});

function closedPort(): Promise<number> {
  return new Promise((resolvePromise) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolvePromise(typeof address === "object" && address !== null ? address.port : 0));
    });
  });
}
