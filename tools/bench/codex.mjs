// Side by side with Codex: `codex exec "hello"` (OpenAI's native Codex CLI, the fastest peer)
// against Ze Harness's warm-daemon `run "hello"` and `run --embedded "hello"` (warm state), all
// three answered by the same scripted test model process (Codex over the Responses API through a
// custom model provider in a temp CODEX_HOME, Ze Harness over Chat Completions), interleaved in
// the same rounds, with `node -e 0` as the machine's baseline. Targets (issue 21): the warm-daemon
// one-shot ≤ 0.5× Codex; the embedded one-shot ≤ 1.1× Codex and ≤ 120 MiB.
//
// Codex is not a dependency of Ze Harness. The bench looks for it in this order: `ZE_BENCH_CODEX`
// (the path of a `codex` executable), the native binary under tools/bench/.peers (installed there
// from npm by `npm run bench:peers`, git-ignored), `codex` on PATH. The native binary is used
// rather than npm's Node wrapper script, which adds a Node start (≈ 0.25 s) to every run: the
// harder comparison. Without Codex the bench says how to install it and measures nothing.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { binPath, checkRuns, formatTable, hasGnuTime, interleavedRounds, timingCells, median, mib, peakRssKiB, repoRoot, tempHome, timeRun, writeTestModelConfig } from "./lib.mjs";
import { startModelProcess } from "./oneshot.mjs";

export const name = "codex";
export const description = 'side by side with Codex: `codex exec "hello"` vs warm-daemon and --embedded `run "hello"` (install Codex: npm run bench:peers)';

const RUN_TIMEOUT_MS = 30_000;
export const peersDir = join(repoRoot, "tools", "bench", ".peers");

/** The native binary inside an npm install of @openai/codex (its platform package), if any. */
function nativeIn(nodeModules) {
  const scope = join(nodeModules, "@openai");
  if (!existsSync(scope)) return undefined;
  for (const pkg of readdirSync(scope).filter((entry) => entry.startsWith("codex-"))) {
    const vendor = join(scope, pkg, "vendor");
    if (!existsSync(vendor)) continue;
    for (const triple of readdirSync(vendor)) {
      for (const candidate of [join(vendor, triple, "bin", "codex"), join(vendor, triple, "codex", "codex")]) if (existsSync(candidate)) return candidate;
    }
  }
  return undefined;
}

/** The Codex executable to compare with, or undefined. */
export function findCodex() {
  const fromEnv = process.env.ZE_BENCH_CODEX;
  if (fromEnv) return existsSync(fromEnv) ? fromEnv : undefined;
  const installed = nativeIn(join(peersDir, "node_modules"));
  if (installed !== undefined) return installed;
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    const candidate = join(dir, "codex");
    if (dir !== "" && existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** Codex's version line (`codex-cli 0.171.0`), or "unknown". */
function codexVersion(codex) {
  try {
    return execFileSync(codex, ["--version"], { encoding: "utf8", timeout: 10_000 }).trim();
  } catch {
    return "unknown";
  }
}

/** A CODEX_HOME whose only model provider is the test model over the Responses API. */
function codexHome(dir, baseURL) {
  const home = join(dir, "codex-home");
  mkdirSync(home, { recursive: true });
  writeFileSync(
    join(home, "config.toml"),
    [
      'model = "gpt-bench"',
      'model_provider = "bench"',
      "[model_providers.bench]",
      'name = "bench"',
      `base_url = ${JSON.stringify(baseURL)}`,
      'wire_api = "responses"',
      'env_key = "ZE_BENCH_CODEX_KEY"',
      "",
    ].join("\n"),
  );
  return home;
}

/** @param {{ runs: number, budgetMs: number, log: (line: string) => void }} context */
export async function run({ runs, budgetMs, log }) {
  const codex = findCodex();
  if (codex === undefined) {
    log("Codex not found: install it beside the bench with `npm run bench:peers` (npm's @openai/codex into tools/bench/.peers), or set ZE_BENCH_CODEX to a codex executable. Nothing measured.");
    return;
  }
  const home = tempHome("ze-bench-codex-");
  const rssRuns = 3;
  // Per round one answer for each of Codex, the daemon run and the embedded run; plus warm-ups and RSS runs.
  const model = await startModelProcess(home.dir, 3 * (runs + rssRuns + 2) + 2);
  const baseURL = `${model.url}/v1`;
  const options = { env: home.env, cwd: home.root };
  const stop = () => timeRun(process.execPath, [binPath, "service", "stop"], { ...options, timeoutMs: RUN_TIMEOUT_MS });
  try {
    writeTestModelConfig(home, baseURL);
    const codexEnv = { ...home.env, CODEX_HOME: codexHome(home.dir, baseURL), ZE_BENCH_CODEX_KEY: "bench" };
    const cases = [
      { label: "node -e 0 (baseline)", command: process.execPath, args: ["-e", "0"], options },
      { label: 'codex exec "hello"', command: codex, args: ["exec", "--skip-git-repo-check", "hello"], options: { env: codexEnv, cwd: home.root }, answers: true },
      { label: 'ze-harness run "hello", warm daemon', command: process.execPath, args: [binPath, "run", "hello"], options, answers: true, target: "≤ 0.5x Codex", limit: { codex: 0.5 } },
      { label: 'ze-harness run --embedded "hello", warm state', command: process.execPath, args: [binPath, "run", "--embedded", "hello"], options, answers: true, target: "≤ 1.1x Codex, ≤ 120 MiB", limit: { codex: 1.1, kib: 120 * 1024 } },
    ];
    const once = (entry, extra = {}) => timeRun(entry.command, entry.args, { ...entry.options, timeoutMs: RUN_TIMEOUT_MS, ...extra });
    // Warm-up and check: the first run starts the daemon; each case must print the scripted answer.
    await checkRuns(cases, once);
    const { samples, completed } = await interleavedRounds(cases, once, { runs, budgetMs, log });
    const rss = [];
    for (const entry of cases) {
      const peaks = [];
      for (let index = 0; index < rssRuns && hasGnuTime; index++) peaks.push(await peakRssKiB(entry.command, entry.args, entry.options));
      rss.push(peaks.length > 0 && peaks.every((peak) => peak !== undefined) ? Math.max(...peaks) : undefined);
    }
    const medians = samples.map((values) => (values.length > 0 ? median(values) : undefined));
    const met = (entry, index) =>
      medians[index] !== undefined && medians[1] !== undefined && medians[index] <= entry.limit.codex * medians[1] && (entry.limit.kib === undefined || (rss[index] ?? Infinity) <= entry.limit.kib);
    log(`${codexVersion(codex)} (${codex}); ${completed} interleaved rounds, wall time from spawn to exit; peak RSS the max of ${hasGnuTime ? rssRuns : 0} runs under /usr/bin/time -v.`);
    log(
      formatTable(
        ["command", "n", "median", "p99", "vs node -e 0", "vs Codex", "peak RSS", "target"],
        cases.map((entry, index) => [
          ...timingCells(entry.label, samples[index], medians, index),
          mib(rss[index]),
          entry.target === undefined ? "" : `${entry.target} (${met(entry, index) ? "met" : "missed"})`,
        ]),
      ),
    );
  } finally {
    await stop();
    await model.stop();
    home.cleanup();
  }
}
