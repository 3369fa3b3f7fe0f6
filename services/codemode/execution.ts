// runCodeModeWith: one script, one fresh QuickJS runtime, the caller's tools, on an engine the
// host supplies (run.ts: Node's worker threads; worker/codemode.ts: the workerd isolate). The script is the body
// of an async function; it sees `tools.<id>(input)`, `search({ query })`, `console` and nothing
// else. Every tool call comes out here as JSON (checked), runs through the caller's `call`, and
// its result goes back in as JSON (checked); a rejection becomes an Error in the script. When
// the script settles, calls still running are aborted ("returning interrupts unfinished work").
// With `attachments`, the script also sees that resource's metadata and reads its bytes through
// `attachments.read(offset, length)`, answered here from the resource (budget and range checked there).
import { AttachmentResource, isAttachmentError } from "./attachments.js";
import { INTERRUPT, type ChannelHandlers, type EngineChannel, type FromWorker, type OpenChannel, type ToWorker, type WorkerLimits } from "./protocol.js";
import type { CodeModeError } from "./errors.js";
import {
  ABORT_GRACE_MS,
  CONSOLE_FORMAT_DEPTH,
  DEFAULT_MEMORY_LIMIT_BYTES,
  MAX_ARRAY_LENGTH,
  MAX_LOG_BYTES,
  MAX_LOG_ENTRIES,
  MAX_MEMORY_LIMIT_BYTES,
  MAX_PENDING_PROMISES,
  MAX_SEARCH_RESULTS,
  MAX_STRING_LENGTH,
  MAX_VALUE_DEPTH,
  STACK_SIZE_BYTES,
  type CodeModeLimits,
} from "./limits.js";
import { toolPath, toolSignature } from "./signature.js";
import { liveExecutions, runningScripts, type Slot } from "./slots.js";
import { decodeValue, encodeValue } from "./values.js";

/** A tool a script may call. */
export interface CodeModeTool {
  readonly description: string;
  readonly inputSchema: Readonly<Record<string, unknown>>;
  /**
   * Runs one call with the script's (JSON) input; resolves with the result value the script
   * receives, or rejects with an Error whose `message` (and string `code`, if any) the script sees.
   */
  call(input: unknown, options: CodeModeCallOptions): Promise<unknown>;
}

export interface CodeModeCallOptions {
  /** Aborts when the execution ends (the script returned, failed or was stopped) before the call settles. */
  readonly signal: AbortSignal;
  /** 1 for the script's first call, in the order the script made them. */
  readonly ordinal: number;
}

/** A tool call's progress, for activity reports. */
export interface CodeModeCallEvent {
  readonly ordinal: number;
  readonly toolId: string;
  readonly phase: "started" | "completed" | "failed";
  /** The failure the script received (`failed` only). */
  readonly message?: string;
}

export interface CodeModeRequest {
  readonly code: string;
  readonly tools: ReadonlyMap<string, CodeModeTool>;
  readonly limits?: CodeModeLimits;
  /** Stops the script, also in the middle of a CPU-bound loop. */
  readonly signal?: AbortSignal;
  readonly onCall?: (event: CodeModeCallEvent) => void;
  /**
   * The execution's `attachments` resource. The caller keeps custody: it releases the resource
   * once the execution settled (reads after that fail with `attachment_released`). Absent: the
   * script sees an empty `attachments` array.
   */
  readonly attachments?: AttachmentResource;
  /** Each console entry as it is kept. */
  readonly onLog?: (entry: string) => void;
  /** The execution waits for a place under the host-wide caps before it starts (slots.ts); called once at most. */
  readonly onQueued?: () => void;
}

export type CodeModeOutcome =
  | { readonly ok: true; readonly value: unknown; readonly logs: readonly string[] }
  | { readonly ok: false; readonly error: CodeModeError; readonly logs: readonly string[] };

let nextRunId = 0;

const INTERRUPTED: CodeModeError = { code: "interrupted", message: "The execution was interrupted." };

/**
 * Runs one script. Resolves with its outcome (never rejects for the script's sake; a bad `limits`
 * is a RangeError). Waits for a live execution place and a running place first (slots.ts): beyond
 * the caps it queues, and its signal takes it out of the queue.
 */
export async function runCodeModeWith(openChannel: OpenChannel, request: CodeModeRequest): Promise<CodeModeOutcome> {
  const limits = workerLimits(request.limits);
  if (request.signal?.aborted) return { ok: false, error: INTERRUPTED, logs: [] };
  const queued = queuedNotice(request);
  let live = liveExecutions.tryAcquire();
  if (!live) {
    queued();
    try {
      live = await liveExecutions.acquire(request.signal);
    } catch {
      return { ok: false, error: INTERRUPTED, logs: [] };
    }
  }
  try {
    return await execute(openChannel, request, limits, queued);
  } finally {
    live.release();
  }
}

