// The server hot path in CPU: a warm `serve`'s own CPU per one-step Turn (hotpath-worker.mjs
// reads it from /proc over batches of sequential Turns), against a fixed calibration workload
// timed in the same run. Target: ≤ 2 ms of harness CPU per Turn. Guarded by `--check` as the
// ratio to the calibration workload.
import { baselinePath, readBaseline } from "./check.mjs";
import { formatTable, runWorker } from "./lib.mjs";

export const name = "hotpath";
export const description = "Server CPU per one-step Turn on a warm `serve` (/proc CPU of the serve process)";

/**
 * Runs the worker. ZE_BENCH_SLOWDOWN=0.2 slows every Turn down deliberately by that fraction of
 * the committed figure (a plugin hook burning CPU): how CI shows that `--check` catches it.
 */
export function measure({ quick = false, slowdown = 0 } = {}) {
  const baselineRatio = readBaseline(process.env.ZE_BENCH_BASELINE ?? baselinePath).figures["hotpath.cpuPerTurn"]?.value ?? 0;
  const shape = quick ? { warmupTurns: 300, batchTurns: 25, batches: 10 } : {};
  return runWorker("hotpath-worker.mjs", { ...shape, slowdown, baselineRatio }, 120_000);
}

/** @param {{ quick?: boolean, log: (line: string) => void, record: (figure: import("./check.mjs").Figure) => void }} context */
export async function run({ quick, log, record }) {
  const slowdown = Number(process.env.ZE_BENCH_SLOWDOWN ?? 0);
  const result = await measure({ quick, slowdown });
  if (result.error) throw new Error(result.error);
  const ratio = result.ratio;
  if (result.spinMs > 0) log(`(deliberate slowdown ${slowdown}: every Turn burns ${result.spinMs.toFixed(2)} ms of CPU in a turn.before hook)`);
  log(
    formatTable(
      ["figure", "value", "target"],
      [
        ["serve CPU per one-step Turn (least batch)", `${result.cpuMsPerTurn.toFixed(2)} ms`, `≤ 2 ms ${result.cpuMsPerTurn <= 2 ? "(met)" : "(missed)"}`],
        ["batches (ms per Turn / calibration ms)", result.batches.map((batch) => `${batch.cpuMsPerTurn.toFixed(1)}/${batch.calibrationMs.toFixed(1)}`).join(", "), ""],
        ["calibration workload (least run)", `${result.calibrationMs.toFixed(2)} ms`, ""],
        ["ratio of the two least figures", `${ratio.toFixed(3)}`, "guarded"],
      ],
    ),
  );
  record({ key: "hotpath.cpuPerTurn", value: ratio, kind: "ratio", label: "serve CPU per Turn / calibration workload" });
}
