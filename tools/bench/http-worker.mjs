// The `http` benchmark, run by hand: the server CPU of the two requests a client makes per Turn —
// `POST …/prompts` (submitPrompt) and the Turn's SSE watch (watchTurn) until `turn.finished` —
// on the HTTP edge alone (http-server.mjs: the built Fetch handler and Node listener with stub
// handlers, no storage and no model), driven by the generated client as watchedTurn drives a
// real serve. Each batch's figure is the server process's own CPU (lib.mjs cpuClock: its threads' run time) per pair
// of requests; the least batch is kept.
//
//   node --import tsx tools/bench/http-worker.mjs '{"pairs":400,"batches":8}'
//   node --import tsx tools/bench/http-worker.mjs '{"baseRoot":"/work/base","pairs":400,"batches":10}'
//
// With `baseRoot` (another built checkout) a server from each runs side by side, driven in
// alternating batches; printed per batch pair the two figures, and the median ratio new / base.
// Options (one JSON argument): { warmup, pairs (per batch), batches, baseRoot, serveNodeArgs }.
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { loadavg } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { cpuClock, median, repoRoot, watchedTurn } from "./lib.mjs";

const options = { warmup: 300, pairs: 400, batches: 8, serveNodeArgs: [], ...JSON.parse(process.argv[2] ?? "{}") };
const clientModule = await import("../../dist/clients/index.js");
const { createZeClient } = clientModule;

async function start(name, root) {
  const child = spawn(process.execPath, [...options.serveNodeArgs, join(repoRoot, "tools", "bench", "http-server.mjs"), root], { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk) => (stderr = (stderr + chunk).slice(-4000)));
  const exited = new Promise((resolvePromise) => child.once("exit", resolvePromise));
  const url = await new Promise((resolvePromise, reject) => {
    createInterface({ input: child.stdout }).once("line", resolvePromise);
    child.once("exit", (code) => reject(new Error(`${name} server exited with ${code}: ${stderr.trim()}`)));
  });
  const api = createZeClient({ baseUrl: url, clientId: "ze-bench" });
  const sessionId = randomUUID();
  return {
    name,
    pair: () => watchedTurn(clientModule, api, "local", sessionId, "hello"),
    cpuMs: cpuClock(child.pid),
    /** Stops the server; resolves with how many connections it was sent. */
    stop: async () => {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
      return Number(/connections=(\d+)/.exec(stderr)?.[1] ?? Number.NaN);
    },
  };
}

async function batch(side) {
  const before = side.cpuMs();
  for (let index = 0; index < options.pairs; index++) await side.pair();
  return (side.cpuMs() - before) / options.pairs;
}

const sides = [await start("new", repoRoot), ...(options.baseRoot ? [await start("base", options.baseRoot)] : [])];
let result;
try {
  for (const side of sides) for (let index = 0; index < options.warmup; index++) await side.pair();
  const rows = [];
  for (let index = 0; index < options.batches; index++) {
    // Alternate which side goes first, so neither always runs right after the other's batch.
    const order = index % 2 === 0 ? sides : [...sides].reverse();
    const row = {};
    for (const side of order) row[side.name] = await batch(side);
    if (row.base !== undefined) row.ratio = row.new / row.base;
    rows.push(row);
  }
  const least = (name) => Math.min(...rows.map((row) => row[name]));
  result = {
    cpuMsPerPair: least("new"),
    ...(options.baseRoot ? { baseCpuMsPerPair: least("base"), medianRatio: median(rows.map((row) => row.ratio)) } : {}),
    load: loadavg()[0],
    rows,
  };
} finally {
  const pairs = options.warmup + options.pairs * options.batches;
  for (const side of sides) {
    const connections = await side.stop();
    if (result) result[`${side.name}ConnectionsPerPair`] = connections / pairs;
  }
}
process.stdout.write(`${JSON.stringify(result)}\n`);
