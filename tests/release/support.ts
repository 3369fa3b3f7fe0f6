// The release suites' parts: a throwaway release key pair (openssl, never committed), stand-in
// archives (`ze-harness-<v>-linux-x64/ze-harness`: a POSIX-sh launcher running this checkout's
// built CLI as release <v> through ZE_HARNESS_TEST_RELEASE, plus LICENSE), `release:publish`
// into a directory, and a static server on 127.0.0.1 that serves it like downloads.ze.dev.
import { execFileSync } from "node:child_process";
import { chmodSync, createReadStream, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join, normalize } from "node:path";
import { expect } from "vitest";
import type { TestModel } from "../../tools/test-model/index.js";
import { daemonHome, type DaemonHome } from "../daemon/support.js";
import { runProcess, type CliResult } from "../support/cli.js";
import { binPath, repoRoot } from "../support/harness.js";

export const PLATFORM = `linux-${process.arch === "arm64" ? "arm64" : "x64"}`;

export interface ReleaseKey {
  readonly key: string;
  readonly cert: string;
}

/** A throwaway RSA key and its self-signed certificate (2048 bits: a test key, made fast). */
export function releaseKey(dir: string, name = "release"): ReleaseKey {
  mkdirSync(dir, { recursive: true });
  const key = join(dir, `${name}-key.pem`);
  const cert = join(dir, `${name}.crt.pem`);
  execFileSync("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=Ze Harness Test Release", "-keyout", key, "-out", cert], { stdio: "ignore" });
  return { key, cert };
}

/** `ze-harness-<version>-<platform>.tar.gz` in `dir`: the stand-in launcher plus LICENSE. */
export function standInArchive(dir: string, version: string): string {
  const name = `ze-harness-${version}-${PLATFORM}`;
  const folder = join(dir, "build", name);
  mkdirSync(folder, { recursive: true });
  const launcher = join(folder, "ze-harness");
  writeFileSync(launcher, `#!/bin/sh\nZE_HARNESS_TEST_RELEASE=${version}\nexport ZE_HARNESS_TEST_RELEASE\nexec "${process.execPath}" "${binPath}" "$@"\n`);
  chmodSync(launcher, 0o755);
  writeFileSync(join(folder, "LICENSE"), "MIT License (test stand-in)\n");
  const archive = join(dir, `${name}.tar.gz`);
  execFileSync("tar", ["-czf", archive, "-C", join(dir, "build"), name]);
  return archive;
}

/** `npm run release:publish` (the script itself, without npm's start-up). */
export function publish(out: string, key: ReleaseKey, channel: "stable" | "dev", archives: readonly string[], extra: readonly string[] = []): void {
  execFileSync(process.execPath, [join(repoRoot, "tools", "release", "publish.mjs"), "--dir", out, "--key", key.key, "--cert", key.cert, "--channel", channel, ...extra, ...archives], { stdio: "pipe" });
}

/** A static file server of `root` on 127.0.0.1 (GET only, no listings); `requested` lists the paths asked for. */
export async function releaseServer(root: string): Promise<{ readonly origin: string; readonly requested: readonly string[]; close(): Promise<void> }> {
  const requested: string[] = [];
  const server: Server = createServer((request, response) => {
    const path = normalize(decodeURIComponent(new URL(request.url ?? "/", "http://x").pathname));
    requested.push(path);
    const file = join(root, path);
    if (request.method !== "GET" || path.includes("..") || !existsSync(file) || !statSync(file).isFile()) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { "content-length": statSync(file).size });
    createReadStream(file).pipe(response);
  });
  await new Promise<void>((resolvePromise) => server.listen(0, "127.0.0.1", resolvePromise));
  const { port } = server.address() as AddressInfo;
  return { origin: `http://127.0.0.1:${port}`, requested, close: () => new Promise((resolvePromise) => server.close(() => resolvePromise())) };
}

/** `sh OUT/install.sh ...args` with `env` (the origin comes from ZE_HARNESS_RELEASE_ORIGIN). */
export function install(out: string, args: readonly string[], env: Record<string, string>, cwd: string): Promise<CliResult> {
  return runProcess("sh", [join(out, "install.sh"), ...args], { env, cwd });
}

/** A release installed by install.sh in a fresh daemon home, and how to reach it. */
export interface InstalledRelease {
  readonly h: DaemonHome;
  /** The published release directory the installation came from. */
  readonly out: string;
  /** `${XDG_DATA_HOME}/ze-harness`: versions, install.json, staged.json. */
  readonly data: string;
  readonly launcher: string;
  /** Paths the release server was asked for. */
  readonly requested: readonly string[];
  zh(args: readonly string[]): Promise<CliResult>;
  record(): Record<string, unknown>;
  staged(): { version: string } | undefined;
}

/**
 * `archive` published on stable into `out`, served by a new release server (pushed on `servers`
 * for the suite to close) and installed by install.sh with `flags` in a fresh daemon home whose
 * environment adds `env`.
 */
export async function installRelease(input: {
  readonly out: string;
  readonly key: ReleaseKey;
  readonly archive: string;
  readonly model: TestModel;
  readonly servers: { close(): Promise<void> }[];
  readonly flags?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
}): Promise<InstalledRelease> {
  const { out } = input;
  publish(out, input.key, "stable", [input.archive]);
  const server = await releaseServer(out);
  input.servers.push(server);
  const h = daemonHome(input.model);
  h.env["ZE_HARNESS_RELEASE_ORIGIN"] = server.origin;
  Object.assign(h.env, input.env ?? {});
  const result = await install(out, input.flags ?? ["--no-modify-path", "--no-restart-daemon"], h.env, h.root);
  expect(result.code, result.stderr).toBe(0);
  const data = join(h.env["XDG_DATA_HOME"]!, "ze-harness");
  const launcher = join(h.env["HOME"]!, ".ze-harness", "bin", "ze-harness");
  return {
    h,
    out,
    data,
    launcher,
    requested: server.requested,
    zh: (args) => runProcess(launcher, args, h.options),
    record: () => JSON.parse(readFileSync(join(data, "install.json"), "utf8")) as Record<string, unknown>,
    staged: () => (existsSync(join(data, "staged.json")) ? (JSON.parse(readFileSync(join(data, "staged.json"), "utf8")) as { version: string }) : undefined),
  };
}
