// CodeMode `execute` inside workerd (miniflare): QuickJS's WebAssembly is a module import the
// bundle carries, the script runs in the Durable Object's isolate (tests/worker/fixtures/
// files-object.ts), calls the `/workspace` file tools through the CodeMode bridge and returns a
// value in the Node tool's result shape; a runaway loop ends with `timed_out` at its deadline and
// the object keeps serving; the engine's own limits (call depth, memory) end a script, not the object.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Miniflare } from "miniflare";
// @ts-expect-error -- a plain .mjs build tool without types
import { WASM_MODULE_RULES } from "../../tools/worker/bundle.mjs";
import { bundle, miniflare } from "./support.js";

let mf: Miniflare;

const execute = async (code: string, limits?: { timeoutMs?: number; memoryBytes?: number }, engine: { frozenClock?: boolean; pollsPerMs?: number } = {}): Promise<{ status: number; body: any }> => {
  const response = await mf.dispatchFetch("http://worker/execute?object=codemode", {
    method: "POST",
    body: JSON.stringify({ code, workdir: "/workspace/proj", ...(limits && { limits }), ...engine }),
    headers: { "content-type": "application/json" },
  });
  return { status: response.status, body: await response.json() };
};

beforeAll(async () => {
  const script = await bundle("tests/worker/fixtures/files-object.ts");
  mf = miniflare(script, { durableObjects: { FILES: { className: "FilesObject", useSQLite: true } }, modulesRules: WASM_MODULE_RULES });
  await mf.ready;
});

afterAll(async () => {
  await mf?.dispose();
});

describe("CodeMode execute in workerd", () => {
  it("runs a script that calls the file tools and returns a value, in the Node tool's result shape", async () => {
    const { status, body } = await execute(`
      await tools.write({ filePath: "notes/todo.md", content: "- ship\\n- test\\n" });
      const page = await tools.read({ filePath: "notes/todo.md" });
      const listing = await tools.read({ filePath: "notes" });
      let refused;
      try { await tools.read({ filePath: "/etc/passwd" }); } catch (error) { refused = error.code; }
      console.log("lines", page.split("\\n").length);
      return { first: page.split("\\n")[0], entries: listing.entries, refused, found: search({ query: "edit" })[0].id };
    `);
    expect(status).toBe(200);
    expect(body.calls).toEqual(["write", "read", "read", "read"]);
    const value = { first: "     1\t- ship", entries: ["todo.md"], refused: "invalid_path", found: "edit" };
    expect(body.output.execution).toEqual({ result: value, logs: ["lines 4"] });
    expect(body.output.result).toEqual({ format: "text", value: `${JSON.stringify(value, null, 2)}\n\nConsole:\nlines 4` });
  });

  it("stops a runaway loop at its deadline with timed_out, and the object keeps serving", async () => {
    const stopped = await execute("let i = 0; while (true) { i++; }", { timeoutMs: 300 });
    expect(stopped.status).toBe(422);
    expect(stopped.body.failure).toEqual({ tag: "ToolFailure", code: "timed_out", message: "timed_out: The execution did not finish within 300 ms." });
    const after = await execute("return 1 + 1;");
    expect(after.body.output.execution).toEqual({ result: 2, logs: [] });
  });

  it("stops a runaway loop by its poll budget when the clock stands still while JavaScript runs", async () => {
    // The deadline's clock never advances here, as on Cloudflare: only the clock-free bound
    // (polls per millisecond of the deadline, per synchronous slice) can end the loop.
    const stopped = await execute("for (;;) {}", { timeoutMs: 250 }, { frozenClock: true });
    expect(stopped.body.failure).toEqual({ tag: "ToolFailure", code: "timed_out", message: "timed_out: The execution did not finish within 250 ms." });
    // The budget is per slice: 50 polls here (0.01 per ms of a 5 s deadline). The same work in one
    // slice passes it; cut into ten slices by waits on the host, each slice gets a fresh budget.
    const budget = { frozenClock: true, pollsPerMs: 0.01 };
    const whole = await execute("let n = 0; for (let i = 0; i < 2e6; i++) n++; return n;", { timeoutMs: 5_000 }, budget);
    expect(whole.body.failure).toMatchObject({ code: "timed_out" });
    const sliced = await execute("let n = 0; for (let s = 0; s < 10; s++) { for (let i = 0; i < 2e5; i++) n++; await tools.read({ filePath: '.' }); } return n;", { timeoutMs: 5_000 }, budget);
    expect(sliced.body.output.execution.result).toBe(2e6);
  });

  it("ends a script at the engine's limits and on its own errors, with the Node codes", async () => {
    // Generous deadlines: on a loaded machine a deep recursion must reach the stack's end, not the clock.
    const deep = await execute("function f(n) { return n === 0 ? 0 : 1 + f(n - 1); } return f(1e6);", { timeoutMs: 20_000 });
    expect(deep.body.failure).toMatchObject({ code: "script_limit" });
    expect(deep.body.failure.message).toMatch(/^call_depth: /);
    // Caught inside the script, the overflow is an ordinary error; the engine still works.
    const caught = await execute("function f(n) { return n === 0 ? 0 : 1 + f(n - 1); } try { f(1e6); } catch (e) { return e.message; }", { timeoutMs: 20_000 });
    expect(caught.body, JSON.stringify(caught)).toMatchObject({ output: { execution: { result: "stack overflow" } } });
    // Through a built-in the isolate's own stack runs out first: still call_depth, and that module instance is dropped.
    const native = await execute("function g(n) { return n === 0 ? 0 : [n].map((k) => g(k - 1))[0] + 1; } return g(1e6);", { timeoutMs: 20_000 });
    expect(native.body.failure.message).toMatch(/^call_depth: /);

    const memory = await execute("const keep = []; while (true) keep.push('x'.repeat(1 << 20) + keep.length);", { memoryBytes: 16 * 1024 * 1024, timeoutMs: 20_000 });
    expect(memory.body.failure).toMatchObject({ code: "script_limit" });
    expect(memory.body.failure.message).toMatch(/^memory_limit: /);

    const thrown = await execute("throw new TypeError('boom');");
    expect(thrown.body.failure).toMatchObject({ code: "script_error" });
    expect(thrown.body.failure.message).toMatch(/^script_error: TypeError: boom/);
    expect((await execute("return (")).body.failure.message).toMatch(/^syntax_error: SyntaxError/);
    expect((await execute("return 40 + 2;")).body.output.execution.result).toBe(42);
  });
});
