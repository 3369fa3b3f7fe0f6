// A single-consumer async queue with prompt close: `return()` (a disconnected client)
// resolves a pending `next()` at once, which an async generator stuck in an `await`
// cannot do. Producers push; the consumer iterates.
//
// The queue is bounded for a consumer that stops taking (an SSE client that stopped reading: the
// writer waits for the socket to drain and takes nothing meanwhile). A producer that can wait (a
// pump paging through storage) waits in `room()` while `highWater` items are queued; a producer
// that cannot (a live delta pushed as the model streams) is refused once `limit` items are
// queued, and the channel then fails with StreamConsumerBehind: the stream is cut, and the client
// resumes from the last event id it read (every event but a live delta is in the log). Without a
// bound, one stalled reader of a long Session's stream would hold its whole history in memory.
// Live deltas also count by size (`byteLimit`, in characters of delta text): a model may stream
// events of up to 1 MiB each, and `limit` of those would be gigabytes for one stalled reader.

export interface ChannelBounds {
  /** A waiting producer (`room()`) resumes once the consumer has taken the queue below this. */
  readonly highWater: number;
  /** A push that would queue more than this many items fails the channel (StreamConsumerBehind). */
  readonly limit: number;
  /** A push that would queue live deltas of more than this many characters fails the channel too. */
  readonly byteLimit?: number | undefined;
}

/** 500 rows make a storage page; a pump pushes one page (or one Turn's events) between waits. */
export const DEFAULT_CHANNEL_BOUNDS: ChannelBounds = { highWater: 512, limit: 8192, byteLimit: 32 * 1024 * 1024 };

/** Why a stream was cut: its consumer fell `limit` items (or `byteLimit` characters of deltas) behind. */
export class StreamConsumerBehind extends Error {
  readonly _tag = "StreamConsumerBehind";
  constructor(
    readonly limit: number,
    unit: "events" | "characters of deltas" = "events",
  ) {
    super(`the reader fell ${limit} ${unit} behind; the stream was cut (resume from the last event id read)`);
    this.name = "StreamConsumerBehind";
  }
}

export class Channel<T> implements AsyncIterableIterator<T> {
  private readonly items: T[] = [];
  /** Each queued item's weight (its delta characters; 0 for the rest), index for index with `items`. */
  private readonly weights: number[] = [];
  private weight = 0;
  private waiter: { readonly resolve: (result: IteratorResult<T>) => void; readonly reject: (error: unknown) => void } | undefined;
  private closed = false;
  private failure: unknown;
  private readonly closeListeners: (() => void)[] = [];
  private readonly roomWaiters: (() => void)[] = [];

  constructor(private readonly bounds: ChannelBounds = { highWater: Number.POSITIVE_INFINITY, limit: Number.POSITIVE_INFINITY }) {}

  get isClosed(): boolean {
    return this.closed;
  }

  /** How many items wait for the consumer. */
  get queued(): number {
    return this.items.length;
  }

  /** Queues `item` (or hands it to a waiting consumer); `weight`: its live delta's characters. */
  push(item: T, weight = 0): void {
    if (this.closed) return;
    const waiter = this.waiter;
    if (waiter) {
      this.waiter = undefined;
      waiter.resolve({ value: item, done: false });
    } else if (this.reserve(0, weight)) {
      this.items.push(item);
      this.weights.push(weight);
      this.weight += weight;
    }
  }

  /**
   * Whether one more item of `weight` still fits under the limits beside `held` items (of
   * `heldWeight` in all) a producer keeps back for this channel (they count as queued); when it
   * does not, the channel fails with StreamConsumerBehind and this answers false.
   */
  reserve(held: number, weight = 0, heldWeight = 0): boolean {
    const byteLimit = this.bounds.byteLimit ?? Number.POSITIVE_INFINITY;
    if (this.items.length + held < this.bounds.limit && this.weight + heldWeight + weight <= byteLimit) return true;
    this.close(this.items.length + held < this.bounds.limit ? new StreamConsumerBehind(byteLimit, "characters of deltas") : new StreamConsumerBehind(this.bounds.limit));
    return false;
  }

  /** Resolves once fewer than `highWater` items are queued (at once when they are) or the channel closed. */
  room(): Promise<void> {
    if (this.closed || this.items.length < this.bounds.highWater) return Promise.resolve();
    return new Promise((resolve) => this.roomWaiters.push(resolve));
  }

  private taken(): void {
    if (this.roomWaiters.length > 0 && this.items.length < this.bounds.highWater) for (const resolve of this.roomWaiters.splice(0)) resolve();
  }

  /** Ends the stream after the queued items (or with `error` at once). */
  close(error?: unknown): void {
    if (this.closed) return;
    this.closed = true;
    if (error !== undefined) {
      this.failure = error;
      this.clear();
    }
    if (this.waiter && this.items.length === 0) {
      const waiter = this.waiter;
      this.waiter = undefined;
      // A reader already waiting sees the failure too, not a clean end of the stream.
      if (error !== undefined) waiter.reject(error);
      else waiter.resolve({ value: undefined, done: true });
    }
    for (const resolve of this.roomWaiters.splice(0)) resolve();
    for (const listener of this.closeListeners.splice(0)) listener();
  }

  /** Calls `listener` when the channel fails because its consumer fell `limit` items behind. */
  onBehind(listener: (error: Error) => void): void {
    this.onClose(() => {
      if (this.failure instanceof StreamConsumerBehind) listener(this.failure);
    });
  }

  onClose(listener: () => void): void {
    if (this.closed) listener();
    else this.closeListeners.push(listener);
  }

  /** The items already queued, taken without waiting (a consumer that batches writes). */
  drain(): T[] {
    const items = this.items.splice(0);
    this.weights.length = 0;
    this.weight = 0;
    this.taken();
    return items;
  }

  private clear(): void {
    this.items.length = 0;
    this.weights.length = 0;
    this.weight = 0;
  }

  next(): Promise<IteratorResult<T>> {
    const item = this.items.shift();
    if (item !== undefined) {
      this.weight -= this.weights.shift() ?? 0;
      this.taken();
      return Promise.resolve({ value: item, done: false });
    }
    if (this.failure !== undefined) return Promise.reject(this.failure);
    if (this.closed) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => (this.waiter = { resolve, reject }));
  }

  return(): Promise<IteratorResult<T>> {
    this.close();
    this.clear();
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
 * returns their unsubscribers; the pump waits in `channel.room()` before each read of storage; aborting `signal` or the consumer leaving closes the channel, which
 * unsubscribes and wakes the pump so it sees `isClosed`; the pump's end or error ends the stream.
 */
export function pumpedStream<T>(
  pump: (channel: Channel<T>, wake: Wake) => Promise<void>,
  subscribe: (wake: Wake, channel: Channel<T>) => (() => void)[],
  signal?: AbortSignal,
  bounds: ChannelBounds = DEFAULT_CHANNEL_BOUNDS,
): AsyncIterable<T> {
  const channel = new Channel<T>(bounds);
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
