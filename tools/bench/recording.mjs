// Turn recording (issue 18 §1): the warm per-Turn stat-only scan of a 10,000-file repository
// against the floor of the same walk by hand (and `git status`), the database growth of 1,000
// one-step Turns there, the bytes a Turn in 100 MB of ignored build output adds, and the space
// `session delete` returns. The measuring runs in recording-worker.mjs against the built harness.
// Targets: scan ≤ 20 ms; growth < 5 MB; 0 bytes for ignored output; after delete + VACUUM within
// 10 % of the start.
import { formatTable, ms, runWorker } from "./lib.mjs";

export const name = "recording";
export const description = "Turn recording: warm scan at 10,000 files, DB growth over 1,000 Turns, ignored output, delete";

const mb = (bytes) => `${(bytes / 1e6).toFixed(2)} MB`;

/** @param {{ log: (line: string) => void }} context */
export async function run({ log }) {
  const result = await runWorker("recording-worker.mjs", undefined, 600_000);
  if (result.error) {
    log(`failed — ${result.error}`);
    return;
  }
  const { scan } = result;
  log(
    formatTable(
      ["measure", "median", "p99", "ratio (median)"],
      [
        [`warm scan, ${scan.entries} files`, ms(scan.median), ms(scan.p99), `${(scan.median / scan.floor.median).toFixed(2)}×`],
        ["floor: readdir + lstat by hand", ms(scan.floor.median), ms(scan.floor.p99), "1.00×"],
        ...(scan.gitStatus ? [["git status --porcelain", ms(scan.gitStatus.median), ms(scan.gitStatus.p99), `${(scan.gitStatus.median / scan.floor.median).toFixed(2)}×`]] : []),
        ["one-step Turn, recording off (baseline)", ms(result.baseline.turnsResult.turn.median), ms(result.baseline.turnsResult.turn.p99), ""],
        ["one-step Turn, recording (prompt → settled + capture)", ms(result.turnsResult.turn.median), ms(result.turnsResult.turn.p99), `${(result.turnsResult.turn.median / result.baseline.turnsResult.turn.median).toFixed(2)}× baseline`],
      ],
    ),
  );
  log("");
  log(
    formatTable(
      ["measure", "value", "target"],
      [
        [`database growth over ${result.turns} Turns, recording off (baseline)`, mb(result.baseline.turnsResult.growthBytes), ""],
        [`database growth over ${result.turns} Turns, recording`, mb(result.turnsResult.growthBytes), ""],
        ["of which recording's own", mb(result.turnsResult.growthBytes - result.baseline.turnsResult.growthBytes), "< 5 MB"],
        ["content store after them", `${result.turnsResult.blobs.blobs} blobs, ${mb(result.turnsResult.blobs.bytes)}`, ""],
        [`Turn in ${result.ignored.mib} MB of ignored output: content added`, `${result.ignored.addedBytes} bytes`, "0 bytes"],
        ["database before any Turn", mb(result.delete.startBytes), ""],
        ["after every session delete + VACUUM", `${mb(result.delete.afterDeleteVacuumBytes)} (${((result.delete.afterDeleteVacuumBytes / result.delete.startBytes - 1) * 100).toFixed(1)} %)`, "within 10 %"],
        ["content store after the deletes", `${result.delete.blobsLeft.blobs} blobs`, "0"],
      ],
    ),
  );
}
