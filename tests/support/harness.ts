// Shared test resources: a temp directory with its own XDG dirs, a real libSQL
// file database, the in-process harness, and the generated client wrapped with the
// contract checker. Also a real `serve` process for the over-HTTP suites.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, mkdirSync, rmSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterEach, beforeEach } from "vitest";
import { createZeClient, type ZeClient } from "../../clients/index.js";
import { createHarness, type Harness, type HarnessOptions } from "../../services/host/harness.js";
import { contractFetch } from "./contract.js";

export const repoRoot = join(import.meta.dirname, "..", "..");
export const binPath = join(repoRoot, "bin", "ze-harness.js");

export interface TempHome {
  readonly dir: string;
  readonly root: string;
  readonly env: Record<string, string>;
  cleanup(): void;
}

/** A fresh directory with XDG config/data homes inside it and a `root` folder for workdirs. */
export function tempHome(prefix = "ze-test-"): TempHome {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  const root = join(dir, "root");
  mkdirSync(root, { recursive: true });
  const env: Record<string, string> = {
    HOME: join(dir, "home"),
    XDG_CONFIG_HOME: join(dir, "config"),
    XDG_DATA_HOME: join(dir, "data"),
    XDG_CACHE_HOME: join(dir, "cache"),
    // Tests never reach the internet: no background catalog refresh, and an explicit one goes to a
    // closed loopback port (a test that refreshes points ZE_HARNESS_MODELS_URL at its own server).
    ZE_HARNESS_DISABLE_MODELS_FETCH: "1",
    ZE_HARNESS_MODELS_URL: "http://127.0.0.1:9/api.json",
    PATH: process.env["PATH"] ?? "",
  };
  return { dir, root, env, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface TestHarness {
  readonly home: TempHome;
  readonly harness: Harness;
  readonly api: ZeClient;
  /** The in-process fetch with contract checking, for raw requests. */
  readonly fetch: (request: Request) => Promise<Response>;
  close(): Promise<void>;
}

export async function startHarness(overrides: Partial<HarnessOptions> = {}, home: TempHome = tempHome()): Promise<TestHarness> {
  const harness = await createHarness({
    serverRoot: home.root,
    env: home.env,
    database: join(home.dir, "test.db"),
    ...overrides,
  });
  const fetch = contractFetch(harness.fetch);
  const api = createZeClient({ baseUrl: "http://localhost", fetch, ...(overrides.token ? { token: overrides.token } : {}) });
  return {
    home,
    harness,
    api,
    fetch,
    close: async () => {
      await harness.close();
      home.cleanup();
    },
  };
}

export interface ServeProcess {
  readonly url: string;
  readonly child: ChildProcess;
  readonly stderr: () => string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Spawns the built binary's `serve` and waits for its first stdout line (the base URL). */
export async function startServe(args: readonly string[], env: Record<string, string>, cwd: string): Promise<ServeProcess> {
  const child = spawn(process.execPath, [binPath, "serve", "--port", "0", ...args], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const lines = createInterface({ input: child.stdout! });
  const url = await new Promise<string>((resolvePromise, reject) => {
    lines.once("line", resolvePromise);
    child.once("exit", (code) => reject(new Error(`serve exited with ${code} before printing its URL: ${stderr}`)));
  });
  const exited = new Promise<number | null>((resolvePromise) => child.once("exit", (code) => resolvePromise(code)));
  return {
    url,
    child,
    stderr: () => stderr,
    stop: async (signal = "SIGTERM") => {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** The network fetch with contract checking, for raw requests to a `serve` process. */
export const networkFetch = contractFetch((request) => globalThis.fetch(request));

/** The generated client over the network (e.g. to a `serve` process), with contract checking. */
export function networkClient(baseUrl: string, token?: string): ZeClient {
  return createZeClient({ baseUrl, fetch: networkFetch, ...(token !== undefined ? { token } : {}) });
}

/** A fresh in-process harness for every test of the calling file (started before, closed after). */
export function harnessPerTest(overrides: Partial<HarnessOptions> = {}): () => TestHarness {
  let current: TestHarness | undefined;
  beforeEach(async () => {
    current = await startHarness(overrides);
  });
  afterEach(async () => {
    await current?.close();
    current = undefined;
  });
  return () => {
    if (!current) throw new Error("harnessPerTest: no harness outside a test");
    return current;
  };
}
