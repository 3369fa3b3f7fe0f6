// The local daemon from the client's side: wall time, the CLI process's CPU time and its peak RSS of
// warm-daemon `run "hello"` beside `run --embedded "hello"` (the scripted test model, a warm
// state directory), `session list` on a warm daemon beside `--embedded`, and the cold first
// command (a fresh XDG home: the daemon is spawned, its database created, then the command
// answered), against `node -e 0` and the floor (floor-client.mjs: node's start, one HTTP round
// trip and one SSE stream — a prompt submitted and its Turn's events read to the end — against
// the same warm daemon over bare node:http: what no client can go below); with
// `ZE_BENCH_COMPARE=DIR[:DIR…]`, also other built checkouts' warm `run` and `session list` (before/after
// a change — or a series of changes — in the same rounds). CPU time and peak RSS are the client's
// own, read in the client at its exit (USAGE_PRELOAD), not its daemon's. Every daemon it starts is
// stopped with `service stop`.
//
// Guarded (check.mjs): the HTTP requests a warm `run "hello"` and a warm `session list` make
// (exact counts, recorded by a preload that wraps node:http in the client process: 3 and 1 once
// a proven daemon's proof is reused, services/daemon/proof-cache.ts), the warm `run`'s ratio to
// the floor and the warm `session list`'s to `node -e 0`.
import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, delimiter, join } from "node:path";
import { pathToFileURL } from "node:url";
import { binPath, checkRuns, formatTable, interleavedRounds, timingCells, median, mib, repoRoot, tempHome, timeRun, writeTestModelConfig } from "./lib.mjs";
import { startModelProcess } from "./oneshot.mjs";

const floorClientPath = join(repoRoot, "tools", "bench", "floor-client.mjs");

export const name = "daemon";
export const description = 'warm-daemon `run "hello"` and `session list` vs --embedded, and the cold first command (daemon spawn included), against the client floor';

const RUN_TIMEOUT_MS = 30_000;

/**
 * Preloaded (`--require`) into a client to measure: at exit it writes the process's own CPU time
 * (user + system, all threads, in µs from getrusage — /usr/bin/time's 10 ms steps could not tell a
 * few milliseconds apart) and its peak RSS to $ZE_BENCH_USAGE. It takes both variables out of the
 * environment first, so a daemon the command spawns neither loads it nor overwrites the figures.
 */
const USAGE_PRELOAD = `"use strict";
const out = process.env.ZE_BENCH_USAGE;
delete process.env.ZE_BENCH_USAGE;
delete process.env.NODE_OPTIONS;
process.on("exit", () => {
  const usage = process.resourceUsage();
  require("node:fs").writeFileSync(out, JSON.stringify({ cpuMs: (usage.userCPUTime + usage.systemCPUTime) / 1000, kib: usage.maxRSS }));
});
`;

/**
 * The client process's CPU time (user + system, ms) and peak RSS (KiB) of one run, or undefined
 * when it failed. CPU time is what the client itself spends (start-up, modules, its side of each
 * request): on a loaded machine it moves far less than wall time.
 */
