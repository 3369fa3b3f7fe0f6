// What an embedded one-shot loads: `run --embedded` in a git repository does not load
// isomorphic-git (the rewind recording reads the index and objects with its own small readers;
// isomorphic-git is for `workspace git …`, plugins from git and the general status walk).
// What the bundle holds: zod's English locale and no other (tools/bundle.mjs), with the server's
// validation messages still worded from it; JSON modules (the models.dev catalog snapshot, the
// config schema) as `JSON.parse` of a string, not an object literal V8 must compile; React's
// production builds alone, and the TUI's screen mirror (@xterm/headless) in a chunk of its own,
// loaded after the first frame (cli/tui/terminal.ts). A warm-daemon `run` streams its answer
// without Node's web streams.
// The embedded host is one CommonJS file with its packages inside (dist/bundle/embedded.cjs), so
// the probe is V8's coverage of the run: which functions of that file ran.
import { spawnSync } from "node:child_process";
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { assertBuilt, runCli, scriptByPrompt, startCli } from "../support/cli.js";
import { repoRoot, tempHome, type TempHome } from "../support/harness.js";
import { TEST_MODEL, testProviderConfig, writeGlobalConfig } from "../support/model.js";

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

/** esbuild's comment above isomorphic-git's code in whichever chunk holds it. */
const MARKER = "node_modules/isomorphic-git/index.cjs";

let model: TestModel;
let home: TempHome;

beforeAll(async () => {
  assertBuilt();
  model = await startTestModel();
  home = tempHome("ze-cli-run-lean-");
  writeGlobalConfig(home, { model: TEST_MODEL, providers: testProviderConfig(model) });
});
afterAll(async () => {
  await model?.close();
  home?.cleanup();
});

it("an embedded one-shot in a git repository does not load isomorphic-git", async () => {
  // The embedded host is one file, dist/bundle/embedded.cjs, with every package inside; a module
  // in it runs only when first imported. So V8's coverage of the run (NODE_V8_COVERAGE, written at
  // exit) says whether isomorphic-git's code ran: no function in its part of the file may have run.
  const file = join(repoRoot, "dist", "bundle", "embedded.cjs");
  const text = readFileSync(file, "latin1");
  /**
   * The part of the file esbuild wrote for the module under `// <path>` (up to the next module's
   * comment). esbuild names a package's module by its real path relative to the checkout: with a
   * symlinked node_modules (a worktree's) that is `../…/node_modules/…`.
   */
  const part = (path: string): [number, number] => {
    const escaped = path.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
    const start = text.search(new RegExp(`\n// (?:\\S*/)?${escaped}\n`));
    expect(start, path).toBeGreaterThan(0);
    return [start, text.indexOf("\n// ", start + 1)];
  };

  writeFileSync(join(home.root, "notes.txt"), "tracked\n");
  const gitCommand = (...args: string[]) => spawnSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], { cwd: home.root, env: home.env, encoding: "utf8" });
  for (const args of [["init", "-q"], ["add", "notes.txt"], ["commit", "-qm", "init"]]) expect(gitCommand(...args).status).toBe(0);

  const coverage = join(home.dir, "coverage");
  scriptByPrompt(model)("hello", { events: [{ type: "text", text: "Hi." }] });
  const result = await runCli(["run", "--embedded", "hello"], { env: { ...home.env, NODE_V8_COVERAGE: coverage }, cwd: home.root });
  expect(result).toMatchObject({ code: 0, stdout: "Hi.\n" });

  type Coverage = { result: { url: string; functions: { functionName: string; ranges: { startOffset: number; count: number }[] }[] }[] };
  const scripts = readdirSync(coverage).flatMap((name) => (JSON.parse(readFileSync(join(coverage, name), "utf8")) as Coverage).result);
  const embedded = scripts.find((script) => script.url === pathToFileURL(file).href);
  expect(embedded, "the run loaded dist/bundle/embedded.cjs").toBeDefined();
  const ran = (range: [number, number]) => embedded!.functions.filter((fn) => fn.ranges[0]!.count > 0 && fn.ranges[0]!.startOffset > range[0] && fn.ranges[0]!.startOffset < range[1]);
  // The check sees what ran: the host's own module did.
  expect(ran(part("services/host/harness.ts")).length).toBeGreaterThan(0);
  const git = part(MARKER);
  expect(git[1] - git[0]).toBeGreaterThan(100_000);
  expect(ran(git).map((fn) => fn.functionName)).toEqual([]);
});

