// install.sh end to end in temp HOMEs against a local release server: what it installs and
// records, and what it refuses (a tampered archive or manifest, a pointer signed for the other
// channel, a replayed older pointer) without changing an existing installation.
import { cpSync, existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runProcess } from "../support/cli.js";
import { tempHome, type TempHome } from "../support/harness.js";
import { install, PLATFORM, publish, releaseKey, releaseServer, standInArchive, type ReleaseKey } from "./support.js";

let work: TempHome;
let key: ReleaseKey;
let archives: { v010: string; v011: string };
/** Published once: 0.1.0 on stable and dev (sequence 1); `next` adds 0.1.1 on stable (sequence 2). */
let base: string;
let next: string;
const servers: { close(): Promise<void> }[] = [];
const homes: TempHome[] = [];

beforeAll(() => {
  work = tempHome("ze-release-");
  key = releaseKey(join(work.dir, "keys"));
  archives = { v010: standInArchive(join(work.dir, "a"), "0.1.0"), v011: standInArchive(join(work.dir, "a"), "0.1.1") };
  base = join(work.dir, "base");
  publish(base, key, "stable", [archives.v010]);
  publish(base, key, "dev", [archives.v010]);
  next = join(work.dir, "next");
  cpSync(base, next, { recursive: true });
  publish(next, key, "stable", [archives.v011]);
});
afterAll(async () => {
  for (const server of servers) await server.close();
  for (const home of homes) home.cleanup();
  work.cleanup();
});

/** A copy of `from` (base: 0.1.0 on stable and dev), served on 127.0.0.1. */
async function published(name: string, from = base): Promise<{ out: string; origin: string }> {
  const out = join(work.dir, name);
  cpSync(from, out, { recursive: true });
  const server = await releaseServer(out);
  servers.push(server);
  return { out, origin: server.origin };
}

function home(origin: string): TempHome & { data: string; launcher: string } {
  const h = tempHome("ze-install-");
  homes.push(h);
  mkdirSync(h.env["HOME"]!, { recursive: true });
  h.env["ZE_HARNESS_RELEASE_ORIGIN"] = origin;
  h.env["SHELL"] = "/bin/bash";
  return { ...h, data: join(h.env["XDG_DATA_HOME"]!, "ze-harness"), launcher: join(h.env["HOME"]!, ".ze-harness", "bin", "ze-harness") };
}

const record = (data: string): Record<string, unknown> => JSON.parse(readFileSync(join(data, "install.json"), "utf8")) as Record<string, unknown>;

