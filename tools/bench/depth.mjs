// Session depth on a warm `serve`: the cost of one sub-agent round trip (a `task` call whose
// child Session runs one model call) against the same Turn with a cheap tool call, and the model
// alone. The measuring runs in depth-worker.mjs (a child with tsx, for the test model).
import { formatTable, median, ms, percentile, runWorker } from "./lib.mjs";

export const name = "depth";
export const description = "Session depth on a warm `serve`: one sub-agent round trip against a plain tool Turn; Turns and listing with 1, 1,000 and 10,000 earlier Turns";


/** @param {{ budgetMs: number, log: (line: string) => void }} context */
export async function run({ budgetMs, log }) {
  const result = await runWorker("depth-worker.mjs", {}, Math.max(120_000, budgetMs));
  if (result.error || result.subagent.length === 0) {
    log(`depth: failed — ${result.error ?? "no figures"}`);
    return;
  }
  const model = median(result.model);
  const tool = median(result.tool);
  const roundTrip = result.subagent.map((value, index) => value - result.tool[index]);
  const rows = [
    ["model alone: one openai SDK stream (baseline)", result.model.length, ms(model), ms(percentile(result.model, 99)), "1.00x"],
    ["Turn with one read call (2 model calls)", result.tool.length, ms(tool), ms(percentile(result.tool, 99)), `${(tool / model).toFixed(2)}x`],
    ["Turn with one task call (3 model calls: parent, child, parent)", result.subagent.length, ms(median(result.subagent)), ms(percentile(result.subagent, 99)), `${(median(result.subagent) / model).toFixed(2)}x`],
    ["sub-agent round trip (task Turn − read Turn, paired)", roundTrip.length, ms(median(roundTrip)), ms(percentile(roundTrip, 99)), `${(median(roundTrip) / model).toFixed(2)}x`],
  ];
  log(formatTable(["measure", "n", "median", "p99", "× model"], rows));

  // History length: the first Turn after a cold start reads the history; later ones use the cache.
  const historyRows = [];
  for (const phase of result.history ?? []) {
    const row = (label, pass) => [
      `${phase.earlier} earlier Turns — ${label}`,
      ms(pass.turns[0]),
      ms(median(pass.turns.slice(1))),
      `${(median(pass.turns.slice(1)) / model).toFixed(2)}x`,
      ms(median(pass.lists)),
      ms(percentile(pass.lists, 99)),
    ];
    historyRows.push(row("first serve", phase.first), row("restarted serve", phase.second));
    historyRows.push([`${phase.earlier} earlier Turns — completed compactions`, String(phase.compactions), "", "", "", ""]);
  }
  if (historyRows.length > 0) {
    log("");
    log(formatTable(["Session", "cold first Turn", "warm Turn median", "× model", "list page median", "list p99"], historyRows));
  }
}
