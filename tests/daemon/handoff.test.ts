// Upgrading the local daemon (reference "Upgrading the local daemon"): a CLI newer than the
// running daemon hands an idle one off at its first local command (`Local daemon updated from
// <old> to <new>.`), never to an older release and not with ZE_HARNESS_DISABLE_AUTOUPDATE=1; and
// stopping a daemon whose shutdown request fails falls back to SIGTERM. "Older" and "newer" CLIs
// are this build run as another release (ZE_HARNESS_TEST_RELEASE).
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { assertBuilt, jsonOf } from "../support/cli.js";
import { alive, cleanupDaemonHome, daemonHome, waitUntil, type DaemonHome } from "./support.js";

vi.setConfig({ testTimeout: 90_000, hookTimeout: 60_000 });

let model: TestModel;
let home: DaemonHome | undefined;

beforeAll(async () => {
  assertBuilt();
  model = await startTestModel();
});
afterAll(async () => {
  await model?.close();
});
afterEach(async () => {
  await cleanupDaemonHome(home);
  home = undefined;
});

const as = (h: DaemonHome, release: string, extra: Record<string, string> = {}) => ({ env: { ...h.env, ZE_HARNESS_TEST_RELEASE: release, ...extra } });

describe("daemon handoff", () => {
  it("an idle older daemon is handed off at the first local command; never to an older release; not with ZE_HARNESS_DISABLE_AUTOUPDATE=1", async () => {
    const h = (home = daemonHome(model));
    const started = jsonOf(await h.cli(["service", "start"], as(h, "0.1.0")));
    expect(started).toMatchObject({ running: true, version: "0.1.0" });

    const newer = await h.cli(["session", "list"], as(h, "0.1.1"));
    expect(newer.code, newer.stderr).toBe(0);
    expect(newer.stderr).toContain("Local daemon updated from 0.1.0 to 0.1.1.\n");
    const handed = jsonOf(await h.cli(["service", "status"], as(h, "0.1.1")));
    expect(handed).toMatchObject({ running: true, version: "0.1.1" });
    expect(handed.pid).not.toBe(started.pid);
    expect(alive(started.pid)).toBe(false);
    expect(h.log()).toMatch(/event=daemon\.shutdown reason=update /);

    const older = await h.cli(["session", "list"], as(h, "0.1.0"));
    expect(older.code, older.stderr).toBe(0);
    expect(older.stderr).not.toContain("Local daemon updated");
    const disabled = await h.cli(["session", "list"], as(h, "0.2.0", { ZE_HARNESS_DISABLE_AUTOUPDATE: "1" }));
    expect(disabled.code, disabled.stderr).toBe(0);
    expect(disabled.stderr).not.toContain("Local daemon updated");
    expect(h.registration()).toMatchObject({ pid: handed.pid, version: "0.1.1" });
  });

  it("a new release that cannot start: the previous daemon is restarted as it was, the reason reported, no retry until service restart", async () => {
    const h = (home = daemonHome(model));
    const started = jsonOf(await h.cli(["service", "start"], as(h, "0.1.0")));
    // The newer CLI's environment makes its daemon fail (an unreadable global config); the old daemon's own does not.
    const broken = join(h.dir, "broken-config");
    mkdirSync(join(broken, "ze-harness"), { recursive: true });
    writeFileSync(join(broken, "ze-harness", "config.json"), "{ not json");
    const newer = await h.cli(["session", "list"], as(h, "0.1.1", { XDG_CONFIG_HOME: broken }));
    expect(newer.code, newer.stderr).toBe(0);
    expect(newer.stderr).toMatch(/Local daemon not updated from 0\.1\.0 to 0\.1\.1: .+\. Restarted 0\.1\.0 so work can continue; `ze-harness service restart` tries 0\.1\.1 again\./);
    const restored = h.registration()!;
    expect(restored).toMatchObject({ version: "0.1.0" });
    expect(restored.pid).not.toBe(started.pid);

    const again = await h.cli(["session", "list"], as(h, "0.1.1"));
    expect(again.stderr).not.toContain("Local daemon");
    expect(h.registration()!.pid).toBe(restored.pid);
    expect(jsonOf(await h.cli(["service", "restart"], as(h, "0.1.1")))).toMatchObject({ restarted: true, version: "0.1.1" });
    expect(existsSync(join(h.stateDir, "handoff-failed.json"))).toBe(false);
  });

  it("stopping a daemon whose shutdown request fails falls back to SIGTERM", async () => {
    const h = (home = daemonHome());
    const fake = spawn(process.execPath, [join(import.meta.dirname, "fixtures", "refusing-daemon.mjs"), "serve", "--register", h.stateDir], { stdio: ["ignore", "pipe", "inherit"] });
    h.pids.add(fake.pid!);
    await new Promise<void>((resolvePromise) => fake.stdout!.once("data", () => resolvePromise()));
    expect(jsonOf(await h.cli(["service", "status"]))).toMatchObject({ running: true, pid: fake.pid, version: "0.0.1" });
    const stopped = await h.cli(["service", "stop"]);
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(jsonOf(stopped)).toEqual({ stopped: true, pid: fake.pid, endedTurns: [], via: "SIGTERM" });
    await waitUntil(() => !alive(fake.pid!), "the stand-in daemon to exit");
    expect(existsSync(join(h.stateDir, "sigterm"))).toBe(true);
    expect(h.registration()).toBeUndefined();
  });
});
