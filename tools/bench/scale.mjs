// Several hosts on one libSQL server (docs/scale.md): Turns/s and per-Turn overhead with 1, 2 and 3
// built `ze-harness serve` hosts on one sqld, Sessions spread over them round-robin as behind a
// load balancer, against the zero-latency scripted model. The measuring runs in scale-worker.mjs
// (a child with tsx, for the TypeScript test model); this module starts it and prints its figures.
// Then the same load on 1 host with a local database file and on the Worker host under workerd
// (miniflare), its Sessions in 1 and then 3 server names (Durable Objects, each a local SQLite);
// the ratio column is against 1 host on sqld throughout.
import { formatTable, median, ms, percentile, runWorker } from "./lib.mjs";

export const name = "scale";
export const description = "Hosts on one sqld: Turns/s and per-Turn overhead with 1, 2 and 3 `serve` hosts, and the Worker under workerd";

/** A row's label: Node hosts on one sqld, or the Worker with its Sessions in N server names. */
const label = (sample) =>
  sample.host === "workerd"
    ? `Worker under workerd, ${sample.servers} server name${sample.servers === 1 ? "" : "s"}`
    : sample.local
      ? "1 host on a local database file"
      : `${sample.hosts} host${sample.hosts === 1 ? "" : "s"} on one sqld`;

/** @param {{ budgetMs: number, log: (line: string) => void }} context */
export async function run({ budgetMs, log }) {
  const result = await runWorker("scale-worker.mjs", {}, Math.max(180_000, budgetMs));
  if (result.error && !result.results?.length) throw new Error(result.error);
  const rows = [];
  const base = result.results[0];
  const baseRate = base ? base.turns.length / (base.wallMs / 1000) : undefined;
  const sequentialRows = [];
  for (const sample of result.results) {
    const model = median(sample.model);
    const overhead = sample.sequential.map((value) => value - model);
    sequentialRows.push([label(sample), overhead.length, ms(median(sample.sequential)), ms(percentile(sample.sequential, 99)), ms(median(overhead)), ms(percentile(overhead, 99)), ms(model)]);
  }
  for (const sample of result.results) {
    const rate = sample.turns.length / (sample.wallMs / 1000);
    const model = median(sample.model);
    const overhead = sample.turns.map((value) => value - model);
    rows.push([
      label(sample),
      sample.turns.length,
      `${rate.toFixed(1)}`,
      baseRate ? `${(rate / baseRate).toFixed(2)}x` : "",
      ms(median(sample.turns)),
      ms(percentile(sample.turns, 99)),
      ms(median(overhead)),
      ms(percentile(overhead, 99)),
      ms(model),
    ]);
  }
  log(
    `Per host count: a fresh sqld and that many built \`ze-harness serve\` hosts (one machine: they share its cores); ${result.sessions} Sessions at once, spread over the hosts round-robin, each ${result.turnsPerSession} Turns in a row (submit POST → \`turn.finished\` on the Turn's watch stream). Turns/s = all Turns over the wall time; overhead = each Turn minus the model median (the harness's request streamed straight through the openai SDK, interleaved). Baseline for the ratio: 1 host. p99 is nearest-rank. Then 1 host on a local database file, the like-for-like comparison for the Worker rows: the bundled Worker in workerd through miniflare (one process on this machine), the same Sessions spread over 1 or 3 server names (Durable Objects, each its own SQLite).`,
  );
  log(formatTable(["hosts", "Turns", "Turns/s", "vs 1 host", "Turn median", "Turn p99", "overhead median", "overhead p99", "model median"], rows));
  log("");
  log("One Turn at a time: one Session, each Turn submitted to the next host (round-robin), so every Turn but the first on a host follows one another host ran; on the Worker the Session's server name runs them all.");
  log(formatTable(["hosts", "Turns", "Turn median", "Turn p99", "overhead median", "overhead p99", "model median"], sequentialRows));
  if (result.error) log(`stopped early — ${result.error}`);
}
