// Background update checks (reference "Upgrading the local daemon") in temp HOMEs against a local
// release server: a channel install with auto-update on checks when its daemon starts and on the
// interval (ZE_HARNESS_UPDATE_CHECK_INTERVAL_MS stands in for six hours), stages a newer signed
// release in a separate process without touching the daemon or the launcher, and `update` then
// reuses that verified copy; an install record without the auto flag (an older installer's) gets
// no checks until `update --auto on`, and a pin gets none. A TUI that sees a newer server release
// checks the channel once and stages it in a process of its own. Every wait is on daemon.log,
// staged.json or the TUI's screen. The archives are the stand-ins of ./support.ts (this build run as another release).
import { existsSync, readlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { assertBuilt, jsonOf } from "../support/cli.js";
import { tempHome, type TempHome } from "../support/harness.js";
import { cleanupDaemonHome, waitUntil, type DaemonHome } from "../daemon/support.js";
import { startPty } from "../support/pty.js";
import { install, installRelease, PLATFORM, publish, releaseKey, standInArchive, type InstalledRelease, type ReleaseKey } from "./support.js";

vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });

let work: TempHome;
let key: ReleaseKey;
let archives: { v010: string; v011: string };
let model: TestModel;
const servers: { close(): Promise<void> }[] = [];
let home: DaemonHome | undefined;

beforeAll(async () => {
  assertBuilt();
  work = tempHome("ze-background-");
  key = releaseKey(join(work.dir, "keys"));
  archives = { v010: standInArchive(join(work.dir, "a"), "0.1.0"), v011: standInArchive(join(work.dir, "a"), "0.1.1") };
  model = await startTestModel({ directives: true });
});
afterAll(async () => {
  for (const server of servers) await server.close();
  await model?.close();
  work?.cleanup();
});
afterEach(async () => {
  await cleanupDaemonHome(home);
  home = undefined;
});

type Installed = InstalledRelease;

/** 0.1.0 published on stable and installed by install.sh (channel, auto on) in a fresh daemon home checking every `interval` ms. */
async function installed(name: string, interval: number): Promise<Installed> {
  const i = await installRelease({ out: join(work.dir, name), key, archive: archives.v010, model, servers, env: { ZE_HARNESS_UPDATE_CHECK_INTERVAL_MS: String(interval) } });
  home = i.h;
  return i;
}

const versionPath = (i: Installed, version: string): string => join(i.data, "versions", version, "ze-harness");
const logged = (i: Installed, pattern: RegExp): Promise<void> => waitUntil(() => pattern.test(i.h.log()), `daemon.log to match ${pattern}`, 60_000);

