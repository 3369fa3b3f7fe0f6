// `ze-harness update` and `uninstall` end to end in temp HOMEs: 0.1.0 installed by install.sh from
// a local release server, a long Turn on its daemon, 0.1.1 published; update stages it and leaves
// the busy daemon alone, the Turn finishes, `service restart` activates 0.1.1 and the Session and
// its history survive. Tampered releases and replayed pointers change nothing; uninstall keeps
// user data unless asked and refuses a symlinked directory.
import { cpSync, existsSync, mkdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { assertBuilt, jsonOf, runProcess } from "../support/cli.js";
import { tempHome, type TempHome } from "../support/harness.js";
import { cleanupDaemonHome, type DaemonHome } from "../daemon/support.js";
import { install, installRelease, PLATFORM, publish, releaseKey, standInArchive, type InstalledRelease, type ReleaseKey } from "./support.js";

vi.setConfig({ testTimeout: 90_000, hookTimeout: 60_000 });

let work: TempHome;
let key: ReleaseKey;
let archives: { v010: string; v011: string };
let model: TestModel;
let release: () => void = () => {};
const servers: { close(): Promise<void> }[] = [];
let home: DaemonHome | undefined;

beforeAll(async () => {
  assertBuilt();
  work = tempHome("ze-update-");
  key = releaseKey(join(work.dir, "keys"));
  archives = { v010: standInArchive(join(work.dir, "a"), "0.1.0"), v011: standInArchive(join(work.dir, "a"), "0.1.1") };
  model = await startTestModel();
  // The long Turn: its model answer waits until the test releases it.
  model.reply(() => new Promise((resolvePromise) => (release = () => resolvePromise({ events: [{ type: "text", text: "finished after the update" }] }))));
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

/** 0.1.0 published on stable and installed by install.sh in a fresh daemon home. */
async function installed(name: string, flags: readonly string[] = ["--no-modify-path", "--no-restart-daemon"]): Promise<Installed> {
  const i = await installRelease({ out: join(work.dir, name), key, archive: archives.v010, model, servers, flags });
  home = i.h;
  return i;
}

const active = (i: Installed): string => readlinkSync(i.launcher);
const versionPath = (i: Installed, version: string): string => join(i.data, "versions", version, "ze-harness");

describe("update", () => {
  it("stages a release while a Turn runs, leaves the daemon alone; service restart activates it; the Session survives", async () => {
    const i = await installed("e2e", ["--no-modify-path"]);
    const before = model.requests.length;
    const turn = i.zh(["run", "a long Turn across an update"]);
    await model.waitForRequest(before + 1);
    const daemon = jsonOf(await i.zh(["service", "status"]));
    expect(daemon).toMatchObject({ running: true, version: "0.1.0" });
    const { sessionId } = daemon.runningTurns[0] as { sessionId: string };

    publish(i.out, key, "stable", [archives.v011]);
    expect(jsonOf(await i.zh(["update", "--check"]))).toEqual({ installed: "0.1.0", channel: "stable", pin: null, latest: "0.1.1", updateAvailable: true, staged: null });
    const update = await i.zh(["update"]);
    expect(update.code, update.stderr).toBe(0);
    expect(update.stderr).toBe("Staged Ze Harness 0.1.1. The local daemon has 1 running Turn, so it stays unchanged on 0.1.0: run `ze-harness service restart` once they finish.\n");
    expect(jsonOf(update)).toEqual({ updated: false, from: "0.1.0", version: "0.1.0", staged: "0.1.1", daemon: "unchanged" });
    expect(active(i)).toBe(versionPath(i, "0.1.0"));
    expect(existsSync(versionPath(i, "0.1.1"))).toBe(true);
    expect(i.h.registration()!.pid).toBe(daemon.pid);

    release();
    const finished = await turn;
    expect(finished.code, finished.stderr).toBe(0);
    expect(finished.stdout).toContain("finished after the update");

    const restart = await i.zh(["service", "restart"]);
    expect(restart.code, restart.stderr).toBe(0);
    expect(restart.stderr).toContain("Activating the staged Ze Harness 0.1.1.");
    expect(jsonOf(restart)).toMatchObject({ restarted: true, running: true, version: "0.1.1" });
    expect(active(i)).toBe(versionPath(i, "0.1.1"));
    expect(i.record()).toMatchObject({ version: "0.1.1", sequence: 2 });
    expect(existsSync(join(i.data, "staged.json"))).toBe(false);
    expect(i.h.registration()!.pid).not.toBe(daemon.pid);
    const history = await i.zh(["session", "history", sessionId]);
    expect(history.code, history.stderr).toBe(0);
    expect(history.stdout).toContain("finished after the update");
  });

  it("with no daemon running switches the launcher at once; a second update finds it up to date", async () => {
    const i = await installed("idle");
    publish(i.out, key, "stable", [archives.v011]);
    const update = await i.zh(["update"]);
    expect(update.code, update.stderr).toBe(0);
    expect(update.stderr).toBe("Updated Ze Harness from 0.1.0 to 0.1.1.\n");
    expect(jsonOf(update)).toMatchObject({ updated: true, version: "0.1.1", daemon: "none" });
    expect(active(i)).toBe(versionPath(i, "0.1.1"));
    const again = await i.zh(["update"]);
    expect(again.stderr).toBe("Ze Harness 0.1.1 is up to date (stable channel).\n");
    expect(i.h.registration()).toBeUndefined();
    expect(jsonOf(await i.zh(["update", "--auto", "off"]))).toEqual({ auto: false, channel: "stable", pin: null });
    expect(i.record()).toMatchObject({ auto: false, version: "0.1.1" });
  });

  const tampers: [string, (out: string) => void, string][] = [
    ["a tampered archive", (out) => writeFileSync(join(out, "releases", "v0.1.1", `ze-harness-0.1.1-${PLATFORM}.tar.gz`), "not the archive"), "does not match the SHA-256 in the signed manifest"],
    [
      "a tampered manifest",
      (out) => {
        const file = join(out, "releases", "v0.1.1", "manifest.json");
        writeFileSync(file, readFileSync(file, "utf8").replace(/"size":\d+/, '"size":1'));
      },
      "the v0.1.1 manifest: the signature does not verify",
    ],
    [
      "a pointer signed for the other channel",
      (out) => {
        publish(out, key, "dev", [join(out, "releases", "v0.1.1", `ze-harness-0.1.1-${PLATFORM}.tar.gz`)], ["--sequence", "5"]);
        cpSync(join(out, "channels", "dev.json"), join(out, "channels", "stable.json"));
      },
      "signed for the dev channel, not stable",
    ],
  ];
  it("refuses a tampered archive, a tampered manifest, a pointer for the other channel and a replayed pointer, changing nothing", async () => {
    const i = await installed("tamper");
    const pristine = join(work.dir, "tamper-pristine");
    const old = readFileSync(join(i.out, "channels", "stable.json"));
    cpSync(i.out, pristine, { recursive: true });
    publish(pristine, key, "stable", [archives.v011]);
    const before = i.record();
    for (const [what, tamper, message] of tampers) {
      cpSync(pristine, i.out, { recursive: true });
      tamper(i.out);
      const result = await i.zh(["update"]);
      expect(result.code, what).toBe(1);
      expect(result.stderr, what).toContain(message);
      expect(result.stderr, what).toContain("nothing was installed");
      expect(active(i)).toBe(versionPath(i, "0.1.0"));
      expect(existsSync(versionPath(i, "0.1.1")), what).toBe(false);
      expect(i.record()).toEqual(before);
    }
    // Accept sequence 2 (0.1.1), then serve the old sequence-1 pointer again: a replay.
    cpSync(pristine, i.out, { recursive: true });
    expect((await i.zh(["update"])).code).toBe(0);
    writeFileSync(join(i.out, "channels", "stable.json"), old);
    const replay = await runProcess(versionPath(i, "0.1.1"), ["update", "--check"], i.h.options);
    expect(replay.code).toBe(1);
    expect(replay.stderr).toContain("(sequence 1) is older than the one this installation accepted (sequence 2): a replayed pointer");
    expect(i.record()).toMatchObject({ version: "0.1.1", sequence: 2 });
  });
});

describe("uninstall", () => {
  it("removes launcher and versions, keeps Sessions and config; --remove-user-data needs --yes and refuses a symlinked directory", async () => {
    const i = await installed("uninstall");
    const database = join(i.data, "ze-harness.db");
    writeFileSync(database, "sessions");
    const config = join(i.h.env["XDG_CONFIG_HOME"]!, "ze-harness");
    const result = await runProcess(versionPath(i, "0.1.0"), ["uninstall"], i.h.options);
    expect(result.code, result.stderr).toBe(0);
    expect(jsonOf(result).removed).toEqual([i.launcher, join(i.data, "versions"), join(i.data, "install.json"), join(i.data, "release-cert.pem")]);
    expect(existsSync(i.launcher)).toBe(false);
    expect(existsSync(join(i.h.env["HOME"]!, ".ze-harness"))).toBe(false);
    expect(readFileSync(database, "utf8")).toBe("sessions");
    expect(existsSync(join(config, "config.json"))).toBe(true);

    // Reinstall, then ask for the user data too.
    expect((await install(i.out, ["--no-modify-path", "--no-restart-daemon"], i.h.env, i.h.root)).code).toBe(0);
    const unconfirmed = await i.zh(["uninstall", "--remove-user-data"]);
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.stderr).toContain("add --yes to confirm");
    const cache = join(i.h.env["XDG_CACHE_HOME"]!, "ze-harness");
    const elsewhere = join(i.h.dir, "elsewhere");
    mkdirSync(elsewhere);
    writeFileSync(join(elsewhere, "keep"), "x");
    mkdirSync(i.h.env["XDG_CACHE_HOME"]!, { recursive: true });
    symlinkSync(elsewhere, cache);
    const refused = await i.zh(["uninstall", "--remove-user-data", "--yes"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`error: UninstallRefused: ${cache} is a symbolic link`);
    expect(existsSync(i.launcher)).toBe(true);
    expect(existsSync(join(elsewhere, "keep"))).toBe(true);
  });
});
