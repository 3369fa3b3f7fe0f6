// The SDK's daemon names doing what the reference says: `Daemon` spawns the shared daemon of a
// state directory (the built binary's `serve --register`), reuses it, refuses other options with
// DaemonOptionsMismatch, and stops it; the daemon-startup.json reporter; the daemon log and its
// trim; the declarative static Session plugin every host links; the MCP secret resolver.
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  createEmbeddedHarness,
  Daemon,
  DAEMON_STARTUP_FILE_NAME,
  DaemonError,
  DaemonOptionsMismatch,
  DECLARATIVE_SESSION_PLUGIN,
  makeDaemonLog,
  makeDaemonStartupReporter,
  makeMcpSecretCredentialResolver,
  sdk,
  startDaemonLogTrim,
  unwrap,
  type DaemonStartupProgress,
  type EmbeddedHarness,
} from "../../sdk/index.js";
import { readDaemonStartup } from "../../services/daemon/startup.js";
import { assertBuilt } from "../support/cli.js";
import { tempHome, type TempHome } from "../support/harness.js";

vi.setConfig({ testTimeout: 90_000 });

let home: TempHome | undefined;
let daemon: Daemon | undefined;
let harness: EmbeddedHarness | undefined;

afterEach(async () => {
  await daemon?.stop({ reason: "test done" });
  daemon = undefined;
  await harness?.close();
  harness = undefined;
  home?.cleanup();
  home = undefined;
});

const mode = (path: string): number => statSync(path).mode & 0o777;

