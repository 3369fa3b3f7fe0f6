// postSse's SSE decoding and bounds where the byte boundaries matter: a wire transport that
// answers with chosen chunks (the transport seam the hosts fill with fetch or node:http), so a
// CRLF split between chunks, an event spread over many chunks and the bytes after `[DONE]` are
// exact rather than left to TCP. The full request path over real HTTP is in adapters.test.ts,
// failures.test.ts (each over both wire transports, tests/providers/transports.ts).
import { afterEach, describe, expect, it } from "vitest";
import { ProviderFailure, fetchTransport, useWireTransport, type WireAnswer } from "../../services/providers/index.js";
import { postSse } from "../../services/providers/sse-post.js";
import { Attempt, WIRE_LIMIT_BYTES, WIRE_RESPONSE_LIMIT_BYTES } from "../../services/providers/wire.js";

const encoder = new TextEncoder();

/** Installs a transport answering `status` with `chunks`; records the request and whether the body was cancelled. */
function answerWith(chunks: readonly string[], status = 200, headers: Record<string, string> = {}) {
  const seen: { url?: string; headers?: Readonly<Record<string, string>>; body?: string; cancelled: boolean; read: number } = { cancelled: false, read: 0 };
  useWireTransport(async (send) => {
    seen.url = send.url;
    seen.headers = send.headers;
    seen.body = send.body;
    const answer: WireAnswer = {
      status,
      redirected: false,
      headers: new Headers(headers),
      body: (async function* () {
        for (const chunk of chunks) {
          seen.read += 1;
          yield encoder.encode(chunk);
        }
      })(),
      cancel: () => {
        seen.cancelled = true;
      },
    };
    return answer;
  });
  return seen;
}

const attempt = () => new Attempt({ model: { ref: "test/m", headers: {} }, signal: new AbortController().signal } as never);
const target = { endpoint: "http://127.0.0.1:9/v1/chat/completions", headers: { "X-Static": "yes" }, authentication: { kind: "bearer" as const } };

async function collect(chunks: readonly string[], status?: number, headers?: Record<string, string>) {
  const seen = answerWith(chunks, status, headers);
  const events: unknown[] = [];
  let failure: unknown;
  try {
    for await (const event of postSse(attempt(), target, { model: "up-m", stream: true })) events.push(event);
  } catch (error) {
    failure = error;
  }
  return { events, failure, seen };
}

afterEach(() => {
  useWireTransport(fetchTransport);
});

