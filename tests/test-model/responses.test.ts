// OpenAI Responses through the real openai SDK: raw events, the stream helper, non-stream.
import type { ResponseFunctionToolCall, ResponseStreamEvent } from "openai/resources/responses/responses";
import { describe, expect, it } from "vitest";
import type { ScriptedTurn } from "../../tools/test-model/index.js";
import { useTestModel } from "./helpers.js";

const fixture = useTestModel();

const turn: ScriptedTurn = {
  events: [
    { type: "reasoning", text: "Need the weather first." },
    { type: "text", text: "Checking the weather now." },
    { type: "tool_call", id: "call_weather", name: "get_weather", arguments: { city: "Paris", unit: "c" } },
  ],
  usage: { promptTokens: 500, completionTokens: 60, cachedPromptTokens: 256, reasoningTokens: 12 },
};

async function collect(stream: AsyncIterable<ResponseStreamEvent>): Promise<ResponseStreamEvent[]> {
  const events: ResponseStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

function only<T extends ResponseStreamEvent["type"]>(events: ResponseStreamEvent[], type: T): Extract<ResponseStreamEvent, { type: T }>[] {
  return events.filter((event): event is Extract<ResponseStreamEvent, { type: T }> => event.type === type);
}

describe("responses, streaming", () => {
  it("streams the full event sequence for reasoning, text and a function call", async () => {
    const { model, openai } = fixture;
    model.enqueue(turn);
    const events = await collect(await openai.responses.create({ model: "gpt-test", input: "weather in Paris?", stream: true }));

    expect(events[0]!.type).toBe("response.created");
    expect(events.at(-1)!.type).toBe("response.completed");
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
    expect(only(events, "response.output_item.added").map((event) => event.item.type)).toEqual(["reasoning", "message", "function_call"]);
    expect(only(events, "response.output_item.done")).toHaveLength(3);

    const reasoning = only(events, "response.reasoning_summary_text.delta");
    expect(reasoning.length).toBeGreaterThan(1);
    expect(reasoning.map((event) => event.delta).join("")).toBe("Need the weather first.");

    const text = only(events, "response.output_text.delta");
    expect(text.length).toBeGreaterThan(1);
    expect(text.map((event) => event.delta).join("")).toBe("Checking the weather now.");

    const argumentDeltas = only(events, "response.function_call_arguments.delta");
    expect(argumentDeltas.length).toBeGreaterThan(1);
    const argsDone = only(events, "response.function_call_arguments.done")[0]!;
    expect(argsDone.name).toBe("get_weather");
    expect(JSON.parse(argsDone.arguments)).toEqual({ city: "Paris", unit: "c" });
    expect(argumentDeltas.map((event) => event.delta).join("")).toBe(argsDone.arguments);

    const completed = only(events, "response.completed")[0]!.response;
    expect(completed.status).toBe("completed");
    expect(completed.usage).toEqual({
      input_tokens: 500,
      input_tokens_details: { cached_tokens: 256, cache_write_tokens: 0 },
      output_tokens: 60,
      output_tokens_details: { reasoning_tokens: 12 },
      total_tokens: 560,
    });
    const call = completed.output.find((item): item is ResponseFunctionToolCall => item.type === "function_call")!;
    expect(call.call_id).toBe("call_weather");
  });

  it("is accepted by the SDK's responses.stream() accumulator", async () => {
    const { model, openai } = fixture;
    model.enqueue(turn);
    const stream = openai.responses.stream({ model: "gpt-test", input: "weather in Paris?" });
    const deltas: string[] = [];
    stream.on("response.output_text.delta", (event) => deltas.push(event.delta));
    const response = await stream.finalResponse();
    expect(response.output_text).toBe("Checking the weather now.");
    expect(deltas.length).toBeGreaterThan(1);
    const reasoning = response.output.find((item) => item.type === "reasoning");
    expect(reasoning?.type === "reasoning" && reasoning.summary[0]?.text).toBe("Need the weather first.");
    const call = response.output.find((item) => item.type === "function_call");
    expect(call).toMatchObject({ name: "get_weather", call_id: "call_weather", status: "completed" });
    expect(call?.type === "function_call" && JSON.parse(call.arguments)).toEqual({ city: "Paris", unit: "c" });
    expect(response.usage?.input_tokens_details.cached_tokens).toBe(256);
    expect(response.usage?.output_tokens_details.reasoning_tokens).toBe(12);
  });

  it("streams a refusal through response.refusal.delta", async () => {
    const { model, openai } = fixture;
    model.enqueue({ events: [{ type: "refusal", text: "I won't do that, sorry." }] });
    const stream = openai.responses.stream({ model: "gpt-test", input: "?" });
    const deltas: string[] = [];
    stream.on("response.refusal.delta", (event) => deltas.push(event.delta));
    const response = await stream.finalResponse();
    expect(deltas.join("")).toBe("I won't do that, sorry.");
    expect(deltas.length).toBeGreaterThan(1);
    const message = response.output[0];
    expect(message?.type === "message" && message.content[0]).toMatchObject({ type: "refusal", refusal: "I won't do that, sorry." });
    expect(response.output_text).toBe("");
  });

  it("ends a stop: length turn with response.incomplete", async () => {
    const { model, openai } = fixture;
    model.enqueue({ events: [{ type: "text", text: "truncated answer" }], stop: "length" });
    const events = await collect(await openai.responses.create({ model: "gpt-test", input: "long", stream: true }));
    const last = events.at(-1)!;
    expect(last.type).toBe("response.incomplete");
    expect(last.type === "response.incomplete" && last.response).toMatchObject({
      status: "incomplete",
      incomplete_details: { reason: "max_output_tokens" },
    });
  });
});

describe("responses, non-streaming", () => {
  it("returns the whole response with output items and usage", async () => {
    const { model, openai } = fixture;
    model.enqueue(turn);
    const response = await openai.responses.create({ model: "gpt-test", input: "weather in Paris?" });
    expect(response.object).toBe("response");
    expect(response.status).toBe("completed");
    expect(response.output_text).toBe("Checking the weather now.");
    expect(response.output.map((item) => item.type)).toEqual(["reasoning", "message", "function_call"]);
    expect(response.usage).toMatchObject({ input_tokens: 500, output_tokens: 60 });
  });
});

describe("responses, recording", () => {
  it("records input and tools", async () => {
    const { model, openai } = fixture;
    model.enqueue({ events: [{ type: "text", text: "ok" }] });
    const tools = [{ type: "function" as const, name: "get_weather", parameters: { type: "object", properties: {} }, strict: false }];
    await openai.responses.create({ model: "gpt-test", input: [{ role: "user", content: "hi" }], instructions: "be brief", tools });
    const request = await model.waitForRequest(1);
    expect(request.protocol).toBe("responses");
    expect(request.path).toBe("/v1/responses");
    expect(request.body).toMatchObject({ model: "gpt-test", input: [{ role: "user", content: "hi" }], instructions: "be brief", tools });
  });
});

describe("responses, reasoning as content", () => {
  const alt = useTestModel({ responsesReasoning: "content" });
  it("streams reasoning through response.reasoning_text.delta", async () => {
    alt.model.enqueue({ events: [{ type: "reasoning", text: "step one, step two" }, { type: "text", text: "answer" }] });
    const stream = alt.openai.responses.stream({ model: "gpt-test", input: "?" });
    const deltas: string[] = [];
    stream.on("response.reasoning_text.delta", (event) => deltas.push(event.delta));
    const response = await stream.finalResponse();
    expect(deltas.join("")).toBe("step one, step two");
    const reasoning = response.output[0];
    expect(reasoning?.type === "reasoning" && reasoning.content).toEqual([{ type: "reasoning_text", text: "step one, step two" }]);
    expect(response.output_text).toBe("answer");
  });
});
