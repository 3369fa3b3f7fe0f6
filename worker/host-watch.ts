// WorkerHarnessHost's watch helpers: the events the three SSE routes send, read straight from the
// host's EventStreams (no HTTP, no SSE parsing). The reference returns Effect Streams; this stack
// has no Effect, so each helper returns an `AsyncIterable` of the same event objects (each SSE
// message's `data`). Leaving a `for await` loop (break, return, throw) stops watching at once: the
// iterator's `return()` closes the underlying channel and its subscriptions.
import type { ServerStreamEvent, SessionStreamEvent, TurnStreamEvent } from "../generated/client/types.gen.js";
import type { SseMessage } from "../generated/server/routes.js";
import { Failure } from "../services/contract/failure.js";
import type { EventStreams } from "../services/core/events/streams.js";

export interface WatchTurnOptions {
  /** Resume after this revision; absent: only events after the Turn's current revision (its snapshot first). */
  readonly afterRevision?: number;
  readonly signal?: AbortSignal;
}

export interface WatchSessionOptions {
  /** Resume after this activity cursor; absent: the Session's whole stamped history (cursor 0). */
  readonly afterActivityCursor?: number;
  readonly signal?: AbortSignal;
}

export interface WatchServerOptions {
  /** Replay every stamped row after this cursor; absent: live, starting with `server.cursor`. */
  readonly afterServerCursor?: number;
  readonly signal?: AbortSignal;
}

/** Each message's event; `return()` reaches the source at once (a pending `next()` ends too). */
function eventsOf<E>(messages: AsyncIterable<SseMessage<E>>): AsyncIterableIterator<E> {
  const source = messages[Symbol.asyncIterator]();
  const iterator: AsyncIterableIterator<E> = {
    async next() {
      const step = await source.next();
      return step.done ? { done: true, value: undefined } : { done: false, value: step.value.data };
    },
    async return() {
      await source.return?.();
      return { done: true, value: undefined };
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  return iterator;
}

const cursor = (value: number | undefined, name: string): number | undefined => {
  if (value === undefined) return undefined;
  if (!Number.isSafeInteger(value) || value < 0) throw new TypeError(`${name} must be a non-negative safe integer`);
  return value;
};

/** The host's watch helpers over `streams`, for the server `server()` names (unbound: every watch is a 404). */
export function hostWatches(streams: () => Promise<EventStreams>, server: () => string | undefined) {
  const bound = (): string => {
    const name = server();
    if (name === undefined) throw new Failure({ _tag: "NotFoundError", message: "This host is not bound to a server yet" });
    return name;
  };
  return {
    async watchTurn(sessionId: string, turnId: string, options: WatchTurnOptions = {}): Promise<AsyncIterableIterator<TurnStreamEvent>> {
      const after = cursor(options.afterRevision, "afterRevision");
      return eventsOf(await (await streams()).watchTurn(bound(), sessionId, turnId, after, options.signal));
    },
    async watchSession(sessionId: string, options: WatchSessionOptions = {}): Promise<AsyncIterableIterator<SessionStreamEvent>> {
      const after = cursor(options.afterActivityCursor, "afterActivityCursor") ?? 0;
      return eventsOf(await (await streams()).watchSession(bound(), sessionId, after, options.signal));
    },
    async watchServer(options: WatchServerOptions = {}): Promise<AsyncIterableIterator<ServerStreamEvent>> {
      const after = cursor(options.afterServerCursor, "afterServerCursor");
      return eventsOf(await (await streams()).watchServer(bound(), after, options.signal));
    },
  };
}
