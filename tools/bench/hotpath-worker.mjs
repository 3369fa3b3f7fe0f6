// The measuring process of the `hotpath` benchmark (spawned by hotpath.mjs with tsx, for the
// TypeScript test model): the server's CPU per one-step Turn on a warm `ze-harness serve`.
//
// Two processes, as in real use: this one (the scripted test model, in process, and the client)
// and the BUILT `serve` it spawns on a file database. The figure is the serve process's own CPU
// (its threads' run time, from /proc/<pid>/task/*/schedstat: lib.mjs cpuClock) over batches of sequential one-step Turns, divided by
// the Turn count, the least batch kept: the harness's work only, not the model's or the client's. Its same-run
// baseline is a fixed calibration workload (JSON encode/decode of Turn-sized events) timed with
// process.cpuUsage in this process, so the ratio follows the code, not the machine's speed.
//
// Options (one JSON argument): { warmupTurns, batchTurns, batches, sessionTurns (> 0: a new Session
// every that many Turns, so history stays short; 0: one Session throughout), slowdown, baselineRatio,
// serveNodeArgs, serveStdout } — `serveNodeArgs` go to the serve's node (e.g. ["--cpu-prof", "--cpu-prof-dir=/tmp/p"]
// to profile the hot path; the profile is written when the serve exits; or ["--trace-deopt"] with
// `serveStdout` a file to append the serve's other stdout lines to).
// `slowdown` > 0 loads a plugin whose `turn.before` hook burns slowdown × baselineRatio ×
// calibration ms of CPU per Turn, i.e. that fraction of the committed figure: a deliberate
// slowdown of the hot path through a real seam, used to show that `--check` catches it.
// Prints one JSON line.
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { appendFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { binPath, cpuClock, tempHome, writeTestModelConfig, watchedTurn } from "./lib.mjs";

const options = { warmupTurns: 150, batchTurns: 25, batches: 8, slowdown: 0, baselineRatio: 0, sessionTurns: 0, serveNodeArgs: [], ...JSON.parse(process.argv[2] ?? "{}") };

const { startTestModel } = await import("../test-model/index.ts");
const clientModule = await import("../../dist/clients/index.js");
const { createZeClient, sdk, unwrap } = clientModule;

const SERVER = "local";

/** The calibration workload's CPU (ms): the least of `runs` runs of a fixed encode/decode loop. */
function calibrationMs(runs = 3) {
  const event = { type: "turn.text.delta", sessionId: randomUUID(), turnId: randomUUID(), partId: "p1", delta: "Hello! This is the scripted answer. ".repeat(4), cursor: 123456 };
  const events = Array.from({ length: 40 }, (_, index) => ({ ...event, cursor: index }));
  const samples = [];
  for (let run = 0; run < runs; run++) {
    const started = process.cpuUsage();
    let total = 0;
    for (let index = 0; index < 400; index++) total += JSON.parse(JSON.stringify(events)).length;
    const used = process.cpuUsage(started);
    if (total !== 400 * 40) throw new Error("calibration workload miscounted");
    samples.push((used.user + used.system) / 1000);
  }
  return Math.min(...samples);
}

const home = tempHome("ze-bench-hotpath-");
const model = await startTestModel();
const extra = {};
const spinMs = options.slowdown > 0 ? options.slowdown * options.baselineRatio * calibrationMs(5) : 0;
if (spinMs > 0) {
  const pluginFile = join(home.dir, "spin-plugin.mjs");
  writeFileSync(
    pluginFile,
    `// Burns ZE_BENCH_SPIN_MS of CPU in every Turn's turn.before hook (the bench's deliberate slowdown).
const spinMs = Number(process.env.ZE_BENCH_SPIN_MS ?? 0);
export default {
  id: "bench.spin",
  setup(context) {
    context.hooks.register("turn.before", async () => {
      const started = process.cpuUsage();
      for (;;) {
        const used = process.cpuUsage(started);
        if ((used.user + used.system) / 1000 >= spinMs) return;
      }
    });
  },
};
`,
  );
  extra.plugins = [pluginFile];
}
writeTestModelConfig(home, model.openaiBaseURL, extra);

const serve = spawn(process.execPath, [...options.serveNodeArgs, binPath, "serve", "--port", "0", "--database", join(home.dir, "bench.db")], {
  cwd: home.root,
  env: { ...home.env, ZE_BENCH_SPIN_MS: String(spinMs) },
  stdio: ["ignore", "pipe", "pipe"],
});
const serveCpuMs = cpuClock(serve.pid);
let serveStderr = "";
serve.stderr.setEncoding("utf8").on("data", (chunk) => (serveStderr = (serveStderr + chunk).slice(-4000)));
const serveExited = new Promise((resolvePromise) => serve.once("exit", resolvePromise));

let result;
try {
  const url = await new Promise((resolvePromise, reject) => {
    // The URL is the first line that is one: V8 traces asked for by `serveNodeArgs` (--trace-deopt,
    // --trace-opt) go to stdout too, and are kept draining (to `serveStdout` when given).
    createInterface({ input: serve.stdout }).on("line", (line) => {
      if (/^https?:\/\//.test(line)) resolvePromise(line);
      else if (options.serveStdout) appendFileSync(options.serveStdout, `${line}\n`);
    });
    serve.once("exit", (code) => reject(new Error(`serve exited with ${code} before printing its URL: ${serveStderr.trim()}`)));
  });
  const api = createZeClient({ baseUrl: url, clientId: "ze-bench" });
  let sessionId = randomUUID();
  await unwrap(sdk.createSession({ client: api.client, path: { server: SERVER, sessionId }, body: {} }));
  let turnsInSession = 0;

  /** One one-step Turn: submit, then watch it to `turn.finished` as a client would. */
  const turn = async () => {
    if (options.sessionTurns > 0 && turnsInSession >= options.sessionTurns) {
      sessionId = randomUUID();
      await unwrap(sdk.createSession({ client: api.client, path: { server: SERVER, sessionId }, body: {} }));
      turnsInSession = 0;
    }
    turnsInSession++;
    model.enqueue({ events: [{ type: "text", text: "Hello! This is the scripted answer from the bench model." }] });
    await watchedTurn(clientModule, api, SERVER, sessionId, "hello");
  };

  for (let index = 0; index < options.warmupTurns; index++) await turn();
  // Each batch is followed by a calibration run, so both sides sample the machine's load over
  // the whole run; each side keeps its least figure, since other work only ever adds CPU time
  // (caches, frequency), and the ratio is of the two least figures.
  const batches = [];
  for (let batch = 0; batch < options.batches; batch++) {
    const before = serveCpuMs();
    for (let index = 0; index < options.batchTurns; index++) await turn();
    const cpuMsPerTurn = (serveCpuMs() - before) / options.batchTurns;
    batches.push({ cpuMsPerTurn, calibrationMs: calibrationMs() });
  }
  const cpuMsPerTurn = Math.min(...batches.map((batch) => batch.cpuMsPerTurn));
  const calibration = Math.min(...batches.map((batch) => batch.calibrationMs));
  result = { cpuMsPerTurn, calibrationMs: calibration, ratio: cpuMsPerTurn / calibration, batches, spinMs };
} catch (error) {
  result = { error: `${error instanceof Error ? error.message : String(error)}${serveStderr.trim() ? ` (serve stderr: ${serveStderr.trim()})` : ""}` };
} finally {
  if (serve.exitCode === null) serve.kill("SIGTERM");
  await serveExited;
  await model.close();
  home.cleanup();
}
process.stdout.write(`${JSON.stringify(result)}\n`);
