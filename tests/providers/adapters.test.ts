// The three native adapters through the real SDKs against the scripted test model: streamed
// text, reasoning, refusals, tool calls, usage mapping, the history round trip in each
// protocol's wire format, and the three authentication forms.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { assembleAssistantMessage, type ModelMessage, type ModelTool } from "../../services/providers/index.js";
import { credentialHash, startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { KEY, PROTOCOLS, collect, request, testModel, textOf, userText } from "./helpers.js";
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

  const READ: ModelTool = {
    name: "read",
    description: "Read a file",
    inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  };

  const PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

  describe.each(PROTOCOLS)("%s adapter", (protocol) => {
    let count = 0;
    beforeEach(() => {
      count = server.requests.length;
    });
    const lastRequest = () => {
      expect(server.requests.length).toBe(count + 1);
      return server.requests.at(-1)!;
    };

    it("streams text, reports usage in OpenAI terms, and finishes with stop", async () => {
      server.enqueue({
        events: [{ type: "text", text: "Hello brave new world" }],
        usage: { promptTokens: 100, completionTokens: 20, cachedPromptTokens: 30, reasoningTokens: 5 },
      });
      const { events, failure } = await collect(request(testModel(server, protocol), { system: "Be brief." }));
      expect(failure).toBeUndefined();
      expect(textOf(events, "text.delta")).toBe("Hello brave new world");
      expect(events.filter((event) => event.type === "text.delta").length).toBeGreaterThan(1);
      expect(events.find((event) => event.type === "usage")).toEqual({
        type: "usage",
        promptTokens: 100,
        completionTokens: 20,
        cachedPromptTokens: 30,
        reasoningTokens: 5,
      });
      expect(events.at(-1)).toEqual({ type: "finish", reason: "stop" });

      const sent = lastRequest();
      expect(sent.protocol).toBe(protocol);
      expect(sent.body.model).toBe("up-m");
      expect(sent.body.stream).toBe(true);
      if (protocol === "chat") {
        expect(sent.path).toBe("/v1/chat/completions");
        expect(sent.body.messages).toEqual([
          { role: "system", content: "Be brief." },
          { role: "user", content: "hi" },
        ]);
        expect(sent.body.stream_options).toEqual({ include_usage: true });
      } else if (protocol === "responses") {
        expect(sent.path).toBe("/v1/responses");
        expect(sent.body.instructions).toBe("Be brief.");
        expect(sent.body.store).toBe(false);
        expect(sent.body.input).toEqual([{ role: "user", content: [{ type: "input_text", text: "hi" }] }]);
      } else {
        expect(sent.path).toBe("/v1/messages");
        expect(sent.body.system).toBe("Be brief.");
        expect(sent.body.max_tokens).toBe(8000);
        expect(sent.body.messages).toEqual([{ role: "user", content: [{ type: "text", text: "hi" }] }]);
      }
    });

    it("streams reasoning and accumulated tool calls, then finishes with tool_calls", async () => {
      server.enqueue({
        events: [
          { type: "reasoning", text: "The user wants two files." },
          { type: "text", text: "Reading both." },
          { type: "tool_call", id: "call_a", name: "read", arguments: { path: "a.ts", lines: [1, 20] } },
          { type: "tool_call", id: "call_b", name: "read", arguments: '{"path":"b.ts"}' },
        ],
      });
      const { events, failure } = await collect(request(testModel(server, protocol), { tools: [READ], reasoningEffort: "medium" }));
      expect(failure).toBeUndefined();
      expect(textOf(events, "reasoning.delta")).toBe("The user wants two files.");
      const calls = events.filter((event) => event.type === "tool_call");
      expect(calls).toEqual([
        { type: "tool_call", id: "call_a", name: "read", arguments: '{"path":"a.ts","lines":[1,20]}' },
        { type: "tool_call", id: "call_b", name: "read", arguments: '{"path":"b.ts"}' },
      ]);
      expect(events.at(-1)).toEqual({ type: "finish", reason: "tool_calls" });

      const message = assembleAssistantMessage(events);
      expect(message.content.map((part) => part.type)).toEqual(["reasoning", "text", "tool_call", "tool_call"]);
      const reasoning = message.content[0]!;
      expect(reasoning.type === "reasoning" && reasoning.continuation?.protocol).toBe(protocol);
      expect(reasoning.type === "reasoning" && reasoning.continuation?.providerId).toBe("test");

      const sent = lastRequest();
      if (protocol === "chat") {
        expect(sent.body.tools).toEqual([{ type: "function", function: { name: "read", description: "Read a file", parameters: READ.inputSchema } }]);
        expect(sent.body.reasoning_effort).toBe("medium");
      } else if (protocol === "responses") {
        expect(sent.body.tools).toEqual([{ type: "function", name: "read", description: "Read a file", parameters: READ.inputSchema, strict: false }]);
        expect(sent.body.reasoning).toEqual({ summary: "auto", effort: "medium" });
        expect(sent.body.include).toEqual(["reasoning.encrypted_content"]);
      } else {
        expect(sent.body.tools).toEqual([{ name: "read", description: "Read a file", input_schema: READ.inputSchema }]);
        expect(sent.body.thinking).toEqual({ type: "enabled", budget_tokens: 7999 });
      }
    });

    it("sends no tools to a model whose capabilities say tools: false, and no reasoning settings to a non-reasoning model", async () => {
      server.enqueue({ events: [{ type: "text", text: "ok" }] });
      const { failure } = await collect(request(testModel(server, protocol, { tools: false, reasoning: false }), { tools: [READ], reasoningEffort: "high" }));
      expect(failure).toBeUndefined();
      const body = lastRequest().body;
      expect(body.tools).toBeUndefined();
      expect(body.reasoning_effort).toBeUndefined();
      expect(body.reasoning).toBeUndefined();
      expect(body.thinking).toBeUndefined();
    });

    it("reports a refusal", async () => {
      server.enqueue({ events: [{ type: "refusal", text: "I can't help with that." }] });
      const { events, failure } = await collect(request(testModel(server, protocol)));
      expect(failure).toBeUndefined();
      // Anthropic has no refusal block: the text arrives as text with stop_reason "refusal".
      const text = protocol === "messages" ? textOf(events, "text.delta") : textOf(events, "refusal.delta");
      expect(text).toBe("I can't help with that.");
      expect(events.at(-1)).toEqual({ type: "finish", reason: "refusal" });
    });

    it("maps a truncated answer to finish length", async () => {
      server.enqueue({ events: [{ type: "text", text: "cut" }], stop: "length" });
      const { events, failure } = await collect(request(testModel(server, protocol)));
      expect(failure).toBeUndefined();
      expect(events.at(-1)).toEqual({ type: "finish", reason: "length" });
    });

    it("round-trips history: an assistant tool call and its results go back in the protocol's format", async () => {
      const model = testModel(server, protocol);
      server.enqueue({
        events: [
          { type: "reasoning", text: "Need the file." },
          { type: "text", text: "Reading." },
          { type: "tool_call", id: "call_1", name: "read", arguments: { path: "a.ts" } },
          { type: "tool_call", id: "call_2", name: "screenshot", arguments: {} },
        ],
      });
      const first = await collect(request(model, { tools: [READ] }));
      expect(first.failure).toBeUndefined();
      const assistant = assembleAssistantMessage(first.events);

      const history: ModelMessage[] = [
        { role: "user", content: [{ type: "text", text: "look" }, { type: "image", source: { type: "base64", mimeType: "image/png", data: PIXEL } }] },
        assistant,
        { role: "tool", toolCallId: "call_1", toolName: "read", result: { format: "text", value: "export const a = 1;" }, isError: false },
        {
          role: "tool",
          toolCallId: "call_2",
          toolName: "screenshot",
          result: {
            format: "content",
            value: [
              { type: "text", text: "captured" },
              { type: "json", value: { width: 1 } },
              { type: "image", source: { type: "base64", mimeType: "image/png", data: PIXEL } },
            ],
          },
          isError: true,
        },
        userText("continue"),
      ];
      count = server.requests.length;
      server.enqueue({ events: [{ type: "text", text: "Done." }] });
      const second = await collect(request(model, { messages: history, tools: [READ] }));
      expect(second.failure).toBeUndefined();
      expect(textOf(second.events, "text.delta")).toBe("Done.");
      const body = lastRequest().body;

      if (protocol === "chat") {
        expect(body.messages).toEqual([
          {
            role: "user",
            content: [
              { type: "text", text: "look" },
              { type: "image_url", image_url: { url: `data:image/png;base64,${PIXEL}` } },
            ],
          },
          {
            role: "assistant",
            content: "Reading.",
            tool_calls: [
              { id: "call_1", type: "function", function: { name: "read", arguments: '{"path":"a.ts"}' } },
              { id: "call_2", type: "function", function: { name: "screenshot", arguments: "{}" } },
            ],
            // Same provider, assistant with tool calls: the reasoning goes back in the field it came in.
            reasoning_content: "Need the file.",
          },
          { role: "tool", tool_call_id: "call_1", content: "export const a = 1;" },
          { role: "tool", tool_call_id: "call_2", content: 'captured\n{"width":1}\n[image]' },
          {
            role: "user",
            content: [
              { type: "text", text: "Images from tool call call_2:" },
              { type: "image_url", image_url: { url: `data:image/png;base64,${PIXEL}` } },
            ],
          },
          { role: "user", content: "continue" },
        ]);
      } else if (protocol === "responses") {
        expect(body.input).toEqual([
          {
            role: "user",
            content: [
              { type: "input_text", text: "look" },
              { type: "input_image", image_url: `data:image/png;base64,${PIXEL}`, detail: "auto" },
            ],
          },
          // The reasoning item carries no encrypted content (the test model sends none), so it is not replayed.
          { role: "assistant", content: "Reading." },
          { type: "function_call", call_id: "call_1", name: "read", arguments: '{"path":"a.ts"}' },
          { type: "function_call", call_id: "call_2", name: "screenshot", arguments: "{}" },
          { type: "function_call_output", call_id: "call_1", output: "export const a = 1;" },
          {
            type: "function_call_output",
            call_id: "call_2",
            output: [
              { type: "input_text", text: "captured" },
              { type: "input_text", text: '{"width":1}' },
              { type: "input_image", image_url: `data:image/png;base64,${PIXEL}`, detail: "auto" },
            ],
          },
          { role: "user", content: [{ type: "input_text", text: "continue" }] },
        ]);
      } else {
        const signature = assistant.content[0]!.type === "reasoning" ? assistant.content[0]!.continuation?.data["signature"] : undefined;
        expect(typeof signature).toBe("string");
        expect(body.messages).toEqual([
          {
            role: "user",
            content: [
              { type: "text", text: "look" },
              { type: "image", source: { type: "base64", media_type: "image/png", data: PIXEL } },
            ],
          },
          {
            role: "assistant",
            content: [
              { type: "thinking", thinking: "Need the file.", signature },
              { type: "text", text: "Reading." },
              { type: "tool_use", id: "call_1", name: "read", input: { path: "a.ts" } },
              { type: "tool_use", id: "call_2", name: "screenshot", input: {} },
            ],
          },
          {
            role: "user",
            content: [
              { type: "tool_result", tool_use_id: "call_1", content: "export const a = 1;" },
              {
                type: "tool_result",
                tool_use_id: "call_2",
                is_error: true,
                content: [
                  { type: "text", text: "captured" },
                  { type: "text", text: '{"width":1}' },
                  { type: "image", source: { type: "base64", media_type: "image/png", data: PIXEL } },
                ],
              },
              { type: "text", text: "continue" },
            ],
          },
        ]);
      }
    });

    it("replays reasoning continuations only to the provider and protocol that made them", async () => {
      const model = testModel(server, protocol);
      const foreign: ModelMessage = {
        role: "assistant",
        content: [
          { type: "reasoning", text: "other provider", continuation: { protocol, providerId: "elsewhere", data: { signature: "s", field: "reasoning_content", id: "rs", encryptedContent: "e" } } },
          { type: "reasoning", text: "other protocol", continuation: { protocol: protocol === "chat" ? "messages" : "chat", providerId: "test", data: { signature: "s", field: "reasoning_content" } } },
          { type: "text", text: "answer" },
          { type: "tool_call", id: "c1", name: "read", arguments: "{}" },
        ],
      };
      const history: ModelMessage[] = [
        userText("q"),
        foreign,
        { role: "tool", toolCallId: "c1", toolName: "read", result: { format: "json", value: { ok: true } }, isError: false },
      ];
      server.enqueue({ events: [{ type: "text", text: "ok" }] });
      const { failure } = await collect(request(model, { messages: history }));
      expect(failure).toBeUndefined();
      const text = JSON.stringify(lastRequest().body);
      expect(text).not.toContain("other provider");
      expect(text).not.toContain("other protocol");
      expect(text).toContain('{\\"ok\\":true}');
    });

    it("sends the same-provider Responses reasoning item back when it carries encrypted content", async () => {
      if (protocol !== "responses") return;
      const model = testModel(server, protocol);
      const history: ModelMessage[] = [
        userText("q"),
        {
          role: "assistant",
          content: [
            { type: "reasoning", text: "summary", continuation: { protocol: "responses", providerId: "test", data: { id: "rs_1", encryptedContent: "opaque" } } },
            { type: "tool_call", id: "c1", name: "read", arguments: "{}" },
          ],
        },
        { role: "tool", toolCallId: "c1", toolName: "read", result: { format: "text", value: "x" }, isError: false },
      ];
      server.enqueue({ events: [{ type: "text", text: "ok" }] });
      await collect(request(model, { messages: history }));
      expect(lastRequest().body.input[1]).toEqual({ type: "reasoning", id: "rs_1", encrypted_content: "opaque", summary: [{ type: "summary_text", text: "summary" }] });
    });

    describe("authentication", () => {
      it("uses the protocol default: bearer for chat and responses, x-api-key for messages", async () => {
        server.enqueue({ events: [{ type: "text", text: "ok" }] });
        await collect(request(testModel(server, protocol)));
        const headers = lastRequest().headers;
        if (protocol === "messages") {
          expect(headers["x-api-key"]).toBe(credentialHash(KEY));
          expect(lastRequest().credentialSha256).toBe(credentialHash(KEY));
          expect(headers["authorization"]).toBeUndefined();
          expect(headers["anthropic-version"]).toBeDefined();
        } else {
          expect(headers["authorization"]).toBe(`Bearer ${credentialHash(KEY)}`);
          expect(headers["x-api-key"]).toBeUndefined();
        }
        // Only protocol headers pass through from the SDK.
        expect(Object.keys(headers).filter((name) => name.startsWith("x-stainless"))).toEqual([]);
        expect(headers["user-agent"]).toBe("ze-harness");
      });

      it("sends bearer when the definition says bearer", async () => {
        server.enqueue({ events: [{ type: "text", text: "ok" }] });
        await collect(request(testModel(server, protocol, { authentication: { kind: "bearer" } })));
        const headers = lastRequest().headers;
        expect(headers["authorization"]).toBe(`Bearer ${credentialHash(KEY)}`);
        expect(headers["x-api-key"]).toBeUndefined();
      });

      it("sends a named header (with an optional prefix) and no Authorization", async () => {
        server.enqueue({ events: [{ type: "text", text: "ok" }] });
        await collect(request(testModel(server, protocol, { authentication: { kind: "header", name: "api-key", prefix: "Key " } })));
        const headers = lastRequest().headers;
        expect(headers["api-key"]).toBe(credentialHash(`Key ${KEY}`));
        expect(headers["authorization"]).toBeUndefined();
        expect(headers["x-api-key"]).toBeUndefined();
      });

      it("sends no credential at all for authentication none", async () => {
        server.enqueue({ events: [{ type: "text", text: "ok" }] });
        const { failure } = await collect({ ...request(testModel(server, protocol, { authentication: { kind: "none" } })), credential: undefined });
        expect(failure).toBeUndefined();
        const headers = lastRequest().headers;
        expect(headers["authorization"]).toBeUndefined();
        expect(headers["x-api-key"]).toBeUndefined();
        expect(JSON.stringify(headers)).not.toContain("unused");
      });

      it("sends static headers from the options", async () => {
        server.enqueue({ events: [{ type: "text", text: "ok" }] });
        await collect(request(testModel(server, protocol, { options: { headers: { "x-team": "core" } } })));
        expect(lastRequest().headers["x-team"]).toBe("core");
      });

      it("fails before any request when a keyed provider has no credential", async () => {
        const { failure } = await collect({ ...request(testModel(server, protocol)), credential: undefined });
        expect(failure?.kind).toBe("auth");
        expect(failure?.retryable).toBe(false);
        expect(server.requests.length).toBe(count);
      });
    });
  });
});