describe("postSse", () => {
  it("sends the JSON body with the chosen headers only", async () => {
    const { seen } = await collect(["data: [DONE]\n\n"]);
    expect(seen.url).toBe(target.endpoint);
    expect(JSON.parse(seen.body!)).toEqual({ model: "up-m", stream: true });
    // Lower-case names: the static `X-Static` as a Headers object would have named it.
    expect(seen.headers).toEqual({ accept: "application/json", "content-type": "application/json", "user-agent": "ze-harness", "x-static": "yes" });
  });

  it("decodes events across chunk boundaries: CRLF split between chunks, CR alone, multi-line data, comments, named events", async () => {
    const { events, failure } = await collect([
      ": a comment\r",
      "\ndata: {\"n\":1}\r",
      "\n\r\n",
      "event: message\ndata: {\"n\":\ndata: 2}\n\n",
      "data:{\"n\":3}\r\rdata: {\"n\"",
      ":4}\n",
      "\n",
      // A CRLF between two data lines of one event, split: the LF must not end the event.
      "data: {\"n\":\r",
      "\ndata: 5}\r\n\r\n",
    ]);
    expect(failure).toBeUndefined();
    expect(events).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }, { n: 5 }]);
  });

  it("stops yielding at [DONE] but reads the body to its end (the connection stays reusable)", async () => {
    const { events, failure, seen } = await collect(["data: {\"n\":1}\n\n", "data: [DONE]\n\n", "data: {\"n\":2}\n\n", ": trailing\n\n"]);
    expect(failure).toBeUndefined();
    expect(events).toEqual([{ n: 1 }]);
    expect(seen.read).toBe(4);
    expect(seen.cancelled).toBe(false);
  });

  it("fails an error object sent inside the stream, classified from its code, without its message", async () => {
    const { events, failure } = await collect(["data: {\"n\":1}\n\n", "data: {\"error\":{\"code\":\"rate_limit_exceeded\",\"message\":\"provider words\"}}\n\n"]);
    expect(events).toEqual([{ n: 1 }]);
    expect(failure).toBeInstanceOf(ProviderFailure);
    expect(failure).toMatchObject({ kind: "rate_limit", providerCode: "rate_limit_exceeded" });
    expect((failure as ProviderFailure).message).toBe("test/m: the provider is rate limiting requests (reported in the stream)");
  });

  it("fails malformed event data", async () => {
    const { failure } = await collect(["data: {not json\n\n"]);
    expect(failure).toBeInstanceOf(SyntaxError);
  });

  it("fails a single event over 1 MiB, spread over many chunks, as too_large and stops reading", async () => {
    const piece = "x".repeat(64 * 1024);
    const chunks = ["data: \"", ...Array.from({ length: 17 }, () => piece), "\"\n\n", "data: {\"never\":true}\n\n"];
    const { events, failure, seen } = await collect(chunks);
    expect(events).toEqual([]);
    expect(failure).toMatchObject({ kind: "too_large", message: `test/m: a single streamed event exceeds ${WIRE_LIMIT_BYTES} bytes` });
    expect(seen.cancelled).toBe(true);
    expect(seen.read).toBeLessThan(chunks.length);
  });

  it("fails a whole response over 128 MiB of events, each within its own bound, as too_large and stops reading", async () => {
    const event = `data: "${"y".repeat(WIRE_LIMIT_BYTES - 64)}"\n\n`;
    const count = Math.ceil(WIRE_RESPONSE_LIMIT_BYTES / event.length) + 8;
    const seen = answerWith(Array.from({ length: count }, () => event));
    let yielded = 0;
    let failure: unknown;
    try {
      for await (const _ of postSse(attempt(), target, { model: "up-m", stream: true })) yielded += 1;
    } catch (error) {
      failure = error;
    }
    expect(failure).toMatchObject({ kind: "too_large", message: `test/m: the streamed response exceeds ${WIRE_RESPONSE_LIMIT_BYTES} bytes` });
    // Every event under the bound was yielded; the one that passed it and the rest were not read.
    expect(yielded).toBe(Math.floor(WIRE_RESPONSE_LIMIT_BYTES / event.length));
    expect(seen.read).toBe(yielded + 1);
    expect(seen.cancelled).toBe(true);
  });

  it("ends a whole answer whose server keeps sending after [DONE]: past 1 MiB of it the body is cancelled, not failed", async () => {
    const junk = ": keepalive\n\n".repeat(20_000);
    const chunks = ["data: {\"n\":1}\n\n", "data: [DONE]\n\n", ...Array.from({ length: 400 }, () => junk)];
    const { events, failure, seen } = await collect(chunks);
    expect(failure).toBeUndefined();
    expect(events).toEqual([{ n: 1 }]);
    expect(seen.cancelled).toBe(true);
    // 1 MiB of trailing bytes is about 4 chunks of 260 KB: reading stopped there, not at the 128 MiB bound.
    expect(seen.read).toBeLessThan(10);
  });

  it("classifies an HTTP error from its JSON body's error member and its headers", async () => {
    const { failure } = await collect(['{"error":{"type":"invalid_request_error","code":"context_length_exceeded","message":"provider words"}}'], 400, { "x-request-id": "req_123" });
    expect(failure).toMatchObject({ kind: "bad_request", status: 400, providerCode: "context_length_exceeded", requestId: "req_123" });
    expect((failure as ProviderFailure).message).toBe("test/m: the provider rejected the request (HTTP 400)");
  });

  it("refuses a redirect without reading it", async () => {
    const { failure, seen } = await collect(["moved"], 302);
    expect(failure).toMatchObject({ kind: "transport", message: "test/m: could not reach the provider: it answered with a redirect (HTTP 302), which is not followed" });
    expect(seen.read).toBe(0);
    expect(seen.cancelled).toBe(true);
  });
});

describe("postSse, anthropic dialect", () => {
  async function collectAnthropic(chunks: readonly string[], status?: number, headers?: Record<string, string>) {
    const seen = answerWith(chunks, status, headers);
    const events: unknown[] = [];
    let failure: unknown;
    try {
      for await (const event of postSse(attempt(), target, { model: "up-m", stream: true }, "anthropic")) events.push(event);
    } catch (error) {
      failure = error;
    }
    return { events, failure, seen };
  }

  it("sends anthropic-version and yields the named events' data, skipping pings, unnamed events and empty data", async () => {
    const { events, failure, seen } = await collectAnthropic([
      'event: message_start\ndata: {"type":"message_start"}\n\n',
      'event: ping\ndata: {"type":"ping"}\n\n',
      'data: {"unnamed":true}\n\n',
      "event: content_block_stop\ndata:\n\n",
      'event: message_stop\ndata: {"type":"message_stop"}\n\n',
      // No [DONE] in this dialect: a data line that says it is not special.
      "event: message_delta\ndata: [DONE]\n\n",
    ]);
    expect(seen.headers?.["anthropic-version"]).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(events.slice(0, 2)).toEqual([{ type: "message_start" }, { type: "message_stop" }]);
    expect(failure).toBeInstanceOf(SyntaxError);
  });

  it("classifies an error event as the provider's in-stream failure, by its error type", async () => {
    const { events, failure } = await collectAnthropic([
      'event: message_start\ndata: {"type":"message_start"}\n\n',
      'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"provider words"}}\n\n',
      'event: message_stop\ndata: {"type":"message_stop"}\n\n',
    ], 200, { "request-id": "req_9" });
    expect(events).toEqual([{ type: "message_start" }]);
    expect(failure).toMatchObject({ providerCode: "overloaded_error", requestId: "req_9" });
    expect((failure as ProviderFailure).message).not.toContain("provider words");
  });
});