/** Tells the caller, once, that its execution waits for a place. */
function queuedNotice(request: CodeModeRequest): () => void {
  let told = false;
  return () => {
    if (told) return;
    told = true;
    try {
      request.onQueued?.();
    } catch {
      // An observer's failure is not the script's.
    }
  };
}

function execute(openChannel: OpenChannel, request: CodeModeRequest, limits: WorkerLimits, queued: () => void): Promise<CodeModeOutcome> {
  const logs: string[] = [];
  const { signal } = request;
  const catalog = JSON.stringify([...request.tools].map(([id, tool]) => toolSignature(id, tool.description, tool.inputSchema)));
  const id = ++nextRunId;
  const interrupt = new SharedArrayBuffer(4);
  const flag = new Int32Array(interrupt);
  const calls = new Set<AbortController>();
  let ordinal = 0;

  return new Promise<CodeModeOutcome>((resolve) => {
    let channel: EngineChannel | undefined;
    let settled = false;
    let graceTimer: ReturnType<typeof setTimeout> | undefined;
    let deadlineTimer: ReturnType<typeof setTimeout> | undefined;
    // The running place: held while the script may execute JavaScript (see slots.ts). Settles
    // for a script without one wait in `outbox` until it has one again; `sent` counts the settles
    // the worker was given, so its `idle` report gives the place back only once it saw them all.
    let running: Slot | undefined;
    let resuming = false;
    let sent = 0;
    const outbox: ToWorker[] = [];
    const ended = new AbortController();

    const notify = <T>(callback: ((event: T) => void) | undefined, event: T): void => {
      try {
        callback?.(event);
      } catch {
        // An observer's failure is not the script's.
      }
    };

    const settle = (outcome: CodeModeOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(graceTimer);
      clearTimeout(deadlineTimer);
      signal?.removeEventListener("abort", onAbort);
      for (const controller of calls) controller.abort();
      calls.clear();
      outbox.length = 0;
      ended.abort();
      running?.release();
      running = undefined;
      channel?.release();
      resolve(outcome);
    };

    // A settle resumes the script: sent at once while it holds its running place, else queued for one.
    const deliver = (message: ToWorker): void => {
      if (settled) return;
      if (running) {
        sent += 1;
        channel?.send(message);
        return;
      }
      outbox.push(message);
      if (resuming) return;
      resuming = true;
      runningScripts.acquire(ended.signal).then(
        (slot) => {
          resuming = false;
          if (settled) return slot.release();
          running = slot;
          for (const queued of outbox.splice(0)) {
            sent += 1;
            channel?.send(queued);
          }
        },
        () => (resuming = false),
      );
    };

    // The worker waits on the host and has seen every settle sent: its running place goes to the next script.
    const idle = (processed: number): void => {
      if (processed !== sent || outbox.length > 0 || !running) return;
      running.release();
      running = undefined;
    };

    const stopError = (reason: number): CodeModeError =>
      reason === INTERRUPT.timedOut
        ? { code: "timed_out", message: `The execution did not finish within ${limits.timeoutMs} ms.` }
        : { code: "interrupted", message: "The execution was interrupted." };

    const stop = (reason: number): void => {
      if (settled || Atomics.load(flag, 0) !== INTERRUPT.none) return;
      // Still queued for its first running place: nothing started, it ends now.
      if (!channel) return settle({ ok: false, error: stopError(reason), logs });
      Atomics.store(flag, 0, reason);
      for (const controller of calls) controller.abort();
      channel?.send({ type: "stop", id });
      graceTimer = setTimeout(() => {
        channel?.terminate();
        const error = stopError(reason);
        settle({ ok: false, error: { code: error.code, message: `${error.message} The engine did not stop in time and was terminated.` }, logs });
      }, ABORT_GRACE_MS);
    };
    const onAbort = (): void => stop(INTERRUPT.aborted);

    const fatal = (error: CodeModeError): void => channel?.send({ type: "fatal", id, code: error.code, message: error.message });

    const call = async (message: Extract<FromWorker, { type: "call" }>): Promise<void> => {
      const path = toolPath(message.tool);
      const input = decodeValue(message.json, `the input of ${path}`);
      if (!input.ok) return fatal(input.error);
      const tool = request.tools.get(message.tool);
      const n = ++ordinal;
      const controller = new AbortController();
      calls.add(controller);
      notify(request.onCall, { ordinal: n, toolId: message.tool, phase: "started" });
      try {
        if (!tool) throw new Error(`There is no tool ${path}.`);
        const value = await tool.call(input.value, { signal: controller.signal, ordinal: n });
        if (settled) return;
        const encoded = encodeValue(value, `the result of ${path}`);
        if (!encoded.ok) {
          notify(request.onCall, { ordinal: n, toolId: message.tool, phase: "failed", message: encoded.error.message });
          return fatal(encoded.error);
        }
        notify(request.onCall, { ordinal: n, toolId: message.tool, phase: "completed" });
        deliver({ type: "settle", id, callId: message.callId, ok: true, json: encoded.value });
      } catch (error) {
        if (settled) return;
        const text = error instanceof Error ? error.message : typeof error === "string" ? error : "The tool call failed.";
        const code = typeof (error as { code?: unknown } | null)?.code === "string" ? (error as { code: string }).code : undefined;
        notify(request.onCall, { ordinal: n, toolId: message.tool, phase: "failed", message: text });
        deliver({ type: "settle", id, callId: message.callId, ok: false, message: text, ...(code !== undefined && { code }) });
      } finally {
        calls.delete(controller);
      }
    };

    // An attachments.read, answered at once from the resource (a refusal is an AttachmentError in the script).
    const read = (message: Extract<FromWorker, { type: "read" }>): void => {
      try {
        const bytes = (request.attachments ?? NO_ATTACHMENTS).read(message.offset, message.length);
        if (message.encoding === "base64") deliver({ type: "settle", id, callId: message.callId, ok: true, json: JSON.stringify(bytes.toString("base64")) });
        else deliver({ type: "settle", id, callId: message.callId, ok: true, bytes: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer });
      } catch (error) {
        const refused = isAttachmentError(error) ? error : undefined;
        deliver({ type: "settle", id, callId: message.callId, ok: false, name: "AttachmentError", message: refused?.message ?? "The attachments read failed.", code: refused?.code ?? "attachment_invalid_read" });
      }
    };

    const handlers: ChannelHandlers = {
      onMessage(message) {
        if (message.id !== id || settled) return;
        if (message.type === "read") {
          read(message);
        } else if (message.type === "idle") {
          idle(message.settled);
        } else if (message.type === "log") {
          logs.push(message.entry);
          notify(request.onLog, message.entry);
        } else if (message.type === "call") {
          void call(message);
        } else {
          if (message.omitted > 0) logs.push(`… ${message.omitted} more console ${message.omitted === 1 ? "entry" : "entries"} omitted`);
          if (!message.ok) return settle({ ok: false, error: message.error, logs });
          const value = decodeValue(message.json, "the return value");
          settle(value.ok ? { ok: true, value: value.value, logs } : { ok: false, error: value.error, logs });
        }
      },
      onExit(error) {
        const reason = Atomics.load(flag, 0);
        settle({ ok: false, error: reason === INTERRUPT.none ? error : stopError(reason), logs });
      },
    };

    signal?.addEventListener("abort", onAbort, { once: true });
    // A running place first (a cancellation while queued ends it in stop()), then the worker.
    const first = runningScripts.tryAcquire();
    if (!first) queued();
    (first ? Promise.resolve(first) : runningScripts.acquire(ended.signal))
      .then((slot): Promise<EngineChannel> | undefined => {
        if (settled) {
          slot.release();
          return undefined;
        }
        running = slot;
        return openChannel(handlers, limits.memoryBytes);
      })
      .then(
        (opened) => {
          if (!opened) return;
          channel = opened;
          if (settled) return opened.release();
          opened.send({ type: "run", id, code: request.code, catalog, attachments: JSON.stringify(request.attachments?.metadata ?? []), limits, interrupt });
          if (limits.timeoutMs !== null) deadlineTimer = setTimeout(() => stop(INTERRUPT.timedOut), limits.timeoutMs);
        },
        (error: unknown) => {
          if (settled) return;
          settle({ ok: false, error: { code: "engine_failed", message: `The CodeMode engine could not start: ${error instanceof Error ? error.message : String(error)}` }, logs });
        },
      );
  });
}

