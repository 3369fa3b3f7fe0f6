// The `execute` tool against a fake CodeMode capability.
import { afterAll, describe, expect, it } from "vitest";
import { shutdownCodeModeEngine } from "../../services/codemode/index.js";
import {
  ToolFailure,
  disallowedSchemaKeywords,
  executeTool,
  questionTool,
  readTool,
  skillTool,
  taskTool,
  textResult,
  jsonResult,
  validateToolInput,
  type CodeModeCallRequest,
  type CodeModeCapability,
  type CodeModeToolInfo,
  type ToolContext,
  type ToolOutput,
} from "../../services/tools/index.js";
import { context, failureOf, text, type RecordingContext } from "../tools/helpers.js";

afterAll(() => shutdownCodeModeEngine());

const lookup: CodeModeToolInfo = {
  id: "lookup",
  description: "Look a word up. Returns its meaning.",
  inputSchema: { type: "object", properties: { word: { type: "string" } }, required: ["word"] },
};

function capability(handle: (request: CodeModeCallRequest) => Promise<ToolOutput>, tools: CodeModeToolInfo[] = [lookup, readTool, questionTool, taskTool, skillTool, executeTool]) {
  const requests: CodeModeCallRequest[] = [];
  const cap: CodeModeCapability = {
    tools: () => tools,
    call(request) {
      requests.push(request);
      return handle(request);
    },
  };
  return { cap, requests };
}

function ctxWith(codemode: CodeModeCapability | undefined): RecordingContext {
  const base = context("/tmp");
  return Object.assign(base, codemode ? { codemode } : {}) as RecordingContext & ToolContext;
}

const execute = (code: string, ctx: ToolContext) => {
  const validated = validateToolInput(executeTool, { code });
  if (!validated.ok) throw validated.failure;
  return executeTool.execute(validated.input, ctx);
};