async function clientUsage(args, options, preload) {
  const dir = mkdtempSync(join(tmpdir(), "ze-bench-usage-"));
  const out = join(dir, "usage.json");
  try {
    const env = { ...options.env, NODE_OPTIONS: `--require ${preload}`, ZE_BENCH_USAGE: out };
    const { code } = await timeRun(process.execPath, args, { ...options, env, timeoutMs: RUN_TIMEOUT_MS });
    if (code !== 0 || !existsSync(out)) return undefined;
    return JSON.parse(readFileSync(out, "utf8"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The HTTP requests (`METHOD path`) one command makes in `home`, recorded in the client process. */
async function requestsOf(home, args) {
  const list = join(home.dir, `requests-${randomUUID()}.txt`);
  const preload = join(home.dir, "trace-requests.mjs");
  writeFileSync(list, "");
  writeFileSync(
    preload,
    `import http from "node:http";\nimport { appendFileSync } from "node:fs";\nimport { syncBuiltinESMExports } from "node:module";\nconst original = http.request;\nhttp.request = function (options, ...rest) { appendFileSync(process.env.ZE_BENCH_REQUESTS, options.method + " " + options.path + "\\n"); return original.call(this, options, ...rest); };\nsyncBuiltinESMExports();\n`,
  );
  const result = await timeRun(process.execPath, args, { env: { ...home.env, NODE_OPTIONS: `--import ${pathToFileURL(preload).href}`, ZE_BENCH_REQUESTS: list }, cwd: home.root, timeoutMs: RUN_TIMEOUT_MS });
  if (result.code !== 0) throw new Error(`${args.slice(1).join(" ")} (traced) exited ${result.code}: ${result.stderr.trim()}`);
  return readFileSync(list, "utf8").trim().split("\n").filter((line) => line !== "");
}

/** @param {{ runs: number, budgetMs: number, log: (line: string) => void, record: (figure: import("./check.mjs").Figure) => void }} context */
export async function run({ runs, budgetMs, log, record }) {
  const warm = tempHome("ze-bench-daemon-");
  // Client CPU and peak RSS: this many runs of each case, round-robin over the cases.
  const usageRuns = 7;
  const coldHomes = [];
  // Per run: one answer each for the embedded run, the daemon run and the floor; plus warm-ups and RSS runs.
  const compareRoots = (process.env.ZE_BENCH_COMPARE ?? "").split(delimiter).filter((dir) => dir !== "");
  const model = await startModelProcess(warm.dir, (3 + compareRoots.length) * (runs + usageRuns + 2) + 2);
  const baseURL = `${model.url}/v1`;
  const stop = (home) => timeRun(process.execPath, [binPath, "service", "stop"], { env: home.env, cwd: home.root, timeoutMs: RUN_TIMEOUT_MS });
  try {
    writeTestModelConfig(warm, baseURL);
    const warmOptions = { env: warm.env, cwd: warm.root };
    const cold = () => {
      const home = tempHome("ze-bench-daemon-cold-");
      coldHomes.push(home);
      writeTestModelConfig(home, baseURL);
      return { env: home.env, cwd: home.root };
    };
    // The floor submits its prompts to this Session (creating it starts the warm daemon).
    const floorSession = randomUUID();
    const created = await timeRun(process.execPath, [binPath, "session", "create", "--session", floorSession], { ...warmOptions, timeoutMs: RUN_TIMEOUT_MS });
    if (created.code !== 0) throw new Error(`session create exited ${created.code}: ${created.stderr.trim()}`);
    const cases = [
      { label: "node -e 0 (baseline)", args: ["-e", "0"], options: () => warmOptions, target: "" },
      { label: "floor (node:http: 1 round trip + 1 SSE stream)", args: [floorClientPath, floorSession], options: () => warmOptions, answers: true, target: "" },
      { label: 'run --embedded "hello" (warm state)', args: [binPath, "run", "--embedded", "hello"], options: () => warmOptions, answers: true, target: "" },
      { label: 'run "hello", warm daemon', args: [binPath, "run", "hello"], options: () => warmOptions, answers: true, target: "≤ 1.5x floor, ≤ 60 MiB", limits: { floor: 1.5, kib: 60 * 1024 } },
      { label: "session list --embedded", args: [binPath, "session", "list", "--embedded"], options: () => warmOptions, target: "" },
      { label: "session list, warm daemon", args: [binPath, "session", "list"], options: () => warmOptions, target: "≤ 80 ms, ≤ 60 MiB", limits: { ms: 80, kib: 60 * 1024 } },
      { label: "session list, cold (spawns the daemon)", args: [binPath, "session", "list"], options: cold, target: "≤ 0.5 s, ≤ 60 MiB", limits: { ms: 500, kib: 60 * 1024 }, cold: true },
    ];
    // `ZE_BENCH_COMPARE=DIR[:DIR…]` (other built checkouts): their warm run and session list in the
    // same interleaved rounds, against the same daemon, for a before/after of client-side changes.
    for (const compareRoot of compareRoots) {
      const compareBin = join(compareRoot, "bin", "ze-harness.js");
      const named = compareRoots.length === 1 ? "ZE_BENCH_COMPARE" : `ZE_BENCH_COMPARE ${basename(compareRoot)}`;
      cases.push(
        { label: `run "hello", warm daemon (${named})`, args: [compareBin, "run", "hello"], options: () => warmOptions, answers: true, target: "" },
        { label: `session list, warm daemon (${named})`, args: [compareBin, "session", "list"], options: () => warmOptions, target: "" },
      );
    }
    const once = async (entry, extra = {}) => {
      const options = entry.options();
      const result = await timeRun(process.execPath, entry.args, { ...options, timeoutMs: RUN_TIMEOUT_MS, ...extra });
      if (entry.cold) await stop(options);
      return result;
    };
    // Warm-up (and check): the first local command starts the warm home's daemon.
    await checkRuns(cases, once);
    const { samples, completed } = await interleavedRounds(cases, once, { runs, budgetMs, log });
    const preload = join(warm.dir, "usage-preload.cjs");
    writeFileSync(preload, USAGE_PRELOAD);
    const usages = cases.map(() => []);
    for (let round = 0; round < usageRuns; round++) {
      for (const [index, entry] of cases.entries()) {
        const options = entry.options();
        usages[index].push(await clientUsage(entry.args, options, preload));
        if (entry.cold) await stop(options);
      }
    }
    const complete = (list) => list.length > 0 && list.every((usage) => usage !== undefined);
    const rss = usages.map((list) => (complete(list) ? Math.max(...list.map((usage) => usage.kib)) : undefined));
    const cpu = usages.map((list) => (complete(list) ? median(list.map((usage) => usage.cpuMs)) : undefined));
    const medians = samples.map((values) => (values.length > 0 ? median(values) : undefined));
    /** A case's limits: wall time in ms or as a multiple of the floor's median, peak RSS in KiB. */
    const met = (limits, value, kib) =>
      (limits.ms === undefined || value <= limits.ms) && (limits.floor === undefined || (medians[1] !== undefined && value <= limits.floor * medians[1])) && (limits.kib === undefined || (kib ?? Infinity) <= limits.kib);
    const ratio = (value, base) => (value === undefined || base === undefined ? "n/a" : `${(value / base).toFixed(2)}x`);
    const rows = cases.map((entry, index) => [
      ...timingCells(entry.label, samples[index], medians, index),
      cpu[index] === undefined ? "n/a" : `${cpu[index].toFixed(1)} ms`,
      ratio(cpu[index], cpu[1]),
      mib(rss[index]),
      rss[index] === undefined || rss[1] === undefined ? "n/a" : `${(rss[index] / rss[1]).toFixed(2)}x`,
      entry.limits === undefined || medians[index] === undefined ? entry.target : `${entry.target} (${met(entry.limits, medians[index], rss[index]) ? "met" : "missed"})`,
    ]);
    log(`${completed} interleaved runs per case, wall time from spawn to exit; client CPU (user + system, getrusage at exit) is the median and client peak RSS the max of ${usageRuns} further runs per case, round-robin.`);
    // The round trips of the warm commands (the same warm daemon, its proof on file).
    const runRequests = await requestsOf(warm, [binPath, "run", "hello"]);
    const listRequests = await requestsOf(warm, [binPath, "session", "list"]);
    log(`warm run "hello" requests (${runRequests.length}): ${runRequests.map((line) => line.replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, "…")).join(", ")}`);
    log(`warm session list requests (${listRequests.length}): ${listRequests.join(", ")}`);
    record({ key: "daemon.runRequests", value: runRequests.length, kind: "count", label: 'HTTP requests of a warm run "hello"' });
    record({ key: "daemon.sessionListRequests", value: listRequests.length, kind: "count", label: "HTTP requests of a warm session list" });
    const [node, floor, , warmRun, , warmList] = medians;
    if (warmRun !== undefined && floor !== undefined) record({ key: "daemon.runVsFloor", value: warmRun / floor, kind: "ratio", label: 'warm run "hello" / floor' });
    if (warmList !== undefined && node !== undefined) record({ key: "daemon.sessionListVsNode", value: warmList / node, kind: "ratio", label: "warm session list / node -e 0" });
    if (cpu[3] !== undefined && cpu[1] !== undefined) record({ key: "daemon.runCpuVsFloor", value: cpu[3] / cpu[1], kind: "ratio", label: 'warm run "hello" client CPU / floor client CPU' });
    log(formatTable(["command", "n", "median", "p99", "vs node -e 0", "vs floor", "client CPU", "CPU vs floor", "client peak RSS", "RSS vs floor", "target"], rows));
  } finally {
    await stop({ env: warm.env, cwd: warm.root });
    await model.stop();
    for (const home of coldHomes) home.cleanup();
    warm.cleanup();
  }
}
