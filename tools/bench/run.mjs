#!/usr/bin/env node
// `npm run bench [-- NAME…] [-- --runs=N]`: runs the benchmark modules below in order and prints
// their figures. Prints only; asserts nothing. Spawns the BUILT binary: run `npm run build` first.
//
// A benchmark is a module in this folder exporting `name`, `description` and
// `async run({ runs, budgetMs, log })`; add a further one by writing its file and listing it
// here. A benchmark that throws is reported and the next one runs.
import { existsSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { repoRoot } from "./lib.mjs";

const modules = ["./startup.mjs", "./statements.mjs", "./turns.mjs", "./oneshot.mjs", "./depth.mjs", "./extensions.mjs", "./daemon.mjs", "./history.mjs", "./git.mjs", "./tui.mjs", "./terminals.mjs", "./sandbox.mjs", "./recording.mjs"];

const argv = process.argv.slice(2);
const runsFlag = argv.find((arg) => arg.startsWith("--runs="));
const runs = runsFlag ? Number(runsFlag.slice("--runs=".length)) : 20;
const only = argv.filter((arg) => !arg.startsWith("--"));
// The repeated-run benchmarks (startup, oneshot) stop their rounds once their share of this budget
// is spent; `turns` runs a fixed count (≈ 45 s). The whole `npm run bench` stays under ~3 minutes.
const totalBudgetMs = 90_000;

if (!existsSync(join(repoRoot, "dist", "cli", "root-help.txt"))) {
  console.error("bench: dist/ is missing; run `npm run build` first");
  process.exit(1);
}

const benchmarks = [];
for (const path of modules) benchmarks.push(await import(path));
const selected = only.length > 0 ? benchmarks.filter((benchmark) => only.includes(benchmark.name)) : benchmarks;
if (selected.length === 0) {
  console.error(`bench: no benchmark named ${only.join(", ")} (have: ${benchmarks.map((benchmark) => benchmark.name).join(", ")})`);
  process.exit(1);
}

const cpu = cpus();
// Other work on the machine skews every figure: the load average is printed at start and end.
const load = () => loadavg().map((value) => value.toFixed(2)).join(" ");
console.log(`ze-harness bench — node ${process.version}, ${process.platform}-${process.arch}, ${cpu.length} × ${cpu[0]?.model ?? "cpu"}; load average ${load()}`);
const started = Date.now();
let failed = 0;
for (const benchmark of selected) {
  console.log(`\n## ${benchmark.name}: ${benchmark.description}\n`);
  const benchStarted = Date.now();
  try {
    await benchmark.run({ runs, budgetMs: totalBudgetMs / selected.length, log: (line) => console.log(line) });
  } catch (error) {
    // One benchmark failing does not stop the others.
    failed += 1;
    console.log(`${benchmark.name} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  }
  console.log(`(${((Date.now() - benchStarted) / 1000).toFixed(1)} s)`);
}
console.log(`\nbench total ${((Date.now() - started) / 1000).toFixed(1)} s; load average ${load()}${failed > 0 ? ` (${failed} benchmark${failed === 1 ? "" : "s"} failed)` : ""}`);
