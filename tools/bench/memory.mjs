// Memory over many Turns: the harness's JS heap after a full garbage collection, sampled every
// 250 of 2,000 one-step Turns run in process (memory-worker.mjs). Target (issue 21): flat — what
// one Turn leaves behind is garbage, so once the per-Session caches are full (by the half-way
// sample) the heap's objects (code spaces left out: V8 goes on compiling hot code for a while)
// stop growing. Their growth from the half-way sample to the last is the figure;
// a leak of a few KB per Turn (e.g. an AbortSignal kept alive per model request) shows as megabytes.
import { formatTable, runWorker } from "./lib.mjs";

export const name = "memory";
export const description = "Harness heap after GC over 2,000 one-step Turns, in process (flat = nothing kept per Turn)";

/** @param {{ quick?: boolean, log: (line: string) => void }} context */
export async function run({ quick, log }) {
  const result = await runWorker("memory-worker.mjs", quick ? { turns: 1000, every: 250 } : { turns: 2000, every: 250 }, 600_000);
  if (result.error) throw new Error(result.error);
  const { samples } = result;
  const mib = (kib) => `${(kib / 1024).toFixed(1)} MiB`;
  const second = samples[Math.floor((samples.length - 1) / 2)] ?? samples[0];
  const last = samples[samples.length - 1];
  const growthPerThousand = ((last.objectsKiB - second.objectsKiB) / Math.max(1, last.turns - second.turns)) * 1000;
  log(
    formatTable(
      ["after Turns", "heap used (after GC)", "of it objects (no code)", "RSS", "external"],
      samples.map((s) => [s.turns, mib(s.heapUsedKiB), mib(s.objectsKiB), mib(s.rssKiB), mib(s.externalKiB)]),
    ),
  );
  log(
    `\nobject heap growth from ${second.turns} to ${last.turns} Turns: ${(growthPerThousand / 1024).toFixed(2)} MiB per 1,000 Turns (${((growthPerThousand * 1024) / 1000).toFixed(0)} bytes per Turn); target flat: under 0.5 MiB per 1,000 Turns ${growthPerThousand < 512 ? "(met)" : "(missed)"}`,
  );
}
