// OpenAI Chat Completions through the real openai SDK.
import type { ChatCompletionChunk } from "openai/resources/chat/completions";
import { describe, expect, it } from "vitest";
import type { ScriptedTurn } from "../../tools/test-model/index.js";
import { credentialHash } from "../../tools/test-model/index.js";
import { useTestModel } from "./helpers.js";

const fixture = useTestModel();

const toolTurn: ScriptedTurn = {
  events: [
    { type: "reasoning", text: "The user wants a file read." },
    { type: "text", text: "Let me read both files." },
    { type: "tool_call", id: "call_given", name: "read_file", arguments: { path: "src/a.ts", lines: [1, 20] } },
    { type: "tool_call", name: "read_file", arguments: '{"path":"src/b.ts"}' },
  ],
  usage: { promptTokens: 1200, completionTokens: 80, cachedPromptTokens: 1000, reasoningTokens: 30 },
};

interface Accumulated {
  content: string;
  reasoning: string;
  refusal: string;
  role: string | undefined;
  toolCalls: { id: string; name: string; arguments: string; chunks: number }[];
  finishReason: string | null;
  usage: ChatCompletionChunk["usage"];
  contentDeltas: number;
  chunks: number;
}

async function accumulate(stream: AsyncIterable<ChatCompletionChunk>): Promise<Accumulated> {
  const result: Accumulated = {
    content: "",
    reasoning: "",
    refusal: "",
    role: undefined,
    toolCalls: [],
    finishReason: null,
    usage: undefined,
    contentDeltas: 0,
    chunks: 0,
  };
  for await (const chunk of stream) {
    result.chunks += 1;
    if (chunk.usage) result.usage = chunk.usage;
    for (const choice of chunk.choices) {
      const delta = choice.delta as ChatCompletionChunk.Choice.Delta & { reasoning_content?: string; reasoning?: string };
      if (delta.role) result.role = delta.role;
      if (delta.content) {
        result.content += delta.content;
        result.contentDeltas += 1;
      }
      if (delta.reasoning_content) result.reasoning += delta.reasoning_content;
      if (delta.reasoning) result.reasoning += delta.reasoning;
      if (delta.refusal) result.refusal += delta.refusal;
      for (const call of delta.tool_calls ?? []) {
        const entry = (result.toolCalls[call.index] ??= { id: "", name: "", arguments: "", chunks: 0 });
        entry.chunks += 1;
        if (call.id) entry.id = call.id;
        if (call.function?.name) entry.name = call.function.name;
        if (call.function?.arguments) entry.arguments += call.function.arguments;
      }
      if (choice.finish_reason) result.finishReason = choice.finish_reason;
    }
  }
  return result;
}

