#!/usr/bin/env node
// `npm run bench [-- NAME…] [-- --runs=N] [-- --quick] [-- --check | --update-baseline]`: runs
// the benchmark modules below in order and prints their figures.
//
// A benchmark is a module in this folder exporting `name`, `description` and
// `async run({ runs, budgetMs, quick, log, record })`; add a further one by writing its file and
// listing it here. A benchmark that throws is reported and the next one runs. Spawns the BUILT
// binary: run `npm run build` first.
//
// Guarding (check.mjs): a benchmark `record`s its guarded figures (ratios to a same-run baseline,
// or exact counts). `--check` compares them with tools/bench/baseline.json (or the file named by
// ZE_BENCH_BASELINE) and exits 1 when one regressed beyond its tolerance; a benchmark with a
// regressed figure is measured again up to twice first and its best figures kept, so one noisy
// run does not fail the check while a real slowdown, present in every run, does.
// `--update-baseline` writes the best of three runs of each figure into that file. `--quick` runs only the
// guarded quick set (≤ 60 s; CI runs `--quick --check`).
import { existsSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { baselinePath, checkRows, compareFigures, readBaseline, updatedBaseline, writeBaseline } from "./check.mjs";
import { formatTable, repoRoot } from "./lib.mjs";

const modules = ["./startup.mjs", "./statements.mjs", "./hotpath.mjs", "./turns.mjs", "./memory.mjs", "./oneshot.mjs", "./depth.mjs", "./extensions.mjs", "./daemon.mjs", "./history.mjs", "./git.mjs", "./tui.mjs", "./terminals.mjs", "./sandbox.mjs", "./recording.mjs", "./scale.mjs", "./binary.mjs", "./worker.mjs", "./codex.mjs"];
const QUICK = ["startup", "statements", "hotpath"];

const argv = process.argv.slice(2);
const runsFlag = argv.find((arg) => arg.startsWith("--runs="));
const quick = argv.includes("--quick");
const check = argv.includes("--check");
const update = argv.includes("--update-baseline");
const runs = runsFlag ? Number(runsFlag.slice("--runs=".length)) : quick ? 8 : 20;
const only = argv.filter((arg) => !arg.startsWith("--"));
const known = new Set(["--quick", "--check", "--update-baseline"]);
const unknown = argv.filter((arg) => arg.startsWith("--") && !known.has(arg) && !arg.startsWith("--runs="));
if (unknown.length > 0 || (check && update)) {
  console.error(`bench: ${unknown.length > 0 ? `unknown option ${unknown.join(", ")}` : "--check and --update-baseline exclude each other"} (usage: npm run bench -- [NAME…] [--runs=N] [--quick] [--check | --update-baseline])`);
  process.exit(2);
}
const baselineFile = process.env.ZE_BENCH_BASELINE ?? baselinePath;
// The repeated-run benchmarks (startup, oneshot) stop their rounds once their share of this budget
// is spent; `turns` runs a fixed count (≈ 45 s). The whole `npm run bench` stays under ~4 minutes.
const totalBudgetMs = quick ? 20_000 : 90_000;

if (!existsSync(join(repoRoot, "dist", "cli", "root-help.txt"))) {
  console.error("bench: dist/ is missing; run `npm run build` first");
  process.exit(1);
}

const benchmarks = [];
for (const path of modules) benchmarks.push(await import(path));
const wanted = only.length > 0 ? only : quick ? QUICK : undefined;
const selected = wanted ? benchmarks.filter((benchmark) => wanted.includes(benchmark.name)) : benchmarks;
if (selected.length === 0 || (wanted && selected.length < wanted.length)) {
  console.error(`bench: no benchmark named ${wanted.filter((name) => !benchmarks.some((b) => b.name === name)).join(", ")} (have: ${benchmarks.map((benchmark) => benchmark.name).join(", ")})`);
  process.exit(1);
}

const cpu = cpus();
// Other work on the machine skews every figure: the load average is printed at start and end.
const load = () => loadavg().map((value) => value.toFixed(2)).join(" ");
console.log(`ze-harness bench — node ${process.version}, ${process.platform}-${process.arch}, ${cpu.length} × ${cpu[0]?.model ?? "cpu"}; load average ${load()}`);
const started = Date.now();
let failed = 0;
/** Guarded figures by key: the best (lowest) of the runs of their benchmark. */
const figures = new Map();

async function runBenchmark(benchmark, log) {
  const benchStarted = Date.now();
  try {
    await benchmark.run({
      runs,
      quick,
      budgetMs: totalBudgetMs / selected.length,
      log,
      record(figure) {
        const known = figures.get(figure.key);
        if (!known || figure.value < known.value) figures.set(figure.key, figure);
      },
    });
    return true;
  } catch (error) {
    // One benchmark failing does not stop the others.
    log(`${benchmark.name} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    return false;
  } finally {
    log(`(${((Date.now() - benchStarted) / 1000).toFixed(1)} s)`);
  }
}

for (const benchmark of selected) {
  console.log(`\n## ${benchmark.name}: ${benchmark.description}\n`);
  if (!(await runBenchmark(benchmark, (line) => console.log(line)))) failed += 1;
}

let regressed = false;
if (check) {
  const baseline = readBaseline(baselineFile);
  const ran = selected.map((benchmark) => benchmark.name);
  let comparison = compareFigures(baseline, [...figures.values()], ran);
  for (let retry = 1; retry <= 2 && comparison.failed.length > 0; retry++) {
    const again = selected.filter((benchmark) => comparison.failed.some((key) => key.split(".")[0] === benchmark.name));
    console.log(`\n(check: ${comparison.failed.join(", ")} above the baseline; measuring ${again.map((b) => b.name).join(", ")} again, ${retry} of 2)`);
    for (const benchmark of again) await runBenchmark(benchmark, () => {});
    comparison = compareFigures(baseline, [...figures.values()], ran);
  }
  console.log(`\n## check against ${baselineFile === baselinePath ? "tools/bench/baseline.json" : baselineFile}\n`);
  console.log(formatTable(["figure", "baseline", "limit", "now", "verdict"], checkRows(comparison.rows)));
  regressed = comparison.failed.length > 0;
  console.log(regressed ? `\nbench check: ${comparison.failed.length} figure(s) regressed: ${comparison.failed.join(", ")}` : "\nbench check: every guarded figure within its tolerance");
}
if (update) {
  // A baseline is the best of three runs of each benchmark, as a check's failing figure is: so
  // a noisy run never sets the bar low or high by chance.
  for (let again = 1; again <= 2; again++) {
    console.log(`\n(baseline: measuring ${selected.map((b) => b.name).join(", ")} again, ${again} of 2)`);
    for (const benchmark of selected) await runBenchmark(benchmark, () => {});
  }
  writeBaseline(updatedBaseline(readBaseline(baselineFile), [...figures.values()]), baselineFile);
  console.log(`\nbaseline: ${figures.size} figure(s) written to ${baselineFile}`);
}
console.log(`\nbench total ${((Date.now() - started) / 1000).toFixed(1)} s; load average ${load()}${failed > 0 ? ` (${failed} benchmark${failed === 1 ? "" : "s"} failed)` : ""}`);
if (regressed || (check && failed > 0)) process.exit(1);