describe("Daemon", () => {
  it("starts the shared daemon, reuses it, refuses other options, and stops it", async () => {
    assertBuilt();
    home = tempHome("ze-sdk-daemon-");
    daemon = new Daemon({ env: home.env, cwd: home.root });
    expect(await daemon.status()).toEqual({ running: false });
    const reports: DaemonStartupProgress[] = [];
    const first = await daemon.transport({ onStartup: (progress) => reports.push(progress) });
    expect(first.spawned).toBe(true);
    expect(first.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    // The start was reported step by step, ending with `serving`, all from that daemon.
    expect(reports.length).toBeGreaterThan(0);
    for (const report of reports) expect(report).toMatchObject({ step: expect.stringMatching(/^(opening|backup|migration|serving)$/), pid: first.status.pid });
    expect(reports.at(-1)).toMatchObject({ step: "serving", pid: first.status.pid });
    const startupFile = join(daemon.directory, DAEMON_STARTUP_FILE_NAME);
    expect(mode(startupFile)).toBe(0o600);
    // The transport authenticates itself.
    const health = await first.fetch(new Request(`${first.url}/v1/health`));
    expect(health.status).toBe(200);
    const again = await daemon.start();
    expect(again.pid).toBe(first.status.pid);
    expect(await daemon.status()).toMatchObject({ running: true, pid: first.status.pid, url: first.url });
    const mismatch = await daemon.transport({ database: join(home.dir, "other.db") }).catch((error: unknown) => error);
    expect(mismatch).toBeInstanceOf(DaemonOptionsMismatch);
    expect(mismatch).toBeInstanceOf(DaemonError);
    expect(mismatch).toMatchObject({ _tag: "DaemonMismatch" });
    const stopped = await daemon.stop();
    expect(stopped).toMatchObject({ stopped: true, pid: first.status.pid, endedTurns: [] });
    expect(await daemon.status()).toEqual({ running: false });
    expect(existsSync(startupFile)).toBe(false);
    daemon = undefined;
  });
});

describe("daemon startup reports", () => {
  it("writes each step to daemon-startup.json (0600) and removes it when done", () => {
    home = tempHome("ze-sdk-startup-");
    const file = join(home.dir, DAEMON_STARTUP_FILE_NAME);
    const reporter = makeDaemonStartupReporter(file, 4242);
    reporter.step("opening");
    expect(readDaemonStartup(file)).toMatchObject({ step: "opening", pid: 4242 });
    expect(mode(file)).toBe(0o600);
    reporter.migration({ kind: "backup-started", path: "/db.pre-x.bak", temporaryPath: "/db.pre-x.bak.tmp", totalBytes: 10 });
    expect(readDaemonStartup(file)).toMatchObject({ step: "backup", backup: { path: "/db.pre-x.bak", totalBytes: 10, bytes: 0 } });
    reporter.migration({ kind: "migration-started", id: "20260101000000_x", index: 1, total: 3, upgrade: true });
    expect(readDaemonStartup(file)).toMatchObject({ step: "migration", migration: { id: "20260101000000_x", index: 1, total: 3 } });
    reporter.done();
    expect(existsSync(file)).toBe(false);
    expect(readDaemonStartup(file)).toBeUndefined();
  });
});

describe("daemon log", () => {
  it("makeDaemonLog appends logfmt lines (0600); startDaemonLogTrim trims an overgrown log at once", () => {
    home = tempHome("ze-sdk-log-");
    const file = join(home.dir, "daemon.log");
    // 11 MiB of old lines: over the 10 MiB cap.
    writeFileSync(file, `${"timestamp=2026-01-01T00:00:00.000Z level=INFO run=old service=daemon event=filler\n".repeat(140_000)}`);
    expect(statSync(file).size).toBeGreaterThan(10 * 1024 * 1024);
    const log = makeDaemonLog(file, { run: "r1" });
    const stop = startDaemonLogTrim(log);
    expect(statSync(file).size).toBeLessThanOrEqual(5 * 1024 * 1024);
    log.info("client.connect", { connectionId: "r1-1" });
    stop();
    log.close();
    expect(mode(file)).toBe(0o600);
    const last = readFileSync(file, "utf8").trimEnd().split("\n").at(-1)!;
    expect(last).toMatch(/^timestamp=\S+ level=INFO run=r1 service=daemon event=client\.connect connectionId=r1-1$/);
  });
});

describe("DECLARATIVE_SESSION_PLUGIN and makeMcpSecretCredentialResolver", () => {
  it("every host links the declarative static Session plugin", async () => {
    home = tempHome("ze-sdk-declarative-");
    harness = await createEmbeddedHarness({ cwd: home.root, databaseFilename: ":memory:", env: home.env });
    const session = await harness.createSession();
    const body = { id: crypto.randomUUID(), source: { _tag: "Static" as const, id: DECLARATIVE_SESSION_PLUGIN }, resolved: { pluginId: DECLARATIVE_SESSION_PLUGIN }, options: {}, mcpServers: [], skills: [] };
    const added = await unwrap(sdk.addSessionPlugin({ client: harness.api.client, path: { server: "local", sessionId: session.id }, body }));
    expect(JSON.stringify(added)).toContain(DECLARATIVE_SESSION_PLUGIN);
    // Another static id is not linked: a typed error.
    const other = await sdk.addSessionPlugin({ client: harness.api.client, path: { server: "local", sessionId: session.id }, body: { ...body, id: crypto.randomUUID(), source: { _tag: "Static", id: "not.linked" } } });
    expect(other.error).toMatchObject({ _tag: "ValidationError" });
  });

  it("resolves secret references from a map or a function, and nothing else", async () => {
    const fromMap = makeMcpSecretCredentialResolver({ token: "s3cret", empty: "" });
    expect(await fromMap("token")).toBe("s3cret");
    expect(await fromMap("empty")).toBeUndefined();
    expect(await fromMap("missing")).toBeUndefined();
    const fromFunction = makeMcpSecretCredentialResolver(async (reference) => (reference === "a" ? "A" : undefined));
    expect([await fromFunction("a"), await fromFunction("b")]).toEqual(["A", undefined]);
    expect(() => makeMcpSecretCredentialResolver(null as never)).toThrow(TypeError);
  });
});
