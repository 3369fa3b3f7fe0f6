// Every limit, the deadline and abort: each ends the execution with its own code.
import { afterAll, describe, expect, it } from "vitest";
import { MAX_ARRAY_LENGTH, MAX_PENDING_PROMISES, MAX_STRING_LENGTH, runCodeMode, shutdownCodeModeEngine } from "../../services/codemode/index.js";
import { codeOf, deferred, echoTools, fakeTools, run, untilAborted, valueOf } from "./helpers.js";

afterAll(() => shutdownCodeModeEngine());

const nested = (depth: number): string => `${"[".repeat(depth)}${"]".repeat(depth)}`;

describe("string length", () => {
  it("allows a string of exactly the limit and refuses a longer one, in both directions", async () => {
    expect(valueOf(await run(`return "x".repeat(${MAX_STRING_LENGTH}).length;`))).toBe(MAX_STRING_LENGTH);
    expect(codeOf(await run(`return "x".repeat(${MAX_STRING_LENGTH + 1});`))).toBe("string_too_long");
    expect(codeOf(await run(`await tools.echo({ s: "x".repeat(${MAX_STRING_LENGTH + 1}) });`))).toBe("string_too_long");
    const big = fakeTools().add("big", () => "y".repeat(MAX_STRING_LENGTH + 1));
    expect(codeOf(await run(`try { await tools.big({}) } catch { return "caught" }`, { tools: big.tools }))).toBe("string_too_long");
  });
});

describe("array length", () => {
  it("refuses an array longer than the limit leaving or entering the script", async () => {
    expect(valueOf(await run(`const a = []; a.length = ${MAX_ARRAY_LENGTH}; return a.length;`))).toBe(MAX_ARRAY_LENGTH);
    expect(codeOf(await run(`const a = []; a.length = ${MAX_ARRAY_LENGTH + 1}; return a;`))).toBe("array_too_long");
    expect(codeOf(await run(`const a = []; a.length = ${MAX_ARRAY_LENGTH + 1}; await tools.echo({ a });`))).toBe("array_too_long");
    const long = fakeTools().add("long", () => new Array(MAX_ARRAY_LENGTH + 1));
    expect(codeOf(await run(`await tools.long({});`, { tools: long.tools }))).toBe("array_too_long");
  });
});

describe("value depth", () => {
  it("allows 32 levels and refuses 33, for the return value, tool inputs and tool results", async () => {
    expect(valueOf(await run(`return ${nested(32)};`))).toEqual(JSON.parse(nested(32)));
    expect(codeOf(await run(`return ${nested(33)};`))).toBe("value_too_deep");
    expect(valueOf(await run(`return (await tools.echo({ v: ${nested(31)} })).v.length;`))).toBe(1);
    expect(codeOf(await run(`await tools.echo({ v: ${nested(32)} });`))).toBe("value_too_deep");
    const deep = fakeTools().add("deep", () => JSON.parse(nested(33)));
    expect(codeOf(await run(`try { await tools.deep({}) } catch { return "caught" }`, { tools: deep.tools }))).toBe("value_too_deep");
  });

  it("is not swallowed by the script's try/catch", async () => {
    expect(codeOf(await run(`try { return ${nested(40)}; } catch { return "caught"; }`))).toBe("value_too_deep");
    expect(codeOf(await run(`try { await tools.echo(${nested(40)}); } catch { } return "went on";`))).toBe("value_too_deep");
  });
});

describe("pending promises", () => {
  it(`allows ${MAX_PENDING_PROMISES} tool calls in flight and refuses one more`, async () => {
    const gate = deferred();
    const fake = fakeTools().add("wait", async (input, record) => {
      if (record.ordinal === MAX_PENDING_PROMISES) gate.resolve();
      await gate.promise;
      return input;
    });
    const all = await run(`return (await Promise.all(Array.from({ length: ${MAX_PENDING_PROMISES} }, (_, i) => tools.wait({ i })))).length;`, { tools: fake.tools });
    expect(valueOf(all)).toBe(MAX_PENDING_PROMISES);

    const hang = fakeTools().add("hang", (_, record) => untilAborted(record.signal));
    const tooMany = await run(`await Promise.all(Array.from({ length: ${MAX_PENDING_PROMISES + 1} }, () => tools.hang({})));`, { tools: hang.tools });
    expect(codeOf(tooMany)).toBe("pending_promises");
    expect(hang.calls).toHaveLength(MAX_PENDING_PROMISES);
    expect(hang.calls.every((c) => c.signal.aborted)).toBe(true);
  });
});

