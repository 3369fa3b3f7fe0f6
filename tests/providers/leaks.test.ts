// Provider-sent text never reaches a ProviderFailure: HTTP error bodies and errors reported
// inside a stream, over every protocol, through the real SDKs and the scripted test model. The
// message is our wording + label + status; only short safe tokens survive as providerCode and
// requestId.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProviderFailure } from "../../services/providers/index.js";
import { startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { KEY, PROTOCOLS, collect, request, testModel } from "./helpers.js";
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

  /** Letters and digits only, lower-cased: finds the key however it was re-spelled. */
  const folded = (text: string): string => text.toLowerCase().replace(/[^a-z0-9]/g, "");

  /** Every rendering of a failure a client, log or database could see. */
  const renderings = (failure: ProviderFailure): string[] => [failure.message, JSON.stringify(failure), String(failure), failure.stack ?? ""];

  function expectNoLeak(failure: ProviderFailure | undefined, ...needles: string[]): void {
    expect(failure).toBeDefined();
    for (const text of renderings(failure!)) {
      expect(folded(text)).not.toContain(folded(KEY));
      for (const needle of needles) expect(text).not.toContain(needle);
    }
  }

  const ARBITRARY = `Upstream diagnostics: tenant=acme-corp user=alice@example.com prompt="print the launch codes" ${"lorem ipsum dolor sit amet ".repeat(400)}`;

  const ECHOES: readonly { readonly name: string; readonly text: string; readonly needle: string }[] = [
    { name: "plainly", text: `Incorrect API key provided: ${KEY}.`, needle: "Incorrect API key" },
    { name: "upper-cased", text: `Incorrect API key provided: ${KEY.toUpperCase()}.`, needle: KEY.toUpperCase() },
    { name: "spaced out", text: `Key: ${KEY.split("").join(" ")} is invalid`, needle: KEY.split("").join(" ") },
    { name: "in a long body of arbitrary text", text: ARBITRARY, needle: "launch codes" },
  ];

  function errorBody(protocol: string, message: string, code: string | null): unknown {
    return protocol === "messages"
      ? { type: "error", error: { type: code ?? "invalid_request_error", message } }
      : { error: { message, type: "invalid_request_error", param: null, code } };
  }

  describe.each(PROTOCOLS)("%s: provider error bodies never reach a failure", (protocol) => {
    it.each(ECHOES)("a 400 body echoing the key $name", async ({ text, needle }) => {
      server.enqueue({ error: { status: 400, body: errorBody(protocol, text, null) } });
      const { failure } = await collect(request(testModel(server, protocol)));
      expectNoLeak(failure, needle, "lorem ipsum", "alice@example.com");
      expect(failure).toMatchObject({ _tag: "ProviderFailure", kind: "bad_request", status: 400, retryable: false, beforeOutput: true, providerCode: "invalid_request_error" });
      expect(failure!.message).toBe("test/m: the provider rejected the request (HTTP 400)");
      expect(failure!.requestId).toMatch(/^req_test_\d+$/);
    });

    it("drops a provider code that carries the key in another case, or is not a short token", async () => {
      for (const code of [KEY.toUpperCase(), `invalid key ${KEY}`, "x".repeat(65), "bad code with spaces"]) {
        server.enqueue({ error: { status: 401, body: errorBody(protocol, "no", code) } });
        const { failure } = await collect(request(testModel(server, protocol)));
        expectNoLeak(failure, code);
        expect(failure).toMatchObject({ kind: "auth", status: 401 });
        expect(failure!.providerCode).toBeUndefined();
      }
    });

    it("drops a request ID that is not a safe token", async () => {
      server.enqueue({ error: { status: 500, headers: { "x-request-id": `id ${KEY.toUpperCase()}`, "request-id": `id ${KEY.toUpperCase()}` } } });
      const { failure } = await collect(request(testModel(server, protocol)));
      expectNoLeak(failure);
      expect(failure).toMatchObject({ kind: "server", status: 500 });
      expect(failure!.requestId).toBeUndefined();
    });

    it("keeps nothing a body says when it is plain text", async () => {
      server.enqueue({ error: { status: 503, body: `${ARBITRARY} ${KEY.toUpperCase()}` } });
      const { failure } = await collect(request(testModel(server, protocol)));
      expectNoLeak(failure, "launch codes", "lorem ipsum");
      expect(failure).toMatchObject({ kind: "server", status: 503, retryable: true });
      expect(failure!.message).toBe("test/m: the provider failed (HTTP 503)");
    });
  });

  describe.each(PROTOCOLS)("%s: errors sent inside a stream never reach a failure", (protocol) => {
    const code = protocol === "messages" ? "overloaded_error" : "server_error";

    it.each(ECHOES)("an in-stream error echoing the key $name", async ({ text, needle }) => {
      server.enqueue({ events: [{ type: "text", text: "partial " }, { type: "error", code, message: text }] });
      const { events, failure } = await collect(request(testModel(server, protocol)));
      expect(events.some((event) => event.type === "text.delta")).toBe(true);
      expectNoLeak(failure, needle, "lorem ipsum");
      expect(failure).toMatchObject({ kind: "server", retryable: true, beforeOutput: false, providerCode: code });
      expect(failure!.status).toBeUndefined();
      expect(failure!.message).toBe("test/m: the provider failed (reported in the stream)");
    });

    it("drops an in-stream error code that carries the key", async () => {
      server.enqueue({ events: [{ type: "error", code: `rate_limit:${KEY.toUpperCase()}`, message: "slow down" }] });
      const { failure } = await collect(request(testModel(server, protocol)));
      expectNoLeak(failure, "slow down");
      expect(failure!.providerCode).toBeUndefined();
      expect(failure!.message).toMatch(/^test\/m: the provider (failed|is rate limiting requests) \(reported in the stream\)$/);
    });
  });
});
