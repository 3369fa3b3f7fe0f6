// A streaming model request without an SDK: POST a JSON body and yield each server-sent event's
// JSON data, with the wire rules and the failures the SDK path (through wire.ts) had — the
// headers we choose and nothing ambient, redirects refused, the 1 MiB bounds on
// an error body and on a single event, 128 MiB on a whole streamed response, an HTTP error or an in-stream `error` classified by
// `Attempt.statusFailure` from what the SDK's APIError would carry. The SSE framing is
// eventsource-parser's; as in the openai SDK, `[DONE]` ends the data, events after it are read and
// ignored so the connection is reused, and `thread.*` events are skipped.
//
// The `anthropic` dialect reads the stream as @anthropic-ai/sdk does instead: `ping` events and
// events without a name are skipped, as is an event without data; an `error` event is the
// provider's in-stream failure; there is no `[DONE]`. It sends the `anthropic-version` the SDK
// sends.
//
// The Chat Completions, Responses and Anthropic Messages adapters use it: on a warm host the
// SDKs' per-request machinery (a client per attempt, its fetch wrapper, web-stream line decoding)
// cost more CPU than a one-step Turn's own handling (issue 21 §2).
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { isProviderFailure } from "./failure.js";
import type { Attempt, WireTarget } from "./wire.js";
import { USER_AGENT, WIRE_LIMIT_BYTES, WIRE_RESPONSE_LIMIT_BYTES, authenticate, sseEventCounter } from "./wire.js";
import { wireTransport, type WireAnswer } from "./transport.js";

/** A request body already serialized as JSON (sent as is; see chat.ts `chatMessagesJson`). */
export class JsonText {
  constructor(readonly text: string) {}
}

/** Whose SDK's reading of the event stream to follow. */
export type SseDialect = "openai" | "anthropic";

/** The `anthropic-version` @anthropic-ai/sdk (1.14.0) sends with every request. */
export const ANTHROPIC_VERSION = "2026-10-21";

/**
 * Yields the parsed `data` of each event until the stream ends; throws what the SDK path would.
 * `body` is serialized with JSON.stringify, unless it is a `JsonText`.
 */
export async function* postSse(attempt: Attempt, target: WireTarget, body: unknown, dialect: SseDialect = "openai"): AsyncGenerator<unknown> {
  const headers: Record<string, string> = { accept: "application/json", "content-type": "application/json", "user-agent": USER_AGENT };
  if (dialect === "anthropic") headers["anthropic-version"] = ANTHROPIC_VERSION;
  // Names compare ignoring case (as in a Headers object): a static header replaces ours.
  for (const name in target.headers) headers[name.toLowerCase()] = target.headers[name]!;
  authenticate(headers, target.authentication, target.credential);

  let answer: WireAnswer;
  try {
    answer = await wireTransport()({ url: target.endpoint, headers, body: body instanceof JsonText ? body.text : JSON.stringify(body), signal: attempt.signal });
  } catch (error) {
    // An abort is the attempt's (deadline, recorded failure) or the caller's: classify() knows which.
    if (attempt.signal.aborted) throw error;
    throw attempt.unreachable(error);
  }
  let finished = false;
  try {
    if (answer.redirected || (answer.status >= 300 && answer.status < 400)) {
      throw attempt.record(attempt.fail("transport", `could not reach the provider: it answered with a redirect (HTTP ${answer.status}), which is not followed`));
    }
    if (answer.status < 200 || answer.status >= 300) {
      const text = await boundedText(answer.body, WIRE_LIMIT_BYTES);
      if (text === "too_large") {
        throw attempt.record(attempt.fail("too_large", `the error body of HTTP ${answer.status} exceeds ${WIRE_LIMIT_BYTES} bytes`, { status: answer.status }));
      }
      finished = true;
      // The SDK's APIError carries the body's `error` member (the body parsed as JSON, if it is).
      throw attempt.statusFailure(answer.status, (parseJson(text) as { error?: unknown } | undefined)?.error, answer.headers);
    }

    const within = sseEventCounter(WIRE_LIMIT_BYTES);
    const decoder = new TextDecoder();
    // The events of each chunk, decoded by eventsource-parser (WHATWG rules: CR, LF and CRLF line
    // ends, comments, a field without a value), handed out after the chunk was fed.
    const events: EventSourceMessage[] = [];
    const parser = createParser({ onEvent: (message) => void events.push(message) });
    let done = false;
    let received = 0;
    // What follows `[DONE]` is read only so the connection can be reused: past 1 MiB of it the
    // answer (already whole) ends and the connection is dropped instead.
    let trailing = 0;
    let cutAfterDone = false;
    try {
      for await (const chunk of answer.body) {
        if (done) {
          trailing += chunk.length;
          if (trailing > WIRE_LIMIT_BYTES) {
            cutAfterDone = true;
            break;
          }
        } else {
          received += chunk.length;
          if (received > WIRE_RESPONSE_LIMIT_BYTES) throw attempt.record(attempt.fail("too_large", `the streamed response exceeds ${WIRE_RESPONSE_LIMIT_BYTES} bytes`));
        }
        if (!within(chunk)) throw attempt.record(attempt.fail("too_large", `a single streamed event exceeds ${WIRE_LIMIT_BYTES} bytes`));
        parser.feed(decoder.decode(chunk, { stream: true }));
        for (const message of events.splice(0)) {
          if (dialect === "anthropic") {
            if (message.event === undefined || message.event === "ping") continue;
            if (message.event === "error") throw attempt.statusFailure(undefined, parseJson(message.data) ?? message.data, answer.headers);
            if (message.data === "") continue;
            yield JSON.parse(message.data);
            continue;
          }
          // Events after `[DONE]` are read and ignored, so the connection is reused.
          if (done) continue;
          if (message.data.startsWith("[DONE]")) {
            done = true;
            continue;
          }
          if (message.event !== undefined && message.event.startsWith("thread.")) continue;
          const parsed = JSON.parse(message.data) as { error?: unknown } | null;
          if (parsed && parsed.error) throw attempt.statusFailure(undefined, parsed.error, answer.headers);
          yield parsed;
        }
      }
    } catch (error) {
      // The SDK ends the stream quietly when its request is aborted; the attempt then fails as
      // its recorded failure, or as a stream that ended early.
      if (attempt.signal.aborted && !isProviderFailure(error)) return;
      throw error;
    }
    finished = !cutAfterDone;
  } finally {
    if (!finished) answer.cancel();
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The body as text, or "too_large" past `limit` bytes (the rest is not read). */
async function boundedText(body: AsyncIterable<Uint8Array>, limit: number): Promise<string | "too_large"> {
  const decoder = new TextDecoder();
  let size = 0;
  let text = "";
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > limit) return "too_large";
    text += decoder.decode(chunk, { stream: true });
  }
  return text + decoder.decode();
}
