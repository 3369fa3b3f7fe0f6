// Shared resources of the daemon suites: a temp home (HOME and the XDG dirs) with the scripted
// test model configured, its daemon files, raw calls with its token, and the cleanup that stops
// every daemon a test started (`service stop`, then SIGKILL of a pid still registered here).
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { TestModel } from "../../tools/test-model/index.js";
import { runCli, type CliOptions, type CliResult } from "../support/cli.js";
import { tempHome, type TempHome } from "../support/harness.js";
import { TEST_MODEL, testProviderConfig, writeGlobalConfig } from "../support/model.js";

export interface Registration {
  readonly id: string;
  readonly version: string;
  readonly url: string;
  readonly pid: number;
}

export interface DaemonHome extends TempHome {
  readonly options: CliOptions;
  readonly stateDir: string;
  /** `node bin/ze-harness.js ...args` in this home (no --embedded: the daemon path). */
  cli(args: readonly string[], overrides?: Partial<CliOptions>): Promise<CliResult>;
  registration(): Registration | undefined;
  token(): string;
  log(): string;
  /** A request to the daemon with (or, `auth: false`, without) its bearer token. */
  call(path: string, init?: RequestInit & { readonly auth?: boolean }): Promise<Response>;
  /** Pids of daemons this home has seen (registered or logged), for the cleanup. */
  readonly pids: Set<number>;
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Waits for `condition` (checked every 50 ms), failing with `what` after `ms`. */
export async function waitUntil(condition: () => boolean | Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolvePromise) => setTimeout(resolvePromise, 50));
  }
}

export function daemonHome(model?: TestModel): DaemonHome {
  const home = tempHome("ze-daemon-");
  if (model) writeGlobalConfig(home, { model: TEST_MODEL, providers: testProviderConfig(model) });
  const stateDir = join(home.env["XDG_DATA_HOME"]!, "ze-harness");
  const options: CliOptions = { env: home.env, cwd: home.root };
  const pids = new Set<number>();
  const registration = (): Registration | undefined => {
    const file = join(stateDir, "server.json");
    if (!existsSync(file)) return undefined;
    const parsed = JSON.parse(readFileSync(file, "utf8")) as Registration;
    pids.add(parsed.pid);
    return parsed;
  };
  const token = (): string => readFileSync(join(stateDir, "daemon-token"), "utf8").trim();
  return {
    ...home,
    options,
    stateDir,
    pids,
    cli: async (args, overrides = {}) => {
      const result = await runCli(args, { ...options, ...overrides });
      registration();
      return result;
    },
    registration,
    token,
    log: () => (existsSync(join(stateDir, "daemon.log")) ? readFileSync(join(stateDir, "daemon.log"), "utf8") : ""),
    call: (path, init = {}) => {
      const { auth = true, ...rest } = init;
      const headers = new Headers(rest.headers);
      if (auth) headers.set("authorization", `Bearer ${token()}`);
      return fetch(`${registration()!.url}${path}`, { ...rest, headers });
    },
  };
}

function isDaemonProcess(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").includes("serve --register");
  } catch {
    return false;
  }
}

/** Stops this home's daemon (gracefully, else by force) and removes the home. */
export async function cleanupDaemonHome(home: DaemonHome | undefined): Promise<void> {
  if (!home) return;
  try {
    home.registration();
    for (const match of home.log().matchAll(/event=daemon\.(?:start|lost_race) .*?\bpid=(\d+)/g)) home.pids.add(Number(match[1]));
    if (home.registration()) await runCli(["service", "stop"], home.options);
    for (const pid of home.pids) {
      // Only a daemon of this home: its pid, still running `serve --register`.
      if (!alive(pid) || !isDaemonProcess(pid)) continue;
      process.kill(pid, "SIGKILL");
      await waitUntil(() => !alive(pid), `daemon ${pid} to die`, 5_000);
    }
  } finally {
    home.cleanup();
  }
}
