// Typed failures from every adapter: HTTP statuses, deadlines, aborts, cut connections, and
// the 1 MiB wire bounds — and that a failure's message and JSON never carry the credential.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WIRE_LIMIT_BYTES } from "../../services/providers/index.js";
import { startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { KEY, PROTOCOLS, collect, request, testModel, textOf } from "./helpers.js";
import { WIRE_TRANSPORTS } from "./transports.js";
import { fetchTransport, useWireTransport } from "../../services/providers/transport.js";

// Every scenario over both wire transports: the global fetch (what the Worker host sends with) and
// node:http (what the Node host installs, services/providers/node-transport.ts).
describe.each(WIRE_TRANSPORTS)("over %s", (_name, transport) => {
  beforeAll(() => useWireTransport(transport));
  afterAll(() => useWireTransport(fetchTransport));

  let server: TestModel;
  beforeAll(async () => {
    server = await startTestModel();
  });
  afterAll(async () => {
    await server.close();
  });

  describe.each(PROTOCOLS)("%s failures", (protocol) => {
    it.each([
      { status: 401, kind: "auth", retryable: false },
      { status: 403, kind: "auth", retryable: false },
      { status: 400, kind: "bad_request", retryable: false },
      { status: 413, kind: "too_large", retryable: false },
      { status: 429, kind: "rate_limit", retryable: true },
      { status: 500, kind: "server", retryable: true },
      { status: 503, kind: "server", retryable: true },
    ])("HTTP $status → $kind (retryable: $retryable)", async ({ status, kind, retryable }) => {
      server.enqueue({ error: { status } });
      const { events, failure, thrown } = await collect(request(testModel(server, protocol)));
      expect(thrown).toBeUndefined();
      expect(events).toEqual([]);
      expect(failure).toMatchObject({ _tag: "ProviderFailure", kind, status, retryable, beforeOutput: true });
      expect(failure!.message).toContain("test/m");
      expect(failure!.requestId).toMatch(/^req_test_/);
    });

    it("carries the provider's error code and retry-after on a 429", async () => {
      server.enqueue({ error: { status: 429, headers: { "retry-after": "2" } } });
      const { failure } = await collect(request(testModel(server, protocol)));
      expect(failure?.kind).toBe("rate_limit");
      expect(failure?.retryAfterMs).toBe(2000);
      expect(failure?.providerCode).toBe(protocol === "messages" ? "rate_limit_error" : "rate_limit_exceeded");
    });

    it("never puts the credential in a failure, even when the provider echoes it", async () => {
      const echo =
        protocol === "messages"
          ? { type: "error", error: { type: "authentication_error", message: `invalid x-api-key: ${KEY}` } }
          : { error: { message: `Incorrect API key provided: ${KEY}`, type: "invalid_request_error", code: KEY } };
      server.enqueue({ error: { status: 401, body: echo } });
      const { failure } = await collect(request(testModel(server, protocol)));
      expect(failure?.kind).toBe("auth");
      expect(failure!.message).not.toContain(KEY);
      expect(JSON.stringify(failure)).not.toContain(KEY);
      expect(String(failure)).not.toContain(KEY);
      expect(failure!.stack ?? "").not.toContain(KEY);
    });

    it("keeps the safe provider code but not the upstream message", async () => {
      const body =
        protocol === "messages"
          ? { type: "error", error: { type: "invalid_request_error", message: "prompt is too long: 300000 tokens > 200000 maximum" } }
          : { error: { message: "This model's maximum context length is 128000 tokens.", type: "invalid_request_error", code: "context_length_exceeded" } };
      server.enqueue({ error: { status: 400, body } });
      const { failure } = await collect(request(testModel(server, protocol)));
      expect(failure?.kind).toBe("bad_request");
      expect(failure?.providerCode).toBe(protocol === "messages" ? "invalid_request_error" : "context_length_exceeded");
      expect(failure?.message).toBe("test/m: the provider rejected the request (HTTP 400)");
      expect(JSON.stringify(failure)).not.toMatch(/too long|maximum context length/);
    });

    it("fails a hung request at the deadline as timeout", async () => {
      server.enqueue({ hang: true });
      const started = Date.now();
      const { failure } = await collect(request(testModel(server, protocol), { timeoutMs: 300 }));
      const elapsed = Date.now() - started;
      expect(failure).toMatchObject({ kind: "timeout", retryable: true, beforeOutput: true });
      expect(elapsed).toBeGreaterThanOrEqual(250);
      expect(elapsed).toBeLessThan(5000);
    });

    it("bounds the whole attempt: streaming progress does not extend the deadline", async () => {
      // Eight words 200 ms apart (1.4 s in all): an idle timeout of 700 ms would never fire.
      const events = Array.from({ length: 8 }, (_, index) => [
        { type: "text" as const, text: `w${index} ` },
        { type: "delay" as const, ms: 200 },
      ]).flat();
      server.enqueue({ events });
      const { events: received, failure } = await collect(request(testModel(server, protocol), { timeoutMs: 700 }));
      expect(failure).toMatchObject({ kind: "timeout", beforeOutput: false });
      expect(textOf(received, "text.delta")).toContain("w0");
      expect(textOf(received, "text.delta")).not.toContain("w7");
    });

    it("applies the provider's configured timeout", async () => {
      server.enqueue({ hang: true });
      const { failure } = await collect(request(testModel(server, protocol, { options: { timeout: 250 } })));
      expect(failure?.kind).toBe("timeout");
    });

    it("fails as aborted when the caller cancels", async () => {
      server.enqueue({ hang: true });
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 150);
      const { failure } = await collect(request(testModel(server, protocol), { signal: controller.signal }));
      expect(failure).toMatchObject({ kind: "aborted", retryable: false, beforeOutput: true });
    });

    it("fails at once when the signal is already aborted", async () => {
      const before = server.requests.length;
      const controller = new AbortController();
      controller.abort();
      const { failure } = await collect(request(testModel(server, protocol), { signal: controller.signal }));
      expect(failure?.kind).toBe("aborted");
      expect(server.requests.length).toBe(before);
    });

    it("fails a cut connection mid-stream as transport after output", async () => {
      server.enqueue({ events: [{ type: "text", text: "partial answer" }, { type: "drop" }] });
      const { events, failure } = await collect(request(testModel(server, protocol)));
      expect(textOf(events, "text.delta")).toBe("partial answer");
      expect(failure).toMatchObject({ kind: "transport", retryable: true, beforeOutput: false });
    });

    it("fails a connection cut before any headers as transport before output", async () => {
      server.enqueue({ events: [{ type: "drop" }] });
      const { events, failure } = await collect(request(testModel(server, protocol)));
      expect(events).toEqual([]);
      expect(failure).toMatchObject({ kind: "transport", retryable: true, beforeOutput: true });
    });

    it("fails a single streamed event over 1 MiB as too_large", async () => {
      server.enqueue({ events: [{ type: "text", text: "x".repeat(WIRE_LIMIT_BYTES + 1024) }] });
      const { events, failure } = await collect(request(testModel(server, protocol)));
      expect(textOf(events, "text.delta")).toBe("");
      expect(failure).toMatchObject({ kind: "too_large", retryable: false });
    });

    it("accepts a long answer made of many events", async () => {
      // 700 KB in ~1 KB deltas. (Responses repeats the whole text in its `done` events, so there
      // one answer's text is bounded by 1 MiB too — far above any model's output limit.)
      const word = `${"y".repeat(1000)} `;
      server.enqueue({ events: [{ type: "text", text: word.repeat(700) }] });
      const { events, failure } = await collect(request(testModel(server, protocol)));
      expect(failure).toBeUndefined();
      expect(events.filter((event) => event.type === "text.delta").length).toBe(700);
      expect(textOf(events, "text.delta").length).toBe(word.length * 700);
    });

    it("fails an error body over 1 MiB as too_large", async () => {
      server.enqueue({ error: { status: 500, body: "e".repeat(WIRE_LIMIT_BYTES + 10) } });
      const { failure } = await collect(request(testModel(server, protocol)));
      expect(failure).toMatchObject({ kind: "too_large", status: 500, retryable: false, beforeOutput: true });
    });

    it("aborts the request when the consumer stops reading", async () => {
      server.enqueue({ events: [{ type: "text", text: "first" }, { type: "delay", ms: 5000 }, { type: "text", text: "never" }] });
      const started = Date.now();
      for await (const event of (await import("../../services/providers/index.js")).streamModel(request(testModel(server, protocol)))) {
        if (event.type === "text.delta") break;
      }
      expect(Date.now() - started).toBeLessThan(3000);
    });
  });

  describe("errors reported inside a stream", () => {
    it("classifies an Anthropic overloaded_error event as a retryable server failure", async () => {
      // An SSE error event after message_start, as Anthropic sends when overloaded mid-stream.
      const { createServer } = await import("node:http");
      const raw = createServer((_req, res) => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(`event: message_start\ndata: ${JSON.stringify({ type: "message_start", message: { id: "m", type: "message", role: "assistant", model: "x", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } } })}\n\n`);
        res.end(`event: error\ndata: ${JSON.stringify({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } })}\n\n`);
      });
      await new Promise<void>((resolve) => raw.listen(0, "127.0.0.1", resolve));
      const port = (raw.address() as { port: number }).port;
      try {
        const fake = { openaiBaseURL: `http://127.0.0.1:${port}/v1` } as TestModel;
        const { failure } = await collect(request(testModel(fake, "messages")));
        expect(failure).toMatchObject({ kind: "server", retryable: true, providerCode: "overloaded_error" });
      } finally {
        raw.closeAllConnections();
        await new Promise((resolve) => raw.close(resolve));
      }
    });

    it("classifies a Responses response.failed event by its code", async () => {
      const { createServer } = await import("node:http");
      const raw = createServer((_req, res) => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.end(
          `event: response.failed\ndata: ${JSON.stringify({ type: "response.failed", sequence_number: 0, response: { id: "r", object: "response", status: "failed", output: [], error: { code: "rate_limit_exceeded", message: "slow down" } } })}\n\n`,
        );
      });
      await new Promise<void>((resolve) => raw.listen(0, "127.0.0.1", resolve));
      const port = (raw.address() as { port: number }).port;
      try {
        const fake = { openaiBaseURL: `http://127.0.0.1:${port}/v1` } as TestModel;
        const { failure } = await collect(request(testModel(fake, "responses")));
        expect(failure).toMatchObject({ kind: "rate_limit", retryable: true, providerCode: "rate_limit_exceeded" });
        expect(failure?.message).toBe("test/m: the provider is rate limiting requests (reported in the stream)");
        expect(JSON.stringify(failure)).not.toContain("slow down");
      } finally {
        raw.closeAllConnections();
        await new Promise((resolve) => raw.close(resolve));
      }
    });

    it("fails a stream that ends without finishing as transport", async () => {
      const { createServer } = await import("node:http");
      const raw = createServer((_req, res) => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.end(`data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 0, model: "x", choices: [{ index: 0, delta: { content: "half" }, finish_reason: null }] })}\n\n`);
      });
      await new Promise<void>((resolve) => raw.listen(0, "127.0.0.1", resolve));
      const port = (raw.address() as { port: number }).port;
      try {
        const fake = { openaiBaseURL: `http://127.0.0.1:${port}/v1` } as TestModel;
        const { events, failure } = await collect(request(testModel(fake, "chat")));
        expect(textOf(events, "text.delta")).toBe("half");
        expect(failure).toMatchObject({ kind: "transport", beforeOutput: false });
      } finally {
        raw.closeAllConnections();
        await new Promise((resolve) => raw.close(resolve));
      }
    });
  });
});
