// The host-wide caps on CodeMode executions. The reference sets no execution timeout, so a script
// can loop forever: cancellation (the interrupt word QuickJS polls, then terminating the worker)
// ends one, and these caps keep any number of them from taking the machine. Two counts, one per
// process (every harness in it shares them):
//
// - running: scripts executing JavaScript right now. A script holds a place from its start until it
//   waits on the host (every tool call or attachments read it awaits is pending and nothing else
//   is queued in the engine); it needs one again before a settled call can resume it. So a
//   CPU-bound loop holds its place until it is cancelled, while a script awaiting a tool (an
//   approval, a question, a slow server) holds none. The cap leaves a core for the host.
// - live: executions that exist at all (each is a worker with up to its memory limit), waiting or
//   not. This bounds memory and threads.
//
// Beyond a cap an execution waits in order (FIFO) and never fails for it; its signal (the Turn's
// cancellation) takes it out of the queue.
import { availableParallelism } from "node:os";

/**
 * Scripts executing JavaScript at once, host-wide: one core fewer than the machine has (at least
 * one), so busy scripts always leave the host's event loop a core (six infinite loops took both
 * cores of a 2-core machine before).
 */
export const MAX_RUNNING_SCRIPTS = Math.max(1, availableParallelism() - 1);
/** Executions alive at once, host-wide, running or waiting on tools (each one is a worker thread, ~11 MiB while it waits, and its memory). */
export const MAX_LIVE_EXECUTIONS = 32;

/** A place under a cap; `release()` is idempotent. */
export interface Slot {
  release(): void;
}

/** A counting semaphore with a FIFO queue whose waiters can be cancelled. */
export class Slots {
  #held = 0;
  readonly #queue: { readonly grant: () => void }[] = [];

  constructor(readonly capacity: number) {}

  /** Places held and waiters queued (tests and diagnostics). */
  get state(): { readonly held: number; readonly queued: number } {
    return { held: this.#held, queued: this.#queue.length };
  }

  /** A place now when one is free (and no one waits), else undefined. */
  tryAcquire(): Slot | undefined {
    if (this.#held >= this.capacity || this.#queue.length > 0) return undefined;
    this.#held += 1;
    return this.#slot();
  }

  /** A place, waiting in order for one; rejects with the signal's reason when it aborts first (the place in the queue is given up). */
  acquire(signal?: AbortSignal): Promise<Slot> {
    const now = this.tryAcquire();
    if (now) return Promise.resolve(now);
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<Slot>((resolve, reject) => {
      const waiter = {
        grant: () => {
          signal?.removeEventListener("abort", onAbort);
          this.#held += 1;
          resolve(this.#slot());
        },
      };
      const onAbort = (): void => {
        const index = this.#queue.indexOf(waiter);
        if (index !== -1) this.#queue.splice(index, 1);
        reject(signal!.reason);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#queue.push(waiter);
    });
  }

  #slot(): Slot {
    let held = true;
    return {
      release: () => {
        if (!held) return;
        held = false;
        this.#held -= 1;
        const next = this.#queue.shift();
        next?.grant();
      },
    };
  }
}

/** The process's caps (see the top of this file). */
export const runningScripts = new Slots(MAX_RUNNING_SCRIPTS);
export const liveExecutions = new Slots(MAX_LIVE_EXECUTIONS);