it("a warm-daemon run streams its answer without loading Node's web streams (services/contract/light-http.ts)", async () => {
  const probe = join(home.dir, "webstreams-probe.cjs");
  writeFileSync(probe, 'process.on("exit", () => process.stderr.write("webstreams=" + process.moduleLoadList.includes("NativeModule internal/webstreams/readablestream") + "\\n"));\n');
  scriptByPrompt(model)("daemon hello", { events: [{ type: "text", text: "First." }] }, { events: [{ type: "text", text: "Streamed ünïcode." }] });
  try {
    // The first starts the daemon (without the probe); the second is a warm-daemon command.
    expect(await runCli(["run", "daemon hello"], { env: home.env, cwd: home.root })).toMatchObject({ code: 0, stdout: "First.\n" });
    const warm = await runCli(["run", "daemon hello"], { env: { ...home.env, NODE_OPTIONS: `--require ${probe}` }, cwd: home.root });
    expect(warm).toMatchObject({ code: 0, stdout: "Streamed ünïcode.\n", stderr: "webstreams=false\n" });
  } finally {
    await runCli(["service", "stop"], { env: home.env, cwd: home.root });
  }
});

/** esbuild's comments above each zod locale's code, by locale, across the whole bundle. */
const ZOD_LOCALE = /node_modules\/zod\/v4\/locales\/([\w-]+)\.js$/gm;

it("the bundle holds zod's English locale alone, and the server's validation messages are still worded from it", async () => {
  const bundle = join(repoRoot, "dist", "bundle");
  const locales = new Set<string>();
  for (const name of readdirSync(bundle).filter((file) => file.endsWith(".js"))) {
    for (const match of readFileSync(join(bundle, name), "utf8").matchAll(ZOD_LOCALE)) locales.add(match[1]!);
  }
  expect([...locales]).toEqual(["en"]);

  const server = startCli(["serve", "--port", "0", "--database", ":memory:"], { env: home.env, cwd: home.root });
  try {
    await server.waitFor(/^http:\/\/127\.0\.0\.1:\d+\n/m);
    const url = server.stdout().split("\n")[0]!;
    const put = async (body: string): Promise<unknown> =>
      (await fetch(`${url}/v1/servers/local/sessions/0190c8c4-0000-7000-8000-000000000001`, { method: "PUT", headers: { "content-type": "application/json" }, body })).json();
    expect(await put("[1]")).toEqual({ _tag: "ValidationError", message: "Invalid request: body: expected object, received array" });
    expect(await put(JSON.stringify({ title: 5 }))).toEqual({ _tag: "ValidationError", message: "Invalid request: body.title (/title): is not a field of this request" });
  } finally {
    server.child.kill("SIGTERM");
    await server.exited;
  }
});

it("the bundle holds each JSON module as JSON.parse of one string", () => {
  const bundle = join(repoRoot, "dist", "bundle");
  const sources = readdirSync(bundle).filter((file) => file.endsWith(".js")).map((name) => readFileSync(join(bundle, name), "utf8"));
  for (const marker of ["services/providers/catalog/snapshot.json", "generated/config.schema.json"]) {
    const holding = sources.filter((source) => source.includes(`// ${marker}\n`));
    expect(holding.length, marker).toBe(1);
    // esbuild's comment names the module; the next line is its whole value.
    const value = holding[0]!.split(`// ${marker}\n`)[1]!.split("\n")[0]!;
    expect(value, marker).toMatch(/^var \w+ = JSON\.parse\('\{.*\}'\);$/);
  }
});

it("the bundle holds React's production builds alone, and @xterm/headless apart from Ink's chunk", () => {
  const bundle = join(repoRoot, "dist", "bundle");
  const sources = readdirSync(bundle).filter((file) => file.endsWith(".js")).map((name) => readFileSync(join(bundle, name), "utf8"));
  const holding = (marker: RegExp): string[] => sources.filter((source) => marker.test(source));
  expect(holding(/^\/\/ \S*node_modules\/react-reconciler\/cjs\/react-reconciler\.production\.js$/m)).toHaveLength(1);
  expect(holding(/^\/\/ \S*node_modules\/(react|react-reconciler|scheduler)\/cjs\/\S+\.development\.js$/m)).toEqual([]);
  const ink = holding(/^\/\/ \S*node_modules\/ink\/build\/render\.js$/m);
  const xterm = holding(/^\/\/ \S*node_modules\/@xterm\/headless\//m);
  expect(ink).toHaveLength(1);
  expect(xterm).toHaveLength(1);
  expect(xterm[0]).not.toBe(ink[0]);
});
