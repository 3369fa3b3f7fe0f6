// Attacks on the native update path that need no daemon: files planted beside the installation
// (a staged.json naming a path outside versions/), a release whose signed manifest names its
// archive with `..` (what a leaked-but-revoked or buggy publisher could sign), and a hostile
// mirror that answers the archive's download with bytes that never end. Each must change
// nothing: the launcher keeps pointing at the installed version and no file lands outside the
// update's own work folder. Real files, a throwaway openssl key, a local release server.
import { createHash, sign, createPrivateKey } from "node:crypto";
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { repoRoot } from "../support/harness.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installPaths, executableOf } from "../../services/release/layout.js";
import { runUpdate, takeStaged } from "../../services/release/update.js";
import { tempHome, type TempHome } from "../support/harness.js";
import { install, PLATFORM, releaseKey, releaseServer, standInArchive, type ReleaseKey } from "./support.js";

let work: TempHome;
let key: ReleaseKey;

beforeAll(() => {
  work = tempHome("ze-hardening-");
  key = releaseKey(join(work.dir, "keys"));
});
afterAll(() => work?.cleanup());

const digest = (data: Buffer): string => createHash("sha256").update(data).digest("hex");

/** Release files signed with the test key: manifest, its signature and the stable pointer (sequence 2). */
function signedRelease(version: string, archives: readonly { name: string; sha256: string; size: number }[]): Record<string, Buffer> {
  const privateKey = createPrivateKey(readFileSync(key.key));
  const signed = (data: Buffer) => sign("sha256", data, privateKey).toString("base64");
  const manifest = Buffer.from(`${JSON.stringify({ version, archives: archives.map((archive) => ({ ...archive, platform: PLATFORM })) })}\n`);
  const payload = Buffer.from(JSON.stringify({ channel: "stable", version, sequence: 2, manifest: `releases/v${version}/manifest.json`, manifestSha256: digest(manifest) }));
  return {
    [`/releases/v${version}/manifest.json`]: manifest,
    [`/releases/v${version}/manifest.json.sig`]: Buffer.from(`${signed(manifest)}\n`),
    "/channels/stable.json": Buffer.from(JSON.stringify({ payload: payload.toString("base64"), signature: signed(payload) })),
  };
}

/** An installation of 0.1.0 laid out the way install.sh leaves it, with a stand-in executable. */
function installed(env: Record<string, string>, origin = "http://127.0.0.1:9"): { launcher: string; active: string } {
  const paths = installPaths(env);
  const active = executableOf(paths, "0.1.0");
  mkdirSync(join(paths.versions, "0.1.0"), { recursive: true });
  writeFileSync(active, "#!/bin/sh\necho 0.1.0\n");
  chmodSync(active, 0o755);
  const launcher = join(env["HOME"] ?? "", ".ze-harness", "bin", "ze-harness");
  mkdirSync(join(launcher, ".."), { recursive: true });
  symlinkSync(active, launcher);
  writeFileSync(paths.record, JSON.stringify({ channel: "stable", pin: null, version: "0.1.0", sequence: 1, launcher, origin, auto: true }));
  copyFileSync(key.cert, paths.cert);
  return { launcher, active };
}

describe("a staged.json naming a path outside versions/", () => {
  it("is discarded by service restart's takeStaged: the launcher is not switched to the planted executable", () => {
    const home = tempHome("ze-staged-");
    const env = home.env;
    const { launcher, active } = installed(env);
    const paths = installPaths(env);
    // The planted executable: <temp>/evil/ze-harness, reached from versions/ by `..`.
    const evil = join(paths.data, "..", "..", "evil");
    mkdirSync(evil, { recursive: true });
    writeFileSync(join(evil, "ze-harness"), "#!/bin/sh\necho owned\n", { mode: 0o755 });
    writeFileSync(paths.staged, JSON.stringify({ version: "9/../../../../evil", sha256: "0".repeat(64) }));
    expect(takeStaged(env)).toBeUndefined();
    expect(readlinkSync(launcher)).toBe(active);
    expect(JSON.parse(readFileSync(paths.record, "utf8")).version).toBe("0.1.0");
    home.cleanup();
  });
});

describe("a staged release on a pinned installation", () => {
  // A background `update --stage` that verified 0.1.1 before `install.sh --version 0.1.0` pinned
  // the installation writes its staged.json after the installer cleared it: the pin must hold.
  it("is discarded by service restart's takeStaged: the pin stays on its version", () => {
    const home = tempHome("ze-pinned-");
    const { launcher, active } = installed(home.env);
    const paths = installPaths(home.env);
    writeFileSync(paths.record, JSON.stringify({ ...JSON.parse(readFileSync(paths.record, "utf8")), channel: null, pin: "0.1.0", auto: false }));
    mkdirSync(join(paths.versions, "0.1.1"));
    writeFileSync(executableOf(paths, "0.1.1"), "#!/bin/sh\necho 0.1.1\n", { mode: 0o755 });
    writeFileSync(paths.staged, JSON.stringify({ version: "0.1.1", sha256: "0".repeat(64) }));
    expect(takeStaged(home.env)).toBeUndefined();
    expect(readlinkSync(launcher)).toBe(active);
    expect(JSON.parse(readFileSync(paths.record, "utf8"))).toMatchObject({ version: "0.1.0", pin: "0.1.0" });
    expect(existsSync(paths.staged)).toBe(false);
    home.cleanup();
  });
});

