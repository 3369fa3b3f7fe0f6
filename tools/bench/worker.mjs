// The Worker host against the Node host in the same run: prompt → finished answer and per-Turn
// overhead of sequential Turns through `ze-harness serve` and through the bundled Worker in
// workerd (miniflare), against the zero-latency scripted model. The measuring runs in
// worker-turns.mjs (a child with tsx); this module starts it and prints its figures. Needs the
// build (`npm run build`) for `serve` and the client.
import { formatTable, median, ms, percentile, runWorker } from "./lib.mjs";

export const name = "worker";
export const description = "Turns under workerd (the Worker host) vs the Node `serve` host: prompt → finished and per-Turn overhead";

/** @param {{ runs: number, budgetMs: number, quick: boolean, log: (line: string) => void }} context */
export async function run({ budgetMs, quick, log }) {
  const result = await runWorker("worker-turns.mjs", quick ? { turns: 15, warmupTurns: 3 } : {}, Math.max(180_000, budgetMs));
  if (result.error) {
    log(`failed — ${result.error}`);
    return;
  }
  const model = median(result.model);
  const rows = [["model time: openai SDK stream, direct (baseline)", result.model.length, ms(model), ms(percentile(result.model, 99)), "1.00x", ""]];
  const overheads = {};
  for (const host of ["node", "workerd"]) {
    const turns = result[host];
    const overhead = turns.map((value) => value - model);
    overheads[host] = median(overhead);
    rows.push(
      [`prompt → finished answer — ${host}`, turns.length, ms(median(turns)), ms(percentile(turns, 99)), `${(median(turns) / model).toFixed(2)}x`, ""],
      [`per-Turn overhead (minus model median) — ${host}`, overhead.length, ms(median(overhead)), ms(percentile(overhead, 99)), "", ""],
    );
  }
  rows.push(["workerd / node, per-Turn overhead (median)", "", `${(overheads.workerd / overheads.node).toFixed(2)}x`, "", "", ""]);
  log(
    "Per Turn: one Session per host, sequential Turns interleaved host by host in one run; the clock starts at the submit POST and stops at `turn.finished` on the Turn's watch stream. Node: the built `ze-harness serve` with a file database; workerd: the bundled Worker in miniflare, one HarnessServerObject with Durable Object SQLite. p99 is nearest-rank.",
  );
  log(formatTable(["per Turn", "n", "median", "p99", "vs model", "target"], rows));
}
