// Fake tools for the CodeMode suites: each records its calls; `gate` tools wait until released.
import { runCodeMode, type CodeModeOutcome, type CodeModeRequest, type CodeModeTool } from "../../services/codemode/index.js";

export interface Recorded {
  readonly tool: string;
  readonly input: unknown;
  readonly ordinal: number;
  readonly signal: AbortSignal;
}

export interface FakeTools {
  readonly tools: Map<string, CodeModeTool>;
  readonly calls: Recorded[];
  add(id: string, call: (input: unknown, record: Recorded) => Promise<unknown> | unknown, description?: string): FakeTools;
}

export function fakeTools(): FakeTools {
  const tools = new Map<string, CodeModeTool>();
  const calls: Recorded[] = [];
  const fake: FakeTools = {
    tools,
    calls,
    add(id, call, description = `The ${id} tool.`) {
      tools.set(id, {
        description,
        inputSchema: { type: "object", properties: { value: { type: "string" } } },
        async call(input, { signal, ordinal }) {
          const record = { tool: id, input, ordinal, signal };
          calls.push(record);
          return call(input, record);
        },
      });
      return fake;
    },
  };
  return fake;
}

/** A promise with its resolvers outside. */
export function deferred<T = void>(): { promise: Promise<T>; resolve(value: T): void; reject(error: unknown): void } {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

/** Settles when `signal` aborts (a tool that only ends when the execution stops it). */
export const untilAborted = (signal: AbortSignal): Promise<never> =>
  new Promise((_, reject) => signal.addEventListener("abort", () => reject(new Error("aborted")), { once: true }));

export const echoTools = (): FakeTools => fakeTools().add("echo", (input) => input);

/** Runs `code` with `tools` (echo by default); a safety deadline turns a hang into a failure. */
export function run(code: string, options: Partial<CodeModeRequest> = {}): Promise<CodeModeOutcome> {
  return runCodeMode({ code, tools: echoTools().tools, limits: { timeoutMs: 20_000 }, ...options });
}

/** The value of a successful outcome (fails the test with the error otherwise). */
export function valueOf(outcome: CodeModeOutcome): unknown {
  if (!outcome.ok) throw new Error(`expected success, got ${outcome.error.code}: ${outcome.error.message}`);
  return outcome.value;
}

/** The error code of a failed outcome (fails the test on success). */
export function codeOf(outcome: CodeModeOutcome): string {
  if (outcome.ok) throw new Error(`expected a failure, got ${JSON.stringify(outcome.value)}`);
  return outcome.error.code;
}
