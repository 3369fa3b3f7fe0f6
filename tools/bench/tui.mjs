// The TUI in a real PTY (node-pty): time from launch (`ze-harness --embedded`, the bare command
// on a terminal) to the interactive opening screen, against `node -e 0` measured in the same
// run; then keystroke-to-render latency while a Turn streams: a key is written to the PTY and
// the time taken until the composer shows it in the output is recorded (p50/p99). The test model
// runs as its own process (tools/test-model/main.ts under tsx) and streams slowly (word deltas
// 10 ms apart), so every key lands while text is arriving. Keystrokes are measured embedded
// and over --remote to a `serve` (the TUI only renders). ZE_BENCH_DEBUG=1 logs keys slower than 200 ms.
// Then the renderer's CPU while a Turn streams ≈ 1,000 deltas/s (tui-cpu.mjs).
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { cpuWhileStreaming } from "./tui-cpu.mjs";
import { binPath, formatTable, median, ms, percentile, repoRoot, tempHome, timeRun, writeTestModelConfig } from "./lib.mjs";

const pty = createRequire(import.meta.url)("node-pty");

export const name = "tui";
export const description = "TUI: launch to an interactive opening screen, and keystroke-to-render latency while a Turn streams (PTY)";

const STREAM = { events: Array.from({ length: 200 }, () => [{ type: "text", text: "lorem ipsum " }, { type: "delay", ms: 10 }]).flat() };

export async function startModelProcess(dir, count, stream = STREAM) {
  const script = join(dir, "script.json");
  writeFileSync(script, JSON.stringify(Array.from({ length: count }, () => stream)));
  const child = spawn(process.execPath, ["--import", "tsx", join(repoRoot, "tools", "test-model", "main.ts"), "--port", "0", "--script", script], { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const url = await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once("line", resolve);
    child.once("exit", (code) => reject(new Error(`the test model exited ${code}`)));
  });
  return { url, pid: child.pid, stop: async () => (child.exitCode === null && child.kill("SIGTERM"), await exited) };
}

/** The TUI in a PTY; `until(test)` resolves with the time when the output written since `from` passes `test`. */
export function launch(home, connection = ["--embedded"]) {
  const child = pty.spawn(process.execPath, [binPath, ...connection], { name: "xterm-256color", cols: 120, rows: 40, cwd: home.root, env: { ...home.env, TERM: "xterm-256color" } });
  let output = "";
  const waiters = new Set();
  child.onData((data) => {
    output += data;
    for (const waiter of [...waiters]) waiter();
  });
  const exited = new Promise((resolve) => child.onExit(resolve));
  return {
    child,
    exited,
    mark: () => output.length,
    until: (from, test, timeoutMs = 20_000) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => (waiters.delete(check), reject(new Error(`TUI output did not show what was awaited:\n${output.slice(-2000)}`))), timeoutMs);
        const check = () => {
          if (test(output.slice(from))) {
            clearTimeout(timer);
            waiters.delete(check);
            resolve(performance.now());
          }
        };
        waiters.add(check);
        check();
      }),
  };
}

/** @param {{ runs: number, budgetMs: number, log: (line: string) => void }} context */
export async function run({ runs, budgetMs, log }) {
  const home = tempHome("ze-bench-tui-");
  const launches = Math.min(runs, 10);
  const model = await startModelProcess(home.dir, 12);
  try {
    writeTestModelConfig(home, `${model.url}/v1`);
    // Warm-up: creates and migrates the database; checks the TUI opens.
    {
      const tui = launch(home);
      await tui.until(0, (text) => text.includes("Ask anything"));
      tui.child.write("\u0003");
      await tui.exited;
    }
    const baseline = [];
    const opening = [];
    const started = Date.now();
    for (let index = 0; index < launches; index++) {
      baseline.push((await timeRun(process.execPath, ["-e", "0"], { env: home.env, cwd: home.root })).ms);
      const t0 = performance.now();
      const tui = launch(home);
      opening.push((await tui.until(0, (text) => text.includes("Ask anything"))) - t0);
      tui.child.write("\u0003");
      await tui.exited;
      if (Date.now() - started > budgetMs / 2) break;
    }

    // Keystroke-to-render while a Turn streams, embedded (the Turn runs in the TUI's process)
    // and over HTTP to a `serve` process (the TUI only renders).
    const latencies = await keystrokes(home, ["--embedded"], log);
    const served = await startServe(home);
    let remote;
    try {
      remote = await keystrokes(home, ["--remote", served.url], log);
    } finally {
      await served.stop();
    }

    const base = median(baseline);
    log(
      formatTable(
        ["case", "median", "p99", "ratio to node -e 0", "samples"],
        [
          ["node -e 0 (baseline)", ms(base), ms(percentile(baseline, 99)), "1.00x", String(baseline.length)],
          ["launch → opening screen (ze-harness --embedded)", ms(median(opening)), ms(percentile(opening, 99)), `${(median(opening) / base).toFixed(2)}x`, String(opening.length)],
          ["keystroke → render while a Turn streams (embedded)", `${ms(median(latencies))} (p50)`, ms(percentile(latencies, 99)), "", String(latencies.length)],
          ["keystroke → render while a Turn streams (--remote serve)", `${ms(median(remote))} (p50)`, ms(percentile(remote, 99)), "", String(remote.length)],
        ],
      ),
    );
    // Renderer CPU while a Turn streams ~1,000 deltas/s (its own home, model and serve).
    await cpuWhileStreaming({ runs, log, launch, startServe, startModelProcess });
  } finally {
    await model.stop();
    home.cleanup();
  }
}

/** Keys typed while Turns stream (`j` never occurs in the stream or the chrome); their latencies. */
async function keystrokes(home, connection, log) {
  const latencies = [];
  const tui = launch(home, connection);
  await tui.until(0, (text) => text.includes("Ask anything"));
  const keysPerTurn = 40;
  for (let turn = 0; turn < 4; turn++) {
    const before = tui.mark();
    tui.child.write("stream please\r");
    await tui.until(before, (text) => text.includes("lorem ipsum lorem"));
    for (let count = 1; count <= keysPerTurn; count++) {
      const from = tui.mark();
      const t0 = performance.now();
      tui.child.write("j");
      const expected = "j".repeat(count);
      latencies.push((await tui.until(from, (text) => text.includes(expected))) - t0);
      if (process.env.ZE_BENCH_DEBUG && latencies[latencies.length - 1] > 200) log(`slow key: turn ${turn} key ${count}: ${latencies[latencies.length - 1].toFixed(0)} ms`);
    }
    for (let count = 0; count < keysPerTurn; count++) tui.child.write("\u007f");
    const cleared = tui.mark();
    await tui.until(cleared - 1, (text) => text.includes("Follow up on the running Turn") || text.includes("Send a prompt"));
    // Let this Turn finish before the next prompt (Enter would steer it otherwise).
    await tui.until(before, (text) => /test\/scripted · \d/.test(text), 90_000);
  }
  tui.child.write("\u0003");
  await tui.exited;
  return latencies;
}

/** `ze-harness serve` on a free port in `home`. */
export async function startServe(home) {
  const child = spawn(process.execPath, [binPath, "serve", "--port", "0", "--database", join(home.dir, "serve.db")], { cwd: home.root, env: home.env, stdio: ["ignore", "pipe", "pipe"] });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const url = await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once("line", resolve);
    child.once("exit", (code) => reject(new Error(`serve exited ${code}`)));
  });
  return { url, pid: child.pid, stop: async () => (child.exitCode === null && child.kill("SIGTERM"), await exited) };
}
