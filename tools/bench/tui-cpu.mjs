// The TUI's renderer CPU while a Turn streams about 1,000 text deltas a second: the TUI runs in a
// PTY with --remote to a `serve` (so its process only renders), the scripted model streams
// STREAM_DELTAS small deltas in bursts of BURST every BURST_MS, and the CPU time (utime + stime
// from /proc/<pid>/stat, in clock ticks of `getconf CLK_TCK`) of the TUI's process tree is read
// over the streaming window — from the first streamed token shown to the Turn's footer — and
// over every 1-second window in it. Baselines measured in the same run: the `serve` process over
// the same window, and `node -e` printing the same deltas at the same pace into a PTY.
import { execFileSync, spawn } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { formatTable, median, percentile, tempHome, writeTestModelConfig } from "./lib.mjs";

const pty = createRequire(import.meta.url)("node-pty");

const TOKEN = "ab ";
const STREAM_DELTAS = 5_000;
const BURST = 10;
const BURST_MS = 9;
/** The model's answer: STREAM_DELTAS deltas, BURST at a time every BURST_MS (≈ 1,000 a second). */
export const FAST_STREAM = {
  events: Array.from({ length: STREAM_DELTAS / BURST }, () => [...Array.from({ length: BURST }, () => ({ type: "text", text: TOKEN })), { type: "delay", ms: BURST_MS }]).flat(),
};

const TICKS = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;

/** CPU seconds (user + system) of `pid` and its descendants, or undefined once it is gone. */
export function cpuSeconds(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    let ticks = Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15)
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      let children = "";
      try {
        children = readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8");
      } catch {
        continue;
      }
      for (const child of children.split(" ").filter(Boolean)) ticks += (cpuSeconds(Number(child)) ?? 0) * TICKS;
    }
    return ticks / TICKS;
  } catch {
    return undefined;
  }
}

/** Samples the CPU of `pids` from now until `done` resolves: the whole window and its 1-second windows. */
async function sampleCpu(pids, done) {
  const t0 = performance.now();
  const start = pids.map(cpuSeconds);
  const windows = pids.map(() => []);
  let last = start;
  let lastAt = t0;
  const timer = setInterval(() => {
    const now = performance.now();
    const current = pids.map(cpuSeconds);
    current.forEach((value, index) => windows[index].push(((value - last[index]) / ((now - lastAt) / 1000)) * 100));
    last = current;
    lastAt = now;
  }, 1_000);
  await done;
  clearInterval(timer);
  const seconds = (performance.now() - t0) / 1000;
  const end = pids.map(cpuSeconds);
  return { seconds, percent: end.map((value, index) => ((value - start[index]) / seconds) * 100), windows };
}

/** `node -e` printing the same deltas at the same pace into a PTY; its CPU% over the stream. */
async function printerBaseline() {
  const code = `let left = ${STREAM_DELTAS}; const tick = () => { for (let i = 0; i < ${BURST} && left > 0; i++, left--) process.stdout.write(${JSON.stringify(TOKEN)}); if (left > 0) setTimeout(tick, ${BURST_MS}); else process.stdout.write("\\nDONE\\n", () => process.exit(0)); }; process.stdin.once("data", tick); process.stdin.resume(); process.stdout.write("READY\\n");`;
  const child = pty.spawn(process.execPath, ["-e", code], { name: "xterm-256color", cols: 120, rows: 40, env: { PATH: process.env.PATH ?? "", TERM: "xterm-256color" } });
  let output = "";
  let ready;
  let started;
  const up = new Promise((resolve) => (ready = resolve));
  const first = new Promise((resolve) => (started = resolve));
  const finished = new Promise((resolve) =>
    child.onData((data) => {
      output += data;
      if (output.includes("READY")) ready();
      if (output.includes(TOKEN)) started();
      if (output.includes("DONE")) resolve();
    }),
  );
  const exited = new Promise((resolve) => child.onExit(resolve));
  // The stream starts once node is up (its start-up is not the figure).
  await up;
  child.write("go\r");
  await first;
  const sample = await sampleCpu([child.pid], finished);
  await exited;
  return { percent: sample.percent[0], windows: sample.windows[0], seconds: sample.seconds };
}

const pct = (value) => `${value.toFixed(1)}%`;

/**
 * @param {{ runs: number, log: (line: string) => void, launch: Function, startServe: Function, startModelProcess: Function }} context
 */
export async function cpuWhileStreaming({ runs, log, launch, startServe, startModelProcess }) {
  const rounds = Math.max(1, Math.min(runs, 5));
  const home = tempHome("ze-bench-tui-cpu-");
  const model = await startModelProcess(home.dir, rounds, FAST_STREAM);
  writeTestModelConfig(home, `${model.url}/v1`);
  const served = await startServe(home);
  const tui = { percent: [], windows: [], seconds: [] };
  const serve = { percent: [], windows: [] };
  const printer = { percent: [], windows: [] };
  try {
    const session = launch(home, ["--remote", served.url]);
    await session.until(0, (text) => text.includes("Ask anything"));
    for (let round = 0; round < rounds; round++) {
      const before = session.mark();
      session.child.write("stream fast\r");
      await session.until(before, (text) => text.includes(TOKEN.repeat(3)), 60_000);
      const footer = session.until(before, (text) => /test\/scripted · \d/.test(text), 120_000);
      const sample = await sampleCpu([session.child.pid, served.pid], footer);
      tui.percent.push(sample.percent[0]);
      tui.windows.push(...sample.windows[0]);
      tui.seconds.push(sample.seconds);
      serve.percent.push(sample.percent[1]);
      serve.windows.push(...sample.windows[1]);
      const base = await printerBaseline();
      printer.percent.push(base.percent);
      printer.windows.push(...base.windows);
    }
    session.child.write("\u0003");
    await session.exited;
  } finally {
    await served.stop();
    await model.stop();
    home.cleanup();
  }
  const rate = STREAM_DELTAS / median(tui.seconds);
  const row = (label, figures, ratio) => [label, pct(median(figures.percent)), pct(percentile(figures.percent, 99)), pct(median(figures.windows)), pct(percentile(figures.windows, 99)), ratio, String(figures.percent.length)];
  log(`\nrenderer CPU while streaming: ${STREAM_DELTAS} deltas of ${JSON.stringify(TOKEN)} in ${median(tui.seconds).toFixed(1)} s (≈ ${Math.round(rate)} deltas/s from the model); CPU% of one core (CLK_TCK ${TICKS})`);
  log(
    formatTable(
      ["process", "run median", "run p99", "1-s window median", "1-s window p99", "ratio to node printer", "runs"],
      [
        row("node -e printing the same deltas to a PTY (baseline)", printer, "1.00x"),
        row("TUI renderer (ze-harness --remote, PTY)", tui, `${(median(tui.percent) / Math.max(median(printer.percent), 0.1)).toFixed(2)}x`),
        row("serve (the Turn, model stream and SSE)", serve, ""),
      ],
    ),
  );
}
