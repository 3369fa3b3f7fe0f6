// OpenAI Responses (`POST …/responses`). The SDK's stream accumulator is strict — every delta
// needs its output item (and content / summary part) announced first, and an unknown event
// type throws — so each item goes through the full added → delta → done → item done sequence.
import type {
  Response,
  ResponseFunctionToolCall,
  ResponseOutputItem,
  ResponseOutputMessage,
  ResponseReasoningItem,
  ResponseStreamEvent,
  ResponseUsage,
} from "openai/resources/responses/responses";
import {
  argumentsJson,
  modelOf,
  segmentsOf,
  splitArguments,
  splitWords,
  sse,
  type ContentKind,
  type Frame,
  type RenderContext,
  type ResolvedTurn,
} from "./script.js";

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
type WireEvent = DistributiveOmit<ResponseStreamEvent, "sequence_number">;
/** The SDK adds `output_text` client-side; the wire object does not carry it. */
type WireResponse = Omit<Response, "output_text">;

function usageOf(turn: ResolvedTurn): ResponseUsage {
  const { promptTokens, completionTokens, cachedPromptTokens, reasoningTokens } = turn.usage;
  return {
    input_tokens: promptTokens,
    input_tokens_details: { cached_tokens: cachedPromptTokens, cache_write_tokens: 0 },
    output_tokens: completionTokens,
    output_tokens_details: { reasoning_tokens: reasoningTokens },
    total_tokens: promptTokens + completionTokens,
  };
}

function baseResponse(id: string, context: RenderContext): WireResponse {
  const body = context.request.body ?? {};
  return {
    id,
    object: "response",
    created_at: Math.floor(context.now / 1000),
    status: "in_progress",
    error: null,
    incomplete_details: null,
    instructions: body.instructions ?? null,
    metadata: body.metadata ?? {},
    model: modelOf(context.request),
    output: [],
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    temperature: body.temperature ?? 1,
    top_p: body.top_p ?? 1,
    tool_choice: body.tool_choice ?? "auto",
    tools: body.tools ?? [],
    previous_response_id: body.previous_response_id ?? null,
    reasoning: body.reasoning ?? null,
    text: body.text ?? { format: { type: "text" } },
    truncation: body.truncation ?? "disabled",
  };
}

function finish(response: WireResponse, turn: ResolvedTurn, output: ResponseOutputItem[], context: RenderContext): WireResponse {
  const incomplete = turn.stop === "length";
  return {
    ...response,
    status: incomplete ? "incomplete" : "completed",
    incomplete_details: incomplete ? { reason: "max_output_tokens" } : null,
    completed_at: incomplete ? null : Math.floor(context.now / 1000),
    output,
    usage: usageOf(turn),
  };
}

function messageItem(id: string, kind: "text" | "refusal", text: string, status: ResponseOutputMessage["status"]): ResponseOutputMessage {
  return {
    id,
    type: "message",
    role: "assistant",
    status,
    content: [kind === "text" ? { type: "output_text", text, annotations: [], logprobs: [] } : { type: "refusal", refusal: text }],
  };
}

function reasoningItem(id: string, text: string, mode: "summary" | "content"): ResponseReasoningItem {
  return mode === "summary"
    ? { id, type: "reasoning", summary: [{ type: "summary_text", text }] }
    : { id, type: "reasoning", summary: [], content: [{ type: "reasoning_text", text }] };
}

function functionCallItem(id: string, callId: string, name: string, args: string, status: "in_progress" | "completed"): ResponseFunctionToolCall {
  return { id, type: "function_call", status, call_id: callId, name, arguments: args };
}

/** The events that open a text / refusal / reasoning item, its deltas, and those that close it. */
class OpenSegment {
  text = "";
  constructor(
    readonly kind: ContentKind,
    readonly itemId: string,
    readonly outputIndex: number,
    private readonly mode: "summary" | "content",
  ) {}

  open(): WireEvent[] {
    const { itemId: item_id, outputIndex: output_index } = this;
    if (this.kind === "reasoning") {
      const item: ResponseReasoningItem =
        this.mode === "summary" ? { id: item_id, type: "reasoning", summary: [] } : { id: item_id, type: "reasoning", summary: [], content: [] };
      return [
        { type: "response.output_item.added", output_index, item },
        this.mode === "summary"
          ? { type: "response.reasoning_summary_part.added", item_id, output_index, summary_index: 0, part: { type: "summary_text", text: "" } }
          : { type: "response.content_part.added", item_id, output_index, content_index: 0, part: { type: "reasoning_text", text: "" } },
      ];
    }
    return [
      { type: "response.output_item.added", output_index, item: { ...messageItem(item_id, this.kind, "", "in_progress"), content: [] } },
      {
        type: "response.content_part.added",
        item_id,
        output_index,
        content_index: 0,
        part: this.kind === "text" ? { type: "output_text", text: "", annotations: [], logprobs: [] } : { type: "refusal", refusal: "" },
      },
    ];
  }

  delta(delta: string): WireEvent {
    this.text += delta;
    const { itemId: item_id, outputIndex: output_index } = this;
    if (this.kind === "text") return { type: "response.output_text.delta", item_id, output_index, content_index: 0, delta, logprobs: [] };
    if (this.kind === "refusal") return { type: "response.refusal.delta", item_id, output_index, content_index: 0, delta };
    return this.mode === "summary"
      ? { type: "response.reasoning_summary_text.delta", item_id, output_index, summary_index: 0, delta }
      : { type: "response.reasoning_text.delta", item_id, output_index, content_index: 0, delta };
  }

