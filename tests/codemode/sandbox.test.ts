// The sandbox: tool calls, search, console, return values, and what a script cannot reach.
import { afterAll, describe, expect, it } from "vitest";
import { shutdownCodeModeEngine, type CodeModeCallEvent } from "../../services/codemode/index.js";
import { codeOf, deferred, fakeTools, run, untilAborted, valueOf } from "./helpers.js";

afterAll(() => shutdownCodeModeEngine());

describe("tool calls", () => {
  it("runs dependent calls in sequence, numbering them in order", async () => {
    const fake = fakeTools().add("upper", (input) => String((input as { value: string }).value).toUpperCase()).add("length", (input) => String((input as { value: string }).value).length);
    const outcome = await run(`const a = await tools.upper({ value: "abc" }); const n = await tools.length({ value: a + "de" }); return { a, n };`, { tools: fake.tools });
    expect(valueOf(outcome)).toEqual({ a: "ABC", n: 5 });
    expect(fake.calls.map((c) => [c.tool, c.input, c.ordinal])).toEqual([
      ["upper", { value: "abc" }, 1],
      ["length", { value: "ABCde" }, 2],
    ]);
  });

  it("runs five calls of Promise.all concurrently", async () => {
    const allStarted = deferred();
    const fake = fakeTools().add("slow", async (input, record) => {
      if (record.ordinal === 5) allStarted.resolve();
      await allStarted.promise; // only resolves when all five are in flight at once
      return (input as { value: string }).value;
    });
    const outcome = await run(`return await Promise.all(["a", "b", "c", "d", "e"].map((value) => tools.slow({ value })));`, { tools: fake.tools, limits: { timeoutMs: 5_000 } });
    expect(valueOf(outcome)).toEqual(["a", "b", "c", "d", "e"]);
    expect(fake.calls).toHaveLength(5);
  });

  it("lets the script catch a rejected call, with its message and code", async () => {
    const fake = fakeTools().add("deny", () => {
      throw Object.assign(new Error("Permission denied for read secrets"), { code: "tool_denied" });
    });
    const outcome = await run(`try { await tools.deny({}); return "no"; } catch (e) { return [e instanceof Error, e.message, e.code]; }`, { tools: fake.tools });
    expect(valueOf(outcome)).toEqual([true, "Permission denied for read secrets", "tool_denied"]);
  });

  it("fails the execution with an uncaught rejection, naming it", async () => {
    const fake = fakeTools().add("broken", () => Promise.reject(Object.assign(new Error("disk on fire"), { code: "io" })));
    const outcome = await run(`await tools.broken({});\nreturn 1;`, { tools: fake.tools });
    expect(codeOf(outcome)).toBe("script_error");
    expect(outcome.ok || outcome.error.message).toBe("Error: disk on fire (code: io)");
  });

  it("passes an empty object when the script gives no input", async () => {
    const fake = fakeTools().add("noargs", (input) => input);
    expect(valueOf(await run(`return await tools.noargs();`, { tools: fake.tools }))).toEqual({});
  });

  it("aborts calls still running when the script returns", async () => {
    const aborted = deferred<boolean>();
    const fake = fakeTools().add("hang", (_, record) => {
      record.signal.addEventListener("abort", () => aborted.resolve(true));
      return untilAborted(record.signal);
    });
    expect(valueOf(await run(`tools.hang({}); return "early";`, { tools: fake.tools }))).toBe("early");
    expect(await aborted.promise).toBe(true);
  });

  it("reports each call's progress", async () => {
    const events: CodeModeCallEvent[] = [];
    const fake = fakeTools()
      .add("ok", () => 1)
      .add("bad", () => Promise.reject(new Error("nope")));
    await run(`await tools.ok({}); try { await tools.bad({}) } catch {}`, { tools: fake.tools, onCall: (e) => events.push(e) });
    expect(events).toEqual([
      { ordinal: 1, toolId: "ok", phase: "started" },
      { ordinal: 1, toolId: "ok", phase: "completed" },
      { ordinal: 2, toolId: "bad", phase: "started" },
      { ordinal: 2, toolId: "bad", phase: "failed", message: "nope" },
    ]);
  });

  it("reaches a tool whose id is not an identifier by its path", async () => {
    const fake = fakeTools().add("my-tool", () => "dashed");
    expect(valueOf(await run(`return await tools["my-tool"]({});`, { tools: fake.tools }))).toBe("dashed");
  });
});

