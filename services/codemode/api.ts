// The CodeMode package API (the reference's `@zephyrcloudio/harness-codemode`): `Tool.make` wraps
// a described function, `CodeMode.make({ tools })` returns a runtime whose `execute(code)` runs a
// script against them in the QuickJS sandbox (run.ts) and resolves with its outcome. Where the
// reference validates with Effect schemas, this validates with Standard Schema validators (zod 4
// and others implement it): a validator checks arguments before the call and results after it; a
// plain JSON Schema only describes the tool (its `search` signature) and validates nothing.
import { runCodeMode, type CodeModeOutcome, type CodeModeTool } from "./run.js";
import type { CodeModeLimits } from "./limits.js";

/** The Standard Schema v1 interface (https://standardschema.dev), the part used here. */
export interface StandardSchema<Output = unknown> {
  readonly "~standard": {
    readonly version: 1;
    readonly vendor: string;
    validate(value: unknown): StandardResult<Output> | Promise<StandardResult<Output>>;
  };
}
type StandardResult<Output> = { readonly value: Output; readonly issues?: undefined } | { readonly issues: readonly { readonly message: string; readonly path?: readonly unknown[] }[] };

/** A JSON Schema (describes, does not validate) or a Standard Schema validator (validates). */
export type ToolSchema = Readonly<Record<string, unknown>> | StandardSchema;

export interface ToolDefinition<Input = unknown, Output = unknown> {
  readonly description: string;
  readonly input?: ToolSchema;
  readonly output?: ToolSchema;
  /** Runs one call; a thrown or rejected Error reaches the script as an Error with its message (and string `code`). */
  execute(input: Input, options: { readonly signal: AbortSignal }): Output | Promise<Output>;
}

/** A tool CodeMode scripts can call (`tools.<id>(input)`). */
export interface Tool<Input = unknown, Output = unknown> extends ToolDefinition<Input, Output> {
  readonly _tag: "CodeModeTool";
}

const isStandard = (schema: ToolSchema | undefined): schema is StandardSchema =>
  typeof schema === "object" && schema !== null && typeof (schema as { "~standard"?: { validate?: unknown } })["~standard"]?.validate === "function";

/** A validation failure of a tool's input or output (the script sees `code: "invalid_tool_input"` / `"invalid_tool_output"`). */
export class ToolSchemaError extends Error {
  constructor(
    readonly code: "invalid_tool_input" | "invalid_tool_output",
    message: string,
  ) {
    super(message);
    this.name = "ToolSchemaError";
  }
}

async function check(schema: ToolSchema | undefined, value: unknown, code: ToolSchemaError["code"], tool: string): Promise<unknown> {
  if (!isStandard(schema)) return value;
  const result = await schema["~standard"].validate(value);
  if (result.issues === undefined) return result.value;
  const detail = result.issues.map((issue) => `${issue.path && issue.path.length > 0 ? `${issue.path.map(String).join(".")}: ` : ""}${issue.message}`).join("; ");
  throw new ToolSchemaError(code, `${tool}: ${code === "invalid_tool_input" ? "invalid input" : "invalid output"}: ${detail}`);
}

export const Tool = {
  /** A tool from its description, optional input/output schemas and `execute`. */
  make<Input = unknown, Output = unknown>(definition: ToolDefinition<Input, Output>): Tool<Input, Output> {
    if (typeof definition?.description !== "string") throw new TypeError("Tool.make needs a description");
    if (typeof definition.execute !== "function") throw new TypeError("Tool.make needs an execute function");
    return Object.freeze({ ...definition, _tag: "CodeModeTool" as const });
  },
};

export interface CodeModeOptions {
  /** The tools by id: a script calls `tools.<id>(input)` (or `tools["my-id"]`). */
  readonly tools: Readonly<Record<string, Tool<never, unknown>>>;
  readonly limits?: CodeModeLimits;
}

export interface CodeModeRuntime {
  /** Runs `code` (the body of an async function); resolves with `{ ok: true, value, logs }` or `{ ok: false, error, logs }`. */
  execute(code: string, options?: { readonly signal?: AbortSignal }): Promise<CodeModeOutcome>;
}

export const CodeMode = {
  /** A runtime over `tools`; each `execute` starts a fresh sandbox. */
  make(options: CodeModeOptions): CodeModeRuntime {
    const tools = new Map<string, CodeModeTool>();
    for (const [id, tool] of Object.entries(options?.tools ?? {})) {
      if (tool?._tag !== "CodeModeTool") throw new TypeError(`CodeMode.make: tools.${id} is not made by Tool.make`);
      const schema = tool.input;
      tools.set(id, {
        description: tool.description,
        inputSchema: schema === undefined || isStandard(schema) ? {} : schema,
        async call(input, { signal }) {
          const checked = await check(tool.input, input, "invalid_tool_input", id);
          const result = await (tool.execute as (input: unknown, options: { signal: AbortSignal }) => unknown)(checked, { signal });
          return check(tool.output, result, "invalid_tool_output", id);
        },
      });
    }
    return {
      execute: (code, run = {}) => runCodeMode({ code, tools, ...(options.limits ? { limits: options.limits } : {}), ...(run.signal ? { signal: run.signal } : {}) }),
    };
  },
};