describe("background update checks", () => {
  it("check when the daemon starts and on the interval, stage a newer release without touching the daemon; update reuses it", async () => {
    const i = await installed("auto", 1_000);
    const started = jsonOf<{ pid: number; version: string }>(await i.zh(["service", "start"]));
    expect(started.version).toBe("0.1.0");
    // The start-up check: nothing newer yet.
    await logged(i, /event=update\.check\.current installed=0\.1\.0/);
    expect(i.staged()).toBeUndefined();

    publish(i.out, key, "stable", [archives.v011]);
    await waitUntil(() => i.staged()?.version === "0.1.1", "staged.json to name 0.1.1", 60_000);
    await logged(i, /event=update\.check\.staged version=0\.1\.1/);
    expect(existsSync(versionPath(i, "0.1.1"))).toBe(true);
    // Verified and staged only: the launcher, the record's version and the daemon are unchanged.
    expect(readlinkSync(i.launcher)).toBe(versionPath(i, "0.1.0"));
    expect(i.record()).toMatchObject({ version: "0.1.0", sequence: 2, auto: true });
    expect(i.h.registration()).toMatchObject({ pid: started.pid, version: "0.1.0" });
    expect(jsonOf(await i.zh(["update", "--check"]))).toMatchObject({ installed: "0.1.0", latest: "0.1.1", staged: "0.1.1" });

    // The checks off, and none in flight (a tick that logs a skip runs only when none is), so the
    // daemon's checks cannot race the update below.
    expect((await i.zh(["update", "--auto", "off"])).code).toBe(0);
    await logged(i, /event=update\.check\.skipped reason=auto-off installed=0\.1\.0/);
    const archive = `/releases/v0.1.1/ze-harness-0.1.1-${PLATFORM}.tar.gz`;
    const update = await i.zh(["update"]);
    expect(update.code, update.stderr).toBe(0);
    expect(update.stderr).toContain("Updated Ze Harness from 0.1.0 to 0.1.1.");
    expect(update.stderr).toContain("Local daemon updated from 0.1.0 to 0.1.1.");
    // Every check and the update reused the one verified download.
    expect(i.requested.filter((path) => path === archive)).toHaveLength(1);
    expect(readlinkSync(i.launcher)).toBe(versionPath(i, "0.1.1"));
    expect(i.record()).toMatchObject({ version: "0.1.1", auto: false });
    expect(i.staged()).toBeUndefined();
    expect(i.h.registration()).toMatchObject({ version: "0.1.1" });

    // A staged release the installation already matches or passes is discarded by service
    // restart, not activated (the checks are off: an up-to-date check would discard it too).
    writeFileSync(join(i.data, "staged.json"), JSON.stringify({ version: "0.1.0", sha256: "0".repeat(64) }));
    const restart = await i.zh(["service", "restart"]);
    expect(restart.code, restart.stderr).toBe(0);
    expect(restart.stderr).not.toContain("Activating the staged");
    expect(i.staged()).toBeUndefined();
    expect(readlinkSync(i.launcher)).toBe(versionPath(i, "0.1.1"));
    expect(jsonOf(restart)).toMatchObject({ restarted: true, version: "0.1.1" });
  });

  it("an install record without the auto flag gets none until update --auto on; a pin gets none", async () => {
    const i = await installed("legacy", 500);
    // What an older installer wrote: no auto flag.
    const { auto: _auto, ...legacy } = i.record();
    writeFileSync(join(i.data, "install.json"), JSON.stringify(legacy));
    expect((await i.zh(["service", "start"])).code).toBe(0);
    await logged(i, /event=update\.check\.skipped reason=auto-off installed=0\.1\.0/);
    publish(i.out, key, "stable", [archives.v011]);
    const asked = i.requested.length;
    // Skipped on the ticks after the publish too: nothing was asked of the release server.
    const skips = (i.h.log().match(/event=update\.check\.skipped/g) ?? []).length;
    await waitUntil(() => (i.h.log().match(/event=update\.check\.skipped/g) ?? []).length > skips, "another skipped check", 60_000);
    expect(i.requested.length).toBe(asked);
    expect(i.staged()).toBeUndefined();

    expect(jsonOf(await i.zh(["update", "--auto", "on"]))).toEqual({ auto: true, channel: "stable", pin: null });
    await waitUntil(() => i.staged()?.version === "0.1.1", "staged.json to name 0.1.1", 60_000);

    // Reinstalled as a pin of 0.1.0: the installer discards the staged copy, the checks stop.
    const pinned = await install(i.out, ["--version", "0.1.0", "--no-modify-path", "--no-restart-daemon"], i.h.env, i.h.root);
    expect(pinned.code, pinned.stderr).toBe(0);
    expect(i.staged()).toBeUndefined();
    await logged(i, /event=update\.check\.skipped reason=pinned installed=0\.1\.0/);
    const pinnedAsked = i.requested.length;
    const pinSkips = (i.h.log().match(/reason=pinned/g) ?? []).length;
    await waitUntil(() => (i.h.log().match(/reason=pinned/g) ?? []).length > pinSkips, "another pinned skip", 60_000);
    expect(i.requested.length).toBe(pinnedAsked);
    expect(i.staged()).toBeUndefined();
  });

  it("a TUI that sees a newer server release stages the channel's release once and says so; nothing is switched", async () => {
    const i = await installed("tui", 3_600_000);
    // The daemon runs 0.1.1 (this build as that release); its own start-up check finds nothing yet.
    const daemon = jsonOf<{ pid: number }>(await i.h.cli(["service", "start"], { env: { ...i.h.env, ZE_HARNESS_TEST_RELEASE: "0.1.1" } }));
    await logged(i, /event=update\.check\.current/);
    publish(i.out, key, "stable", [archives.v011]);
    // The installed 0.1.0 TUI connects to it.
    const tui = startPty([], { env: { ...i.h.env, ZE_HARNESS_TEST_RELEASE: "0.1.0" }, cwd: i.h.root });
    try {
      await tui.waitFor(/Ask anything/);
      await tui.waitFor(/Ze Harness 0\.1\.1 downloaded and verified/, 60_000);
      expect(i.staged()?.version).toBe("0.1.1");
      expect(readlinkSync(i.launcher)).toBe(versionPath(i, "0.1.0"));
      expect(i.record()).toMatchObject({ version: "0.1.0" });
      expect(i.h.registration()?.pid).toBe(daemon.pid);
      // The TUI staged it, not the daemon's checks; once for the session.
      expect(i.h.log()).not.toMatch(/event=update\.check\.staged/);
      // Install, the daemon's start-up check, the TUI's: and no more after further responses.
      tui.write("@say Still on 0.1.0.\r");
      await tui.waitFor(/Still on 0\.1\.0\.\n/);
      expect(i.requested.filter((path) => path === "/channels/stable.json")).toHaveLength(3);
      tui.write("\u0003");
      expect((await tui.exited).exitCode).toBe(0);
    } finally {
      tui.kill();
    }
  });
});
