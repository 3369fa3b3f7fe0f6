// SQL statements per Turn: every statement the harness runs for a one-step answer (one prompt,
// one streamed answer, no tools) of a warm Session, counted at the storage engine's connection,
// split into data statements, transaction control (BEGIN/COMMIT) and content writes (streamed
// parts). The measuring runs in statements-worker.mjs (with tsx, for the test model) against the
// built harness in process. Target: at most 10 beyond the content writes.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { formatTable, repoRoot } from "./lib.mjs";

export const name = "statements";
export const description = "SQL statements per one-step Turn (data, transaction control, content writes)";

function runWorker() {
  return new Promise((resolvePromise) => {
    const child = spawn(process.execPath, ["--import", "tsx", join(repoRoot, "tools", "bench", "statements-worker.mjs")], { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk) => (stderr = (stderr + chunk).slice(-4000)));
    child.once("close", (code) => {
      try {
        resolvePromise(JSON.parse(stdout.trim().split("\n").pop() ?? ""));
      } catch {
        resolvePromise({ error: `worker exited ${code}: ${stderr.trim().split("\n").slice(-5).join(" | ")}` });
      }
    });
  });
}

/** @param {{ log: (line: string) => void }} context */
export async function run({ log }) {
  const result = await runWorker();
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
    index === 0 ? "≤ 10 beyond content" : "",
  ]);
  log(formatTable(["Turn", "data", "BEGIN/COMMIT", "content writes", "beyond content", "target"], rows));
  for (const [phase, count] of Object.entries(result.counts)) {
    log(`\n${phase}:`);
    for (const statement of count.statements) log(`  ${statement}`);
  }
}
