// `execute`: Hybrid CodeMode. The model writes one JavaScript async function body that combines
// tool calls and returns only what it needs; it runs in the QuickJS sandbox (services/codemode).
// Every call a script makes goes through Core (`ctx.codemode.call`): the same validation, hooks
// and permissions as a direct call, and a denial rejects inside the script instead of failing the
// Turn. `execute` itself asks for nothing (no projections). `directOnly` tools (task, skill,
// question) and `execute` itself are not callable from scripts. Each inner call is reported as
// activity; the result is the rendered return value plus the console output. The script also
// sees the Session's prompt attachments (`attachments`: metadata plus one `read(offset, length)`
// over their concatenated bytes), a resource Core makes for this call and this call releases
// when it settles.
// `createExecuteTool(run)` is the tool over a host's engine: execute.ts gives Node's (the worker
// threads of services/codemode/run.ts, imported at the first execution), worker/codemode.ts the
// workerd isolate's. Nothing here imports an engine, so the Worker bundle can take this file.
import type { CodeModeCallEvent, CodeModeOutcome, CodeModeRequest, CodeModeTool } from "../codemode/execution.js";
import type { CodeModeError } from "../codemode/errors.js";
import { LIMIT_CODES } from "../codemode/errors.js";
import { renderResult } from "../codemode/render.js";
import { toolSignature } from "../codemode/signature.js";
import type { ToolResult } from "../../generated/client/types.gen.js";
import { ToolFailure, byteLength, interrupted, isToolFailure, throwIfAborted, type CodeModeToolInfo, type ToolDefinition, type ToolFailureCode } from "./tool.js";

export interface ExecuteInput {
  /** The body of an async function. */
  readonly code: string;
}

/** Longest script accepted, in characters. */
export const MAX_EXECUTE_CODE_CHARS = 262_144;
/** Largest rendered result returned to the model (UTF-8 bytes); the rest is cut with a note. */
export const MAX_EXECUTE_RESULT_BYTES = 51_200;
/** A fault message's limit in the contract. */
const MAX_FAULT_MESSAGE_CHARS = 4_096;
/** Console text shown in an activity preview (the latest entries). */
const MAX_PREVIEW_CHARS = 1_024;

const DESCRIPTION =
  "Run JavaScript that combines tool calls and returns only what you need. `code` is the body of an async " +
  "function: call tools as `await tools.<id>(input)` (each resolves with the tool's result: text as a string, " +
  "JSON as a value), run independent calls together with `Promise.all`, and `return` the result. Await every " +
  "call you need: returning ends calls still running. A failed or denied call rejects with an Error (`message`, " +
  "`code`) that the script can catch. `search({ query })` returns matching tools' signatures and input schemas. " +
  "Output of console.log/info/warn/error/table is included in the result. Scripts have no imports, timers, " +
  "filesystem or network access of their own, only the tools; each call needs its usual permissions. Inputs and " +
  "results are JSON data. `attachments` lists the Session's prompt images `{ name, mimeType, bytes, digest }`; " +
  "`await attachments.read(offset, length[, { encoding: \"base64\" }])` reads their bytes, concatenated in that order, " +
  "while this call runs.";

/** The tools a script may call: not `directOnly`, not `execute` itself. */
export const scriptTools = (tools: readonly CodeModeToolInfo[]): CodeModeToolInfo[] =>
  tools.filter((tool) => tool.directOnly !== true && tool.id !== "execute");

/** Runs one script on a host's CodeMode engine (Node's `runCodeMode`, the Worker's in-isolate one). */
export type CodeModeRunner = (request: CodeModeRequest) => Promise<CodeModeOutcome>;

