// The measuring process of the `worker` benchmark (spawned by worker.mjs as
// `node --import tsx tools/bench/worker-turns.mjs '<options json>'`; tsx for the test model and
// the Worker bundler's TypeScript entry).
//
// One scripted test model (in process, zero latency, a short fixed answer) serves two hosts in
// the same run: the built `ze-harness serve` (Node, file database in a temp dir) and the
// bundled Worker host in workerd through miniflare (one HarnessServerObject, its SQLite
// persisted in a temp dir), both over loopback HTTP. For each host, interleaved round by round:
// prompt → finished answer of sequential Turns in one Session (the submit POST starts the clock,
// `turn.finished` on the Turn's watch stream stops it). Model time: the same chat request body
// streamed straight through the openai SDK against the same model, interleaved too; per-Turn
// overhead = each Turn minus the model median. Prints one JSON line with the raw samples (ms).
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { randomUUID } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";
import { Miniflare } from "miniflare";
import OpenAI from "openai";
import { binPath, tempHome, watchedTurn, writeTestModelConfig } from "./lib.mjs";
import { bundleWorker } from "../worker/bundle.mjs";
import { workerOptions } from "../../worker/miniflare.config.mjs";

const options = { warmupTurns: 5, turns: 40, ...JSON.parse(process.argv[2] ?? "{}") };
const log = (line) => process.stderr.write(`worker-turns: ${line}\n`);

const { startTestModel } = await import("../test-model/index.ts");
const client = await import("../../dist/clients/index.js");
const ANSWER = "Hello! This is the scripted answer from the bench model.";
const model = await startTestModel();
let lastBody;
model.reply((request) => {
  lastBody = request.body;
  return { events: [{ type: "text", text: ANSWER }] };
});
const provider = {
  test: {
    definition: {
      displayName: "Scripted test model",
      baseURL: model.openaiBaseURL,
      protocol: "chat",
      authentication: { kind: "none" },
      models: { scripted: { displayName: "Scripted", limits: { contextUnits: 200000, outputUnits: 8192 } } },
    },
  },
};

// The Node host.
const home = tempHome("ze-bench-worker-");
writeTestModelConfig(home, model.openaiBaseURL);
const serve = spawn(process.execPath, [binPath, "serve", "--port", "0", "--database", join(home.dir, "bench.db")], { cwd: home.root, env: home.env, stdio: ["ignore", "pipe", "pipe"] });
let serveStderr = "";
serve.stderr.setEncoding("utf8").on("data", (chunk) => (serveStderr = (serveStderr + chunk).slice(-4000)));
const nodeUrl = await new Promise((resolvePromise, reject) => {
  createInterface({ input: serve.stdout }).once("line", resolvePromise);
  serve.once("exit", (code) => reject(new Error(`serve exited with ${code}: ${serveStderr.trim()}`)));
});

// The Worker host.
const bundleDir = mkdtempSync(join(tmpdir(), "ze-bench-worker-bundle-"));
const persist = mkdtempSync(join(tmpdir(), "ze-bench-worker-do-"));
const scriptPath = join(bundleDir, "index.mjs");
await bundleWorker({ entry: "worker/index.ts", outfile: scriptPath });
const mf = new Miniflare(workerOptions({ scriptPath, persist, port: 0, env: { HARNESS_PROVIDERS: JSON.stringify(provider), HARNESS_MODEL: "test/scripted" } }));
const workerUrl = (await mf.ready).origin;

const stop = async () => {
  serve.kill("SIGTERM");
  await mf.dispose().catch(() => {});
  await model.close();
  rmSync(bundleDir, { recursive: true, force: true });
  rmSync(persist, { recursive: true, force: true });
  home.cleanup();
};

const hosts = [
  { name: "node", server: "local", url: nodeUrl },
  { name: "workerd", server: "bench", url: workerUrl },
];
const openai = new OpenAI({ baseURL: model.openaiBaseURL, apiKey: "bench", maxRetries: 0 });
const samples = { model: [], node: [], workerd: [] };
try {
  for (const host of hosts) {
    host.api = client.createZeClient({ baseUrl: host.url, clientId: "ze-bench" });
    host.sessionId = randomUUID();
    await client.unwrap(client.sdk.createSession({ client: host.api.client, path: { server: host.server, sessionId: host.sessionId }, body: {} }));
    for (let index = 0; index < options.warmupTurns; index++) await watchedTurn(client, host.api, host.server, host.sessionId, `warm-up ${index}`);
  }
  for (let round = 0; round < options.turns; round++) {
    for (const host of hosts) samples[host.name].push(await watchedTurn(client, host.api, host.server, host.sessionId, `Turn ${round}`));
    const started = performance.now();
    const stream = await openai.chat.completions.create({ ...lastBody, stream: true });
    for await (const chunk of stream) void chunk;
    samples.model.push(performance.now() - started);
  }
  log(`${options.turns} Turns on each host`);
  process.stdout.write(`${JSON.stringify(samples)}\n`);
} catch (error) {
  process.stdout.write(`${JSON.stringify({ error: error instanceof Error ? error.message : String(error) })}\n`);
} finally {
  await stop();
}
