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
// Items also count by size (`byteLimit`, in characters of their strings: `stringChars`): a model
// may stream deltas of up to 1 MiB each, and a Turn's snapshot (every content flush commits one)
// holds all its parts, so `limit` of those would be gigabytes for one stalled reader. A waiting
// producer also waits while half of `byteLimit` is queued; live deltas past it cut the stream.

export interface ChannelBounds {
  /** A waiting producer (`room()`) resumes once the consumer has taken the queue below this (and below half of `byteLimit`). */
  readonly highWater: number;
  /** A push that would queue more than this many items fails the channel (StreamConsumerBehind). */
  readonly limit: number;
  /** A live push that would leave more than this many characters (item weights) behind the reader's next item fails the channel. */
  readonly byteLimit?: number | undefined;
}

/** 500 rows make a storage page; a pump pushes one page (or one Turn's events) between waits. */
export const DEFAULT_CHANNEL_BOUNDS: ChannelBounds = { highWater: 512, limit: 8192, byteLimit: 32 * 1024 * 1024 };

/** Why a stream was cut: its consumer fell `limit` items (or `byteLimit` characters of events) behind. */
export class StreamConsumerBehind extends Error {
  readonly _tag = "StreamConsumerBehind";
  constructor(
    readonly limit: number,
    unit: "events" | "characters of events" = "events",
  ) {
    super(`the reader fell ${limit} ${unit} behind; the stream was cut (resume from the last event id read)`);
    this.name = "StreamConsumerBehind";
  }
}

export class Channel<T> implements AsyncIterableIterator<T> {
  private readonly items: T[] = [];
  /** Each queued item's weight, index for index with `items`. */
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

  /**
   * Queues a durable item (or hands it to a waiting consumer), `weight` its characters
   * (`stringChars`). Its producer can wait (`room()`), so only the item count can cut the stream.
   */
  push(item: T, weight = 0): void {
    if (this.closed) return;
    if (this.waiter === undefined && this.items.length >= this.bounds.limit) {
      this.close(new StreamConsumerBehind(this.bounds.limit));
      return;
    }
    this.enqueue(item, weight);
  }

  /** Queues a live delta, which cannot wait: past `byteLimit` characters behind, the stream is cut. */
  pushLive(item: T, weight: number): void {
    if (!this.closed && this.reserve(0, weight)) this.enqueue(item, weight);
  }

  private enqueue(item: T, weight: number): void {
    const waiter = this.waiter;
    if (waiter) {
      this.waiter = undefined;
      waiter.resolve({ value: item, done: false });
      return;
    }
    this.items.push(item);
    this.weights.push(weight);
    this.weight += weight;
  }

  /**
   * Whether one more live item of `weight` still fits under the limits beside `held` items (of
   * `heldWeight` in all) a producer keeps back for this channel (they count as queued); when it
   * does not, the channel fails with StreamConsumerBehind and this answers false.
   */
  reserve(held: number, weight = 0, heldWeight = 0): boolean {
    if (this.waiter !== undefined && held === 0) return true;
    const byteLimit = this.bounds.byteLimit ?? Number.POSITIVE_INFINITY;
    // The oldest queued item is the one the reader takes next and does not count: a reader is
    // never cut for a single large snapshot (a whole Turn), only for a backlog behind it.
    const queued = this.items.length + held;
    const backlog = this.weight - (this.weights[0] ?? 0) + heldWeight + weight;
    if (queued < this.bounds.limit && (queued === 0 || backlog <= byteLimit)) return true;
    this.close(queued < this.bounds.limit ? new StreamConsumerBehind(byteLimit, "characters of events") : new StreamConsumerBehind(this.bounds.limit));
    return false;
  }

  /** Whether the queue is below both high-water marks: `highWater` items and half of `byteLimit` characters. */
  private roomy(): boolean {
    return this.items.length < this.bounds.highWater && this.weight <= (this.bounds.byteLimit ?? Number.POSITIVE_INFINITY) / 2;
  }

  /** Resolves once the queue is below its high-water marks (at once when it is) or the channel closed. */
  room(): Promise<void> {
    if (this.closed || this.roomy()) return Promise.resolve();
    return new Promise((resolve) => this.roomWaiters.push(resolve));
  }

  private taken(): void {
    if (this.roomWaiters.length > 0 && this.roomy()) for (const resolve of this.roomWaiters.splice(0)) resolve();
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
    this.clear();
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
