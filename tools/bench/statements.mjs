// SQL statements per Turn: every statement the harness runs for a one-step answer (one prompt,
// one streamed answer, no tools) of a warm Session, counted at the storage engine's connection,
// split into data statements, transaction control (BEGIN/COMMIT) and content writes (streamed
// parts). The measuring runs in statements-worker.mjs (with tsx, for the test model) against the
// built harness in process. Target (issue 21): at most 12 beyond the content writes.
import { formatTable, runWorker } from "./lib.mjs";

export const name = "statements";
export const description = "SQL statements per one-step Turn (data, transaction control, content writes)";


/** @param {{ log: (line: string) => void, record: (figure: import("./check.mjs").Figure) => void }} context */
export async function run({ log, record }) {
  const result = await runWorker("statements-worker.mjs");
  if (result.error) {
    log(`failed — ${result.error}`);
    return;
  }
  const rows = Object.entries(result.counts).map(([phase, count], index) => [
    phase,
    count.data,
    count.transactionControl,
    count.content,
    count.data + count.transactionControl,
    index === 0 ? `≤ 12 beyond content ${count.data + count.transactionControl <= 12 ? "(met)" : "(missed)"}` : "",
  ]);
  const [pipeline] = Object.values(result.counts);
  // Guarded as an exact count: one statement more per Turn fails `--check`.
  record({ key: "statements.beyondContent", value: pipeline.data + pipeline.transactionControl, kind: "count", label: "SQL statements per one-step Turn beyond content" });
  log(formatTable(["Turn", "data", "BEGIN/COMMIT", "content writes", "beyond content", "target"], rows));
  for (const [phase, count] of Object.entries(result.counts)) {
    log(`\n${phase}:`);
    for (const statement of count.statements) log(`  ${statement}`);
  }
}