describe("chat completions, streaming", () => {
  it("streams text, reasoning and tool calls split over several chunks, then usage and [DONE]", async () => {
    const { model, openai } = fixture;
    model.enqueue(toolTurn);
    const stream = await openai.chat.completions.create({
      model: "gpt-test",
      messages: [{ role: "user", content: "read a and b" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const result = await accumulate(stream);

    expect(result.role).toBe("assistant");
    expect(result.content).toBe("Let me read both files.");
    expect(result.contentDeltas).toBeGreaterThan(1);
    expect(result.reasoning).toBe("The user wants a file read.");
    expect(result.finishReason).toBe("tool_calls");
    expect(result.toolCalls).toHaveLength(2);
    expect(result.toolCalls[0]).toMatchObject({ id: "call_given", name: "read_file" });
    expect(JSON.parse(result.toolCalls[0]!.arguments)).toEqual({ path: "src/a.ts", lines: [1, 20] });
    expect(result.toolCalls[0]!.chunks).toBeGreaterThan(2);
    expect(result.toolCalls[1]!.id).toMatch(/^call_/);
    expect(JSON.parse(result.toolCalls[1]!.arguments)).toEqual({ path: "src/b.ts" });
    expect(result.usage).toEqual({
      prompt_tokens: 1200,
      completion_tokens: 80,
      total_tokens: 1280,
      prompt_tokens_details: { cached_tokens: 1000, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 30, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
    });
  });

  it("sends no usage chunk unless stream_options.include_usage is set, and defaults to finish_reason stop", async () => {
    const { model, openai } = fixture;
    model.enqueue({ events: [{ type: "text", text: "plain answer" }] });
    const stream = await openai.chat.completions.create({ model: "gpt-test", messages: [{ role: "user", content: "hi" }], stream: true });
    const result = await accumulate(stream);
    expect(result.content).toBe("plain answer");
    expect(result.finishReason).toBe("stop");
    expect(result.usage).toBeUndefined();
  });

  it("streams a refusal in `refusal` deltas", async () => {
    const { model, openai } = fixture;
    model.enqueue({ events: [{ type: "refusal", text: "I can't help with that request." }] });
    const stream = await openai.chat.completions.create({ model: "gpt-test", messages: [{ role: "user", content: "?" }], stream: true });
    const result = await accumulate(stream);
    expect(result.refusal).toBe("I can't help with that request.");
    expect(result.content).toBe("");
    expect(result.finishReason).toBe("stop");
  });

  it("reports finish_reason length", async () => {
    const { model, openai } = fixture;
    model.enqueue({ events: [{ type: "text", text: "cut off mid" }], stop: "length" });
    const stream = await openai.chat.completions.create({ model: "gpt-test", messages: [{ role: "user", content: "long" }], stream: true });
    expect((await accumulate(stream)).finishReason).toBe("length");
  });

  it("is accepted by the SDK's chat.completions.stream() helper", async () => {
    const { model, openai } = fixture;
    model.enqueue(toolTurn);
    const stream = openai.chat.completions.stream({
      model: "gpt-test",
      messages: [{ role: "user", content: "read a and b" }],
      stream_options: { include_usage: true },
    });
    const deltas: string[] = [];
    stream.on("content.delta", ({ delta }) => deltas.push(delta));
    const completion = await stream.finalChatCompletion();
    const choice = completion.choices[0]!;
    expect(choice.finish_reason).toBe("tool_calls");
    expect(choice.message.content).toBe("Let me read both files.");
    expect(deltas.length).toBeGreaterThan(1);
    const calls = choice.message.tool_calls ?? [];
    expect(calls.map((call) => (call.type === "function" ? call.function.name : call.type))).toEqual(["read_file", "read_file"]);
    expect(completion.usage?.prompt_tokens_details?.cached_tokens).toBe(1000);
  });
});

describe("chat completions, non-streaming", () => {
  it("returns one completion with content, reasoning_content, tool calls, finish reason and usage", async () => {
    const { model, openai } = fixture;
    model.enqueue(toolTurn);
    const completion = await openai.chat.completions.create({ model: "gpt-test", messages: [{ role: "user", content: "read a and b" }] });
    expect(completion.object).toBe("chat.completion");
    expect(completion.model).toBe("gpt-test");
    const choice = completion.choices[0]!;
    expect(choice.finish_reason).toBe("tool_calls");
    expect(choice.message.content).toBe("Let me read both files.");
    expect((choice.message as { reasoning_content?: string }).reasoning_content).toBe("The user wants a file read.");
    const calls = choice.message.tool_calls ?? [];
    expect(calls).toHaveLength(2);
    const first = calls[0]!;
    expect(first.type === "function" && first.id).toBe("call_given");
    expect(first.type === "function" && JSON.parse(first.function.arguments)).toEqual({ path: "src/a.ts", lines: [1, 20] });
    expect(completion.usage).toMatchObject({
      prompt_tokens: 1200,
      completion_tokens: 80,
      prompt_tokens_details: { cached_tokens: 1000 },
      completion_tokens_details: { reasoning_tokens: 30 },
    });
  });

  it("estimates usage when the script gives none", async () => {
    const { model, openai } = fixture;
    model.enqueue({ events: [{ type: "text", text: "twelve chars" }] });
    const completion = await openai.chat.completions.create({ model: "gpt-test", messages: [{ role: "user", content: "x".repeat(400) }] });
    expect(completion.usage!.prompt_tokens).toBeGreaterThan(100);
    expect(completion.usage!.completion_tokens).toBe(3);
    expect(completion.usage!.total_tokens).toBe(completion.usage!.prompt_tokens + 3);
  });

  it("returns a refusal in message.refusal", async () => {
    const { model, openai } = fixture;
    model.enqueue({ events: [{ type: "refusal", text: "No." }] });
    const completion = await openai.chat.completions.create({ model: "gpt-test", messages: [{ role: "user", content: "?" }] });
    expect(completion.choices[0]!.message).toMatchObject({ content: null, refusal: "No." });
  });
});

describe("chat completions, recording", () => {
  it("records the request body (messages, tools), path and headers", async () => {
    const { model, openai } = fixture;
    model.enqueue({ events: [{ type: "text", text: "ok" }] });
    const tools = [
      {
        type: "function" as const,
        function: { name: "read_file", description: "Read a file", parameters: { type: "object", properties: { path: { type: "string" } } } },
      },
    ];
    await openai.chat.completions.create({
      model: "gpt-test",
      messages: [
        { role: "system", content: "be brief" },
        { role: "user", content: "hello" },
      ],
      tools,
    });
    const request = await model.waitForRequest(1);
    expect(request.protocol).toBe("chat");
    expect(request.path).toBe("/v1/chat/completions");
    expect(request.headers["authorization"]).toBe(`Bearer ${credentialHash("test-key")}`);
    expect(request.credentialSha256).toBe(credentialHash("test-key"));
    expect(JSON.stringify(model.requests)).not.toContain("test-key");
    expect(request.headers["content-type"]).toContain("application/json");
    expect(request.body.messages).toEqual([
      { role: "system", content: "be brief" },
      { role: "user", content: "hello" },
    ]);
    expect(request.body.tools).toEqual(tools);
    expect(request.receivedAt).toBeLessThanOrEqual(Date.now());
  });
});

describe("chat completions, reasoning field option", () => {
  const alt = useTestModel({ chatReasoningField: "reasoning" });
  it("can put reasoning in `reasoning` instead of `reasoning_content`", async () => {
    alt.model.enqueue({ events: [{ type: "reasoning", text: "hmm, yes" }, { type: "text", text: "done" }] });
    const stream = await alt.openai.chat.completions.create({ model: "m", messages: [{ role: "user", content: "?" }], stream: true });
    const seen: string[] = [];
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta as Record<string, unknown> | undefined;
      if (delta && "reasoning" in delta) seen.push(String(delta["reasoning"]));
      expect(delta && "reasoning_content" in delta).toBeFalsy();
    }
    expect(seen.join("")).toBe("hmm, yes");
  });
});