/** The resource of an execution without attachments: only the empty read at 0 succeeds. */
const NO_ATTACHMENTS = new AttachmentResource([]);

function workerLimits(limits: CodeModeLimits | undefined): WorkerLimits {
  const memoryBytes = limits?.memoryBytes ?? DEFAULT_MEMORY_LIMIT_BYTES;
  if (!Number.isSafeInteger(memoryBytes) || memoryBytes < 1024 * 1024 || memoryBytes > MAX_MEMORY_LIMIT_BYTES) {
    throw new RangeError(`limits.memoryBytes must be an integer from 1 MiB to ${MAX_MEMORY_LIMIT_BYTES} bytes`);
  }
  const timeoutMs = limits?.timeoutMs;
  if (timeoutMs !== undefined && (!Number.isSafeInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 2_147_483_647)) {
    throw new RangeError("limits.timeoutMs must be an integer from 1 to 2147483647");
  }
  return {
    memoryBytes,
    stackBytes: STACK_SIZE_BYTES,
    timeoutMs: timeoutMs ?? null,
    maxPending: MAX_PENDING_PROMISES,
    maxString: MAX_STRING_LENGTH,
    maxArray: MAX_ARRAY_LENGTH,
    maxDepth: MAX_VALUE_DEPTH,
    consoleDepth: CONSOLE_FORMAT_DEPTH,
    maxSearch: MAX_SEARCH_RESULTS,
    maxLogEntries: MAX_LOG_ENTRIES,
    maxLogBytes: MAX_LOG_BYTES,
  };
}
