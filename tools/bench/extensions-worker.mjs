// The measuring process of the `extensions` benchmark (spawned by extensions.mjs with tsx, for the
// test model; prompt directives say which tool the model calls). Warm built `serve` processes on
// file databases; the client here.
//
// - MCP: a Turn with one `everything_echo` call (the real server-everything over stdio) against
//   the same Turn with one built-in `read` call, paired.
// - CodeMode: a Turn whose `execute` script calls nothing (`return 1`) against the `read` Turn
//   (the executor's start-up in a Turn), and scripts of 10 `read` calls against 0 (per inner call).
// - A Turn that uses none of them (one text answer) on a bare `serve` against a `serve` with a
//   plugin and an MCP server configured: what they add to Turns that do not use them.
// - Start-up: `serve` spawn → its URL line, bare and with one plugin configured.
//
// Prints one JSON line on stdout with the raw samples (ms); progress goes to stderr.
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";
import { binPath, repoRoot, tempHome, writeTestModelConfig, watchedTurn } from "./lib.mjs";

const options = { warmup: 5, rounds: 30, startups: 5, ...JSON.parse(process.argv[2] ?? "{}") };
const SERVER = "local";
const log = (line) => process.stderr.write(`extensions-worker: ${line}\n`);
const { startTestModel } = await import("../test-model/index.ts");
const clientModule = await import("../../dist/clients/index.js");
const { createZeClient, sdk, unwrap } = clientModule;

const model = await startTestModel({ directives: true });
const home = tempHome("ze-bench-extensions-");
writeFileSync(join(home.root, "small.txt"), "a small file\n");
const pluginFile = join(home.dir, "double.mjs");
writeFileSync(
  pluginFile,
  `export default { id: "bench.double", setup(context) { context.tools.register({ id: "double", description: "Double a number", inputSchema: { type: "object", properties: { value: { type: "number" } }, required: ["value"], additionalProperties: false }, execute: async (input) => ({ value: input.value * 2 }) }); } };`,
);
const everything = join(repoRoot, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");
const mcp = [{ kind: "local", id: "everything", name: "everything", transport: { kind: "stdio", command: process.execPath, arguments: [everything, "stdio"] } }];

let serve;
process.once("SIGTERM", () => {
  serve?.child.kill("SIGTERM");
  home.cleanup();
  process.exit(1);
});

/** Spawns `serve` with `extra` config; resolves with it and the ms until its URL line. */
async function startServe(extra, database) {
  writeTestModelConfig(home, model.openaiBaseURL, extra);
  const started = performance.now();
  const child = spawn(process.execPath, [binPath, "serve", "--port", "0", "--database", database], { cwd: home.root, env: home.env, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk) => (stderr = (stderr + chunk).slice(-4000)));
  const url = await new Promise((resolvePromise, reject) => {
    createInterface({ input: child.stdout }).once("line", resolvePromise);
    child.once("exit", (code) => reject(new Error(`serve exited with ${code}: ${stderr.trim()}`)));
  });
  const api = createZeClient({ baseUrl: url, clientId: "ze-bench" });
  return { child, api, startupMs: performance.now() - started, stop: () => new Promise((resolvePromise) => (child.once("exit", resolvePromise), child.kill("SIGTERM"))) };
}

async function turn(api, text) {
  const sessionId = randomUUID();
  await unwrap(sdk.createSession({ client: api.client, path: { server: SERVER, sessionId }, body: {} }));
  return watchedTurn(clientModule, api, SERVER, sessionId, text);
}

const call = (tool, args) => `@call ${tool} ${JSON.stringify(args)}\n@then done`;
const script = (reads) => call("execute", { code: `${Array.from({ length: reads }, () => `await tools.read({ filePath: "small.txt" });`).join(" ")} return 1;` });
const prompts = {
  plain: "@say hello",
  read: call("read", { filePath: "small.txt" }),
  mcp: call("everything_echo", { message: "hi" }),
  execute0: script(0),
  execute10: script(10),
};

/** Paired rounds of the named prompts on one serve. */
async function rounds(api, names) {
  const samples = Object.fromEntries(names.map((name) => [name, []]));
  for (let index = 0; index < options.warmup; index++) for (const name of names) await turn(api, prompts[name]);
  for (let index = 0; index < options.rounds; index++) for (const name of names) samples[name].push(await turn(api, prompts[name]));
  return samples;
}

const result = { startup: { bare: [], plugin: [] } };
try {
  serve = await startServe({}, join(home.dir, "bare.db"));
  log("bare serve");
  result.bare = await rounds(serve.api, ["plain", "read", "execute0", "execute10"]);
  await serve.stop();
  serve = await startServe({ plugins: [pluginFile], mcp }, join(home.dir, "extended.db"));
  await unwrap(sdk.createSession({ client: serve.api.client, path: { server: SERVER, sessionId: randomUUID() }, body: {} }));
  await serve.api; // the MCP server connects in the background; the catalog call waits for it
  const probe = randomUUID();
  await unwrap(sdk.createSession({ client: serve.api.client, path: { server: SERVER, sessionId: probe }, body: {} }));
  await unwrap(sdk.getMcpCatalog({ client: serve.api.client, path: { server: SERVER, sessionId: probe } }));
  log("extended serve");
  result.extended = await rounds(serve.api, ["plain", "read", "mcp"]);
  await serve.stop();
  for (let index = 0; index < options.startups; index++) {
    for (const [name, extra] of [["bare", {}], ["plugin", { plugins: [pluginFile] }]]) {
      serve = await startServe(extra, join(home.dir, `startup-${name}-${index}.db`));
      result.startup[name].push(serve.startupMs);
      await serve.stop();
    }
  }
} catch (error) {
  result.error = error instanceof Error ? error.message : String(error);
} finally {
  serve?.child.kill("SIGTERM");
  await model.close();
  home.cleanup();
}
process.stdout.write(`${JSON.stringify(result)}\n`);
