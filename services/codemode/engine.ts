// The engine: QuickJS (quickjs-emscripten, release-sync variant) in worker threads. The WASM
// module is read and compiled once per process, lazily, and handed to each worker, which
// instantiates it and creates one runtime and context per execution. Why workers and not this
// thread: QuickJS's frames also use the native stack, and 10,000 calls need more than the main
// thread has (it overflows near 2,000, leaving the module unusable); a CPU-bound script would
// block the host's event loop; and a crashed module takes only its worker with it. An execution
// has a worker to itself; one idle worker is kept warm (unref'd), the others end with their run.
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import type { ChannelHandlers, EngineChannel, FromWorker } from "./protocol.js";
import { MAX_IDLE_WORKER_MEMORY_BYTES, MAX_IDLE_WORKERS, WORKER_STACK_MB } from "./limits.js";
import { PRELUDE_SOURCE } from "./prelude.js";
import { WORKER_SOURCE } from "./worker-source.js";

export { INTERRUPT, type ChannelHandlers, type EngineChannel, type FromWorker, type ToWorker, type WorkerLimits } from "./protocol.js";

const require = createRequire(import.meta.url);
const WASM_PAGE_BYTES = 65_536;
/** The module's own 2 GiB address space. */
const WASM_MAX_PAGES = 32_768;
/**
 * What the module needs besides the QuickJS heap: its data, its 5 MiB stack and its initial
 * 16 MiB. The heap of a run can grow to about `memoryBytes` on top: this cap is the memory limit
 * that holds, because QuickJS's own (`setMemoryLimit`) counts 8 bytes per allocation in this
 * build (no `malloc_usable_size`), so large strings and arrays pass it.
 */
const WASM_BASE_BYTES = 16 * 1024 * 1024;
let compiled: Promise<WebAssembly.Module> | undefined;

/** The compiled QuickJS WebAssembly module, read and compiled on first use. */
function wasmModule(): Promise<WebAssembly.Module> {
  if (!compiled) {
    const loading = readFile(require.resolve("@jitl/quickjs-wasmfile-release-sync/wasm")).then((bytes) => WebAssembly.compile(bytes));
    loading.catch(() => {
      if (compiled === loading) compiled = undefined;
    });
    compiled = loading;
  }
  return compiled;
}

class SandboxWorker {
  readonly worker: Worker;
  handlers: ChannelHandlers | undefined;
  /** Size of the worker's WebAssembly memory after its last run. */
  wasmBytes = 0;
  dead = false;

  /** `memoryBytes`: the limit of the runs it serves; its WebAssembly memory is capped to fit. */
  constructor(
    module: WebAssembly.Module,
    readonly memoryBytes: number,
  ) {
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      // The worker source is CommonJS: a host started with --input-type=module (a `node -e` script
      // importing ze-harness/codemode) must not make it an ES module.
      execArgv: process.execArgv.filter((argument) => !argument.startsWith("--input-type")),
      workerData: {
        quickjsPath: require.resolve("quickjs-emscripten"),
        variantPath: require.resolve("@jitl/quickjs-wasmfile-release-sync"),
        wasmModule: module,
        prelude: PRELUDE_SOURCE,
        maxWasmPages: Math.min(WASM_MAX_PAGES, Math.ceil((memoryBytes + WASM_BASE_BYTES) / WASM_PAGE_BYTES)),
      },
      resourceLimits: { stackSizeMb: WORKER_STACK_MB },
      // Emscripten prints to stderr when a module aborts: keep that off the host's terminal.
      stdout: true,
      stderr: true,
    });
    this.worker.stdout.resume();
    this.worker.stderr.resume();
    this.worker.on("message", (message: FromWorker) => {
      if (message.type === "done") {
        this.wasmBytes = message.memoryBytes;
        // The module is unusable after a trap: this worker is exiting and takes no new run.
        if (message.retire) this.dead = true;
      }
      this.handlers?.onMessage(message);
    });
    this.worker.on("error", () => this.died());
    this.worker.on("exit", () => this.died());
  }

  private died(): void {
    if (this.dead) return;
    this.dead = true;
    const index = idle.indexOf(this);
    if (index !== -1) idle.splice(index, 1);
    const handlers = this.handlers;
    this.handlers = undefined;
    handlers?.onExit({ code: "engine_failed", message: "The CodeMode engine stopped unexpectedly." });
  }
}

const idle: SandboxWorker[] = [];

/** A worker for one execution with `memoryBytes` of memory (a warm one when there is one). Rejects when the engine cannot start. */
export async function openChannel(handlers: ChannelHandlers, memoryBytes: number): Promise<EngineChannel> {
  const warm = idle.findIndex((candidate) => candidate.memoryBytes === memoryBytes);
  const sandbox = warm === -1 ? new SandboxWorker(await wasmModule(), memoryBytes) : idle.splice(warm, 1)[0]!;
  sandbox.worker.ref();
  sandbox.handlers = handlers;
  const current = sandbox;
  let released = false;
  return {
    send(message) {
      if (!current.dead) current.worker.postMessage(message);
    },
    terminate() {
      current.dead = true;
      current.handlers = undefined;
      void current.worker.terminate();
    },
    release() {
      if (released) return;
      released = true;
      current.handlers = undefined;
      if (current.dead) return;
      if (idle.length >= MAX_IDLE_WORKERS || current.wasmBytes > MAX_IDLE_WORKER_MEMORY_BYTES) {
        current.dead = true;
        void current.worker.terminate();
        return;
      }
      current.worker.unref();
      idle.push(current);
    },
  };
}

/** Ends the warm workers (tests; a host that wants its threads back). */
export async function shutdownCodeModeEngine(): Promise<void> {
  const workers = idle.splice(0);
  await Promise.all(workers.map((sandbox) => ((sandbox.dead = true), sandbox.worker.terminate())));
}