describe("execute: definition", () => {
  it("has a valid input schema, asks for no permissions, and is not direct-only", () => {
    expect(disallowedSchemaKeywords(executeTool.inputSchema)).toEqual([]);
    expect(validateToolInput(executeTool, { code: "return 1" }).ok).toBe(true);
    expect(validateToolInput(executeTool, { code: "" }).ok).toBe(false);
    expect(validateToolInput(executeTool, { script: "x" }).ok).toBe(false);
    expect(executeTool.permissions({ code: "return 1" }, context("/tmp"))).toEqual([]);
    expect(executeTool.directOnly).toBeUndefined();
  });

  it("lists the script tools with signatures, leaving out direct-only tools and itself", () => {
    const described = executeTool.describe!({ subagents: [], codemodeTools: [lookup, readTool, questionTool, taskTool, skillTool, executeTool] });
    expect(described).toContain("- tools.lookup(input: { word: string }): Promise<unknown>: Look a word up.");
    expect(described).toMatch(/- tools\.read\(input: \{ filePath\?: string;/);
    for (const hidden of ["tools.question", "tools.task", "tools.skill", "tools.execute"]) expect(described).not.toContain(hidden);
    expect(executeTool.describe!({ subagents: [] })).toContain("No tools are available to scripts here.");
  });

  it("marks task, skill and question direct-only (per the reference)", () => {
    expect([taskTool.directOnly, skillTool.directOnly, questionTool.directOnly]).toEqual([true, true, true]);
  });
});

describe("execute: running", () => {
  it("calls tools through the capability and returns the rendered value with the logs", async () => {
    const { cap, requests } = capability(async (request) =>
      request.toolId === "lookup" ? textResult(`meaning of ${(request.input as { word: string }).word}`) : jsonResult({ kind: "file", content: "x" }),
    );
    const ctx = ctxWith(cap);
    const output = await execute(`const [a, b] = await Promise.all([tools.lookup({ word: "ze" }), tools.read({ filePath: "a.txt" })]); console.log("done"); return { a, kind: b.kind };`, ctx);
    expect(text(output)).toBe(`{\n  "a": "meaning of ze",\n  "kind": "file"\n}\n\nConsole:\ndone`);
    expect(output.execution).toEqual({ result: { a: "meaning of ze", kind: "file" }, logs: ["done"] });
    expect(requests.map((r) => [r.toolId, r.input, r.ordinal])).toEqual([
      ["lookup", { word: "ze" }, 1],
      ["read", { filePath: "a.txt" }, 2],
    ]);
    expect(requests.every((r) => r.signal instanceof AbortSignal)).toBe(true);
  });

  it("returns a string result as itself", async () => {
    const { cap } = capability(async () => textResult("hello"));
    expect(text(await execute(`return await tools.lookup({ word: "x" });`, ctxWith(cap)))).toBe("hello");
    expect(text(await execute(`const x = 1;`, ctxWith(cap)))).toBe("(no return value)");
  });

  it("reports each inner call as activity", async () => {
    const { cap } = capability(async (request) => {
      if ((request.input as { word: string }).word === "no") throw new ToolFailure("tool_denied", "The user rejected lookup.");
      return textResult("ok");
    });
    const ctx = ctxWith(cap);
    await execute(`console.log("step"); await tools.lookup({ word: "a" }); try { await tools.lookup({ word: "no" }) } catch {} return 1;`, ctx);
    await ctx.activityWhere((u) => u.message === "call 2: lookup failed: The user rejected lookup.");
    expect(ctx.activity.map((u) => u.message)).toEqual(["call 1: lookup started", "call 1: lookup completed", "call 2: lookup started", "call 2: lookup failed: The user rejected lookup."]);
    expect(ctx.activity[0]).toMatchObject({ preview: "step", observedBytes: 4, truncated: false });
  });

  it("lets the script handle a denial, and fails with an uncaught one", async () => {
    const { cap } = capability(async () => {
      throw new ToolFailure("tool_denied", "Permission to read secret.txt was denied.");
    });
    const handled = await execute(`try { await tools.read({ path: "secret.txt" }); } catch (e) { return e.code + ": " + e.message; }`, ctxWith(cap));
    expect(text(handled)).toBe("tool_denied: Permission to read secret.txt was denied.");
    const failure = await failureOf(execute(`console.log("trying"); await tools.read({ path: "secret.txt" });`, ctxWith(cap)));
    expect(failure.code).toBe("script_error");
    expect(failure.message).toBe("script_error: Error: Permission to read secret.txt was denied. (code: tool_denied)\n\nConsole:\ntrying");
  });

  it("hides a non-ToolFailure error's message from the script", async () => {
    const { cap } = capability(async () => {
      throw new Error("ECONNRESET at 10.0.0.3 with token abc");
    });
    const output = await execute(`try { await tools.lookup({ word: "x" }) } catch (e) { return e.message }`, ctxWith(cap));
    expect(text(output)).toBe("The lookup call failed.");
  });

  it("does not offer direct-only tools or itself to scripts", async () => {
    const { cap } = capability(async () => textResult(""));
    const output = await execute(`return ["question", "task", "skill", "execute", "lookup"].map((id) => typeof tools[id]);`, ctxWith(cap));
    expect(JSON.parse(text(output))).toEqual(["undefined", "undefined", "undefined", "undefined", "function"]);
  });

  it("maps a limit to script_limit and a syntax error to script_error", async () => {
    const { cap } = capability(async () => textResult(""));
    expect((await failureOf(execute(`return ${"[".repeat(40)}${"]".repeat(40)};`, ctxWith(cap)))).code).toBe("script_limit");
    const syntax = await failureOf(execute(`return (`, ctxWith(cap)));
    expect(syntax.code).toBe("script_error");
    expect(syntax.message).toMatch(/^syntax_error: SyntaxError/);
  });

  it("fails without the capability", async () => {
    expect((await failureOf(execute(`return 1`, ctxWith(undefined)))).code).toBe("codemode_unavailable");
  });

  it("is interrupted by its signal, aborting the inner call", async () => {
    const ctx = ctxWith(undefined);
    const { cap, requests } = capability(
      (request) =>
        new Promise((_, reject) => {
          ctx.controller.abort();
          request.signal.addEventListener("abort", () => reject(new ToolFailure("interrupted", "The tool call was interrupted.")));
        }),
    );
    Object.assign(ctx, { codemode: cap });
    expect((await failureOf(execute(`await tools.lookup({ word: "x" });`, ctx))).code).toBe("interrupted");
    expect(requests[0]!.signal.aborted).toBe(true);
  });

  it("cuts a result larger than 50 KiB", async () => {
    const { cap } = capability(async () => textResult(""));
    const output = await execute(`return "y".repeat(60000);`, ctxWith(cap));
    expect(Buffer.byteLength(text(output))).toBeLessThan(51_400);
    expect(text(output)).toMatch(/\n… \(result cut: 8800 more bytes; return less, or select what you need\)$/);
    expect((output.execution!.result as string).length).toBe(60_000);
  });
});
