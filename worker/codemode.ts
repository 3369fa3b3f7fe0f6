// Past 400 lines on purpose: the in-isolate CodeMode engine is the worker thread of
// services/codemode/worker-source.ts ported to run inside workerd, and is kept in one piece so the
// two can be read side by side.
//
// CodeMode `execute` in workerd: the same execution (services/codemode/execution.ts: limits, tool
// calls through the CodeMode bridge, the host-wide caps, the result shape) on an engine that runs
// QuickJS in the Worker's own isolate instead of a worker thread (workerd has no
// `node:worker_threads`). workerd accepts WebAssembly only as a module import, never compiled from
// bytes at run time, so the QuickJS module (`@jitl/quickjs-wasmfile-release-sync/wasm`, the
// variant Node uses) is imported here; tools/worker/bundle.mjs copies the `.wasm` next to the bundle
// and workerd loads it as a compiled module (miniflare: a `CompiledWasm` module rule).
//
// What differs from Node, and why:
// - Each execution instantiates its own module and `WebAssembly.Memory` (capped at the memory limit
//   plus the module's 16 MiB, as on Node), disposed when it ends: a module a trap broke never
//   serves another script. Instantiating costs a few milliseconds (the module is compiled once).
// - The script runs on the isolate's own thread: while it computes, nothing else in the object
//   runs, so timers and abort events cannot reach it. QuickJS's interrupt handler is therefore the
//   only way to stop a loop, and it decides for itself: the deadline is checked against the clock
//   at every poll, and a slice of synchronous execution (from a start or a resume until the script
//   waits on the host) may poll at most WORKER_POLLS_PER_MS × the deadline's milliseconds times,
//   a clock-free bound for runtimes whose clock stands still while JavaScript runs (Cloudflare's
//   advances only on I/O). A cancellation reaches a script when it next waits on the host.
// - The deadline defaults to WORKER_CODEMODE_TIMEOUT_MS (30 s, Cloudflare's default CPU limit per
//   invocation): a runaway script must end with `timed_out`, never take the object with it.
// - QuickJS's stack limit is WORKER_STACK_BYTES (256 KiB, not Node's 2 MiB): the isolate's native
//   stack also holds the WebAssembly frames, and measured in workerd it overflows between 2,500 and
//   2,900 frames of a one-argument recursive function, so the engine's own limit must trip first —
//   at about 1,400 such frames (320 KiB's 1,700 left too thin a margin: a loaded CI run once saw
//   the native stack run out first), a `call_depth` the script can catch (the reference's 10,000 needs
//   Node's 8 MiB worker stack). Recursion through built-ins (`[x].map(f)`, JSON on 100,000-deep
//   data) can still exhaust the native stack: the execution ends with `call_depth` and its module
//   instance is dropped; the object and later executions are unaffected.
import { newQuickJSWASMModuleFromVariant, newVariant, type QuickJSContext, type QuickJSDeferredPromise, type QuickJSHandle, type QuickJSRuntime, type QuickJSSyncVariant, type QuickJSWASMModule } from "quickjs-emscripten";
import variantExport from "@jitl/quickjs-wasmfile-release-sync";
import wasmModule from "@jitl/quickjs-wasmfile-release-sync/wasm";
import type { CodeModeError } from "../services/codemode/errors.js";
import { runCodeModeWith, type CodeModeOutcome, type CodeModeRequest } from "../services/codemode/execution.js";
import type { CodeModeLimits } from "../services/codemode/limits.js";
import { PRELUDE_SOURCE } from "../services/codemode/prelude.js";
import { INTERRUPT, type ChannelHandlers, type EngineChannel, type FromWorker, type OpenChannel, type ToWorker, type WorkerLimits } from "../services/codemode/protocol.js";
import { createExecuteTool } from "../services/tools/execute-tool.js";
import type { ExecuteInput } from "../services/tools/execute-tool.js";
import type { ToolDefinition } from "../services/tools/tool.js";

/** The Worker's default deadline for one execution (Cloudflare's default CPU limit per invocation). */
export const WORKER_CODEMODE_TIMEOUT_MS = 30_000;
/**
 * Interrupt polls allowed per millisecond of the deadline in one synchronous slice. QuickJS polls
 * about every 10,000 operations; measured in workerd on the 2-core machine under load: ≈ 1 poll
 * per ms. Four per ms leaves room for hardware four times as fast before the clock-free bound
 * stops a script earlier than its deadline.
 */
