// Anthropic Messages through the real @anthropic-ai/sdk: raw events, MessageStream, non-stream.
import Anthropic from "@anthropic-ai/sdk";
import type { RawMessageStreamEvent } from "@anthropic-ai/sdk/resources/messages";
import { describe, expect, it } from "vitest";
import type { ScriptedTurn } from "../../tools/test-model/index.js";
import { credentialHash } from "../../tools/test-model/index.js";
import { useTestModel } from "./helpers.js";

const fixture = useTestModel();

const turn: ScriptedTurn = {
  events: [
    { type: "reasoning", text: "I should list the directory." },
    { type: "text", text: "Listing the files." },
    { type: "tool_call", id: "toolu_given", name: "list_dir", arguments: { path: ".", depth: 2 } },
    { type: "tool_call", name: "read_file", arguments: { path: "README.md" } },
  ],
  usage: { promptTokens: 900, completionTokens: 70, cachedPromptTokens: 600, reasoningTokens: 20 },
};

const params = { model: "claude-test", max_tokens: 1024, messages: [{ role: "user" as const, content: "what is here?" }] };

describe("messages, streaming", () => {
  it("streams message_start, thinking / text / tool_use blocks, message_delta and message_stop", async () => {
    const { model, anthropic } = fixture;
    model.enqueue(turn);
    const events: RawMessageStreamEvent[] = [];
    for await (const event of await anthropic.messages.create({ ...params, stream: true })) events.push(event);

    expect(events[0]!.type).toBe("message_start");
    expect(events.at(-2)!.type).toBe("message_delta");
    expect(events.at(-1)!.type).toBe("message_stop");
    const starts = events.filter((event) => event.type === "content_block_start");
    expect(starts.map((event) => event.content_block.type)).toEqual(["thinking", "text", "tool_use", "tool_use"]);
    expect(starts.map((event) => event.index)).toEqual([0, 1, 2, 3]);
    expect(events.filter((event) => event.type === "content_block_stop")).toHaveLength(4);

    const deltas = events.flatMap((event) => (event.type === "content_block_delta" ? [event.delta] : []));
    const thinking = deltas.flatMap((delta) => (delta.type === "thinking_delta" ? [delta.thinking] : []));
    expect(thinking.length).toBeGreaterThan(1);
    expect(thinking.join("")).toBe("I should list the directory.");
    expect(deltas.some((delta) => delta.type === "signature_delta")).toBe(true);
    const text = deltas.flatMap((delta) => (delta.type === "text_delta" ? [delta.text] : []));
    expect(text.length).toBeGreaterThan(1);
    expect(text.join("")).toBe("Listing the files.");
    const json = deltas.flatMap((delta) => (delta.type === "input_json_delta" ? [delta.partial_json] : []));
    expect(json.length).toBeGreaterThan(2);

    const delta = events.at(-2)!;
    expect(delta.type === "message_delta" && delta.delta.stop_reason).toBe("tool_use");
    expect(delta.type === "message_delta" && delta.usage).toMatchObject({ output_tokens: 70, input_tokens: 300, cache_read_input_tokens: 600 });
  });

  it("is accepted by messages.stream(): final message, parsed tool input, usage", async () => {
    const { model, anthropic } = fixture;
    model.enqueue(turn);
    const stream = anthropic.messages.stream(params);
    const textDeltas: string[] = [];
    const thinkingDeltas: string[] = [];
    stream.on("text", (delta) => textDeltas.push(delta));
    stream.on("thinking", (delta) => thinkingDeltas.push(delta));
    const message = await stream.finalMessage();

    expect(message.stop_reason).toBe("tool_use");
    expect(message.model).toBe("claude-test");
    expect(textDeltas.join("")).toBe("Listing the files.");
    expect(thinkingDeltas.join("")).toBe("I should list the directory.");
    const [thinking, text, first, second] = message.content;
    expect(thinking).toMatchObject({ type: "thinking", thinking: "I should list the directory." });
    expect(thinking?.type === "thinking" && thinking.signature).toMatch(/\S/);
    expect(text).toMatchObject({ type: "text", text: "Listing the files." });
    expect(first).toMatchObject({ type: "tool_use", id: "toolu_given", name: "list_dir", input: { path: ".", depth: 2 } });
    expect(second).toMatchObject({ type: "tool_use", name: "read_file", input: { path: "README.md" } });
    expect(second?.type === "tool_use" && second.id).toMatch(/^toolu_/);
    expect(message.usage).toMatchObject({
      input_tokens: 300,
      cache_read_input_tokens: 600,
      cache_creation_input_tokens: 0,
      output_tokens: 70,
      output_tokens_details: { thinking_tokens: 20 },
    });
  });

  it("reports a refusal as text with stop_reason refusal", async () => {
    const { model, anthropic } = fixture;
    model.enqueue({ events: [{ type: "refusal", text: "I can't assist with that." }] });
    const message = await anthropic.messages.stream(params).finalMessage();
    expect(message.stop_reason).toBe("refusal");
    expect(message.stop_details).toMatchObject({ type: "refusal" });
    expect(message.content).toEqual([{ type: "text", text: "I can't assist with that.", citations: null }]);
  });

  it("maps stop: length to max_tokens and the default to end_turn", async () => {
    const { model, anthropic } = fixture;
    model.enqueue({ events: [{ type: "text", text: "cut" }], stop: "length" }, { events: [{ type: "text", text: "whole" }] });
    expect((await anthropic.messages.stream(params).finalMessage()).stop_reason).toBe("max_tokens");
    expect((await anthropic.messages.stream(params).finalMessage()).stop_reason).toBe("end_turn");
  });
});

