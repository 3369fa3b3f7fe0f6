// A warm local command reuses the proof an earlier command got from the daemon
// (services/daemon/proof-cache.ts: `daemon-proven.json`) and so sends its API request at once —
// no challenge, no status call — while the token still goes only to the process that proved it
// holds it: a proof naming another process start, or a token the daemon did not prove, is not
// reused, and a proven daemon that no longer listens is replaced as a probe would have replaced it.
// What the client sends is recorded in the client process itself (a preload that wraps
// node:http's request), what it loads by an ESM load hook.
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { processStart } from "../../services/daemon/proof-cache.js";
import { startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { assertBuilt, scriptByPrompt, type CliResult } from "../support/cli.js";
import { cleanupDaemonHome, daemonHome, type DaemonHome } from "./support.js";

vi.setConfig({ testTimeout: 90_000, hookTimeout: 60_000 });

let model: TestModel;
let script: ReturnType<typeof scriptByPrompt>;
let home: DaemonHome | undefined;
let sleeper: ChildProcess | undefined;

beforeAll(async () => {
  assertBuilt();
  model = await startTestModel();
  script = scriptByPrompt(model);
});
afterAll(async () => {
  await model?.close();
});
afterEach(async () => {
  sleeper?.kill("SIGKILL");
  sleeper = undefined;
  await cleanupDaemonHome(home);
  home = undefined;
});

const fresh = (): DaemonHome => (home = daemonHome(model));
const proofPath = (h: DaemonHome): string => join(h.stateDir, "daemon-proven.json");

interface Traced extends CliResult {
  /** `METHOD host:port/path` of every HTTP request the client process made, in order. */
  readonly requests: readonly string[];
  /** Every file the client process loaded as an ES module. */
  readonly loaded: readonly string[];
  /** Whether zod was loaded (its global config is set when it loads). */
  readonly zod: boolean;
  /** Whether node:child_process was loaded (only a command that starts the daemon needs it). */
  readonly childProcess: boolean;
}

/** Runs the CLI in `h` with its HTTP requests and loaded modules recorded. */
async function traced(h: DaemonHome, args: readonly string[]): Promise<Traced> {
  const requests = join(h.dir, `requests-${Date.now()}-${Math.random()}.txt`);
  const loaded = join(h.dir, `loaded-${Date.now()}-${Math.random()}.txt`);
  writeFileSync(requests, "");
  writeFileSync(loaded, "");
  const hook = join(h.dir, "hook.mjs");
  writeFileSync(hook, `import { appendFileSync } from "node:fs";\nexport async function load(url, context, next) {\n  if (url.startsWith("file:")) appendFileSync(${JSON.stringify(loaded)}, url + "\\n");\n  return next(url, context);\n}\n`);
  const preload = join(h.dir, "trace.mjs");
  writeFileSync(
    preload,
    [
      `import http from "node:http";`,
      `import { appendFileSync } from "node:fs";`,
      `import { Module, register, syncBuiltinESMExports } from "node:module";`,
      `register(${JSON.stringify(pathToFileURL(hook).href)});`,
      `const original = http.request;`,
      `http.request = function (options, ...rest) { appendFileSync(${JSON.stringify(requests)}, options.method + " " + options.hostname + ":" + options.port + options.path + "\\n"); return original.call(this, options, ...rest); };`,
      `syncBuiltinESMExports();`,
      `process.on("exit", () => appendFileSync(${JSON.stringify(requests)}, "zod=" + ("__zod_globalConfig" in globalThis) + "\\nchild_process=" + process.moduleLoadList.includes("NativeModule child_process") + "\\n"));`,
      // CommonJS files (the fast path's dist/bundle/local.cjs) are not seen by the load hook.
      `process.on("exit", () => appendFileSync(${JSON.stringify(loaded)}, Object.keys(Module._cache).map((file) => "file://" + file + "\\n").join("")));`,
    ].join("\n"),
  );
  const result = await h.cli(args, { env: { ...h.env, NODE_OPTIONS: `--import ${pathToFileURL(preload).href}` } });
  const lines = readFileSync(requests, "utf8").trim().split("\n");
  return {
    ...result,
    requests: lines.filter((line) => !line.startsWith("zod=") && !line.startsWith("child_process=")),
    zod: lines.includes("zod=true"),
    childProcess: lines.includes("child_process=true"),
    loaded: readFileSync(loaded, "utf8").trim().split("\n").filter((line) => line !== ""),
  };
}

/** The path part of a traced request line. */
const pathOf = (line: string): string => line.replace(/^(\S+) [^/]+/, "$1 ");

function closedPort(): Promise<number> {
  return new Promise((resolvePromise) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolvePromise(typeof address === "object" && address !== null ? address.port : 0));
    });
  });
}