describe("search", () => {
  const catalog = () =>
    fakeTools()
      .add("read", () => "", "Read a file from the workspace.")
      .add("write", () => "", "Write a file.")
      .add("webfetch", () => "", "Fetch a URL.");

  it("finds tools by name and description, best first, with signatures and schemas", async () => {
    const found = valueOf(await run(`return search({ query: "read file" });`, { tools: catalog().tools })) as { id: string }[];
    expect(found.map((f) => f.id)).toEqual(["read", "write"]);
    expect(found[0]).toEqual({
      id: "read",
      path: "tools.read",
      description: "Read a file from the workspace.",
      signature: "tools.read(input: { value?: string }): Promise<unknown>",
      inputSchema: { type: "object", properties: { value: { type: "string" } } },
    });
  });

  it("is synchronous, takes a plain string, and finds nothing for an unknown word", async () => {
    expect(valueOf(await run(`const r = search("fetch"); return [Array.isArray(r), r.map((t) => t.id), search({ query: "zebra" })];`, { tools: catalog().tools }))).toEqual([true, ["webfetch"], []]);
  });

  it("lists every tool for an empty query and rejects a malformed request", async () => {
    expect(valueOf(await run(`return search({ query: "" }).map((t) => t.id);`, { tools: catalog().tools }))).toEqual(["read", "webfetch", "write"]);
    expect(valueOf(await run(`try { search({}) } catch (e) { return e.message }`, { tools: catalog().tools }))).toBe("search expects { query: string }.");
  });
});

describe("console", () => {
  it("captures log, info, warn, error and table in order", async () => {
    const outcome = await run(`console.log("plain", 1, { a: [1, "x"] }); console.info("i"); console.warn("w"); console.error(new TypeError("bad")); console.table([{ a: 1, b: 2 }, { a: 3 }]); return null;`);
    expect(outcome.logs).toEqual(['plain 1 { a: [ 1, "x" ] }', "[info] i", "[warn] w", "[error] TypeError: bad", "| (index) | a | b |\n| --- | --- | --- |\n| 0 | 1 | 2 |\n| 1 | 3 |  |"]);
  });

  it("abbreviates values nested deeper than the console depth, and cycles", async () => {
    const outcome = await run(`let v = 0; for (let i = 0; i < 40; i++) v = [v]; const o = {}; o.self = o; console.log(v); console.log(o);`);
    expect(outcome.logs[0]).toContain("[Array]");
    expect(outcome.logs[0]!.split("[").length - 1).toBe(33); // 32 levels shown, then [Array]
    expect(outcome.logs[1]).toBe("{ self: [Circular] }");
  });

  it("keeps at most 1,000 entries and counts the rest", async () => {
    const outcome = await run(`for (let i = 0; i < 1005; i++) console.log(i);`);
    expect(outcome.logs).toHaveLength(1001);
    expect(outcome.logs[999]).toBe("999");
    expect(outcome.logs[1000]).toBe("… 5 more console entries omitted");
  });

  it("keeps at most 50 KiB of console text", async () => {
    const outcome = await run(`for (let i = 0; i < 10; i++) console.log("x".repeat(10000));`);
    const kept = outcome.logs.filter((l) => !l.startsWith("…"));
    expect(kept.reduce((n, l) => n + Buffer.byteLength(l.replace(/ …$/, "")), 0)).toBeLessThanOrEqual(51_200);
    expect(kept).toHaveLength(6);
    expect(outcome.logs.at(-1)).toBe("… 4 more console entries omitted");
  });

  it("keeps the logs of a failed execution", async () => {
    const outcome = await run(`console.log("before"); throw new Error("after");`);
    expect(codeOf(outcome)).toBe("script_error");
    expect(outcome.logs).toEqual(["before"]);
  });
});