describe("call depth", () => {
  it("nests 10,000 ordinary calls and stops unbounded recursion", async () => {
    expect(valueOf(await run(`function f(n) { return n === 0 ? 0 : 1 + f(n - 1); } return f(10000);`))).toBe(10_000);
    const outcome = await run(`function g() { return g() + 1; } g();`);
    expect(codeOf(outcome)).toBe("call_depth");
  });

  it("starts over when an await resumes", async () => {
    expect(valueOf(await run(`async function h(n) { if (n === 0) return 0; await null; return 1 + (await h(n - 1)); } return await h(20000);`))).toBe(20_000);
  });

  it("survives a built-in that exhausts the native stack: the next execution runs", async () => {
    expect(codeOf(await run(`JSON.parse("[".repeat(200000) + "]".repeat(200000));`))).toBe("call_depth");
    expect(valueOf(await run(`return "still here";`))).toBe("still here");
  });
});

describe("memory", () => {
  const limits = { memoryBytes: 8 * 1024 * 1024, timeoutMs: 20_000 };
  it.each([
    ["large strings", `const a = []; for (let i = 0; ; i++) a.push("x".repeat(1 << 20) + i);`],
    ["array buffers", `const a = []; for (;;) a.push(new ArrayBuffer(1 << 20));`],
    ["many small objects", `const a = []; for (let i = 0; ; i++) a.push({ i });`],
  ])("stops a script that allocates %s without bound", async (_, code) => {
    expect(codeOf(await run(code, { limits }))).toBe("memory_limit");
  });

  it("leaves room below the limit", async () => {
    expect(valueOf(await run(`const a = []; for (let i = 0; i < 4; i++) a.push("x".repeat(1 << 20)); return a.length;`, { limits }))).toBe(4);
  });

  it("refuses a limit out of range", async () => {
    await expect(runCodeMode({ code: "", tools: new Map(), limits: { memoryBytes: 1 } })).rejects.toThrow(RangeError);
    await expect(runCodeMode({ code: "", tools: new Map(), limits: { timeoutMs: 0 } })).rejects.toThrow(RangeError);
  });
});

describe("deadline", () => {
  it("stops a CPU-bound loop", async () => {
    const outcome = await run(`while (true) {}`, { limits: { timeoutMs: 200 } });
    expect(codeOf(outcome)).toBe("timed_out");
    expect(outcome.ok || outcome.error.message).toBe("The execution did not finish within 200 ms.");
  });

  it("stops a script waiting on a tool, aborting the call", async () => {
    const hang = fakeTools().add("hang", (_, record) => untilAborted(record.signal));
    const outcome = await run(`await tools.hang({});`, { tools: hang.tools, limits: { timeoutMs: 100 } });
    expect(codeOf(outcome)).toBe("timed_out");
    expect(hang.calls[0]!.signal.aborted).toBe(true);
  });

  it("cannot be caught by the script", async () => {
    const outcome = await run(`try { while (true) {} } catch { } return "escaped";`, { limits: { timeoutMs: 100 } });
    expect(codeOf(outcome)).toBe("timed_out");
    expect(outcome.ok || outcome.error.message).toBe("The execution did not finish within 100 ms.");
  });
});

describe("abort", () => {
  it("stops a CPU-bound loop when the signal aborts", async () => {
    const controller = new AbortController();
    const outcome = await run(`console.log("looping"); for (;;) {}`, { signal: controller.signal, onLog: () => controller.abort() });
    expect(codeOf(outcome)).toBe("interrupted");
    // Stopped by QuickJS's interrupt handler, not by terminating the worker after the grace period.
    expect(outcome.ok || outcome.error.message).toBe("The execution was interrupted.");
    expect(outcome.logs).toEqual(["looping"]);
  });

  it("stops a script waiting on a tool and aborts the call", async () => {
    const controller = new AbortController();
    const hang = fakeTools().add("hang", (_, record) => {
      controller.abort();
      return untilAborted(record.signal);
    });
    const outcome = await run(`await tools.hang({});`, { tools: hang.tools, signal: controller.signal });
    expect(codeOf(outcome)).toBe("interrupted");
    expect(hang.calls[0]!.signal.aborted).toBe(true);
  });

  it("does not start with an aborted signal", async () => {
    const fake = echoTools();
    const outcome = await run(`await tools.echo({});`, { tools: fake.tools, signal: AbortSignal.abort() });
    expect(codeOf(outcome)).toBe("interrupted");
    expect(fake.calls).toHaveLength(0);
  });

  it("leaves the engine usable", async () => {
    const controller = new AbortController();
    await run(`console.log("x"); for (;;) {}`, { signal: controller.signal, onLog: () => controller.abort() });
    expect(valueOf(await run(`return 2 + 2;`))).toBe(4);
  });
});
