// The CodeMode package API (`ze-harness/codemode`): Tool.make and CodeMode.make run a script in
// the real QuickJS sandbox; a Standard Schema validator (zod 4) checks arguments and results,
// a plain JSON Schema only describes; renderResult and the formatter.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { CodeMode, Tool, formatCodeMode, makeCodeModeFormatter, renderResult } from "../../services/codemode/public.js";

describe("CodeMode.make / Tool.make", () => {
  it("runs a script against the tools, in parallel where it awaits together", async () => {
    const calls: unknown[] = [];
    const runtime = CodeMode.make({
      tools: {
        echo: Tool.make({ description: "Return the supplied JSON value.", input: { type: "string" }, execute: (value) => value }),
        add: Tool.make({
          description: "Add two numbers.",
          input: z.object({ a: z.number(), b: z.number() }),
          output: z.number(),
          execute: async ({ a, b }: { a: number; b: number }) => (calls.push([a, b]), a + b),
        }),
      },
    });
    const result = await runtime.execute('const [x, y] = await Promise.all([tools.add({ a: 1, b: 2 }), tools.add({ a: 3, b: 4 })]); console.log("sum", x + y); return await tools.echo("hello");');
    expect(result).toEqual({ ok: true, value: "hello", logs: ["sum 10"] });
    expect(calls).toEqual([
      [1, 2],
      [3, 4],
    ]);
    if (!result.ok) throw new Error(result.error.message);
    expect(renderResult(result)).toBe("hello\n\nConsole:\nsum 10");
  });

  it("a validator refuses bad arguments and bad results; the script sees the error; a JSON Schema validates nothing", async () => {
    let ran = false;
    const runtime = CodeMode.make({
      tools: {
        strict: Tool.make({ description: "Needs a number.", input: z.object({ n: z.number() }), execute: () => ((ran = true), 1) }),
        liar: Tool.make({ description: "Promises a string.", output: z.string(), execute: () => 42 }),
        loose: Tool.make({ description: "Described only.", input: { type: "object", properties: { n: { type: "number" } } }, execute: (value) => value }),
      },
    });
    const input = await runtime.execute('try { await tools.strict({ n: "x" }); } catch (error) { return [error.code, error.message]; }');
    expect(input).toMatchObject({ ok: true, value: ["invalid_tool_input", expect.stringContaining("strict: invalid input: n:")] });
    expect(ran).toBe(false);
    const output = await runtime.execute('try { await tools.liar(); } catch (error) { return error.code; }');
    expect(output).toMatchObject({ ok: true, value: "invalid_tool_output" });
    expect(await runtime.execute('return await tools.loose({ n: "not a number" });')).toMatchObject({ ok: true, value: { n: "not a number" } });
    // search() shows the described signature.
    const found = await runtime.execute('return search({ query: "described" }).map((entry) => entry.id);');
    expect(found).toMatchObject({ ok: true, value: ["loose"] });
  });

  it("refuses what is not a tool; a failing script is an outcome, not a rejection", async () => {
    expect(() => Tool.make({ description: "x" } as never)).toThrow(TypeError);
    expect(() => CodeMode.make({ tools: { bad: { description: "x", execute: () => 1 } as never } })).toThrow(/not made by Tool.make/);
    const runtime = CodeMode.make({ tools: {} });
    expect(await runtime.execute("throw new Error('boom');")).toMatchObject({ ok: false, error: { message: expect.stringContaining("boom") } });
  });
});

describe("formatCodeMode / makeCodeModeFormatter", () => {
  it("re-indents for display and leaves unreadable source unchanged", async () => {
    expect(await formatCodeMode("if (a) {\nreturn 1;\n}")).toBe("if (a) {\n  return 1;\n}");
    expect(await formatCodeMode("if (a) {")).toBe("if (a) {");
    const formatter = makeCodeModeFormatter();
    expect(formatter.format("[\n1,\n2\n]")).toBe("[\n  1,\n  2\n]");
  });
});
