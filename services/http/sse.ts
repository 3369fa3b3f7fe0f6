// Server-sent event encoding. Every message names its type twice (the `event:`
// field and `type` in its JSON data) and carries its resume cursor as `id:`, so a
// plain EventSource resumes with Last-Event-ID. CR/LF in `id`/`event` would let a
// value forge extra fields, so they are refused.
import type { SseMessage } from "../../generated/server/routes.js";
import { concatBytes } from "../contract/body.js";

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

export function encodeSseMessage(message: SseMessage<unknown>): Uint8Array {
  assertField("event", message.event);
  let text = `event: ${message.event}\n`;
  if (message.id !== undefined) {
    assertField("id", message.id);
    text += `id: ${message.id}\n`;
  }
  // JSON.stringify never emits raw newlines, so one data line suffices.
  text += `data: ${JSON.stringify(message.data)}\n\n`;
  const bytes = encoder.encode(text);
  if (bytes.byteLength > MAX_SSE_EVENT_BYTES) throw new Error(`SSE event ${message.event} exceeds ${MAX_SSE_EVENT_BYTES} bytes`);
  return bytes;
}

/** A message source that can also hand over, without waiting, the messages it already holds. */
interface Drainable {
  drain?(): SseMessage<unknown>[];
}

/**
 * Turns an async iterable of messages into a byte stream; cancelling the response ends the
 * iterator. Messages already waiting behind the one awaited go out in the same chunk (one socket
 * write for a commit's several events instead of one each). A stream that fails after its 200
 * went out can only be cut short: `onError` sees why (the edge logs it as it logs a 500).
 */
export function sseBody(messages: AsyncIterable<SseMessage<unknown>>, onError: (error: unknown) => void = () => undefined): ReadableStream<Uint8Array> {
  const iterator = messages[Symbol.asyncIterator]() as AsyncIterator<SseMessage<unknown>> & Drainable;
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
        const waiting = iterator.drain?.() ?? [];
        if (waiting.length === 0) {
          controller.enqueue(encodeSseMessage(next.value));
          return;
        }
        controller.enqueue(concatBytes([next.value, ...waiting].map(encodeSseMessage)));
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
