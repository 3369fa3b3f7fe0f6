// Issue 22's "Done means", end to end with the REAL executable: the single-executable archive
// (tools/binary/build.mjs, shared with tests/binary through tests/support/binary.ts) published with
// release:publish under a throwaway key, served on 127.0.0.1, installed by `sh install.sh` on a
// PATH holding only the installer's tools (no node), then used through the installed launcher:
// --version, a one-shot run through the daemon it starts (and that daemon's start-up update
// check), serve over HTTP, ACP. A second release
// (the same tree built as the next patch number: the embedded package.json says it) is published,
// `update` stages it while a Turn runs on the daemon and leaves the daemon alone, and once the Turn
// finished a second `update` reuses the verified staged copy, switches the launcher and hands the
// daemon off to the new executable; the Session and its history survive.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, lstatSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { directiveTurn, startTestModel, type ScriptedResponse, type TestModel } from "../../tools/test-model/index.js";
import { startAcp } from "../acp/client.js";
import { cleanupDaemonHome, daemonHome, waitUntil, type DaemonHome } from "../daemon/support.js";
import { buildBinary, toolsOnlyPath, type BuiltBinary } from "../support/binary.js";
import { jsonOf, runProcess, type CliResult } from "../support/cli.js";
import { install, PLATFORM, publish, releaseKey, releaseServer, type ReleaseKey } from "./support.js";

vi.setConfig({ testTimeout: 120_000, hookTimeout: 600_000 });

let first: BuiltBinary;
let second: BuiltBinary;
let key: ReleaseKey;
let site: string;
let server: Awaited<ReturnType<typeof releaseServer>>;
let model: TestModel;
let home: DaemonHome;
let env: Record<string, string>;
let launcher: string;
let data: string;
let release: () => void = () => {};

/** The next patch release of `version` (0.1.0 → 0.1.1). */
const nextPatch = (version: string): string => version.replace(/^(\d+)\.(\d+)\.(\d+).*$/, (_, major: string, minor: string, patch: string) => `${major}.${minor}.${Number(patch) + 1}`);

beforeAll(async () => {
  // One at a time: two builds at once would only fight over the machine's cores.
  first = await buildBinary();
  second = await buildBinary({ version: nextPatch(first.version) });
  model = await startTestModel({ directives: true });
  // A prompt holding "@hold" is answered only when the test releases it; the rest by directives.
  const held = new Promise<ScriptedResponse>((resolvePromise) => (release = () => resolvePromise({ events: [{ type: "text", text: "Finished across the update." }] })));
  model.reply((request) => {
    if (JSON.stringify(request.body).includes("@hold")) return held;
    const turn = directiveTurn(request);
    if (typeof turn === "string") throw new Error(turn);
    return turn;
  });
  home = daemonHome(model);
  key = releaseKey(join(home.dir, "keys"));
  site = join(home.dir, "site");
  publish(site, key, "stable", [first.archive]);
  server = await releaseServer(site);
  env = { ...home.env, PATH: toolsOnlyPath(home.dir), SHELL: "/bin/sh", ZE_HARNESS_RELEASE_ORIGIN: server.origin };
  launcher = join(home.env["HOME"]!, ".ze-harness", "bin", "ze-harness");
  data = join(home.env["XDG_DATA_HOME"]!, "ze-harness");
});
afterAll(async () => {
  release();
  if (launcher !== undefined && existsSync(launcher)) await zh(["service", "stop"]);
  await cleanupDaemonHome(home);
  await server?.close();
  await model?.close();
});

const zh = (args: readonly string[]): Promise<CliResult> => runProcess(launcher, args, { env, cwd: home.root });
const versionExecutable = (version: string): string => join(data, "versions", version, "ze-harness");
const daemonExecutable = (pid: number): string => readlinkSync(`/proc/${pid}/exe`);

