// Shared helpers for benchmarks (plain Node ESM): process timing, statistics, peak RSS,
// temp XDG homes and table printing. Benchmarks print figures; they assert nothing.
import { execFileSync, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const binPath = join(repoRoot, "bin", "ze-harness.js");

let ticksPerSecond;
/** utime + stime of process `pid` (ms), from /proc/<pid>/stat: clock ticks (10 ms here). */
function tickCpuMs(pid) {
  ticksPerSecond ??= Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the command name (which may hold spaces) start at state (field 3).
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond;
}

/**
 * A reader of the CPU process `pid` has used so far (ms): the sum of its threads' run time from
 * /proc/<pid>/task/<tid>/schedstat, in nanoseconds — /proc/<pid>/stat counts clock ticks of 10 ms,
 * so a batch of 25 Turns of 5 ms was only 12 ticks (± 8 %), and the least of several such batches
 * leaned low. A thread that ends keeps the time last read for it. Falls back to the ticks where
 * schedstat cannot be read.
 */
export function cpuClock(pid) {
  const ended = new Map();
  let last = new Map();
  return () => {
    const now = new Map();
    try {
      for (const tid of readdirSync(`/proc/${pid}/task`)) {
        try {
          now.set(tid, Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]));
        } catch {
          // the thread ended between the listing and the read: its last reading is kept below
        }
      }
    } catch {
      return tickCpuMs(pid);
    }
    if (now.size === 0 || [...now.values()].some((ns) => !Number.isFinite(ns))) return tickCpuMs(pid);
    for (const [tid, ns] of last) if (!now.has(tid)) ended.set(tid, ns);
    last = now;
    let total = 0;
    for (const ns of now.values()) total += ns;
    for (const ns of ended.values()) total += ns;
    return total / 1e6;
  };
}

/** A temp folder with its own HOME and XDG dirs and a `root` cwd; nothing inherited but PATH. */
export function tempHome(prefix = "ze-bench-") {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  const root = join(dir, "root");
  mkdirSync(root, { recursive: true });
  const env = {
    HOME: join(dir, "home"),
    XDG_CONFIG_HOME: join(dir, "config"),
    XDG_DATA_HOME: join(dir, "data"),
    PATH: process.env.PATH ?? "",
  };
  return { dir, root, env, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Runs a command to completion and returns its wall time in milliseconds, from just before
 * spawn to exit. Output is drained (stdout kept only with `keepStdout`); a non-zero exit is
 * reported, not thrown. With `timeoutMs` the child's process group is killed (SIGKILL) then, so
 * a wrapper such as /usr/bin/time takes its command with it, and `timedOut` is set.
 */
export function timeRun(command, args, { env, cwd, timeoutMs, keepStdout = false }) {
  return new Promise((resolvePromise, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(command, args, { env, cwd, stdio: ["ignore", "pipe", "pipe"], detached: timeoutMs !== undefined });
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    const timer =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            try {
              process.kill(-child.pid, "SIGKILL");
            } catch {
              child.kill("SIGKILL");
            }
          }, timeoutMs);
    if (keepStdout) child.stdout.setEncoding("utf8").on("data", (chunk) => (stdout += chunk));
    else child.stdout.resume();
    child.stderr.setEncoding("utf8").on("data", (chunk) => (stderr += chunk));
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      resolvePromise({ ms, code, stdout, stderr, timedOut });
    });
  });
}

const timeBinary = "/usr/bin/time";
export const hasGnuTime = existsSync(timeBinary);

/** Peak RSS in KiB of one run via `/usr/bin/time -v`, or undefined when it is not available. */
export async function peakRssKiB(command, args, { env, cwd, timeoutMs }) {
  if (!hasGnuTime) return undefined;
  const dir = mkdtempSync(join(tmpdir(), "ze-bench-time-"));
  const out = join(dir, "time.txt");
  try {
    const { code } = await timeRun(timeBinary, ["-v", "-o", out, command, ...args], { env, cwd, timeoutMs });
    if (code !== 0 || !existsSync(out)) return undefined;
    const match = /Maximum resident set size \(kbytes\):\s*(\d+)/.exec(readFileSync(out, "utf8"));
    return match ? Number(match[1]) : undefined;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Nearest-rank percentile (p in 0..100) of numbers. */
/** Why a checked run failed: its exit (or timeout) and the last lines it printed. */
const runFailure = (label, result) =>
  `${label}: ${result.timedOut ? "timed out" : `exited ${result.code}`} — ${(result.stderr.trim() || result.stdout.trim()).split("\n").slice(-3).join(" | ") || "no output"}`;

/**
 * One untimed run of each case that must succeed (and print the scripted answer when the case
 * `answers`): the warm-up, and a check that the timed runs measure a working command.
 */
export async function checkRuns(cases, once) {
  for (const entry of cases) {
    const result = await once(entry, { keepStdout: true });
    if (result.code !== 0 || (entry.answers && !result.stdout.includes("scripted answer"))) throw new Error(runFailure(entry.label, result));
  }
}

/**
 * `runs` rounds of every case in turn (so drift on a shared machine hits all alike), stopping
 * after the round that passes `budgetMs`. Returns each case's wall times of successful runs and
 * the failed runs described.
 */
export async function interleavedRounds(cases, once, { runs, budgetMs, log }) {
  const samples = cases.map(() => []);
  const failures = [];
  const started = Date.now();
  let completed = 0;
  for (let round = 0; round < runs; round++) {
    for (const [index, entry] of cases.entries()) {
      const result = await once(entry);
      if (result.code === 0) samples[index].push(result.ms);
      else failures.push(`${entry.label}: ${result.timedOut ? "timed out" : `exited ${result.code}`} ${result.stderr.trim().split("\n").pop() ?? ""}`);
    }
    completed += 1;
    if (Date.now() - started > budgetMs) break;
  }
  if (completed < runs) log(`(time budget reached: ${completed} of ${runs} rounds)`);
  return { samples, failures, completed };
}

export function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1];
}