describe("a proof reused", () => {
  it("a warm session list sends only its one API request; the proof file is 0600 and holds no token", async () => {
    const h = fresh();
    const first = await traced(h, ["session", "list"]);
    expect(first).toMatchObject({ code: 0, stdout: "[]\n" });
    // The first command proved the daemon it started (the challenge, then the status with the
    // token) once: not again after the start, before its one API request.
    const paths = first.requests.map(pathOf);
    expect(paths.filter((path) => path === "GET /_daemon/status")).toHaveLength(1);
    expect(paths.slice(-3)).toEqual([expect.stringMatching(/^GET \/_daemon\/challenge\?nonce=/), "GET /_daemon/status", "GET /v1/servers/local/sessions?projectId=global"]);
    expect(statSync(proofPath(h)).mode & 0o777).toBe(0o600);
    const proof = readFileSync(proofPath(h), "utf8");
    expect(proof).not.toContain(h.token());
    expect(JSON.parse(proof)).toMatchObject({ id: h.registration()!.id, url: h.registration()!.url, pid: h.registration()!.pid });

    const warm = await traced(h, ["session", "list"]);
    expect(warm).toMatchObject({ code: 0, stdout: "[]\n" });
    expect(warm.requests.map(pathOf)).toEqual(["GET /v1/servers/local/sessions?projectId=global"]);
  });

  it('a warm run "hello": create, submit and the Turn\'s stream only (no server stream without a Tool call), and no zod, oclif or child_process loaded', async () => {
    const h = fresh();
    expect(await h.cli(["session", "list"])).toMatchObject({ code: 0 });
    script("hello-lean", { events: [{ type: "text", text: "Hi." }] });
    const run = await traced(h, ["run", "hello-lean"]);
    expect(run).toMatchObject({ code: 0, stdout: "Hi.\n" });
    expect(run.requests.map(pathOf)).toEqual([
      expect.stringMatching(/^PUT \/v1\/servers\/local\/sessions\/[0-9a-f-]{36}$/),
      expect.stringMatching(/^POST \/v1\/servers\/local\/sessions\/[0-9a-f-]{36}\/prompts$/),
      expect.stringMatching(/^GET \/v1\/servers\/local\/sessions\/[0-9a-f-]{36}\/turns\/[0-9a-f-]{36}\/events$/),
    ]);
    expect(run.zod).toBe(false);
    expect(run.childProcess).toBe(false);
    // The CommonJS fast path (tools/bundle.mjs): one file, no ES module chunk of the bundle.
    expect(run.loaded.some((url) => url.endsWith("/dist/bundle/local.cjs"))).toBe(true);
    expect(run.loaded.filter((url) => url.includes("/dist/bundle/") && url.endsWith(".js"))).toEqual([]);
    expect(run.loaded.filter((url) => url.includes("@oclif") || url.includes("/zod/"))).toEqual([]);
  });

  it("a proof naming another start of the pid (a reused pid) is not reused: the daemon is proven again", async () => {
    const h = fresh();
    expect(await h.cli(["session", "list"])).toMatchObject({ code: 0 });
    const proof = JSON.parse(readFileSync(proofPath(h), "utf8")) as { start: string };
    writeFileSync(proofPath(h), JSON.stringify({ ...proof, start: String(Number(proof.start) + 1) }), { mode: 0o600 });
    const again = await traced(h, ["session", "list"]);
    expect(again).toMatchObject({ code: 0, stdout: "[]\n" });
    expect(again.requests.map(pathOf).slice(0, 2)).toEqual([expect.stringMatching(/^GET \/_daemon\/challenge\?nonce=/), "GET /_daemon/status"]);
    // Proven again, the proof names the real start once more.
    expect(JSON.parse(readFileSync(proofPath(h), "utf8"))).toMatchObject({ start: proof.start });
  });

  it("a proof of another token is not reused: the token on file is proven first", async () => {
    const h = fresh();
    expect(await h.cli(["session", "list"])).toMatchObject({ code: 0 });
    const proof = JSON.parse(readFileSync(proofPath(h), "utf8")) as { token: string };
    writeFileSync(proofPath(h), JSON.stringify({ ...proof, token: "not-the-digest-of-the-token" }), { mode: 0o600 });
    const again = await traced(h, ["session", "list"]);
    expect(again).toMatchObject({ code: 0, stdout: "[]\n" });
    expect(again.requests.map(pathOf)[0]).toMatch(/^GET \/_daemon\/challenge\?nonce=/);
  });

  it("a proven daemon whose listener refuses (it is shutting down): the command starts a daemon and answers", async () => {
    const h = fresh();
    expect(await h.cli(["session", "list"])).toMatchObject({ code: 0 });
    const registration = h.registration()!;
    const token = h.token();
    const proof = JSON.parse(readFileSync(proofPath(h), "utf8")) as { status: Record<string, unknown> };
    expect(await h.cli(["service", "stop"])).toMatchObject({ code: 0 });
    // A live process of this user stands in for a daemon that still runs but no longer listens.
    sleeper = spawn(process.execPath, ["-e", "setInterval(() => {}, 1 << 30)"], { stdio: "ignore" });
    const pid = sleeper.pid!;
    const start = processStart(pid);
    expect(start).toBeDefined();
    const url = `http://127.0.0.1:${await closedPort()}`;
    writeFileSync(join(h.stateDir, "server.json"), JSON.stringify({ ...registration, url, pid }), { mode: 0o600 });
    writeFileSync(join(h.stateDir, "daemon-token"), `${token}\n`, { mode: 0o600 });
    writeFileSync(proofPath(h), JSON.stringify({ ...proof, url, pid, start, status: { ...proof.status, url, pid } }), { mode: 0o600 });

    const result = await traced(h, ["session", "list"]);
    expect(result).toMatchObject({ code: 0, stdout: "[]\n" });
    // The proof was used (the API request went to its URL first), then a new daemon was started and proven.
    expect(result.requests[0]).toBe(`GET 127.0.0.1:${new URL(url).port}/v1/servers/local/sessions?projectId=global`);
    expect(result.requests.some((line) => line.includes("/_daemon/challenge"))).toBe(true);
    const now = h.registration()!;
    expect(now.url).not.toBe(url);
    expect(now.pid).not.toBe(pid);
    expect(result.requests.at(-1)).toBe(`GET ${new URL(now.url).host}/v1/servers/local/sessions?projectId=global`);
  });
});
