// Turns on a warm server: prompt → finished answer and per-Turn harness overhead against the
// zero-latency scripted model, and SSE delta latency, for 1 and 20 concurrent Sessions, with
// `contentFlushMillis` at its default and at 0. The measuring runs in turns-worker.mjs (a child
// with tsx, for the TypeScript test model), which spawns the built `ze-harness serve`; this
// module only starts it and prints its figures.
import { formatTable, median, ms, percentile, runWorker } from "./lib.mjs";

export const name = "turns";
export const description = "Turns on a warm `serve`: prompt → finished answer, per-Turn overhead and SSE delta latency";


/** Runs one worker; resolves with its JSON result (or `{ error }`). */

const flushLabel = (flushMs) => (flushMs === null ? "default (100)" : String(flushMs));

/** @param {{ runs: number, budgetMs: number, log: (line: string) => void }} context */
export async function run({ budgetMs, log }) {
  // The memory phase runs once (with the default flush).
  const settings = [{}, { flushMs: 0, rssTurns: 0 }];
  const results = [];
  for (const setting of settings) {
    results.push(await runWorker("turns-worker.mjs", setting, Math.max(120_000, budgetMs)));
  }

  const turnRows = [];
  const deltaRows = [];
  for (const [index, result] of results.entries()) {
    const flush = flushLabel(settings[index].flushMs ?? null);
    if (result.error || !result.sequential) {
      log(`contentFlushMillis ${flush}: failed — ${result.error ?? "no figures"}`);
      continue;
    }
    const groups = [
      ["1 Session, sequential", result.sequential],
      [`${result.sessions} Sessions at once`, result.concurrent],
    ];
    for (const [group, samples] of groups) {
      if (!samples) continue;
      const model = median(samples.model);
      const overhead = samples.turn.map((value) => value - model);
      const ratio = (values) => `${(median(values) / model).toFixed(2)}x`;
      turnRows.push(
        [`model time: openai SDK stream, direct (baseline) — ${group}`, flush, samples.model.length, ms(model), ms(percentile(samples.model, 99)), "1.00x", ""],
        [`submit POST → accepted — ${group}`, flush, samples.submit.length, ms(median(samples.submit)), ms(percentile(samples.submit, 99)), ratio(samples.submit), ""],
        [`prompt → finished answer — ${group}`, flush, samples.turn.length, ms(median(samples.turn)), ms(percentile(samples.turn, 99)), ratio(samples.turn), group.startsWith("1 ") ? "< 15 ms" : ""],
        [`per-Turn overhead (minus model median) — ${group}`, flush, overhead.length, ms(median(overhead)), ms(percentile(overhead, 99)), "", group.startsWith("1 ") ? "< 5 ms" : "< 20 ms"],
      );
      if (samples.plainTurn?.length > 0) {
        const plainOverhead = samples.plainTurn.map((value) => value - model);
        turnRows.push(
          [`submit POST → accepted, plain HTTP client — ${group}`, flush, samples.plainSubmit.length, ms(median(samples.plainSubmit)), ms(percentile(samples.plainSubmit, 99)), ratio(samples.plainSubmit), ""],
          [`prompt → finished answer, plain HTTP client — ${group}`, flush, samples.plainTurn.length, ms(median(samples.plainTurn)), ms(percentile(samples.plainTurn, 99)), ratio(samples.plainTurn), ""],
          [`per-Turn overhead, plain HTTP client (server only) — ${group}`, flush, plainOverhead.length, ms(median(plainOverhead)), ms(percentile(plainOverhead, 99)), "", ""],
        );
      }
    }
    for (const [group, pair] of [
      ["1 Session", result.deltas?.sequential],
      [`${result.sessions} Sessions at once`, result.deltas?.concurrent],
    ]) {
      if (!pair?.model || !pair?.harness) continue;
      const base = pair.model.values;
      const harness = pair.harness.values;
      deltaRows.push(
        [`model write → openai SDK chunk, direct (baseline) — ${group}`, flush, base.length, pair.model.missing, ms(median(base)), ms(percentile(base, 99)), "1.00x", ""],
        [
          `model write → client turn.text.delta — ${group}`,
          flush,
          harness.length,
          pair.harness.missing,
          ms(median(harness)),
          ms(percentile(harness, 99)),
          `${(percentile(harness, 99) / percentile(base, 99)).toFixed(1)}x`,
          "< 10 ms p99",
        ],
      );
    }
    if (result.error) log(`contentFlushMillis ${flush}: stopped early — ${result.error}`);
  }

  const script = results.find((result) => result.deltaScript)?.deltaScript;
  const rssRows = [];
  for (const [index, result] of results.entries()) {
    if (!result.rss) continue;
    const first = result.rss[0].kib;
    const last = result.rss[result.rss.length - 1].kib;
    rssRows.push([
      `serve RSS after ${result.rss.map((sample) => sample.turns).join(" / ")} Turns`,
      flushLabel(settings[index].flushMs ?? null),
      result.rss.map((sample) => `${(sample.kib / 1024).toFixed(1)}`).join(" / ") + " MiB",
      `${((last - first) / 1024).toFixed(1)} MiB`,
      `${(((last - first) / first) * 100).toFixed(1)}%`,
      "flat",
    ]);
  }
  log(
    "Per Turn: a warm `ze-harness serve` (built binary, file database) over loopback HTTP; the clock starts at the submit POST and stops when `turn.finished` arrives on the Turn's watch stream (opened after the POST). Model time: the harness's own request body streamed straight through the openai SDK, interleaved with the Turns; overhead = each Turn minus the model median. The Turns go through the generated SDK client (checking every answer and SSE event against the contract, as the SDK does for any server); the \"plain HTTP client\" rows are the same Turns, interleaved, through node:http with no SDK: the server's share alone. p99 is nearest-rank.",
  );
  if (turnRows.length > 0) log(formatTable(["per Turn", "contentFlushMillis", "n", "median", "p99", "vs model", "target"], turnRows));
  if (deltaRows.length > 0) {
    log("");
    log(
      `SSE delta latency: the test model streams ${script?.words ?? "?"} one-word text deltas ${script?.gapMs ?? "?"} ms apart; each word is stamped when the model writes its chunk and when the client receives it (both in the measuring process). "missing" = words never seen by the client.`,
    );
    log(formatTable(["per delta", "contentFlushMillis", "n", "missing", "median", "p99", "p99 vs direct", "target"], deltaRows));
  }
  if (rssRows.length > 0) {
    log("");
    log("Memory: the serve's resident set (VmRSS) sampled while it runs 1,000 more Turns after the measurements above (a new Session every 50 Turns).");
    log(formatTable(["memory", "contentFlushMillis", "samples", "growth", "growth %", "target"], rssRows));
  }
}
