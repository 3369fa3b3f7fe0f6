// History and search page cost against history size: a history page and a search page of a
// Session with 10,000 Turns should cost what they cost at 100 (each page is one indexed range
// read, or an FTS5 candidate scan bounded per page). The measuring runs in history-worker.mjs
// (with tsx) against the built harness in process. Target: ratio 10,000 / 100 ≈ 1 (flat).
import { spawn } from "node:child_process";
import { join } from "node:path";
import { formatTable, ms, repoRoot } from "./lib.mjs";

export const name = "history";
export const description = "history and search page cost at 100 vs 10,000 Turns (flat)";

function runWorker() {
  return new Promise((resolvePromise) => {
    const child = spawn(process.execPath, ["--import", "tsx", join(repoRoot, "tools", "bench", "history-worker.mjs")], { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] });
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
  const [small, large] = result.sizes;
  const rows = Object.keys(result.results[small]).map((operation) => {
    const a = result.results[small][operation];
    const b = result.results[large][operation];
    return [operation, ms(a.median), ms(a.p99), ms(b.median), ms(b.p99), `${(b.median / a.median).toFixed(2)}×`];
  });
  log(formatTable(["operation", `${small} median`, `${small} p99`, `${large} median`, `${large} p99`, "ratio (median)"], rows));
  log(`\n${result.repeats} timed runs per operation after 5 warm-ups; target: ratio ≈ 1 (flat).`);
}