export const WORKER_POLLS_PER_MS = 4;
/** QuickJS's stack limit inside the isolate (the native stack also holds the WebAssembly frames; see above). */
export const WORKER_STACK_BYTES = 256 * 1024;

const WASM_PAGE_BYTES = 65_536;
const WASM_MAX_PAGES = 32_768;
/** What the module needs besides the QuickJS heap (engine.ts's WASM_BASE_BYTES). */
const WASM_BASE_BYTES = 16 * 1024 * 1024;
/** Freed when a run fails, so describing an out-of-memory error has room to allocate. */
const RESERVE_BYTES = 1024 * 1024;

/** The variant's ES module default export (its CommonJS typings describe the namespace instead). */
const variant = variantExport as unknown as QuickJSSyncVariant;

const encoder = new TextEncoder();
const utf8Length = (text: string): number => encoder.encode(text).length;

interface Run {
  readonly id: number;
  readonly rt: QuickJSRuntime;
  vm: QuickJSContext | undefined;
  readonly flag: Int32Array;
  readonly L: WorkerLimits;
  readonly pending: Map<number, QuickJSDeferredPromise>;
  readonly handles: QuickJSHandle[];
  main: QuickJSHandle | undefined;
  helpers: QuickJSHandle | undefined;
  reserve: QuickJSHandle | undefined;
  fatal: CodeModeError | undefined;
  done: boolean;
  reported: boolean;
  logs: number;
  logBytes: number;
  omitted: number;
  settled: number;
  lastCall: number;
  /** When the deadline passes (ms since the epoch), or never. */
  readonly deadline: number;
  /** Interrupt polls left in the current synchronous slice. */
  polls: number;
  readonly pollBudget: number;
}

/** One execution's engine: one module instance, one runtime and context, then disposed. */
class IsolateEngine {
  #run: Run | undefined;
  broken = false;

  constructor(
    readonly mod: QuickJSWASMModule,
    readonly memory: WebAssembly.Memory,
    readonly maxPages: number,
    readonly post: (message: FromWorker) => void,
    readonly now: () => number,
    readonly pollsPerMs: number,
  ) {}

