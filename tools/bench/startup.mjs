// Start-up cost of the CLI: wall time of `node -e 0` (the baseline, measured in the same run)
// against `ze-harness --version`, `--help` (both the bin fast path: files written at build
// time) and an embedded `session list` on :memory: (the bundle's fast path: one command, the
// in-process harness, no oclif), interleaved so drift in the machine's load hits every case
// alike. Then the peak RSS of each case via /usr/bin/time -v. Targets are printed beside them.
import { binPath, formatTable, hasGnuTime, median, mib, ms, peakRssKiB, percentile, tempHome, timeRun } from "./lib.mjs";

export const name = "startup";
export const description = "CLI start-up: wall time and peak RSS against a bare `node -e 0`";

/** @param {{ runs: number, budgetMs: number, log: (line: string) => void, record: (figure: import("./check.mjs").Figure) => void }} context */
export async function run({ runs, budgetMs, log, record }) {
  const home = tempHome("ze-bench-startup-");
  const options = { env: home.env, cwd: home.root };
  const cases = [
    { label: "node -e 0 (baseline)", args: ["-e", "0"], target: "" },
    { label: "ze-harness --version", args: [binPath, "--version"], target: "≤ 1.25x baseline", ratio: 1.25, key: "startup.version" },
    { label: "ze-harness --help", args: [binPath, "--help"], target: "≤ 1.25x baseline", ratio: 1.25 },
    { label: "ze-harness session list --embedded --database :memory:", args: [binPath, "session", "list", "--embedded", "--database", ":memory:"], target: "≤ 300 ms", ms: 300, key: "startup.embeddedSessionList" },
  ];
  try {
    // One untimed warm-up of each case (file cache, compile cache), and a check that it works.
    for (const entry of cases) {
      const result = await timeRun(process.execPath, entry.args, options);
      if (result.code !== 0) throw new Error(`${entry.label} exited ${result.code}: ${result.stderr.trim()}`);
    }

    const samples = cases.map(() => []);
    const started = Date.now();
    let completed = 0;
    for (let round = 0; round < runs; round++) {
      for (const [index, entry] of cases.entries()) samples[index].push((await timeRun(process.execPath, entry.args, options)).ms);
      completed += 1;
      if (Date.now() - started > budgetMs) break;
    }
    if (completed < runs) log(`(time budget reached: ${completed} of ${runs} rounds)`);

    const rssRuns = 3;
    const rss = [];
    for (const entry of cases) {
      const peaks = [];
      for (let index = 0; index < rssRuns && hasGnuTime; index++) peaks.push(await peakRssKiB(process.execPath, entry.args, options));
      rss.push(peaks.length > 0 && peaks.every((peak) => peak !== undefined) ? Math.max(...peaks) : undefined);
    }

    const baseline = median(samples[0]);
    const rows = cases.map((entry, index) => [
      entry.label,
      ms(median(samples[index])),
      ms(percentile(samples[index], 99)),
      `${(median(samples[index]) / baseline).toFixed(2)}x`,
      mib(rss[index]),
      entry.target === "" ? "" : `${entry.target} ${(entry.ratio !== undefined ? median(samples[index]) / baseline <= entry.ratio : median(samples[index]) <= entry.ms) ? "(met)" : "(missed)"}`,
    ]);
    // Guarded: each keyed case as its ratio to `node -e 0` in this run.
    for (const [index, entry] of cases.entries()) if (entry.key) record({ key: entry.key, value: median(samples[index]) / baseline, kind: "ratio", label: `${entry.label} / node -e 0` });
    log(`${completed} interleaved runs per case; p99 is nearest-rank (= the slowest run when n < 100); peak RSS is the max of ${hasGnuTime ? rssRuns : 0} runs under /usr/bin/time -v${hasGnuTime ? "" : " (not available)"}.`);
    log(formatTable(["command", "median", "p99", "vs baseline", "peak RSS", "target"], rows));
  } finally {
    home.cleanup();
  }
}
