// runCodeMode: one script on Node's engine (worker threads, engine.ts). The execution itself (limits,
// tool calls, the host-wide caps) is execution.ts, shared with the Worker host's engine
// (worker/codemode.ts), which cannot import this file's worker threads.
import { openChannel } from "./engine.js";
import { runCodeModeWith, type CodeModeOutcome, type CodeModeRequest } from "./execution.js";

export { runCodeModeWith, type CodeModeCallEvent, type CodeModeCallOptions, type CodeModeOutcome, type CodeModeRequest, type CodeModeTool } from "./execution.js";

/**
 * Runs one script. Resolves with its outcome (never rejects for the script's sake; a bad `limits`
 * is a RangeError). Waits for a live execution place and a running place first (slots.ts): beyond
 * the caps it queues, and its signal takes it out of the queue.
 */
export function runCodeMode(request: CodeModeRequest): Promise<CodeModeOutcome> {
  return runCodeModeWith(openChannel, request);
}
