// A one-shot prompt: wall time and peak RSS of `ze-harness run --embedded "hello"` (a new
// process: CLI start-up, the in-process harness on a file database in a temp XDG home, one Turn
// against the zero-latency scripted test model, exit), against `ze-harness --version` (the bin's
// fast path, no oclif) measured in the same run, interleaved. The test model runs as its own
// process (tools/test-model/main.ts under tsx) with a script long enough for every run.
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { binPath, formatTable, hasGnuTime, median, mib, ms, peakRssKiB, percentile, repoRoot, tempHome, timeRun, writeTestModelConfig } from "./lib.mjs";

export const name = "oneshot";
export const description = "one-shot `ze-harness run --embedded \"hello\"`: wall time and peak RSS against `--version`";

const ANSWER = "Hello! This is the scripted answer from the bench model.";
const RUN_TIMEOUT_MS = 30_000;

/** Starts the test model as a process serving `count` copies of the plain answer. */
async function startModelProcess(dir, count) {
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
  const home = tempHome("ze-bench-oneshot-");
  const rssRuns = 3;
  const model = await startModelProcess(home.dir, 2 * runs + 2 * rssRuns + 10);
  try {
    writeTestModelConfig(home, `${model.url}/v1`);
    const options = { env: home.env, cwd: home.root, timeoutMs: RUN_TIMEOUT_MS };
    const cases = [
      { label: "ze-harness --version (baseline)", args: [binPath, "--version"], target: "" },
      { label: 'ze-harness run --embedded "hello"', args: [binPath, "run", "--embedded", "hello"], target: "≤ 0.5 s, ≤ 120 MiB" },
    ];

    // One untimed warm-up of each (file cache, compile cache; the first run also creates the
    // database), which also checks that it works.
    const available = [];
    for (const entry of cases) {
      const result = await timeRun(process.execPath, entry.args, { ...options, keepStdout: true });
      const stderr = result.stderr.trim();
      if (result.code === 0 && (entry.args[1] !== "run" || result.stdout.includes("scripted answer"))) {
        available.push(entry);
      } else if (/command\s+run\s+not\s+found/i.test(stderr)) {
        log(`${entry.label}: run command not available`);
      } else {
        log(`${entry.label}: ${result.timedOut ? `timed out after ${RUN_TIMEOUT_MS / 1000} s` : `exited ${result.code}`} — ${(stderr || result.stdout.trim()).split("\n").slice(-3).join(" | ") || "no output"}`);
      }
    }
    if (available.length === 0) return;

    const samples = available.map(() => []);
    const started = Date.now();
    let completed = 0;
    const failures = [];
    for (let round = 0; round < runs; round++) {
      for (const [index, entry] of available.entries()) {
        const result = await timeRun(process.execPath, entry.args, options);
        if (result.code === 0) samples[index].push(result.ms);
        else failures.push(`${entry.label}: ${result.timedOut ? "timed out" : `exited ${result.code}`} ${result.stderr.trim().split("\n").pop() ?? ""}`);
      }
      completed += 1;
      if (Date.now() - started > budgetMs) break;
    }
    if (completed < runs) log(`(time budget reached: ${completed} of ${runs} rounds)`);
    for (const failure of failures.slice(0, 3)) log(`failed run — ${failure}`);

    const rss = [];
    for (const entry of available) {
      const peaks = [];
      for (let index = 0; index < rssRuns && hasGnuTime; index++) peaks.push(await peakRssKiB(process.execPath, entry.args, options));
      rss.push(peaks.length > 0 && peaks.every((peak) => peak !== undefined) ? Math.max(...peaks) : undefined);
    }

    const baselineIndex = available.findIndex((entry) => entry === cases[0]);
    const baseline = baselineIndex >= 0 && samples[baselineIndex].length > 0 ? median(samples[baselineIndex]) : undefined;
    const rows = available.map((entry, index) => {
      const values = samples[index];
      if (values.length === 0) return [entry.label, 0, "n/a", "n/a", "", mib(rss[index]), entry.target];
      return [
        entry.label,
        values.length,
        ms(median(values)),
        ms(percentile(values, 99)),
        baseline === undefined ? "" : `${(median(values) / baseline).toFixed(2)}x`,
        mib(rss[index]),
        entry.target,
      ];
    });
    if (!available.includes(cases[1])) rows.push([cases[1].label, 0, "run command not available", "", "", "", cases[1].target]);
    log(
      `${completed} interleaved runs per case, wall time from spawn to exit; the embedded run uses a file database in a temp XDG home and the scripted test model (zero latency, its own process). Peak RSS is the max of ${hasGnuTime ? rssRuns : 0} runs under /usr/bin/time -v${hasGnuTime ? "" : " (not available)"}.`,
    );
    log(formatTable(["command", "n", "median", "p99", "vs --version", "peak RSS", "target"], rows));
  } finally {
    await model.stop();
    home.cleanup();
  }
}