describe("install.sh", () => {
  it("installs the stable release: launcher, versioned executable with LICENSE, the record, PATH once; starts no daemon", async () => {
    const { out, origin } = await published("basic");
    const h = home(origin);
    const first = await install(out, [], h.env, h.root);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toContain("Installed Ze Harness 0.1.0 (stable channel)");
    expect(lstatSync(h.launcher).isSymbolicLink()).toBe(true);
    expect(readlinkSync(h.launcher)).toBe(join(h.data, "versions", "0.1.0", "ze-harness"));
    expect(existsSync(join(h.data, "versions", "0.1.0", "LICENSE"))).toBe(true);
    expect(record(h.data)).toEqual({ channel: "stable", pin: null, version: "0.1.0", sequence: 1, stableSequence: 1, devSequence: 0, launcher: h.launcher, origin, auto: true });
    // service restart --if-idle ran and, with no daemon running, started none.
    expect(existsSync(join(h.data, "server.json"))).toBe(false);
    const status = await runProcess(h.launcher, ["service", "status"], { env: h.env, cwd: h.root });
    expect(JSON.parse(status.stdout)).toMatchObject({ running: false });

    const again = await install(out, [], h.env, h.root);
    expect(again.code, again.stderr).toBe(0);
    const profile = readFileSync(join(h.env["HOME"]!, ".bashrc"), "utf8");
    expect(profile.split(`export PATH="${join(h.env["HOME"]!, ".ze-harness", "bin")}:$PATH"`)).toHaveLength(2);
  });

  it("--version pins an immutable release; --dir places the launcher; --no-modify-path leaves the profile alone", async () => {
    const { out, origin } = await published("pin", next);
    const h = home(origin);
    const bin = join(h.dir, "mybin");
    const result = await install(out, ["--version", "0.1.0", "--dir", bin, "--no-modify-path", "--no-restart-daemon"], h.env, h.root);
    expect(result.code, result.stderr).toBe(0);
    expect(readlinkSync(join(bin, "ze-harness"))).toBe(join(h.data, "versions", "0.1.0", "ze-harness"));
    expect(record(h.data)).toMatchObject({ channel: null, pin: "0.1.0", version: "0.1.0", launcher: join(bin, "ze-harness"), auto: false });
    expect(existsSync(join(h.env["HOME"]!, ".bashrc"))).toBe(false);
    const dev = await install(out, ["--channel", "dev", "--dir", bin, "--no-modify-path", "--no-restart-daemon"], h.env, h.root);
    expect(dev.code, dev.stderr).toBe(0);
    expect(record(h.data)).toMatchObject({ channel: "dev", pin: null, version: "0.1.0" });
  });

  it("an unmanaged executable at the launcher path is left in place and refused", async () => {
    const { out, origin } = await published("unmanaged");
    const h = home(origin);
    mkdirSync(join(h.env["HOME"]!, ".ze-harness", "bin"), { recursive: true });
    writeFileSync(h.launcher, "#!/bin/sh\necho mine\n", { mode: 0o755 });
    const result = await install(out, ["--no-restart-daemon"], h.env, h.root);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("is not this installer's launcher: move it aside");
    expect(readFileSync(h.launcher, "utf8")).toContain("echo mine");
  });

  // Each: 0.1.0 installed, then 0.1.1 published and tampered with; the rerun fails and 0.1.0 stays.
  const tampers: [string, (out: string) => void, RegExp][] = [
    [
      "a tampered archive",
      (out) => writeFileSync(join(out, "releases", "v0.1.1", `ze-harness-0.1.1-${PLATFORM}.tar.gz`), "not the archive"),
      /does not match the SHA-256 in the signed manifest/,
    ],
    [
      "a tampered manifest",
      (out) => {
        const file = join(out, "releases", "v0.1.1", "manifest.json");
        writeFileSync(file, readFileSync(file, "utf8").replace(/"sha256":"[0-9a-f]+"/, `"sha256":"${"0".repeat(64)}"`));
      },
      /the v0\.1\.1 manifest: the signature does not verify/,
    ],
    ["a pointer signed for the other channel", (out) => cpSync(join(out, "channels", "dev.json"), join(out, "channels", "stable.json")), /signed for the dev channel, not stable/],
  ];
  for (const [what, tamper, message] of tampers) {
    it(`${what} is refused without changing the installation`, async () => {
      const { out, origin } = await published(what.replace(/\W/g, "-"));
      const h = home(origin);
      expect((await install(out, ["--no-restart-daemon", "--no-modify-path"], h.env, h.root)).code).toBe(0);
      const before = record(h.data);
      cpSync(next, out, { recursive: true });
      tamper(out);
      const result = await install(out, ["--no-restart-daemon", "--no-modify-path"], h.env, h.root);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(message);
      expect(readlinkSync(h.launcher)).toBe(join(h.data, "versions", "0.1.0", "ze-harness"));
      expect(existsSync(join(h.data, "versions", "0.1.1"))).toBe(false);
      expect(record(h.data)).toEqual(before);
    });
  }

  it("a replayed older pointer is refused once a newer one was accepted", async () => {
    const { out, origin } = await published("replay", next);
    const old = readFileSync(join(base, "channels", "stable.json"));
    const h = home(origin);
    expect((await install(out, ["--no-restart-daemon", "--no-modify-path"], h.env, h.root)).code).toBe(0);
    expect(record(h.data)).toMatchObject({ version: "0.1.1", sequence: 2 });
    writeFileSync(join(out, "channels", "stable.json"), old);
    const result = await install(out, ["--no-restart-daemon", "--no-modify-path"], h.env, h.root);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("(sequence 1) is older than the one this installation accepted (sequence 2)");
    expect(readlinkSync(h.launcher)).toBe(join(h.data, "versions", "0.1.1", "ze-harness"));
  });

  it("a pointer signed by another key is refused", async () => {
    const { out, origin } = await published("other-key");
    const other = releaseKey(join(work.dir, "keys"), "other");
    const elsewhere = join(work.dir, "other-out");
    publish(elsewhere, other, "stable", [archives.v011], ["--sequence", "9"]);
    cpSync(join(elsewhere, "channels", "stable.json"), join(out, "channels", "stable.json"));
    const h = home(origin);
    const result = await install(out, ["--no-restart-daemon"], h.env, h.root);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("the stable channel pointer: the signature does not verify");
    expect(existsSync(h.launcher)).toBe(false);
  });
});