describe("return values", () => {
  it.each([
    ["null", "null", null],
    ["true", "true", true],
    ["false", "false", false],
    ["zero", "0", 0],
    ["a negative fraction", "-1.5", -1.5],
    ["a string", '"héllo ✓"', "héllo ✓"],
    ["an empty array", "[]", []],
    ["an empty object", "({})", {}],
    ["nested data", '({ a: [1, { b: null }], "k y": "v" })', { a: [1, { b: null }], "k y": "v" }],
  ])("returns %s", async (_, expression, expected) => {
    expect(valueOf(await run(`return ${expression};`))).toEqual(expected);
  });

  it("returns nothing without a return", async () => {
    const outcome = await run(`const x = 1;`);
    expect(outcome.ok).toBe(true);
    expect(valueOf(outcome)).toBeUndefined();
  });

  it("converts like JSON: toJSON, omitted undefined and functions, NaN as null", async () => {
    expect(valueOf(await run(`return { d: new Date(0), u: undefined, f() {}, n: NaN, arr: [undefined] };`))).toEqual({ d: "1970-01-01T00:00:00.000Z", n: null, arr: [null] });
  });

  it("refuses values that are not JSON data", async () => {
    expect(codeOf(await run(`return 1n;`))).toBe("invalid_value");
    expect(codeOf(await run(`const a = {}; a.a = a; return a;`))).toBe("invalid_value");
  });

  it("reports a syntax error with its position", async () => {
    const outcome = await run(`const = 1;`);
    expect(codeOf(outcome)).toBe("syntax_error");
    expect(outcome.ok || outcome.error.message).toMatch(/^SyntaxError: .*\n.*script\.js:1/);
  });

  it("fails a script awaiting a promise nothing can settle instead of hanging", async () => {
    const outcome = await run(`await new Promise(() => {});`);
    expect(codeOf(outcome)).toBe("script_error");
    expect(outcome.ok || outcome.error.message).toMatch(/nothing can settle/);
  });
});

describe("isolation", () => {
  it("has no host objects, timers or network", async () => {
    const names = ["process", "require", "module", "fetch", "setTimeout", "setInterval", "queueMicrotask", "Buffer", "WebAssembly", "XMLHttpRequest", "Deno", "Bun"];
    const outcome = await run(`return ${JSON.stringify(names)}.map((n) => typeof globalThis[n]).concat(typeof fetch, typeof globalThis.fetch);`);
    expect(valueOf(outcome)).toEqual([...names.map(() => "undefined"), "undefined", "undefined"]);
  });

  it("cannot import modules", async () => {
    const outcome = await run(`try { await import("node:fs"); return "imported"; } catch (e) { return e.message; }`);
    expect(valueOf(outcome)).toMatch(/could not load module/);
    expect(codeOf(await run(`import fs from "node:fs";`))).toBe("syntax_error");
  });

  it("sees only tools, search and console besides the language's own globals", async () => {
    const names = valueOf(await run(`return Object.getOwnPropertyNames(globalThis);`)) as string[];
    expect(names).toEqual(expect.arrayContaining(["tools", "search", "console", "JSON", "Promise"]));
    expect(names.filter((n) => /^(process|require|global|window|self|fetch|Buffer|setTimeout|host|prelude|__.*)$/.test(n))).toEqual([]);
  });

  it("does not reach the host through the Function constructor or a tool's closure", async () => {
    const outcome = await run(`const g = Function("return this")(); return [g === globalThis, typeof g.process, Object.getOwnPropertyNames(tools.echo).includes("call"), (function () {}).constructor("return typeof process")()];`);
    expect(valueOf(outcome)).toEqual([true, "undefined", false, "undefined"]);
  });

  it("cannot replace tools, search or console for the host", async () => {
    const outcome = await run(`globalThis.tools = null; tools.echo = null; return [typeof tools.echo, Object.isFrozen(tools)];`);
    expect(valueOf(outcome)).toEqual(["function", true]);
  });

  it("starts each execution in a fresh context", async () => {
    await run(`globalThis.leftover = 42; Array.prototype.polluted = true;`);
    expect(valueOf(await run(`return [typeof leftover, "polluted" in []];`))).toEqual(["undefined", false]);
  });
});
