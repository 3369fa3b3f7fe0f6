// A single-consumer async queue with prompt close: `return()` (a disconnected client)
// resolves a pending `next()` at once, which an async generator stuck in an `await`
// cannot do. Producers push; the consumer iterates.

export class Channel<T> implements AsyncIterableIterator<T> {
  private readonly items: T[] = [];
  private waiter: ((result: IteratorResult<T>) => void) | undefined;
  private closed = false;
  private failure: unknown;
  private readonly closeListeners: (() => void)[] = [];

  get isClosed(): boolean {
    return this.closed;
  }

  push(item: T): void {
    if (this.closed) return;
    const waiter = this.waiter;
    if (waiter) {
      this.waiter = undefined;
      waiter({ value: item, done: false });
    } else {
      this.items.push(item);
    }
  }

  /** Ends the stream after the queued items (or with `error` at once). */
  close(error?: unknown): void {
    if (this.closed) return;
    this.closed = true;
    if (error !== undefined) {
      this.failure = error;
      this.items.length = 0;
    }
    if (this.waiter && this.items.length === 0) {
      const waiter = this.waiter;
      this.waiter = undefined;
      waiter({ value: undefined, done: true });
    }
    for (const listener of this.closeListeners.splice(0)) listener();
  }

  onClose(listener: () => void): void {
    if (this.closed) listener();
    else this.closeListeners.push(listener);
  }

  /** The items already queued, taken without waiting (a consumer that batches writes). */
  drain(): T[] {
    return this.items.splice(0);
  }

  next(): Promise<IteratorResult<T>> {
    const item = this.items.shift();
    if (item !== undefined) return Promise.resolve({ value: item, done: false });
    if (this.failure !== undefined) return Promise.reject(this.failure);
    if (this.closed) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => (this.waiter = resolve));
  }

  return(): Promise<IteratorResult<T>> {
    this.close();
    this.items.length = 0;
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    return this;
  }
}

/** A wake-up signal that coalesces: `wait` resolves on the next `set`, a timeout, or abort. */
export class Wake {
  private pending = false;
  private resolver: (() => void) | undefined;

  set(): void {
    this.pending = true;
    const resolver = this.resolver;
    this.resolver = undefined;
    resolver?.();
  }

  /** Resolves `true` when woken, `false` on timeout. */
  wait(timeoutMs: number): Promise<boolean> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.resolver = undefined;
        resolve(false);
      }, timeoutMs);
      this.resolver = () => {
        clearTimeout(timer);
        this.pending = false;
        resolve(true);
      };
    });
  }
}

/**
 * A stream fed by `pump`: `subscribe` wires the wake-ups (and closes) the pump reacts to and
 * returns their unsubscribers; aborting `signal` or the consumer leaving closes the channel, which
 * unsubscribes and wakes the pump so it sees `isClosed`; the pump's end or error ends the stream.
 */
export function pumpedStream<T>(
  pump: (channel: Channel<T>, wake: Wake) => Promise<void>,
  subscribe: (wake: Wake, channel: Channel<T>) => (() => void)[],
  signal?: AbortSignal,
): AsyncIterable<T> {
  const channel = new Channel<T>();
  const wake = new Wake();
  const unsubscribers = subscribe(wake, channel);
  const abort = (): void => channel.close();
  signal?.addEventListener("abort", abort, { once: true });
  channel.onClose(() => {
    for (const unsubscribe of unsubscribers) unsubscribe();
    signal?.removeEventListener("abort", abort);
    wake.set();
  });
  pump(channel, wake).then(
    () => channel.close(),
    (error: unknown) => channel.close(error),
  );
  return channel;
}
