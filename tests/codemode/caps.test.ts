// The host-wide caps on CodeMode executions (services/codemode/slots.ts): at most
// MAX_RUNNING_SCRIPTS executing JavaScript and MAX_LIVE_EXECUTIONS alive at once. Six infinite
// loops used to take every core; now loops beyond the cap wait in order and never fail for it,
// cancelling one (the Turn's signal, through QuickJS's interrupt handler) frees its place, a
// cancelled waiter leaves the queue, and scripts that await tools hold no running place.
import { afterAll, describe, expect, it } from "vitest";
import { shutdownCodeModeEngine, type CodeModeOutcome } from "../../services/codemode/index.js";
import { liveExecutions, MAX_LIVE_EXECUTIONS, MAX_RUNNING_SCRIPTS, runningScripts } from "../../services/codemode/slots.js";
import { availableParallelism } from "node:os";
import { deferred, fakeTools, run, valueOf } from "./helpers.js";

afterAll(() => shutdownCodeModeEngine());

/** An infinite loop that logs once it runs; resolves `started` then, and stops on `abort()`. */
function infiniteLoop() {
  const controller = new AbortController();
  const started = deferred();
  const outcome = run(`console.log("looping"); for (;;) {}`, { signal: controller.signal, onLog: () => started.resolve(), limits: {} });
  return { started: started.promise, outcome, abort: () => controller.abort() };
}

/** A script that runs once a place is free; `queued` resolves when it had to wait for one. */
function queuedScript(code: string, signal?: AbortSignal): { queued: Promise<void>; outcome: Promise<CodeModeOutcome> } {
  const queued = deferred();
  return { queued: queued.promise, outcome: run(code, { onQueued: () => queued.resolve(), limits: {}, ...(signal ? { signal } : {}) }) };
}

const INTERRUPTED = { ok: false, error: { code: "interrupted", message: "The execution was interrupted." } };

describe("CodeMode caps", () => {
  it("names its bounds: a core left for the host, 32 live executions", () => {
    expect(MAX_RUNNING_SCRIPTS).toBe(Math.max(1, availableParallelism() - 1));
    expect(MAX_LIVE_EXECUTIONS).toBe(32);
  });

  it("queues scripts beyond the running cap behind infinite loops; cancelling a loop ends it and hands its place on", async () => {
    const loops = Array.from({ length: MAX_RUNNING_SCRIPTS }, infiniteLoop);
    await Promise.all(loops.map((loop) => loop.started));
    expect(runningScripts.state).toEqual({ held: MAX_RUNNING_SCRIPTS, queued: 0 });

    const cancelledWhileQueued = new AbortController();
    const leaving = queuedScript("return 'never ran';", cancelledWhileQueued.signal);
    const waiting = queuedScript("return 6 * 7;");
    await Promise.all([leaving.queued, waiting.queued]);
    expect(runningScripts.state).toEqual({ held: MAX_RUNNING_SCRIPTS, queued: 2 });

    // A waiter cancelled (its Turn cancelled) leaves the queue at once, without running.
    cancelledWhileQueued.abort();
    expect(await leaving.outcome).toMatchObject(INTERRUPTED);
    expect(runningScripts.state).toEqual({ held: MAX_RUNNING_SCRIPTS, queued: 1 });

    // Cancelling a loop stops it through the interrupt handler (not by killing its worker after the grace period)...
    loops[0]!.abort();
    expect(await loops[0]!.outcome).toMatchObject(INTERRUPTED);
    // ...and the waiting script gets the place: it runs, it does not fail.
    expect(valueOf(await waiting.outcome)).toBe(42);

    for (const loop of loops.slice(1)) loop.abort();
    for (const loop of loops.slice(1)) expect(await loop.outcome).toMatchObject(INTERRUPTED);
    expect(runningScripts.state).toEqual({ held: 0, queued: 0 });
  });

  it("a script awaiting a tool holds no running place: others run meanwhile, and it resumes when the call settles", async () => {
    // More scripts waiting on tools (an approval, a question, a slow server) than there are running places.
    const gates = Array.from({ length: MAX_RUNNING_SCRIPTS + 1 }, () => deferred<unknown>());
    const allCalled = deferred();
    let calls = 0;
    const tools = fakeTools().add("wait", (input) => {
      calls += 1;
      if (calls === gates.length) allCalled.resolve();
      return gates[Number((input as { value: string }).value)]!.promise;
    });
    const waiters = gates.map((_, index) => run(`return await tools.wait({ value: "${index}" });`, { tools: tools.tools, limits: {} }));
    await allCalled.promise;
    // A CPU-bound script runs to its end while every one of them still waits (none can settle before its gate opens).
    let waitersSettled = false;
    void Promise.all(waiters).then(() => (waitersSettled = true));
    const busy = await run(`let sum = 0; for (let i = 0; i < 100000; i++) sum += i; return sum;`, { limits: {} });
    expect(valueOf(busy)).toBe(4999950000);
    expect(waitersSettled).toBe(false);
    gates.forEach((gate, index) => gate.resolve(`done ${index}`));
    expect((await Promise.all(waiters)).map(valueOf)).toEqual(gates.map((_, index) => `done ${index}`));
    expect(runningScripts.state).toEqual({ held: 0, queued: 0 });
  });

  it("queues an execution beyond the live cap until one ends", async () => {
    const release = deferred<unknown>();
    let calls = 0;
    const allCalled = deferred();
    const tools = fakeTools().add("wait", () => {
      calls += 1;
      if (calls === MAX_LIVE_EXECUTIONS) allCalled.resolve();
      return release.promise;
    });
    const holders = Array.from({ length: MAX_LIVE_EXECUTIONS }, () => run(`return await tools.wait();`, { tools: tools.tools, limits: {} }));
    await allCalled.promise;
    expect(liveExecutions.state).toEqual({ held: MAX_LIVE_EXECUTIONS, queued: 0 });
    const extra = queuedScript("return 'ran after one ended';");
    await extra.queued;
    expect(liveExecutions.state).toEqual({ held: MAX_LIVE_EXECUTIONS, queued: 1 });
    release.resolve("released");
    expect(valueOf(await extra.outcome)).toBe("ran after one ended");
    expect((await Promise.all(holders)).map(valueOf)).toEqual(Array(MAX_LIVE_EXECUTIONS).fill("released"));
    expect(liveExecutions.state).toEqual({ held: 0, queued: 0 });
  });
});
