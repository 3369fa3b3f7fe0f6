// The worker thread that hosts QuickJS. It is eval'd from this string (CommonJS, plain Node
// JavaScript) so it runs the same from the TypeScript sources, tsc's output and the CLI bundle; it
// requires quickjs-emscripten by the absolute paths engine.ts resolves, and instantiates the WASM
// module engine.ts compiled once per process. One runtime and context per execution, disposed when
// it ends. Messages (typed in engine.ts):
//   in:  run {id, code, catalog, attachments, limits, interrupt}
//        settle {id, callId, ok, json | bytes | message, code, name}
//        stop {id} (after setting `interrupt`)       fatal {id, code, message}
//   out: call {id, callId, tool, json}  read {id, callId, offset, length, encoding}  log {id, entry}
//        idle {id, settled} (waits on the host, after `settled` settles)
//        done {id, ok, json | error, omitted, memoryBytes}
// A CPU-bound script cannot read messages; the host stops it through the shared `interrupt` word
// (0 running, 1 interrupted, 2 timed out), which QuickJS's interrupt handler polls.
export const WORKER_SOURCE = String.raw`"use strict";
const { parentPort, workerData } = require("node:worker_threads");
const quickjs = require(workerData.quickjsPath);
const variant = require(workerData.variantPath).default;
// The memory's maximum is the worker's memory limit (engine.ts); initial is the module's own 16 MiB.
const wasmMemory = new WebAssembly.Memory({ initial: 256, maximum: workerData.maxWasmPages });
const modulePromise = quickjs.newQuickJSWASMModuleFromVariant(quickjs.newVariant(variant, { wasmModule: workerData.wasmModule, wasmMemory }));
const runs = new Map();
const RESERVE_BYTES = 1024 * 1024;
let broken = false;

const post = (message) => parentPort.postMessage(message);
const byteLength = (text) => Buffer.byteLength(text, "utf8");

parentPort.on("message", (message) => {
  if (message.type === "run") {
    modulePromise.then(
      (mod) => start(mod, message),
      (error) => post({ type: "done", id: message.id, ok: false, error: { code: "engine_failed", message: "The CodeMode engine could not start: " + String(error && error.message) }, omitted: 0, memoryBytes: 0, retire: true }),
    );
    return;
  }
  const run = runs.get(message.id);
  if (!run) return;
  guard(run, () => {
    if (message.type === "settle") {
      run.settled++;
      settle(run, message);
    }
    else if (message.type === "fatal") {
      if (!run.fatal) run.fatal = { code: message.code, message: message.message };
      finish(run, { ok: false, error: run.fatal });
    } else finish(run, { ok: false, error: classify(run, undefined, "interrupted") });
  });
});

// Anything thrown by the engine itself (not by the script) ends the run; a native stack overflow
// or a WebAssembly trap leaves the module unusable, so the worker exits after reporting.
function guard(run, action) {
  try {
    action();
  } catch (error) {
    const overflow = error instanceof RangeError;
    if (overflow || error instanceof WebAssembly.RuntimeError) broken = true;
    const failure = overflow
      ? { code: "call_depth", message: "The script exhausted the engine's stack (call depth)." }
      : { code: "engine_failed", message: "The CodeMode engine failed: " + (error && error.message ? error.message : String(error)) };
    report(run, { ok: false, error: failure });
  }
  if (broken) crash(new Error("engine state lost"));
}

function crash(error) {
  for (const run of runs.values()) report(run, { ok: false, error: { code: "engine_failed", message: "The CodeMode engine failed: " + (error && error.message ? error.message : String(error)) } });
  process.exit(1);
}

function start(mod, m) {
  const L = m.limits;
  const flag = new Int32Array(m.interrupt);
  const rt = mod.newRuntime();
  const run = { id: m.id, rt, vm: undefined, flag, L, pending: new Map(), handles: [], main: undefined, helpers: undefined, fatal: undefined, done: false, logs: 0, logBytes: 0, omitted: 0, mod, settled: 0 };
  runs.set(m.id, run);
  guard(run, () => {
    rt.setMemoryLimit(L.memoryBytes);
    rt.setMaxStackSize(L.stackBytes);
    rt.setInterruptHandler(() => run.fatal !== undefined || Atomics.load(flag, 0) !== 0);
    const vm = (run.vm = rt.newContext());
    // Freed when the run fails, so describing an out-of-memory error has room to allocate.
    run.reserve = vm.newArrayBuffer(new ArrayBuffer(RESERVE_BYTES));
    const host = vm.newObject();
    run.handles.push(host);
    vm.newFunction("call", (idHandle, jsonHandle) => hostCall(run, vm.getString(idHandle), vm.typeof(jsonHandle) === "string" ? vm.getString(jsonHandle) : undefined)).consume((fn) => vm.setProp(host, "call", fn));
    vm.newFunction("read", (offsetHandle, lengthHandle, encodingHandle) => hostRead(run, vm.getNumber(offsetHandle), vm.getNumber(lengthHandle), vm.getString(encodingHandle))).consume((fn) => vm.setProp(host, "read", fn));
    vm.newFunction("log", (levelHandle, textHandle) => { hostLog(run, vm.getString(levelHandle), vm.getString(textHandle)); }).consume((fn) => vm.setProp(host, "log", fn));
    vm.newFunction("fail", (codeHandle, messageHandle) => { if (!run.fatal) run.fatal = { code: vm.getString(codeHandle), message: vm.getString(messageHandle) }; }).consume((fn) => vm.setProp(host, "fail", fn));
    const prelude = vm.unwrapResult(vm.evalCode(workerData.prelude, "prelude.js"));
    run.handles.push(prelude);
    const catalog = vm.newString(m.catalog);
    const attachments = vm.newString(m.attachments);
    const limits = vm.unwrapResult(vm.evalCode("(" + JSON.stringify(L) + ")", "limits.js"));
    const helpers = vm.unwrapResult(vm.callFunction(prelude, vm.undefined, host, catalog, limits, attachments));
    catalog.dispose();
    attachments.dispose();
    limits.dispose();
    run.helpers = helpers;
    run.handles.push(helpers);
    const evaluated = vm.evalCode("(async () => {" + m.code + "\n})()", "script.js");
    if (evaluated.error) {
      const thrown = evaluated.error;
      const failure = classify(run, thrown, "syntax_error");
      thrown.dispose();
      finish(run, { ok: false, error: failure });
      return;
    }
    run.main = evaluated.value;
    pump(run);
  });
}

// A host request the script awaits (a tool call, an attachments.read): a pending promise,
// counted against maxPending, answered by the host's reply with its callId.
function hostRequest(run, message) {
  if (run.pending.size >= run.L.maxPending) {
    if (!run.fatal) run.fatal = { code: "pending_promises", message: "More than " + run.L.maxPending + " tool calls were pending at once." };
    return;
  }
  const deferred = run.vm.newPromise();
  const callId = (run.lastCall = (run.lastCall || 0) + 1);
  run.pending.set(callId, deferred);
  post({ ...message, id: run.id, callId });
  return deferred.handle;
}

function hostCall(run, tool, json) {
  return hostRequest(run, { type: "call", tool, json });
}

function hostRead(run, offset, length, encoding) {
  return hostRequest(run, { type: "read", offset, length, encoding: encoding === "base64" ? "base64" : "bytes" });
}

function hostLog(run, level, text) {
  const L = run.L;
  const entry = level === "warn" || level === "error" || level === "info" ? "[" + level + "] " + text : text;
  const size = byteLength(entry);
  if (run.logs >= L.maxLogEntries || run.logBytes >= L.maxLogBytes) { run.omitted++; return; }
  let kept = entry;
  if (run.logBytes + size > L.maxLogBytes) {
    kept = Buffer.from(entry, "utf8").subarray(0, L.maxLogBytes - run.logBytes).toString("utf8").replace(/\uFFFD$/, "") + " \u2026";
  }
  run.logs++;
  run.logBytes += Math.min(size, L.maxLogBytes - run.logBytes);
  post({ type: "log", id: run.id, entry: kept });
}

function settle(run, m) {
  const deferred = run.pending.get(m.callId);
  if (!deferred || run.done) return;
  run.pending.delete(m.callId);
  const vm = run.vm;
  if (m.ok) {
    if (m.bytes !== undefined) vm.newArrayBuffer(m.bytes).consume((value) => deferred.resolve(value));
    else if (m.json === undefined) deferred.resolve();
    else vm.newString(m.json).consume((value) => deferred.resolve(value));
  } else {
    const error = vm.newError({ name: typeof m.name === "string" ? m.name : "Error", message: m.message });
    if (typeof m.code === "string") vm.newString(m.code).consume((code) => vm.setProp(error, "code", code));
    deferred.reject(error);
    error.dispose();
  }
  deferred.dispose();
  pump(run);
}

// Runs queued jobs, then looks at the script's promise: settled, stuck, or still waiting on tools.
function pump(run) {
  if (run.done) return;
  if (Atomics.load(run.flag, 0) !== 0) return finish(run, { ok: false, error: classify(run, undefined, "script_error") });
  const executed = run.rt.executePendingJobs(-1);
  if (executed.error) {
    const failure = classify(run, executed.error, "script_error");
    executed.dispose();
    finish(run, { ok: false, error: failure });
    return;
  }
  if (run.fatal) return finish(run, { ok: false, error: run.fatal });
  const vm = run.vm;
  const state = vm.getPromiseState(run.main);
  if (state.type === "pending") {
    if (run.pending.size === 0 && !run.rt.hasPendingJob()) {
      finish(run, { ok: false, error: { code: "script_error", message: "The script awaits a promise that nothing can settle (no tool call is pending)." } });
    } else if (!run.rt.hasPendingJob()) {
      // Waiting on the host only: its running place may go to another script until a settle resumes it.
      post({ type: "idle", id: run.id, settled: run.settled });
    }
    return;
  }
  if (state.type === "rejected") {
    const failure = classify(run, state.error, "script_error");
    state.error.dispose();
    return finish(run, { ok: false, error: failure });
  }
  const value = state.value;
  const toJson = vm.getProp(run.helpers, "toJson");
  const what = vm.newString("the return value");
  const converted = vm.callFunction(toJson, vm.undefined, value, what);
  toJson.dispose();
  what.dispose();
  value.dispose();
  if (converted.error) {
    const failure = classify(run, converted.error, "invalid_value");
    converted.error.dispose();
    return finish(run, { ok: false, error: failure });
  }
  const json = vm.typeof(converted.value) === "string" ? vm.getString(converted.value) : undefined;
  converted.value.dispose();
  finish(run, { ok: true, json });
}

// An error the script did not catch (or a stop without one), as a code and the text the model
// reads. Describing it may need a little memory the script used up: the limit is raised a bit.
function classify(run, thrown, fallback) {
  if (run.fatal) return run.fatal;
  const reason = Atomics.load(run.flag, 0);
  if (reason === 2) return { code: "timed_out", message: "The execution did not finish within " + run.L.timeoutMs + " ms." };
  if (reason !== 0) return { code: "interrupted", message: "The execution was interrupted." };
  if (thrown === undefined) return { code: fallback, message: "The execution failed." };
  if (run.reserve && run.reserve.alive) run.reserve.dispose();
  run.rt.setMemoryLimit(-1);
  const vm = run.vm;
  const name = vm.getProp(thrown, "name").consume((h) => (vm.typeof(h) === "string" ? vm.getString(h) : ""));
  const message = vm.getProp(thrown, "message").consume((h) => (vm.typeof(h) === "string" ? vm.getString(h) : ""));
  const text = describe(run, thrown);
  // Out of memory with no room left even for the error object, QuickJS throws null.
  const exhausted = (vm.typeof(thrown) !== "object" || vm.sameValue(thrown, vm.null)) && memoryExhausted();
  if (exhausted || (name === "InternalError" && message === "out of memory")) return { code: "memory_limit", message: "The script reached its memory limit (" + run.L.memoryBytes + " bytes)." };
  if (name === "InternalError" && message === "stack overflow") return { code: "call_depth", message: "The script exceeded the call depth limit (stack overflow).\n" + text };
  if (name === "InternalError" && message === "string too long") return { code: "string_too_long", message: "The script built a string longer than the engine allows." };
  if (fallback === "syntax_error" && name !== "SyntaxError") return { code: "script_error", message: text };
  return { code: fallback, message: text };
}

function memoryExhausted() {
  return wasmMemory.buffer.byteLength + 4 * RESERVE_BYTES >= workerData.maxWasmPages * 65536;
}

function describe(run, thrown) {
  const vm = run.vm;
  const fn = vm.getProp(run.helpers, "describe");
  const described = vm.callFunction(fn, vm.undefined, thrown);
  fn.dispose();
  if (described.error) {
    described.error.dispose();
    return "The script failed with an error that cannot be described.";
  }
  return described.value.consume((h) => vm.getString(h));
}

function finish(run, outcome) {
  if (run.done) return;
  run.done = true;
  for (const deferred of run.pending.values()) deferred.dispose();
  run.pending.clear();
  if (run.main) run.main.dispose();
  for (const handle of run.handles) if (handle.alive) handle.dispose();
  if (run.reserve && run.reserve.alive) run.reserve.dispose();
  const memoryBytes = run.mod.getWasmMemory().buffer.byteLength;
  try {
    if (run.vm) run.vm.dispose();
    run.rt.dispose();
  } catch {
    broken = true;
  }
  report(run, outcome, memoryBytes);
}

function report(run, outcome, memoryBytes) {
  if (run.reported) return;
  run.reported = true;
  run.done = true;
  runs.delete(run.id);
  post({ type: "done", id: run.id, ...outcome, omitted: run.omitted, memoryBytes: memoryBytes || 0, retire: broken });
}
`;
