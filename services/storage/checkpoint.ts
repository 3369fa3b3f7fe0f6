// WAL checkpoints off the event loop. SQLite's automatic checkpoint runs inside the COMMIT that
// crosses `wal_autocheckpoint` pages, on the committing thread, with its fsyncs: every ~10 Turns
// it stalled every request for milliseconds. A file database's writer turns it off
// (`PRAGMA wal_autocheckpoint = 0`) and this worker thread, with its own libSQL connection, runs
// the checkpoints instead, from the writer's CHECKPOINT_WORKER_AFTER_COMMITS-th commit on
// (database.ts: a short-lived process never starts it):
//
// - the writer calls `committed()` after each commit: one atomic add and notify on a shared word,
//   no message; the worker wakes at most once per `intervalMs`, reads how many WAL frames are not
//   yet checkpointed from the wal-index header in the -shm file (`mxFrame` − `nBackfill`, see
//   https://www.sqlite.org/walformat.html) and runs `PRAGMA wal_checkpoint(PASSIVE)` past
//   `thresholdPages`: a PASSIVE checkpoint (no lock, no wait: the writer goes on), another for
//   what came meanwhile, then a RESTART with no busy wait, which takes the write lock only if it is
//   free at once and copies the last frames (usually none). The WAL is then fully checkpointed, so
//   the writer's next transaction starts it again from its first frame (a writer that never pauses
//   would outrun PASSIVE alone, and the WAL would never restart), and its `journal_size_limit` cuts
//   a longer -wal file back. The writer waits for that brief lock on timers (`asyncBusy` in
//   engine.ts), never asleep on the event loop;
// - when no commit came for `idleMs`, and at close, it runs `wal_checkpoint(TRUNCATE)` with no
//   busy wait (it gives up at once, as PASSIVE, while a writer or reader is in the way): the -wal
//   file goes back to zero bytes while the host is quiet;
// - a checkpoint that fails (an error, or busy: a reader still on an older snapshot) is counted and
//   tried again at the next wake; nothing in the worker can throw into the host. If the worker
//   itself ends unexpectedly, `onLost` is called (the writer turns SQLite's automatic checkpoint
//   back on): the WAL never grows without bound.
//
// Durability is untouched: a checkpoint syncs the WAL before it copies frames into the database,
// and only copies committed frames; wal-sync.ts still decides when a commit is acknowledged.
// The worker is unref'd (it never keeps the process alive) and ends on `close()`, after its final
// checkpoint. Its source is CommonJS eval'd from a string (as services/codemode's), so it runs the
// same from the TypeScript sources, tsc's output and the CLI bundle; it requires libsql by the
// absolute path resolved here.
//
// node:worker_threads is required when a checkpointer is made (only for a file database, on Node),
// never imported at the top: the Worker host bundles this room and workerd has no such module.
import { createRequire } from "node:module";
import type { Worker } from "node:worker_threads";

/** Indexes of the shared `Int32Array` the host and the worker use. */
const COMMITS = 0;
const STOP = 1;
const CHECKPOINTS = 2;
const FAILURES = 3;
const TRUNCATES = 4;
const NAP = 5;
const BUSY = 6;
const SLOTS = 7;

export interface CheckpointOptions {
  /** Frames not yet checkpointed that start a PASSIVE checkpoint (SQLite's default autocheckpoint: 1000). */
  readonly thresholdPages?: number | undefined;
  /** The shortest time between two looks at the WAL while commits keep coming. */
  readonly intervalMs?: number | undefined;
  /** Quiet time after which the -wal file is truncated. */
  readonly idleMs?: number | undefined;
  /** Called once if the worker ends before `close()` (it failed to start or crashed). */
  readonly onLost?: ((error: unknown) => void) | undefined;
}

/** What the worker did so far (for tests and diagnostics). */
export interface CheckpointStats {
  /** Completed checkpoint cycles (PASSIVE, then RESTART). */
  readonly checkpoints: number;
  readonly truncates: number;
  /** Checkpoints that could not finish (busy: a reader on an older snapshot) — tried again later. */
  readonly busy: number;
  /** Checkpoints that threw — tried again later. */
  readonly failures: number;
}

