// Server-sent event encoding. Every message names its type twice (the `event:`
// field and `type` in its JSON data) and carries its resume cursor as `id:`, so a
// plain EventSource resumes with Last-Event-ID. CR/LF in `id`/`event` would let a
// value forge extra fields, so they are refused.
import type { SseMessage } from "../../generated/server/routes.js";

const encoder = new TextEncoder();

/**
 * Largest single SSE event the server sends. A stream opens with a snapshot of the whole Turn or
 * Session state, and a Turn may hold 10,000 tool calls (≈ 4 MB of parts) or a long answer: a
 * bound near that size cut such a stream at its first event, and every reconnect again. (The
 * reference's 1 MiB bound is the provider adapters', on what a model sends, not on this stream.)
 */
export const MAX_SSE_EVENT_BYTES = 64 * 1024 * 1024;

function assertField(name: string, value: string): void {
  if (/[\r\n]/.test(value)) throw new Error(`SSE ${name} must not contain CR or LF`);
}

/** One message as the text of its event (`event:`, `id:`, `data:` and the blank line); throws past MAX_SSE_EVENT_BYTES. */
export function encodeSseText(message: SseMessage<unknown>): string {
  assertField("event", message.event);
  let text = `event: ${message.event}\n`;
  if (message.id !== undefined) {
    assertField("id", message.id);
    text += `id: ${message.id}\n`;
  }
  // JSON.stringify never emits raw newlines, so one data line suffices.
  text += `data: ${JSON.stringify(message.data)}\n\n`;
  // A UTF-16 unit is at most 3 UTF-8 bytes: only a text that long can be over the bound.
  if (text.length * 3 > MAX_SSE_EVENT_BYTES && encoder.encode(text).byteLength > MAX_SSE_EVENT_BYTES) {
    throw new Error(`SSE event ${message.event} exceeds ${MAX_SSE_EVENT_BYTES} bytes`);
  }
  return text;
}

export function encodeSseMessage(message: SseMessage<unknown>): Uint8Array {
  return encoder.encode(encodeSseText(message));
}

/** A message source that can also hand over, without waiting, the messages it already holds. */
export interface Drainable {
  drain?(): SseMessage<unknown>[];
  /**
   * Calls `listener` if the source gives up on a consumer that stopped taking messages (the
   * events channel's StreamConsumerBehind): the Node listener then drops the connection at once,
   * since a socket that is not read would never take what is left of the stream.
   */
  onBehind?(listener: (error: Error) => void): void;
}

/** A stream cut because its reader fell too far behind (core/events/channel.ts): expected, not a server fault. */
export const isConsumerBehind = (error: unknown): boolean => (error as { _tag?: unknown } | null)?._tag === "StreamConsumerBehind";

export type SseIterator = AsyncIterator<SseMessage<unknown>> & Drainable;

/**
 * Turns an async iterable of messages into a byte stream; cancelling the response ends the
 * iterator. Messages already waiting behind the one awaited go out in the same chunk (one socket
 * write for a commit's several events instead of one each). A stream that fails after its 200
 * went out can only be cut short: `onError` sees why (the edge logs it as it logs a 500).
 */
export function sseBody(messages: AsyncIterable<SseMessage<unknown>>, onError: (error: unknown) => void = () => undefined): ReadableStream<Uint8Array> {
  const iterator = messages[Symbol.asyncIterator]() as SseIterator;
  // A client that goes away cancels while a pull still awaits the next message; what that await
  // then yields (done, a message, a rejection) belongs to nobody and must not touch the controller.
  let cancelled = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const next = await iterator.next();
        if (cancelled) return;
        if (next.done) {
          controller.close();
          return;
        }
        let text = encodeSseText(next.value);
        for (const waiting of iterator.drain?.() ?? []) text += encodeSseText(waiting);
        controller.enqueue(encoder.encode(text));
      } catch (error) {
        if (cancelled) return;
        onError(error);
        controller.error(error);
      }
    },
    async cancel() {
      cancelled = true;
      await iterator.return?.();
    },
  });
}

/**
 * The Node listener's side path (services/host/listen.ts). A listener that writes event streams
 * to its socket itself marks the Requests it hands the handler with WRITES_SSE; the handler then
 * answers an event stream with a body-less Response carrying its SseSource under SSE_SOURCE, and
 * the listener writes that (no web stream between the messages and the socket). Any other caller
 * — the Worker, the embedded client, a Request rebuilt from the marked one — gets the plain
 * `sseBody` stream.
 */
export const WRITES_SSE: unique symbol = Symbol("ze-harness.writes-sse");
const SSE_SOURCE: unique symbol = Symbol("ze-harness.sse-source");

/** An event stream for the listener to write: its status and headers, its messages, and who hears of a failure after the 200. */
export interface SseSource {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly messages: AsyncIterable<SseMessage<unknown>>;
  readonly onError: (error: unknown) => void;
}

/** Whether the request came from a listener that writes event streams itself. */
export const writesSse = (request: Request): boolean => (request as Request & { [WRITES_SSE]?: boolean })[WRITES_SSE] === true;

/** The Response of an event stream the listener writes (status and headers as the source's, no body). */
export function sseSourceResponse(source: SseSource): Response {
  const response = new Response(null, { status: source.status, headers: source.headers });
  Object.defineProperty(response, SSE_SOURCE, { value: source });
  return response;
}

/** The SseSource of a Response made by `sseSourceResponse`, if it is one. */
export const sseSourceOf = (response: Response): SseSource | undefined => (response as Response & { [SSE_SOURCE]?: SseSource })[SSE_SOURCE];
