// Two builds' hot paths side by side (run by hand: `node --import tsx tools/bench/hotpath-ab.mjs
// '{"baseRoot":"/path/to/another/checkout"}'`, each checkout built): a `serve` from each —
// `baseRoot`'s bin/ze-harness.js and this checkout's — on its own file database, the same
// scripted model and client, driven in alternating batches of one-step Turns so both see the same
// machine load at the same time. Each batch's figure is the serve's own CPU (lib.mjs cpuClock)
// per Turn; printed: per pair the two figures and their ratio, and the median ratio (new / base).
// On a loaded shared machine the paired ratio is much steadier than two separate runs'.
//
// Options (one JSON argument): { baseRoot, warmupTurns, batchTurns, pairs }.
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { loadavg } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { binPath, cpuClock, median, tempHome, watchedTurn, writeTestModelConfig } from "./lib.mjs";

const options = { warmupTurns: 150, batchTurns: 50, pairs: 10, ...JSON.parse(process.argv[2] ?? "{}") };
if (!options.baseRoot) throw new Error("hotpath-ab: give baseRoot, the checkout (built) to compare with");

const { startTestModel } = await import("../test-model/index.ts");
const clientModule = await import("../../dist/clients/index.js");
const { createZeClient, sdk, unwrap } = clientModule;
const SERVER = "local";

const model = await startTestModel();
model.reply(() => ({ events: [{ type: "text", text: "Hello! This is the scripted answer from the bench model." }] }));

async function start(name, bin) {
  const home = tempHome(`ze-bench-ab-${name}-`);
  writeTestModelConfig(home, model.openaiBaseURL);
  const child = spawn(process.execPath, [bin, "serve", "--port", "0", "--database", join(home.dir, "bench.db")], { cwd: home.root, env: home.env, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk) => (stderr = (stderr + chunk).slice(-4000)));
  const exited = new Promise((resolvePromise) => child.once("exit", resolvePromise));
  const url = await new Promise((resolvePromise, reject) => {
    createInterface({ input: child.stdout }).once("line", resolvePromise);
    child.once("exit", (code) => reject(new Error(`${name} serve exited with ${code}: ${stderr.trim()}`)));
  });
  const api = createZeClient({ baseUrl: url, clientId: "ze-bench" });
  const sessionId = randomUUID();
  await unwrap(sdk.createSession({ client: api.client, path: { server: SERVER, sessionId }, body: {} }));
  return {
    name,
    turn: () => watchedTurn(clientModule, api, SERVER, sessionId, "hello"),
    cpuMs: cpuClock(child.pid),
    stop: async () => {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
      home.cleanup();
    },
  };
}

const sides = [await start("base", join(options.baseRoot, "bin", "ze-harness.js")), await start("new", binPath)];
const pairs = [];
try {
  for (let index = 0; index < options.warmupTurns; index++) for (const side of sides) await side.turn();
  for (let pair = 0; pair < options.pairs; pair++) {
    const figures = {};
    // Alternate which side goes first, so neither always follows the other.
    for (const side of pair % 2 === 0 ? sides : [...sides].reverse()) {
      const before = side.cpuMs();
      for (let index = 0; index < options.batchTurns; index++) await side.turn();
      figures[side.name] = (side.cpuMs() - before) / options.batchTurns;
    }
    pairs.push({ ...figures, ratio: figures.new / figures.base, load: loadavg()[0] });
  }
} finally {
  for (const side of sides) await side.stop();
  await model.close();
}
for (const pair of pairs) console.log(`base ${pair.base.toFixed(2)} ms  new ${pair.new.toFixed(2)} ms  new/base ${pair.ratio.toFixed(3)}  (load ${pair.load.toFixed(2)})`);
console.log(
  `median: base ${median(pairs.map((pair) => pair.base)).toFixed(2)} ms/Turn, new ${median(pairs.map((pair) => pair.new)).toFixed(2)} ms/Turn, new/base ${median(pairs.map((pair) => pair.ratio)).toFixed(3)}`,
);