  close(): { events: WireEvent[]; item: ResponseOutputItem } {
    const { itemId: item_id, outputIndex: output_index, text } = this;
    if (this.kind === "reasoning") {
      const item = reasoningItem(item_id, text, this.mode);
      const events: WireEvent[] =
        this.mode === "summary"
          ? [
              { type: "response.reasoning_summary_text.done", item_id, output_index, summary_index: 0, text },
              { type: "response.reasoning_summary_part.done", item_id, output_index, summary_index: 0, part: { type: "summary_text", text } },
            ]
          : [
              { type: "response.reasoning_text.done", item_id, output_index, content_index: 0, text },
              { type: "response.content_part.done", item_id, output_index, content_index: 0, part: { type: "reasoning_text", text } },
            ];
      events.push({ type: "response.output_item.done", output_index, item });
      return { events, item };
    }
    const item = messageItem(item_id, this.kind, text, "completed");
    const part = item.content[0]!;
    const done: WireEvent =
      this.kind === "text"
        ? { type: "response.output_text.done", item_id, output_index, content_index: 0, text, logprobs: [] }
        : { type: "response.refusal.done", item_id, output_index, content_index: 0, refusal: text };
    return {
      events: [
        done,
        { type: "response.content_part.done", item_id, output_index, content_index: 0, part },
        { type: "response.output_item.done", output_index, item },
      ],
      item,
    };
  }
}

export function* responsesStream(turn: ResolvedTurn, context: RenderContext): Generator<Frame> {
  let sequence = 0;
  const emit = (event: WireEvent): Frame => sse({ ...event, sequence_number: sequence++ }, event.type);
  const mode = context.options.responsesReasoning;
  const response = baseResponse(context.ids.next("resp"), context);
  const output: ResponseOutputItem[] = [];
  let open: OpenSegment | null = null;

  function* closeOpen(): Generator<Frame> {
    if (!open) return;
    const { events, item } = open.close();
    output[open.outputIndex] = item;
    open = null;
    for (const event of events) yield emit(event);
  }

  yield emit({ type: "response.created", response: response as Response });
  yield emit({ type: "response.in_progress", response: response as Response });
  for (const event of turn.events) {
    switch (event.type) {
      case "delay":
        yield { kind: "delay", ms: event.ms };
        break;
      case "drop":
        yield { kind: "drop" };
        return;
      case "error":
        yield emit({ type: "error", code: event.code, message: event.message, param: null });
        return;
      case "text":
      case "reasoning":
      case "refusal": {
        if (open?.kind !== event.type) {
          yield* closeOpen();
          const prefix = event.type === "reasoning" ? "rs" : "msg";
          const segment: OpenSegment = new OpenSegment(event.type, context.ids.next(prefix), output.length, mode);
          open = segment;
          output.push(segment.kind === "reasoning" ? reasoningItem(segment.itemId, "", mode) : messageItem(segment.itemId, segment.kind, "", "in_progress"));
          for (const opening of segment.open()) yield emit(opening);
        }
        const current: OpenSegment = open!;
        for (const piece of splitWords(event.text)) yield emit(current.delta(piece));
        break;
      }
      case "tool_call": {
        yield* closeOpen();
        const itemId = context.ids.next("fc");
        const callId = event.id ?? context.ids.next("call");
        const outputIndex = output.length;
        const args = argumentsJson(event.arguments);
        output.push(functionCallItem(itemId, callId, event.name, "", "in_progress"));
        yield emit({ type: "response.output_item.added", output_index: outputIndex, item: functionCallItem(itemId, callId, event.name, "", "in_progress") });
        for (const piece of splitArguments(args)) {
          yield emit({ type: "response.function_call_arguments.delta", item_id: itemId, output_index: outputIndex, delta: piece });
        }
        yield emit({ type: "response.function_call_arguments.done", item_id: itemId, output_index: outputIndex, name: event.name, arguments: args });
        const item = functionCallItem(itemId, callId, event.name, args, "completed");
        output[outputIndex] = item;
        yield emit({ type: "response.output_item.done", output_index: outputIndex, item });
        break;
      }
    }
  }
  yield* closeOpen();
  const final = finish(response, turn, output, context) as Response;
  yield emit(turn.stop === "length" ? { type: "response.incomplete", response: final } : { type: "response.completed", response: final });
}

export function responsesJson(turn: ResolvedTurn, context: RenderContext): WireResponse {
  const mode = context.options.responsesReasoning;
  const response = baseResponse(context.ids.next("resp"), context);
  const output: ResponseOutputItem[] = segmentsOf(turn.events).map((segment) => {
    if (segment.kind === "tool_call") {
      const itemId = context.ids.next("fc");
      return functionCallItem(itemId, segment.id ?? context.ids.next("call"), segment.name, argumentsJson(segment.arguments), "completed");
    }
    if (segment.kind === "reasoning") return reasoningItem(context.ids.next("rs"), segment.text, mode);
    return messageItem(context.ids.next("msg"), segment.kind, segment.text, "completed");
  });
  return finish(response, turn, output, context);
}