  receive(message: ToWorker): void {
    if (message.type === "run") return this.#start(message);
    const run = this.#run;
    if (!run || run.id !== message.id) return;
    this.#guard(run, () => {
      if (message.type === "settle") {
        run.settled++;
        this.#settle(run, message);
      } else if (message.type === "fatal") {
        if (!run.fatal) run.fatal = { code: message.code, message: message.message };
        this.#finish(run, { ok: false, error: run.fatal });
      } else this.#finish(run, { ok: false, error: this.#classify(run, undefined, "interrupted") });
    });
  }

  /** Anything the engine itself throws ends the run; a native stack overflow or a trap breaks the module. */
  #guard(run: Run, action: () => void): void {
    try {
      action();
    } catch (error) {
      const overflow = error instanceof RangeError;
      if (overflow || error instanceof WebAssembly.RuntimeError) this.broken = true;
      const failure: CodeModeError = overflow
        ? { code: "call_depth", message: "The script exhausted the engine's stack (call depth)." }
        : { code: "engine_failed", message: `The CodeMode engine failed: ${error instanceof Error ? error.message : String(error)}` };
      this.#report(run, { ok: false, error: failure });
    }
  }

  #start(m: Extract<ToWorker, { type: "run" }>): void {
    const L = m.limits;
    const rt = this.mod.newRuntime();
    const deadline = L.timeoutMs === null ? Number.POSITIVE_INFINITY : this.now() + L.timeoutMs;
    const pollBudget = L.timeoutMs === null ? Number.POSITIVE_INFINITY : Math.max(1, Math.ceil(L.timeoutMs * this.pollsPerMs));
    const run: Run = {
      id: m.id, rt, vm: undefined, flag: new Int32Array(m.interrupt), L, pending: new Map(), handles: [], main: undefined, helpers: undefined,
      reserve: undefined, fatal: undefined, done: false, reported: false, logs: 0, logBytes: 0, omitted: 0, settled: 0, lastCall: 0,
      deadline, polls: pollBudget, pollBudget,
    };
    this.#run = run;
    this.#guard(run, () => {
      rt.setMemoryLimit(L.memoryBytes);
      rt.setMaxStackSize(Math.min(L.stackBytes, WORKER_STACK_BYTES));
      rt.setInterruptHandler(() => {
        if (run.fatal !== undefined || Atomics.load(run.flag, 0) !== INTERRUPT.none) return true;
        run.polls -= 1;
        if (run.polls <= 0 || this.now() >= run.deadline) {
          Atomics.store(run.flag, 0, INTERRUPT.timedOut);
          return true;
        }
        return false;
      });
      const vm = (run.vm = rt.newContext());
      run.reserve = vm.newArrayBuffer(new ArrayBuffer(RESERVE_BYTES));
      const host = vm.newObject();
      run.handles.push(host);
      vm.newFunction("call", (idHandle, jsonHandle) => this.#request(run, { type: "call", tool: vm.getString(idHandle), json: vm.typeof(jsonHandle) === "string" ? vm.getString(jsonHandle) : undefined })).consume((fn) => vm.setProp(host, "call", fn));
      vm.newFunction("read", (offsetHandle, lengthHandle, encodingHandle) =>
        this.#request(run, { type: "read", offset: vm.getNumber(offsetHandle), length: vm.getNumber(lengthHandle), encoding: vm.getString(encodingHandle) === "base64" ? "base64" : "bytes" }),
      ).consume((fn) => vm.setProp(host, "read", fn));
      vm.newFunction("log", (levelHandle, textHandle) => {
        this.#log(run, vm.getString(levelHandle), vm.getString(textHandle));
      }).consume((fn) => vm.setProp(host, "log", fn));
      vm.newFunction("fail", (codeHandle, messageHandle) => {
        if (!run.fatal) run.fatal = { code: vm.getString(codeHandle) as CodeModeError["code"], message: vm.getString(messageHandle) };
      }).consume((fn) => vm.setProp(host, "fail", fn));
      const prelude = vm.unwrapResult(vm.evalCode(PRELUDE_SOURCE, "prelude.js"));
      run.handles.push(prelude);
      const catalog = vm.newString(m.catalog);
      const attachments = vm.newString(m.attachments);
      const limits = vm.unwrapResult(vm.evalCode(`(${JSON.stringify(L)})`, "limits.js"));
      const helpers = vm.unwrapResult(vm.callFunction(prelude, vm.undefined, host, catalog, limits, attachments));
      catalog.dispose();
      attachments.dispose();
      limits.dispose();
      run.helpers = helpers;
      run.handles.push(helpers);
      const evaluated = vm.evalCode(`(async () => {${m.code}\n})()`, "script.js");
      if (evaluated.error) {
        const failure = this.#classify(run, evaluated.error, "syntax_error");
        evaluated.error.dispose();
        this.#finish(run, { ok: false, error: failure });
        return;
      }
      run.main = evaluated.value;
      this.#pump(run);
    });
  }

  /** A host request the script awaits (a tool call, an attachments.read), counted against maxPending. */
  #request(run: Run, message: { type: "call"; tool: string; json: string | undefined } | { type: "read"; offset: number; length: number; encoding: "bytes" | "base64" }): QuickJSHandle | undefined {
    if (run.pending.size >= run.L.maxPending) {
      if (!run.fatal) run.fatal = { code: "pending_promises", message: `More than ${run.L.maxPending} tool calls were pending at once.` };
      return undefined;
    }
    const deferred = run.vm!.newPromise();
    const callId = (run.lastCall += 1);
    run.pending.set(callId, deferred);
    this.post({ ...message, id: run.id, callId });
    return deferred.handle;
  }

  #log(run: Run, level: string, text: string): void {
    const L = run.L;
    const entry = level === "warn" || level === "error" || level === "info" ? `[${level}] ${text}` : text;
    const size = utf8Length(entry);
    if (run.logs >= L.maxLogEntries || run.logBytes >= L.maxLogBytes) {
      run.omitted++;
      return;
    }
    let kept = entry;
    if (run.logBytes + size > L.maxLogBytes) {
      kept = `${new TextDecoder().decode(encoder.encode(entry).subarray(0, L.maxLogBytes - run.logBytes)).replace(/\uFFFD$/, "")} …`;
    }
    run.logs++;
    run.logBytes += Math.min(size, L.maxLogBytes - run.logBytes);
    this.post({ type: "log", id: run.id, entry: kept });
  }

  #settle(run: Run, m: Extract<ToWorker, { type: "settle" }>): void {
    const deferred = run.pending.get(m.callId);
    if (!deferred || run.done) return;
    run.pending.delete(m.callId);
    const vm = run.vm!;
    if (m.ok) {
      if ("bytes" in m) vm.newArrayBuffer(m.bytes).consume((value) => deferred.resolve(value));
      else if (m.json === undefined) deferred.resolve();
      else vm.newString(m.json).consume((value) => deferred.resolve(value));
    } else {
      const error = vm.newError({ name: typeof m.name === "string" ? m.name : "Error", message: m.message });
      if (typeof m.code === "string") vm.newString(m.code).consume((code) => vm.setProp(error, "code", code));
      deferred.reject(error);
      error.dispose();
    }
    deferred.dispose();
    this.#pump(run);
  }

  /** Runs queued jobs (a new synchronous slice), then looks at the script's promise. */
  #pump(run: Run): void {
    if (run.done) return;
    if (Atomics.load(run.flag, 0) !== INTERRUPT.none) return this.#finish(run, { ok: false, error: this.#classify(run, undefined, "script_error") });
    run.polls = run.pollBudget;
    const executed = run.rt.executePendingJobs(-1);
    if (executed.error) {
      const failure = this.#classify(run, executed.error, "script_error");
      executed.error.dispose();
      this.#finish(run, { ok: false, error: failure });
      return;
    }
    if (run.fatal) return this.#finish(run, { ok: false, error: run.fatal });
    const vm = run.vm!;
    const state = vm.getPromiseState(run.main!);
    if (state.type === "pending") {
      if (run.pending.size === 0 && !run.rt.hasPendingJob()) {
        this.#finish(run, { ok: false, error: { code: "script_error", message: "The script awaits a promise that nothing can settle (no tool call is pending)." } });
      } else if (!run.rt.hasPendingJob()) {
        this.post({ type: "idle", id: run.id, settled: run.settled });
      }
      return;
    }
    if (state.type === "rejected") {
      const failure = this.#classify(run, state.error, "script_error");
      state.error.dispose();
      return this.#finish(run, { ok: false, error: failure });
    }
    const value = state.value;
    const toJson = vm.getProp(run.helpers!, "toJson");
    const what = vm.newString("the return value");
    const converted = vm.callFunction(toJson, vm.undefined, value, what);
    toJson.dispose();
    what.dispose();
    value.dispose();
    if (converted.error) {
      const failure = this.#classify(run, converted.error, "invalid_value");
      converted.error.dispose();
      return this.#finish(run, { ok: false, error: failure });
    }
    const json = vm.typeof(converted.value) === "string" ? vm.getString(converted.value) : undefined;
    converted.value.dispose();
    this.#finish(run, { ok: true, json });
  }

  /** An error the script did not catch (or a stop without one), as a code and the text the model reads. */
  #classify(run: Run, thrown: QuickJSHandle | undefined, fallback: CodeModeError["code"]): CodeModeError {
    if (run.fatal) return run.fatal;
    const reason = Atomics.load(run.flag, 0);
    if (reason === INTERRUPT.timedOut) return { code: "timed_out", message: `The execution did not finish within ${run.L.timeoutMs} ms.` };
    if (reason !== INTERRUPT.none) return { code: "interrupted", message: "The execution was interrupted." };
    if (thrown === undefined) return { code: fallback, message: "The execution failed." };
    if (run.reserve?.alive) run.reserve.dispose();
    run.rt.setMemoryLimit(-1);
    const vm = run.vm!;
    const text = (h: QuickJSHandle): string => (vm.typeof(h) === "string" ? vm.getString(h) : "");
    const name = vm.getProp(thrown, "name").consume(text);
    const message = vm.getProp(thrown, "message").consume(text);
    const described = this.#describe(run, thrown);
    const exhausted = (vm.typeof(thrown) !== "object" || vm.sameValue(thrown, vm.null)) && this.memory.buffer.byteLength + 4 * RESERVE_BYTES >= this.maxPages * WASM_PAGE_BYTES;
    if (exhausted || (name === "InternalError" && message === "out of memory")) return { code: "memory_limit", message: `The script reached its memory limit (${run.L.memoryBytes} bytes).` };
    if (name === "InternalError" && message === "stack overflow") return { code: "call_depth", message: `The script exceeded the call depth limit (stack overflow).\n${described}` };
    if (name === "InternalError" && message === "string too long") return { code: "string_too_long", message: "The script built a string longer than the engine allows." };
    if (fallback === "syntax_error" && name !== "SyntaxError") return { code: "script_error", message: described };
    return { code: fallback, message: described };
  }

  #describe(run: Run, thrown: QuickJSHandle): string {
    const vm = run.vm!;
    const fn = vm.getProp(run.helpers!, "describe");
    const described = vm.callFunction(fn, vm.undefined, thrown);
    fn.dispose();
    if (described.error) {
      described.error.dispose();
      return "The script failed with an error that cannot be described.";
    }
    return described.value.consume((h) => vm.getString(h));
  }

  #finish(run: Run, outcome: { ok: true; json: string | undefined } | { ok: false; error: CodeModeError }): void {
    if (run.done) return;
    run.done = true;
    for (const deferred of run.pending.values()) deferred.dispose();
    run.pending.clear();
    run.main?.dispose();
    for (const handle of run.handles) if (handle.alive) handle.dispose();
    if (run.reserve?.alive) run.reserve.dispose();
    const memoryBytes = this.memory.buffer.byteLength;
    try {
      run.vm?.dispose();
      run.rt.dispose();
    } catch {
      this.broken = true;
    }
    this.#report(run, outcome, memoryBytes);
  }

  #report(run: Run, outcome: { ok: true; json: string | undefined } | { ok: false; error: CodeModeError }, memoryBytes = 0): void {
    if (run.reported) return;
    run.reported = true;
    run.done = true;
    this.post({ type: "done", id: run.id, ...outcome, omitted: run.omitted, memoryBytes, retire: this.broken });
  }
}

