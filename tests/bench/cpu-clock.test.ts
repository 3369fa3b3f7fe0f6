// cpuClock (tools/bench/lib.mjs): a process's CPU from its threads' schedstat, in nanoseconds
// rather than /proc/<pid>/stat's 10 ms ticks, and never losing a thread's time when it ends.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
// @ts-expect-error plain ESM tool module without types
import { cpuClock } from "../../tools/bench/lib.mjs";

// A process whose worker thread burns 300 ms of CPU, reports it, and ends when told to.
const CHILD = `
const { Worker } = require("node:worker_threads");
const worker = new Worker(\`
  const { parentPort } = require("node:worker_threads");
  const start = process.cpuUsage();
  while ((process.cpuUsage(start).user + process.cpuUsage(start).system) < 300000) {}
  parentPort.postMessage("burned");
  parentPort.once("message", () => process.exit(0));
\`, { eval: true });
worker.on("message", () => console.log("burned"));
worker.on("exit", () => console.log("ended"));
process.stdin.once("data", () => worker.postMessage("end"));
setInterval(() => {}, 1000);
`;

describe("cpuClock", () => {
  it("reads a process's CPU finer than clock ticks, and keeps an ended thread's time", async () => {
    const child = spawn(process.execPath, ["-e", CHILD], { stdio: ["pipe", "pipe", "inherit"] });
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    try {
      const read = cpuClock(child.pid) as () => number;
      const start = read();
      expect((await lines.next()).value).toBe("burned");
      const burned = read();
      expect(burned - start).toBeGreaterThan(250);
      // Nanosecond readings: not whole 10 ms ticks.
      expect(Number.isInteger(burned / 10)).toBe(false);
      child.stdin.write("end\n");
      expect((await lines.next()).value).toBe("ended");
      // The worker's thread is gone: its 300 ms stay counted.
      expect(read()).toBeGreaterThanOrEqual(burned);
    } finally {
      child.kill();
    }
  });
});
