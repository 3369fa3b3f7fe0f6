// Extensions on a warm `serve`: an MCP tool call over stdio against a built-in tool call, CodeMode
// `execute` start-up and per-inner-call cost, what a configured plugin and MCP server add to Turns
// that do not use them, and the start-up a configured plugin adds. The measuring runs in
// extensions-worker.mjs (a child with tsx, for the test model).
import { formatTable, median, ms, percentile, runWorker } from "./lib.mjs";

export const name = "extensions";
export const description = "Extensions on a warm `serve`: MCP and CodeMode call overhead, and what plugins and MCP add to Turns that do not use them";


const paired = (a, b) => a.map((value, index) => value - b[index]);
const row = (label, values, target = "") => [label, values.length, ms(median(values)), ms(percentile(values, 99)), target];

/** @param {{ budgetMs: number, log: (line: string) => void }} context */
export async function run({ budgetMs, log }) {
  const result = await runWorker("extensions-worker.mjs", {}, Math.max(180_000, budgetMs));
  if (result.error || !result.bare || !result.extended) {
    log(`extensions: failed — ${result.error ?? "no figures"}`);
    return;
  }
  const { bare, extended, startup } = result;
  const rows = [
    row("Turn, one text answer (bare serve; baseline)", bare.plain),
    row("Turn with one built-in read call", bare.read),
    row("MCP call over stdio: everything_echo Turn − read Turn (paired)", paired(extended.mcp, extended.read)),
    row("execute start-up in a Turn: execute(return 1) Turn − read Turn (paired)", paired(bare.execute0, bare.read)),
    row("execute per inner call: (10-read script − 0-read script) / 10", paired(bare.execute10, bare.execute0).map((value) => value / 10)),
    row("plugin + MCP configured, Turn not using them − bare (medians)", [median(extended.plain) - median(bare.plain)], "< 10 ms"),
    row("serve start-up, bare (spawn → URL)", startup.bare),
    row("serve start-up with one plugin", startup.plugin),
    row("start-up a plugin adds (medians)", [median(startup.plugin) - median(startup.bare)], "< 10 ms"),
  ];
  log(formatTable(["measure", "n", "median", "p99", "target"], rows));
}
