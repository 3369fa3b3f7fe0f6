import type { DatabaseLocation } from "./location.js";

/** A FIFO async lock. */
export class Queue {
  #tail: Promise<void> = Promise.resolve();

  run<T>(fn: () => Promise<T>): Promise<T> {
    const previous = this.#tail;
    let release!: () => void;
    this.#tail = new Promise<void>((resolve) => (release = resolve));
    return previous.then(fn).finally(release);
  }

  idle(): Promise<void> {
    return this.run(async () => undefined);
  }
}

const fileQueues = new Map<string, Queue>();

/**
 * The write queue for a location. Local libSQL runs statements synchronously, so a connection
 * waiting for the write lock sleeps on the event loop the lock holder needs to finish: writers
 * in one process must take turns in JS first. Every handle (and every migration) on the same
 * file in this process shares one queue; `:memory:` and server databases get one per handle.
 */
export function writeQueueFor(location: DatabaseLocation): Queue {
  if (location.kind !== "file") return new Queue();
  let queue = fileQueues.get(location.path);
  if (queue === undefined) {
    queue = new Queue();
    fileQueues.set(location.path, queue);
  }
  return queue;
}
