// Terminal output throughput: a PTY program writes 64 MiB as fast as it can; the host's live
// terminal (services/workspace/terminals, BUILT in dist/) records every byte and feeds the
// headless emulator. Baseline in the same process: the same program's bytes read from a plain
// pipe (`head -c … | cat` through child_process), the floor any PTY path pays on top of.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { formatTable, percentile, repoRoot } from "./lib.mjs";

export const name = "terminals";
export const description = "terminal output throughput (MiB/s): PTY + output log + emulator, against a plain pipe";

const BYTES = 64 * 1024 * 1024;
const PROGRAM = `head -c ${BYTES} /dev/zero | tr '\\0' 'x'`;

async function pipeSeconds() {
  const started = process.hrtime.bigint();
  await new Promise((resolve, reject) => {
    const child = spawn("/bin/sh", ["-c", PROGRAM], { stdio: ["ignore", "pipe", "ignore"] });
    let size = 0;
    child.stdout.on("data", (chunk) => (size += chunk.length));
    child.once("error", reject);
    child.once("close", () => (size === BYTES ? resolve() : reject(new Error(`pipe read ${size} bytes`))));
  });
  return Number(process.hrtime.bigint() - started) / 1e9;
}

async function terminalSeconds(LiveTerminal, withDisplay) {
  const started = process.hrtime.bigint();
  const terminal = LiveTerminal.open({ command: ["/bin/sh", "-c", PROGRAM], cwd: repoRoot, size: { cols: 200, rows: 50 } });
  await terminal.exited;
  if (terminal.output.bytes < BYTES) throw new Error(`terminal recorded ${terminal.output.bytes} bytes`);
  if (withDisplay) await terminal.settled;
  return Number(process.hrtime.bigint() - started) / 1e9;
}

export async function run({ runs, log }) {
  const { LiveTerminal } = await import(pathToFileURL(join(repoRoot, "dist", "services", "workspace", "terminals", "live.js")).href);
  const count = Math.max(3, Math.min(runs, 5));
  const rows = [];
  const measure = async (label, fn) => {
    const seconds = [];
    for (let i = 0; i < count; i++) seconds.push(await fn());
    const rates = seconds.map((s) => BYTES / 1024 / 1024 / s);
    rows.push([label, percentile(rates, 50).toFixed(1), percentile(rates, 1).toFixed(1), String(count)]);
    return percentile(rates, 50);
  };
  const pipe = await measure("plain pipe (baseline)", pipeSeconds);
  const recorded = await measure("PTY → output log (bytes in)", () => terminalSeconds(LiveTerminal, false));
  const displayed = await measure("PTY → output log + emulator settled", () => terminalSeconds(LiveTerminal, true));
  log(formatTable(["64 MiB of output", "MiB/s median", "MiB/s p1 (slowest)", "runs"], rows));
  log(`ratio to the pipe: recorded ${(recorded / pipe).toFixed(2)}×, with the emulator ${(displayed / pipe).toFixed(2)}×`);
}