export interface IsolateEngineOptions {
  /** The clock the deadline is checked against (default `Date.now`; tests stop it to stand for a clock that only advances on I/O). */
  readonly now?: () => number;
  /** Interrupt polls per millisecond of the deadline in one synchronous slice (default WORKER_POLLS_PER_MS). */
  readonly pollsPerMs?: number;
}

/**
 * The in-isolate engine: each channel is a fresh module instance for one execution. Messages both
 * ways are delivered as microtasks, in order, so the execution sees the same asynchrony as a
 * worker's messages; a CPU-bound slice of the script runs inside one of them.
 */
export const isolateEngine = (options: IsolateEngineOptions = {}): OpenChannel => async (handlers: ChannelHandlers, memoryBytes: number): Promise<EngineChannel> => {
  const maxPages = Math.min(WASM_MAX_PAGES, Math.ceil((memoryBytes + WASM_BASE_BYTES) / WASM_PAGE_BYTES));
  const memory = new WebAssembly.Memory({ initial: 256, maximum: maxPages });
  const mod = await newQuickJSWASMModuleFromVariant(newVariant(variant, { wasmModule, wasmMemory: memory }));
  let live: ChannelHandlers | undefined = handlers;
  const engine = new IsolateEngine(mod, memory, maxPages, (message) => queueMicrotask(() => live?.onMessage(message)), options.now ?? Date.now, options.pollsPerMs ?? WORKER_POLLS_PER_MS);
  return {
    send(message) {
      queueMicrotask(() => {
        if (live !== undefined) engine.receive(message);
      });
    },
    terminate() {
      // Nothing to kill: the script is not running while this runs. The execution settles itself.
      live = undefined;
    },
    release() {
      live = undefined;
    },
  };
};

/** Limits with the Worker's default deadline when the caller gives none. */
export const workerLimits = (limits: CodeModeLimits | undefined): CodeModeLimits => ({ ...limits, timeoutMs: limits?.timeoutMs ?? WORKER_CODEMODE_TIMEOUT_MS });

/** Runs one script in this isolate: `runCodeMode`'s request and outcome, the Worker's default deadline. */
export function runWorkerCodeMode(request: CodeModeRequest, options: IsolateEngineOptions = {}): Promise<CodeModeOutcome> {
  return runCodeModeWith(isolateEngine(options), { ...request, limits: workerLimits(request.limits) });
}

export interface WorkerExecuteOptions extends IsolateEngineOptions {
  /** Per-execution limits (memory, deadline); the deadline defaults to WORKER_CODEMODE_TIMEOUT_MS. */
  readonly limits?: CodeModeLimits;
}

/** The `execute` tool on the Worker host: the Node tool's contract and results over this isolate's engine. */
export function workerExecuteTool(options: WorkerExecuteOptions = {}): ToolDefinition<ExecuteInput> {
  return createExecuteTool((request) => runWorkerCodeMode({ ...request, limits: workerLimits(options.limits ?? request.limits) }, options));
}