export const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

/** A plain-text table: first column left-aligned, the others right-aligned. */
export function formatTable(header, rows) {
  const widths = header.map((cell, column) => Math.max(String(cell).length, ...rows.map((row) => String(row[column]).length)));
  const line = (row) => row.map((cell, column) => (column === 0 ? String(cell).padEnd(widths[column]) : String(cell).padStart(widths[column]))).join("  ");
  return [line(header), widths.map((width) => "-".repeat(width)).join("  "), ...rows.map(line)].join("\n");
}

export const ms = (value) => `${value.toFixed(1)} ms`;
export const mib = (kib) => (kib === undefined ? "n/a" : `${(kib / 1024).toFixed(1)} MiB`);

/**
 * The leading cells of a timed case's table row: its label, run count, median and p99, and its
 * median against the first case's (the same-run baseline) and the second's (the floor or peer).
 */
export function timingCells(label, values, medians, index) {
  const ratio = (value, base) => (value === undefined || base === undefined ? "n/a" : `${(value / base).toFixed(2)}x`);
  return [
    label,
    values.length,
    medians[index] === undefined ? "n/a" : ms(medians[index]),
    values.length === 0 ? "n/a" : ms(percentile(values, 99)),
    ratio(medians[index], medians[0]),
    ratio(medians[index], medians[1]),
  ];
}


/**
 * Writes the temp home's global config.json: the scripted test model at `baseURL` (its
 * OpenAI-compatible `/v1` root) as provider `test`, default model `test/scripted`, plus `extra`.
 */
export function writeTestModelConfig(home, baseURL, extra = {}) {
  const configDir = join(home.env.XDG_CONFIG_HOME, "ze-harness");
  mkdirSync(configDir, { recursive: true });
  const config = {
    model: "test/scripted",
    providers: {
      test: {
        definition: {
          displayName: "Scripted test model",
          baseURL,
          protocol: "chat",
          authentication: { kind: "none" },
          models: { scripted: { displayName: "Scripted", limits: { contextUnits: 200000, outputUnits: 8192 } } },
        },
      },
    },
    ...extra,
  };
  writeFileSync(join(configDir, "config.json"), JSON.stringify(config));
}

/**
 * Runs a benchmark worker (`tools/bench/<file>`, with tsx) and resolves with the JSON of its
 * last stdout line, or `{ error }` naming the exit and the tail of its stderr. `options`, when
 * given, is passed as one JSON argument; `timeoutMs` ends a worker that runs too long.
 */
export function runWorker(file, options, timeoutMs) {
  return new Promise((resolvePromise) => {
    const args = ["--import", "tsx", join(repoRoot, "tools", "bench", file), ...(options !== undefined ? [JSON.stringify(options)] : [])];
    const child = spawn(process.execPath, args, { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk) => (stderr = (stderr + chunk).slice(-4000)));
    let timedOut = false;
    const timer =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            child.kill("SIGTERM");
          }, timeoutMs);
    child.once("error", (error) => resolvePromise({ error: error.message }));
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      try {
        resolvePromise(JSON.parse(stdout.trim().split("\n").pop() ?? ""));
      } catch {
        resolvePromise({ error: `worker exited ${code ?? signal}${timedOut ? ` (timed out after ${timeoutMs / 1000} s)` : ""}: ${stderr.trim().split("\n").slice(-5).join(" | ")}` });
      }
    });
  });
}

/**
 * One Turn through a harness as a client makes it: submit `text` to `sessionId` (queued), watch
 * the Turn to `turn.finished`, and resolve with the elapsed ms (submit → finished). `client` is
 * the built client module (`dist/clients/index.js`: `sdk`, `unwrap`); a Turn that does not
 * complete throws naming its outcome.
 */
export async function watchedTurn(client, api, server, sessionId, text) {
  const { sdk, unwrap } = client;
  const turnId = randomUUID();
  const started = performance.now();
  await unwrap(sdk.submitPrompt({ client: api.client, path: { server, sessionId }, headers: { "x-ze-harness-client-id": api.clientId }, body: { delivery: "queue", turnId, prompt: [{ type: "text", text }] } }));
  const controller = new AbortController();
  const { stream } = await sdk.watchTurn({ client: api.client, path: { server, sessionId, turnId }, sseMaxRetryAttempts: 0, signal: controller.signal });
  let outcome;
  try {
    for await (const event of stream) {
      if (event.type === "turn.finished") {
        outcome = event.outcome;
        break;
      }
    }
  } finally {
    controller.abort();
  }
  const elapsed = performance.now() - started;
  if (outcome?.kind !== "completed") throw new Error(`Turn "${text.slice(0, 40)}" ended ${JSON.stringify(outcome ?? "without turn.finished")}`);
  return elapsed;
}
