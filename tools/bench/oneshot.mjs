// A one-shot prompt: wall time and peak RSS of `ze-harness run --embedded "hello"` (a new
// process: CLI start-up, the in-process harness on a file database, one Turn against the
// zero-latency scripted test model, exit), in a fresh state directory (the first run in a new
// XDG home: the database is created and migrated) and in a warm one, against two baselines
// measured in the same run, interleaved: `node -e 0` and the floor (tools/bench/floor.mjs: the
// native libsql driver on a new file, two commits, one answer streamed through the openai SDK).
// The test model runs as its own process (tools/test-model/main.ts under tsx) with a script
// long enough for every run.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { binPath, formatTable, hasGnuTime, interleavedRounds, timingCells, median, mib, peakRssKiB, repoRoot, tempHome, timeRun, writeTestModelConfig } from "./lib.mjs";

export const name = "oneshot";
export const description = 'one-shot `ze-harness run --embedded "hello"` (fresh and warm state) against `node -e 0` and the floor';

const ANSWER = "Hello! This is the scripted answer from the bench model.";
const RUN_TIMEOUT_MS = 30_000;
const floorPath = join(repoRoot, "tools", "bench", "floor.mjs");
/** Starts the test model as a process serving `count` copies of the plain answer. */
export async function startModelProcess(dir, count) {
  const script = join(dir, "script.json");
  writeFileSync(script, JSON.stringify(Array.from({ length: count }, () => ({ events: [{ type: "text", text: ANSWER }] }))));
  const child = spawn(process.execPath, ["--import", "tsx", join(repoRoot, "tools", "test-model", "main.ts"), "--port", "0", "--script", script], {
    cwd: repoRoot,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk) => (stderr = (stderr + chunk).slice(-2000)));
  const exited = new Promise((resolvePromise) => child.once("exit", resolvePromise));
  const url = await new Promise((resolvePromise, reject) => {
    createInterface({ input: child.stdout }).once("line", resolvePromise);
    child.once("exit", (code) => reject(new Error(`the test model exited ${code} before printing its URL: ${stderr.trim()}`)));
  });
  return {
    url,
    stop: async () => {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

/** @param {{ runs: number, budgetMs: number, log: (line: string) => void }} context */
export async function run({ runs, budgetMs, log }) {
  const warmHome = tempHome("ze-bench-oneshot-");
  const rssRuns = 3;
  const freshHomes = [];
  const scratch = [];
  // Per run: one answer for each of warm, fresh and the floor; plus warm-ups and RSS runs.
  const model = await startModelProcess(warmHome.dir, 3 * (runs + rssRuns + 2));
  const baseURL = `${model.url}/v1`;
  try {
    writeTestModelConfig(warmHome, baseURL);
    /** A new XDG home with the test model configured and no database yet. */
    const freshHome = () => {
      const home = tempHome("ze-bench-oneshot-fresh-");
      freshHomes.push(home);
      writeTestModelConfig(home, baseURL);
      return { env: home.env, cwd: home.root };
    };
    /** A new, empty directory for the floor's database file. */
    const floorDir = () => {
      const dir = mkdtempSync(join(tmpdir(), "ze-bench-floor-"));
      scratch.push(dir);
      return dir;
    };
    const warm = { env: warmHome.env, cwd: warmHome.root };
    const runArgs = [binPath, "run", "--embedded", "hello"];
    const cases = [
      { label: "node -e 0 (baseline)", args: () => ["-e", "0"], options: () => warm, target: "" },
      { label: "floor (libsql + 2 commits + openai stream)", args: () => [floorPath, baseURL, floorDir()], options: () => warm, answers: true, target: "" },
      { label: 'run --embedded "hello", fresh state', args: () => runArgs, options: freshHome, answers: true, target: "≤ 0.55 s, ≤ 120 MiB", limits: { ms: 550, kib: 120 * 1024 } },
      { label: 'run --embedded "hello", warm state', args: () => runArgs, options: () => warm, answers: true, target: "≤ 0.55 s, ≤ 120 MiB", limits: { ms: 550, kib: 120 * 1024 } },
    ];
    const once = (entry, extra = {}) => timeRun(process.execPath, entry.args(), { ...entry.options(), timeoutMs: RUN_TIMEOUT_MS, ...extra });

    // One untimed warm-up of each (file cache, compile cache; the warm home's first run creates
    // its database), which also checks that it works.
    for (const entry of cases) {
      const result = await once(entry, { keepStdout: true });
      if (result.code !== 0 || (entry.answers && !result.stdout.includes("scripted answer"))) {
        const stderr = result.stderr.trim();
        throw new Error(`${entry.label}: ${result.timedOut ? `timed out after ${RUN_TIMEOUT_MS / 1000} s` : `exited ${result.code}`} — ${(stderr || result.stdout.trim()).split("\n").slice(-3).join(" | ") || "no output"}`);
      }
    }

    const { samples, failures, completed } = await interleavedRounds(cases, once, { runs, budgetMs, log });
    for (const failure of failures.slice(0, 3)) log(`failed run — ${failure}`);

    const rss = [];
    for (const entry of cases) {
      const peaks = [];
      for (let index = 0; index < rssRuns && hasGnuTime; index++) peaks.push(await peakRssKiB(process.execPath, entry.args(), entry.options()));
      rss.push(peaks.length > 0 && peaks.every((peak) => peak !== undefined) ? Math.max(...peaks) : undefined);
    }

    const medians = samples.map((values) => (values.length > 0 ? median(values) : undefined));
    const ratio = (value, base) => (value === undefined || base === undefined ? "n/a" : `${(value / base).toFixed(2)}x`);
    const rows = cases.map((entry, index) => [
      ...timingCells(entry.label, samples[index], medians, index),
      mib(rss[index]),
      ratio(rss[index], rss[1]),
      entry.limits === undefined || medians[index] === undefined
        ? entry.target
        : `${entry.target} (${medians[index] <= entry.limits.ms && (rss[index] ?? 0) <= entry.limits.kib ? "met" : "missed"})`,
    ]);
    log(
      `${completed} interleaved runs per case, wall time from spawn to exit; "fresh" is the first run in a new XDG home (database created and migrated), "warm" reuses one home. The scripted test model answers at once from its own process. Peak RSS is the max of ${hasGnuTime ? rssRuns : 0} runs under /usr/bin/time -v${hasGnuTime ? "" : " (not available)"}.`,
    );
    log(formatTable(["command", "n", "median", "p99", "vs node -e 0", "vs floor", "peak RSS", "RSS vs floor", "target"], rows));
  } finally {
    await model.stop();
    for (const home of freshHomes) home.cleanup();
    for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
    warmHome.cleanup();
  }
}
