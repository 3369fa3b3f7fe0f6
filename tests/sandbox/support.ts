// What the sandbox suites share: a temp layout with a fake home (its credential directories, the
// harness's state directory with auth.json and daemon-token), the workdir inside that home (so
// the hidden paths lie *inside* the writable workdir and are hidden by the sandbox's own mounts,
// not merely by the private /tmp), an `outside` directory beside it holding a secret, and the
// host sandbox built exactly as the harness builds it (services/host/sandbox-host.ts).
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHostSandbox, type HostSandboxSetup } from "../../services/host/sandbox-host.js";
import type { SandboxConfig } from "../../services/config/types.js";
import type { SandboxSetting } from "../../services/sandbox/index.js";

export const SECRET = "the-secret-outside-0x5eed";
export const SSH_KEY = "-----BEGIN OPENSSH PRIVATE KEY----- not-a-real-key";
export const AUTH = '{"openai":{"type":"api","key":"sk-test-never-seen"}}';

export interface Layout {
  readonly root: string;
  /** The fake HOME, also the workdir (hidden paths inside the writable tree). */
  readonly home: string;
  readonly workdir: string;
  readonly outside: string;
  readonly secretFile: string;
  readonly state: string;
  readonly env: Record<string, string>;
  dispose(): void;
}

export function layout(prefix = "ze-sandbox-test-"): Layout {
  const root = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  const home = join(root, "home");
  const outside = join(root, "outside");
  const state = join(home, ".local", "share", "ze-harness");
  for (const directory of [home, outside, state, join(home, ".ssh"), join(home, ".config", "ze-harness")]) mkdirSync(directory, { recursive: true });
  const secretFile = join(outside, "secret.txt");
  writeFileSync(secretFile, `${SECRET}\n`);
  writeFileSync(join(home, ".ssh", "id_ed25519"), SSH_KEY);
  writeFileSync(join(home, ".netrc"), "machine example.com password hunter2\n");
  writeFileSync(join(state, "auth.json"), AUTH);
  writeFileSync(join(state, "daemon-token"), "daemon-token-value");
  writeFileSync(join(home, ".config", "ze-harness", "config.json"), "{}");
  writeFileSync(join(home, "notes.txt"), "ordinary file\n");
  const env: Record<string, string> = { HOME: home, PATH: process.env["PATH"] ?? "/usr/bin:/bin" };
  return { root, home, workdir: home, outside, secretFile, state, env, dispose: () => rmSync(root, { recursive: true, force: true }) };
}

/** The harness's sandbox for `env`: config `sandbox` and the flag as `createHarness` resolves them. */
export function hostSandbox(env: Record<string, string>, config: SandboxConfig = { mode: "workspace-write" }, flag?: SandboxSetting): HostSandboxSetup {
  const setup = createHostSandbox({ config: { sandbox: config }, flag, env, database: "ze-harness.db" });
  if (!setup) throw new Error("the sandbox is off");
  return setup;
}

/** Live processes whose command line contains `marker` (scanned from /proc: PIDs inside a sandbox's namespace are not the host's). */
export function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8").replaceAll("\0", " ");
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
      if (cmdline.includes(marker) && state !== "Z" && state !== "X") found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** A `sleep` duration no other process uses: its command line is the marker. */
export const uniqueSleep = (): string => `8${String(Math.floor(Math.random() * 1e6)).padStart(6, "0")}`;
