// Anthropic Messages (`POST …/v1/messages`), typed against @anthropic-ai/sdk's own types.
// Usage follows Anthropic's convention: `input_tokens` excludes the cached part, which is
// reported as `cache_read_input_tokens`.
import type {
  ContentBlock,
  Message,
  MessageDeltaUsage,
  RawMessageStreamEvent,
  RefusalStopDetails,
  StopReason,
  Usage,
} from "@anthropic-ai/sdk/resources/messages";
import {
  argumentsJson,
  argumentsValue,
  modelOf,
  segmentsOf,
  splitArguments,
  splitWords,
  sse,
  type ContentKind,
  type Frame,
  type RenderContext,
  type ResolvedTurn,
  type StopKind,
} from "./script.js";

const STOP_REASONS: Record<StopKind, StopReason> = {
  stop: "end_turn",
  tool_calls: "tool_use",
  length: "max_tokens",
  refusal: "refusal",
};

function stopDetails(stop: StopKind): RefusalStopDetails | null {
  return stop === "refusal" ? { type: "refusal", category: null, explanation: null } : null;
}

function usageOf(turn: ResolvedTurn, outputTokens = turn.usage.completionTokens): Usage {
  const { promptTokens, cachedPromptTokens, reasoningTokens } = turn.usage;
  return {
    input_tokens: Math.max(0, promptTokens - cachedPromptTokens),
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: cachedPromptTokens,
    cache_creation: { ephemeral_1h_input_tokens: 0, ephemeral_5m_input_tokens: 0 },
    output_tokens: outputTokens,
    output_tokens_details: reasoningTokens > 0 ? { thinking_tokens: reasoningTokens } : null,
    server_tool_use: null,
    service_tier: "standard",
    inference_geo: null,
    speed: null,
  };
}

function deltaUsage(turn: ResolvedTurn): MessageDeltaUsage {
  const usage = usageOf(turn);
  return {
    input_tokens: usage.input_tokens,
    cache_creation_input_tokens: usage.cache_creation_input_tokens,
    cache_read_input_tokens: usage.cache_read_input_tokens,
    output_tokens: usage.output_tokens,
    output_tokens_details: usage.output_tokens_details,
    server_tool_use: null,
  };
}

function baseMessage(id: string, context: RenderContext, usage: Usage): Message {
  return {
    id,
    type: "message",
    role: "assistant",
    model: modelOf(context.request),
    content: [],
    stop_reason: null,
    stop_sequence: null,
    stop_details: null,
    container: null,
    diagnostics: null,
    usage,
  };
}

/** Anthropic has no refusal block: a refusal is text, with stop_reason "refusal". */
function blockKind(kind: ContentKind): "text" | "thinking" {
  return kind === "reasoning" ? "thinking" : "text";
}

export function* messagesStream(turn: ResolvedTurn, context: RenderContext): Generator<Frame> {
  const emit = (event: RawMessageStreamEvent): Frame => sse(event, event.type);
  // Like the real API, message_start carries a token or so of output; message_delta has the total.
  yield emit({ type: "message_start", message: baseMessage(context.ids.next("msg"), context, usageOf(turn, 1)) });
  yield sse({ type: "ping" }, "ping");

  let index = -1;
  let open: "text" | "thinking" | null = null;
  function* closeOpen(): Generator<Frame> {
    if (open === "thinking") {
      yield emit({ type: "content_block_delta", index, delta: { type: "signature_delta", signature: context.ids.next("sig") } });
    }
    if (open) yield emit({ type: "content_block_stop", index });
    open = null;
  }

  for (const event of turn.events) {
    switch (event.type) {
      case "delay":
        yield { kind: "delay", ms: event.ms };
        break;
      case "drop":
        yield { kind: "drop" };
        return;
      case "error":
        yield sse(anthropicErrorBody(event.message, event.code), "error");
        return;
      case "text":
      case "reasoning":
      case "refusal": {
        const kind = blockKind(event.type);
        if (open !== kind) {
          yield* closeOpen();
          index += 1;
          open = kind;
          yield emit({
            type: "content_block_start",
            index,
            content_block: kind === "thinking" ? { type: "thinking", thinking: "", signature: "" } : { type: "text", text: "", citations: null },
          });
        }
        for (const piece of splitWords(event.text)) {
          yield emit({
            type: "content_block_delta",
            index,
            delta: kind === "thinking" ? { type: "thinking_delta", thinking: piece } : { type: "text_delta", text: piece },
          });
        }
        break;
      }
      case "tool_call": {
        yield* closeOpen();
        index += 1;
        const id = event.id ?? context.ids.next("toolu");
        yield emit({ type: "content_block_start", index, content_block: { type: "tool_use", id, name: event.name, input: {}, caller: { type: "direct" } } });
        for (const piece of splitArguments(argumentsJson(event.arguments))) {
          yield emit({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: piece } });
        }
        yield emit({ type: "content_block_stop", index });
        break;
      }
    }
  }
  yield* closeOpen();
  yield emit({
    type: "message_delta",
    delta: { stop_reason: STOP_REASONS[turn.stop], stop_sequence: null, stop_details: stopDetails(turn.stop), container: null },
    usage: deltaUsage(turn),
  });
  yield emit({ type: "message_stop" });
}

export function messagesJson(turn: ResolvedTurn, context: RenderContext): Message {
  const content: ContentBlock[] = [];
  let merged: ContentBlock | null = null;
  for (const segment of segmentsOf(turn.events)) {
    if (segment.kind === "tool_call") {
      content.push({
        type: "tool_use",
        id: segment.id ?? context.ids.next("toolu"),
        name: segment.name,
        input: argumentsValue(segment.arguments),
        caller: { type: "direct" },
      });
      merged = null;
      continue;
    }
    // text and refusal segments both become text: adjacent ones share a block, like the stream.
    if (blockKind(segment.kind) === "text" && merged?.type === "text") {
      merged.text += segment.text;
      continue;
    }
    const block: ContentBlock =
      segment.kind === "reasoning"
        ? { type: "thinking", thinking: segment.text, signature: context.ids.next("sig") }
        : { type: "text", text: segment.text, citations: null };
    content.push(block);
    merged = block;
  }
  return {
    ...baseMessage(context.ids.next("msg"), context, usageOf(turn)),
    content,
    stop_reason: STOP_REASONS[turn.stop],
    stop_details: stopDetails(turn.stop),
  };
}

/** Anthropic's error envelope. */
export function anthropicErrorBody(message: string, type: string): unknown {
  return { type: "error", error: { type, message } };
}