describe("the native installation, from sh install.sh to update", () => {
  it("install.sh, on a PATH with only its tools, installs the executable and adds the launcher to the profile", async () => {
    expect(spawnSync("sh", ["-c", "command -v node"], { env }).status).not.toBe(0);
    const result = await install(site, [], env, home.root);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(`Installed Ze Harness ${first.version} (stable channel) at ${launcher}.`);
    expect(lstatSync(launcher).isSymbolicLink()).toBe(true);
    expect(readlinkSync(launcher)).toBe(versionExecutable(first.version));
    expect(readFileSync(join(home.env["HOME"]!, ".profile"), "utf8")).toContain(`export PATH="${join(home.env["HOME"]!, ".ze-harness", "bin")}:$PATH"`);
    const version = await zh(["--version"]);
    expect(version).toMatchObject({ code: 0, stderr: "" });
    expect(version.stdout).toMatch(new RegExp(`^ze-harness/${first.version.replace(/\./g, "\\.")} ${PLATFORM} node-v20\\.`));
  });

  // The later steps use what install.sh installed: without it each fails at once instead of
  // waiting out its time limit for output that cannot come.
  beforeEach(({ task }) => {
    if (!task.name.startsWith("install.sh") && !existsSync(launcher)) throw new Error(`install.sh installed no launcher at ${launcher}`);
  });

  it("a one-shot run goes through the local daemon the installed executable starts", async () => {
    const result = await zh(["run", "@say Hello from the installed daemon."]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe("Hello from the installed daemon.\n");
    const status = jsonOf<{ running: boolean; pid: number; version: string }>(await zh(["service", "status"]));
    expect(status).toMatchObject({ running: true, version: first.version });
    expect(daemonExecutable(status.pid)).toBe(versionExecutable(first.version));
    // Its start-up update check ran (a process of the executable itself) and found nothing newer.
    await waitUntil(() => /event=update\.check\.current installed=\d/.test(home.log()), "the daemon's start-up update check", 60_000);
  });

  it("serve answers HTTP", async () => {
    const token = "native-token";
    const serve = spawn(launcher, ["serve", "--port", "0", "--token", token, "--database", join(home.dir, "serve.db")], { env, cwd: home.root, stdio: ["ignore", "pipe", "pipe"] });
    try {
      const url = await new Promise<string>((resolvePromise, reject) => {
        createInterface({ input: serve.stdout! }).once("line", resolvePromise);
        serve.once("exit", (code) => reject(new Error(`serve exited with ${code}`)));
      });
      const result = await zh(["run", "--remote", url, "--token", token, "@say Hello over HTTP."]);
      expect(result).toMatchObject({ code: 0, stderr: "", stdout: "Hello over HTTP.\n" });
    } finally {
      const exited = new Promise((resolvePromise) => serve.once("exit", resolvePromise));
      serve.kill("SIGTERM");
      await exited;
    }
  });

  it("acp answers initialize", async () => {
    const acp = startAcp({ env, cwd: home.root, command: [launcher] });
    try {
      const response = await acp.agent.request("initialize", { protocolVersion: 1, clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false }, clientInfo: { name: "ze-native-test", version: "1.0.0" } });
      expect(response.protocolVersion).toBe(1);
    } finally {
      await acp.close();
    }
  });

  it("update stages the next signed release while a Turn runs, then moves launcher and daemon to it; the Session survives", async () => {
    const before = model.requests.length;
    const turn = zh(["run", "@hold a Turn across the update"]);
    await model.waitForRequest(before + 1);
    const busy = jsonOf<{ pid: number; runningTurns: { sessionId: string }[] }>(await zh(["service", "status"]));
    expect(busy.runningTurns).toHaveLength(1);
    const { sessionId } = busy.runningTurns[0]!;

    publish(site, key, "stable", [second.archive]);
    expect(jsonOf(await zh(["update", "--check"]))).toMatchObject({ installed: first.version, latest: second.version, updateAvailable: true });
    const staged = await zh(["update"]);
    expect(staged.code, staged.stderr).toBe(0);
    expect(staged.stderr).toContain(`Staged Ze Harness ${second.version}. The local daemon has 1 running Turn, so it stays unchanged on ${first.version}`);
    expect(readlinkSync(launcher)).toBe(versionExecutable(first.version));
    expect(jsonOf<{ pid: number }>(await zh(["service", "status"])).pid).toBe(busy.pid);

    release();
    const finished = await turn;
    expect(finished.code, finished.stderr).toBe(0);
    expect(finished.stdout).toBe("Finished across the update.\n");

    const archivePath = `/releases/v${second.version}/${second.archive.slice(second.archive.lastIndexOf("/") + 1)}`;
    expect(server.requested.filter((path) => path === archivePath)).toHaveLength(1);
    const updated = await zh(["update"]);
    expect(updated.code, updated.stderr).toBe(0);
    expect(updated.stderr).toContain(`Updated Ze Harness from ${first.version} to ${second.version}.`);
    expect(updated.stderr).toContain(`Local daemon updated from ${first.version} to ${second.version}.`);
    expect(jsonOf(updated)).toMatchObject({ updated: true, version: second.version, daemon: "restarted" });
    // The verified staged copy was reused, not downloaded again.
    expect(server.requested.filter((path) => path === archivePath)).toHaveLength(1);
    expect(readlinkSync(launcher)).toBe(versionExecutable(second.version));
    // Version slots are kept until uninstall.
    expect(existsSync(versionExecutable(first.version))).toBe(true);

    expect((await zh(["--version"])).stdout).toMatch(new RegExp(`^ze-harness/${second.version.replace(/\./g, "\\.")} `));
    const status = jsonOf<{ pid: number; version: string }>(await zh(["service", "status"]));
    expect(status.version).toBe(second.version);
    expect(status.pid).not.toBe(busy.pid);
    expect(daemonExecutable(status.pid)).toBe(versionExecutable(second.version));
    const history = await zh(["session", "history", sessionId]);
    expect(history.code, history.stderr).toBe(0);
    expect(history.stdout).toContain("Finished across the update.");
  });
});