describe("a signed manifest naming its archive with ..", () => {
  it("is refused before the archive is written anywhere", async () => {
    const home = tempHome("ze-dotdot-");
    const root = join(home.dir, "site");
    const server = await releaseServer(root);
    try {
      const { launcher, active } = installed(home.env, server.origin);
      const archive = standInArchive(join(home.dir, "a"), "0.1.1");
      const bytes = readFileSync(archive);
      // The archive's bytes, served where the `..` name resolves on the origin.
      const name = `../../../../planted-${PLATFORM}.tar.gz`;
      mkdirSync(join(root, "releases", "v0.1.1"), { recursive: true });
      writeFileSync(join(root, `planted-${PLATFORM}.tar.gz`), bytes);
      const privateKey = createPrivateKey(readFileSync(key.key));
      const signed = (data: Buffer) => sign("sha256", data, privateKey).toString("base64");
      const manifest = Buffer.from(`${JSON.stringify({ version: "0.1.1", archives: [{ name, platform: PLATFORM, sha256: digest(bytes), size: bytes.length }] })}\n`);
      writeFileSync(join(root, "releases", "v0.1.1", "manifest.json"), manifest);
      writeFileSync(join(root, "releases", "v0.1.1", "manifest.json.sig"), `${signed(manifest)}\n`);
      const payload = Buffer.from(JSON.stringify({ channel: "stable", version: "0.1.1", sequence: 2, manifest: "releases/v0.1.1/manifest.json", manifestSha256: digest(manifest) }));
      mkdirSync(join(root, "channels"), { recursive: true });
      writeFileSync(join(root, "channels", "stable.json"), JSON.stringify({ payload: payload.toString("base64"), signature: signed(payload) }));

      const paths = installPaths(home.env);
      // Where update's work folder (versions/.0.1.1.partial-<pid>) plus that name would land: the temp dir.
      const landing = join(paths.versions, ".0.1.1.partial-x", name);
      await expect(runUpdate(home.env, () => {})).rejects.toMatchObject({ _tag: "ReleaseVerificationFailed" });
      expect(existsSync(landing)).toBe(false);
      expect(existsSync(join(paths.versions, "0.1.1"))).toBe(false);
      expect(readlinkSync(launcher)).toBe(active);
    } finally {
      await server.close();
      home.cleanup();
    }
  });
});


/**
 * A hostile mirror: the signed 0.1.1 release (and a stamped install.sh), except that the archive's
 * download answers with bytes without end (no content-length; capped at 256 MiB so that a client
 * that buffers everything fails the test instead of exhausting the machine).
 */
async function endlessMirror(dir: string): Promise<{ origin: string; name: string; served: () => number; close(): Promise<void> }> {
  const archive = standInArchive(join(dir, "a"), "0.1.1");
  const bytes = readFileSync(archive);
  const name = `ze-harness-0.1.1-${PLATFORM}.tar.gz`;
  const files = signedRelease("0.1.1", [{ name, sha256: digest(bytes), size: bytes.length }]);
  files["/install.sh"] = Buffer.from(readFileSync(join(repoRoot, "tools", "release", "install.sh"), "utf8").replace("@RELEASE_CERTIFICATE@", readFileSync(key.cert, "utf8").trim()));
  let served = 0;
  const chunk = Buffer.alloc(64 * 1024, 0x41);
  const server: Server = createServer((request, response) => {
    const file = files[request.url ?? ""];
    if (file !== undefined) return void response.end(file);
    if (request.url !== `/releases/v0.1.1/${name}`) return void response.writeHead(404).end();
    response.writeHead(200);
    const pump = (): void => {
      while (!response.destroyed && served < 256 * 1024 * 1024) {
        served += chunk.length;
        if (!response.write(chunk)) return void response.once("drain", pump);
      }
      if (!response.destroyed) response.end();
    };
    pump();
  });
  await new Promise<void>((resolvePromise) => server.listen(0, "127.0.0.1", resolvePromise));
  writeFileSync(join(dir, "install.sh"), files["/install.sh"]);
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    name,
    served: () => served,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolvePromise) => server.close(resolvePromise));
    },
  };
}

describe("a mirror that serves an archive without end", () => {
  it("update cuts it off past the size the signed manifest gives, and installs nothing", async () => {
    const home = tempHome("ze-endless-");
    const mirror = await endlessMirror(home.dir);
    try {
      const { launcher, active } = installed(home.env, mirror.origin);
      await expect(runUpdate(home.env, () => {})).rejects.toMatchObject({ _tag: "ReleaseVerificationFailed", message: expect.stringMatching(/larger than/) });
      expect(existsSync(join(installPaths(home.env).versions, "0.1.1"))).toBe(false);
      expect(readlinkSync(launcher)).toBe(active);
      // Cut off near the signed size, not after the whole answer was buffered.
      expect(mirror.served()).toBeLessThan(64 * 1024 * 1024);
    } finally {
      await mirror.close();
      home.cleanup();
    }
  }, 20_000);

  it("install.sh cuts it off too (its temporary folder is not filled), and installs nothing", async () => {
    const home = tempHome("ze-endless-sh-");
    const mirror = await endlessMirror(home.dir);
    try {
      const env = { ...home.env, ZE_HARNESS_RELEASE_ORIGIN: mirror.origin, PATH: process.env["PATH"] ?? "", TMPDIR: home.dir };
      const result = await install(home.dir, ["--no-modify-path", "--no-restart-daemon"], env, home.root);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(new RegExp(`${mirror.name.replace(/\./g, "\\.")} is larger than`));
      expect(existsSync(join(installPaths(home.env).versions))).toBe(false);
      expect(existsSync(join(home.env["HOME"] ?? "", ".ze-harness", "bin", "ze-harness"))).toBe(false);
      expect(mirror.served()).toBeLessThan(64 * 1024 * 1024);
    } finally {
      await mirror.close();
      home.cleanup();
    }
  }, 20_000);
});