describe("messages, non-streaming", () => {
  it("returns the whole message", async () => {
    const { model, anthropic } = fixture;
    model.enqueue(turn);
    const message = await anthropic.messages.create(params);
    expect(message.type).toBe("message");
    expect(message.role).toBe("assistant");
    expect(message.stop_reason).toBe("tool_use");
    expect(message.content.map((block) => block.type)).toEqual(["thinking", "text", "tool_use", "tool_use"]);
    expect(message.content[2]).toMatchObject({ type: "tool_use", id: "toolu_given", input: { path: ".", depth: 2 } });
    expect(message.usage).toMatchObject({ input_tokens: 300, cache_read_input_tokens: 600, output_tokens: 70 });
  });
});

describe("messages, recording and headers", () => {
  it("records messages, system, tools and the anthropic-version header", async () => {
    const { model, anthropic } = fixture;
    model.enqueue({ events: [{ type: "text", text: "ok" }] });
    const tools = [{ name: "list_dir", description: "List a directory", input_schema: { type: "object" as const, properties: { path: { type: "string" } } } }];
    await anthropic.messages.create({ ...params, system: "be brief", tools });
    const request = await model.waitForRequest(1);
    expect(request.protocol).toBe("messages");
    expect(request.path).toBe("/v1/messages");
    expect(request.headers["anthropic-version"]).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    // @anthropic-ai/sdk 1.x sends `apiKey` as a bearer token, not as x-api-key.
    expect(request.headers["authorization"]).toBe(`Bearer ${credentialHash("test-key")}`);
    expect(request.body).toMatchObject({ model: "claude-test", max_tokens: 1024, system: "be brief", tools, messages: params.messages });
  });

  it("accepts x-api-key authentication", async () => {
    const { model } = fixture;
    model.enqueue({ events: [{ type: "text", text: "ok" }] });
    const client = new Anthropic({ baseURL: model.anthropicBaseURL, apiKey: null, defaultHeaders: { "x-api-key": "sk-ant-test" }, maxRetries: 0 });
    const message = await client.messages.create(params);
    expect(message.content).toEqual([{ type: "text", text: "ok", citations: null }]);
    expect(model.requests[0]!.headers["x-api-key"]).toBe(credentialHash("sk-ant-test"));
    expect(model.requests[0]!.headers["anthropic-version"]).toBeDefined();
  });
});