const WORKER_SOURCE = String.raw`"use strict";
const { workerData } = require("node:worker_threads");
const fs = require("node:fs");
const Database = require(workerData.libsqlPath);
const state = new Int32Array(workerData.state);
const [COMMITS, STOP, CHECKPOINTS, FAILURES, TRUNCATES, NAP, BUSY] = workerData.slots;
const { path, thresholdPages, intervalMs, idleMs, littleEndian } = workerData;
const db = new Database(path, { timeout: 0 });
const statements = {};
// A statement run to its end (all), so it holds no read transaction afterwards.
const pragma = (mode) => (statements[mode] ??= db.prepare("PRAGMA wal_checkpoint(" + mode + ")").raw(true)).all([])[0];
const header = Buffer.alloc(104);
let shm = -1;

// Frames in the WAL not yet copied into the database, from the wal-index header (-shm):
// iVersion 3007000 at 0, mxFrame at 16, nBackfill at 96, in the host's byte order. -1: unknown.
function pendingFrames() {
  try {
    if (shm < 0) shm = fs.openSync(path + "-shm", "r");
    if (fs.readSync(shm, header, 0, header.length, 0) < header.length) return -1;
    const read = (offset) => (littleEndian ? header.readUInt32LE(offset) : header.readUInt32BE(offset));
    if (read(0) !== 3007000) return -1;
    const mxFrame = read(16);
    const backfilled = read(96);
    return backfilled <= mxFrame ? mxFrame - backfilled : mxFrame;
  } catch {
    if (shm >= 0) try { fs.closeSync(shm); } catch {}
    shm = -1;
    return -1;
  }
}

function walBytes() {
  try {
    return fs.statSync(path + "-wal").size;
  } catch {
    return 0;
  }
}

function checkpoint(mode) {
  try {
    const row = pragma(mode);
    if (row !== undefined && row[0] !== 0) Atomics.add(state, BUSY, 1);
    else if (mode !== "PASSIVE") Atomics.add(state, mode === "TRUNCATE" ? TRUNCATES : CHECKPOINTS, 1);
    return row !== undefined && row[0] === 0;
  } catch {
    Atomics.add(state, FAILURES, 1);
    return false;
  }
}

// Copies the WAL into the database while the writer goes on (PASSIVE), once more for what came
// meanwhile, then RESTART: with no busy wait it takes the write lock only if it is free at once,
// copies the last frames (usually none) and leaves the WAL fully checkpointed, so the writer's next
// transaction starts it again from its first frame. Without it a writer that never pauses would
// outrun every PASSIVE and the WAL would never restart. True once the restart is done.
function cycle() {
  if (!checkpoint("PASSIVE")) return false;
  if (pendingFrames() !== 0) checkpoint("PASSIVE");
  return checkpoint("RESTART");
}

let seen = Atomics.load(state, COMMITS);
let quiet = false;
// A RESTART that could not finish is tried again at the next wake, whatever the WAL's length.
let owed = false;
while (Atomics.load(state, STOP) === 0) {
  Atomics.wait(state, COMMITS, seen, idleMs);
  if (Atomics.load(state, STOP) !== 0) break;
  const now = Atomics.load(state, COMMITS);
  if (now === seen) {
    // Quiet: empty the -wal file once (again later if a truncate could not finish).
    if (!quiet && walBytes() > 0) quiet = checkpoint("TRUNCATE");
    else quiet = true;
    continue;
  }
  seen = now;
  quiet = false;
  const pending = pendingFrames();
  if (owed || pending < 0 || pending >= thresholdPages) owed = !cycle();
  Atomics.wait(state, NAP, 0, intervalMs);
}
if (walBytes() > 0) checkpoint("TRUNCATE");
if (shm >= 0) try { fs.closeSync(shm); } catch {}
db.close();
`;

let libsqlPath: string | undefined;

/** Checkpoint workers this process has started (for tests: a short-lived handle starts none). */
let workersStarted = 0;
export const checkpointWorkersStarted = (): number => workersStarted;

export class Checkpointer {
  readonly #state = new Int32Array(new SharedArrayBuffer(SLOTS * Int32Array.BYTES_PER_ELEMENT));
  readonly #worker: Worker;
  readonly #exited: Promise<void>;
  #closing = false;

  constructor(path: string, options: CheckpointOptions = {}) {
    workersStarted += 1;
    const require = createRequire(import.meta.url);
    libsqlPath ??= require.resolve("libsql");
    const { Worker: WorkerThread } = require("node:worker_threads") as typeof import("node:worker_threads");
    this.#worker = new WorkerThread(WORKER_SOURCE, {
      eval: true,
      // CommonJS even under a host started with --input-type=module.
      execArgv: [],
      // Piped, never to the host's stdout (a protocol channel for some hosts), and never read: a
      // worker stdio stream that is read refs the worker's port and keeps the process alive,
      // whatever unref() says. The worker prints nothing (its failures come as 'error' events).
      stdout: true,
      stderr: true,
      workerData: {
        libsqlPath,
        path,
        state: this.#state.buffer,
        slots: [COMMITS, STOP, CHECKPOINTS, FAILURES, TRUNCATES, NAP, BUSY],
        thresholdPages: Math.max(1, Math.floor(options.thresholdPages ?? 1000)),
        intervalMs: Math.max(1, options.intervalMs ?? 20),
        idleMs: Math.max(1, options.idleMs ?? 1000),
        littleEndian: new Uint8Array(new Uint16Array([1]).buffer)[0] === 1,
      },
    });
    this.#worker.unref();
    let lost: unknown;
    this.#worker.on("error", (error) => (lost = error));
    this.#exited = new Promise<void>((resolve) =>
      this.#worker.once("exit", (code) => {
        if (!this.#closing) options.onLost?.(lost ?? new Error(`The checkpoint worker ended (exit code ${code})`));
        resolve();
      }),
    );
  }

  /** Tells the worker a transaction committed (an atomic add; it looks at the WAL at its own pace). */
  committed(): void {
    Atomics.add(this.#state, COMMITS, 1);
    Atomics.notify(this.#state, COMMITS, 1);
  }

  get stats(): CheckpointStats {
    return {
      checkpoints: Atomics.load(this.#state, CHECKPOINTS),
      truncates: Atomics.load(this.#state, TRUNCATES),
      busy: Atomics.load(this.#state, BUSY),
      failures: Atomics.load(this.#state, FAILURES),
    };
  }

  /** Runs a final checkpoint (TRUNCATE) in the worker, then ends it. */
  async close(): Promise<void> {
    this.#closing = true;
    // Unref'd, the worker would not keep the process alive while its final checkpoint runs.
    this.#worker.ref();
    Atomics.store(this.#state, STOP, 1);
    Atomics.notify(this.#state, COMMITS);
    Atomics.notify(this.#state, NAP);
    await this.#exited;
  }
}
