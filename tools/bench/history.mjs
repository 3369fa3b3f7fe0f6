// History and search page cost against history size: a history page and a search page of a
// Session with 10,000 Turns should cost what they cost at 100 (each page is one indexed range
// read, or an FTS5 candidate scan bounded per page). The measuring runs in history-worker.mjs
// (with tsx) against the built harness in process. Target: ratio 10,000 / 100 ≈ 1 (flat).
import { formatTable, ms, runWorker } from "./lib.mjs";

export const name = "history";
export const description = "history and search page cost at 100 vs 10,000 Turns (flat)";


/** @param {{ log: (line: string) => void }} context */
export async function run({ log }) {
  const result = await runWorker("history-worker.mjs");
  if (result.error) {
    log(`failed — ${result.error}`);
    return;
  }
  const [small, large] = result.sizes;
  const rows = Object.keys(result.results[small]).map((operation) => {
    const a = result.results[small][operation];
    const b = result.results[large][operation];
    return [operation, ms(a.median), ms(a.p99), ms(b.median), ms(b.p99), `${(b.median / a.median).toFixed(2)}×`];
  });
  log(formatTable(["operation", `${small} median`, `${small} p99`, `${large} median`, `${large} p99`, "ratio (median)"], rows));
  log(`\n${result.repeats} timed runs per operation after 5 warm-ups; target: ratio ≈ 1 (flat).`);
}