/** The `execute` tool over `run`. */
export const createExecuteTool = (run: CodeModeRunner): ToolDefinition<ExecuteInput> => ({
  id: "execute",
  description: DESCRIPTION,
  inputSchema: {
    type: "object",
    properties: {
      code: {
        type: "string",
        minLength: 1,
        maxLength: MAX_EXECUTE_CODE_CHARS,
        description: "JavaScript: the body of an async function. Use `await tools.<id>(input)` and `return` the result.",
      },
    },
    required: ["code"],
    additionalProperties: false,
  },
  describe(context) {
    const tools = scriptTools(context.codemodeTools ?? []);
    if (tools.length === 0) return `${DESCRIPTION}\n\nNo tools are available to scripts here.`;
    const lines = tools.map((tool) => `- ${toolSignature(tool.id, tool.description, tool.inputSchema).signature}: ${firstSentence(tool.description)}`);
    return `${DESCRIPTION}\n\nTools available to scripts:\n${lines.join("\n")}`;
  },
  permissions() {
    return [];
  },
  async execute(input, ctx) {
    throwIfAborted(ctx.signal);
    const codemode = ctx.codemode;
    if (!codemode) throw new ToolFailure("codemode_unavailable", "CodeMode is not available in this Session.");
    const tools = new Map<string, CodeModeTool>();
    for (const info of scriptTools(codemode.tools())) {
      tools.set(info.id, {
        description: info.description,
        inputSchema: info.inputSchema,
        async call(callInput, { signal, ordinal }) {
          try {
            const output = await codemode.call({ toolId: info.id, input: callInput, ordinal, signal });
            return resultValue(output.result);
          } catch (error) {
            // Only a ToolFailure's message is safe for the model; anything else is a bug.
            throw isToolFailure(error) ? error : new ToolFailure("script_error", `The ${info.id} call failed.`);
          }
        },
      });
    }

    const logs: string[] = [];
    let logBytes = 0;
    const report = (event: CodeModeCallEvent): void => {
      const preview = tail(logs.join("\n"), MAX_PREVIEW_CHARS);
      const what = `call ${event.ordinal}: ${event.toolId}`;
      const message = event.phase === "failed" ? `${what} failed: ${event.message ?? ""}` : `${what} ${event.phase}`;
      try {
        void Promise.resolve(
          ctx.reportActivity({ message: clip(message, 512), observedBytes: logBytes, truncated: byteLength(preview) < logBytes, ...(preview && { preview }) }),
        ).catch(() => undefined);
      } catch {
        // Progress is best effort; the execution goes on.
      }
    };
    // This call's attachments resource: ours until the execution settles, then released.
    const attachments = ctx.sessionResources
      ? await ctx.sessionResources.attachments(ctx.signal).catch((error: unknown) => {
          throwIfAborted(ctx.signal);
          throw isToolFailure(error) ? error : new ToolFailure("codemode_unavailable", "The Session's attachments could not be loaded.");
        })
      : undefined;
    let outcome: CodeModeOutcome;
    try {
      outcome = await run({
        code: input.code,
        tools,
        signal: ctx.signal,
        onCall: report,
        ...(attachments && { attachments }),
        onLog(entry) {
          logBytes += byteLength(entry) + (logs.length > 0 ? 1 : 0); // the bytes of logs.join("\n")
          logs.push(entry);
        },
      });
    } finally {
      attachments?.release();
    }
    if (ctx.signal.aborted) throw interrupted();
    if (!outcome.ok) throw failure(outcome.error, outcome.logs);
    return {
      result: { format: "text", value: cut(renderResult(outcome), MAX_EXECUTE_RESULT_BYTES) },
      execution: { result: outcome.value ?? null, logs: [...outcome.logs] },
    };
  },
});

/** A tool result as the script receives it: text as a string, JSON as its value, content as its parts. */
function resultValue(result: ToolResult): unknown {
  return result.value;
}

function failure(error: CodeModeError, logs: readonly string[]): ToolFailure {
  const code: ToolFailureCode =
    error.code === "interrupted"
      ? "interrupted"
      : error.code === "timed_out"
        ? "timed_out"
        : error.code === "engine_failed"
          ? "codemode_unavailable"
          : LIMIT_CODES.has(error.code)
            ? "script_limit"
            : "script_error";
  const head = clip(`${error.code}: ${error.message}`, MAX_FAULT_MESSAGE_CHARS);
  if (logs.length === 0) return new ToolFailure(code, head);
  const room = MAX_FAULT_MESSAGE_CHARS - head.length - "\n\nConsole:\n".length;
  const shown = room > 0 ? tail(logs.join("\n"), room) : "";
  return new ToolFailure(code, shown ? `${head}\n\nConsole:\n${shown}` : head);
}

const firstSentence = (text: string): string => clip(/^[^\n]*?[.!?](?=\s|$)/.exec(text)?.[0] ?? text.split("\n")[0]!, 200);

const clip = (text: string, max: number): string => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);

/** The last `max` characters (whole text when it fits). */
const tail = (text: string, max: number): string => (text.length <= max ? text : text.slice(text.length - max));

/** Cuts text to `maxBytes` UTF-8 bytes with a note saying how much was left out. */
function cut(text: string, maxBytes: number): string {
  const total = byteLength(text);
  if (total <= maxBytes) return text;
  const kept = Buffer.from(text, "utf8").subarray(0, maxBytes).toString("utf8").replace(/\uFFFD$/, "");
  return `${kept}\n… (result cut: ${total - byteLength(kept)} more bytes; return less, or select what you need)`;
}
