// Anthropic Messages (`POST <baseURL>/messages`). The request and event shapes are the official
// `@anthropic-ai/sdk`'s types; the request itself goes through sse-post.ts (its `anthropic`
// dialect) without the SDK, as Chat Completions and Responses do (issue 21 §2).
//
// Lowering: consecutive messages of one role merge (the API alternates user/assistant); tool
// results are `tool_result` blocks in the next user message (first, as the API requires), with
// text, JSON (as text) and images nested in `content`; thinking blocks are replayed with their
// signatures only to the same provider (other reasoning is dropped, as the API would reject
// an unsigned block). `max_tokens` is required: the request's cap, else the model's output
// limit, else 4096. A reasoning effort becomes a thinking budget below `max_tokens`.
import type {
  ContentBlockParam,
  ImageBlockParam,
  MessageCreateParamsStreaming,
  MessageParam,
  RawMessageStreamEvent,
  TextBlockParam,
} from "@anthropic-ai/sdk/resources/messages";
import type { ImageSource, ReasoningEffort } from "../../../generated/client/types.gen.js";
import type { FinishReason, ModelRequest, ModelStreamEvent } from "../events.js";
import type { ModelMessage } from "../history.js";
import { postSse } from "../sse-post.js";
import type { Attempt } from "../wire.js";

/** The output cap when neither the request nor the catalog gives one (Messages requires a value). */
export const FALLBACK_MAX_TOKENS = 4096;

const THINKING_BUDGETS: Readonly<Partial<Record<ReasoningEffort, number>>> = {
  minimal: 1024,
  low: 2048,
  medium: 8192,
  high: 16384,
  xhigh: 32768,
  max: 65536,
};

const MIN_THINKING_BUDGET = 1024;

function imageBlock(source: ImageSource): ImageBlockParam {
  return source.type === "url"
    ? { type: "image", source: { type: "url", url: source.url } }
    : { type: "image", source: { type: "base64", media_type: source.mimeType, data: source.data } };
}

function parseArguments(text: string): unknown {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? value : {};
  } catch {
    return {};
  }
}

/** The history as Messages `messages` (roles alternating, tool results leading their user turn). */
export function anthropicMessages(messages: readonly ModelMessage[], providerId: string): MessageParam[] {
  const out: { role: "user" | "assistant"; content: ContentBlockParam[] }[] = [];
  const push = (role: "user" | "assistant", blocks: ContentBlockParam[]): void => {
    if (blocks.length === 0) return;
    const last = out.at(-1);
    if (last !== undefined && last.role === role) last.content.push(...blocks);
    else out.push({ role, content: blocks });
  };
  for (const message of messages) {
    if (message.role === "user") {
      push(
        "user",
        message.content.map((part) => (part.type === "text" ? ({ type: "text", text: part.text } satisfies TextBlockParam) : imageBlock(part.source))),
      );
    } else if (message.role === "assistant") {
      const blocks: ContentBlockParam[] = [];
      for (const part of message.content) {
        if (part.type === "text" || part.type === "refusal") {
          if (part.text !== "") blocks.push({ type: "text", text: part.text });
        } else if (part.type === "tool_call") {
          blocks.push({ type: "tool_use", id: part.id, name: part.name, input: parseArguments(part.arguments) });
        } else {
          const continuation = part.continuation;
          if (continuation?.protocol !== "messages" || continuation.providerId !== providerId) continue;
          const signature = continuation.data["signature"];
          const redacted = continuation.data["redactedData"];
          if (typeof signature === "string") blocks.push({ type: "thinking", thinking: part.text, signature });
          else if (typeof redacted === "string") blocks.push({ type: "redacted_thinking", data: redacted });
        }
      }
      push("assistant", blocks);
    } else {
      const result = message.result;
      const content: (TextBlockParam | ImageBlockParam)[] | string =
        result.format === "text"
          ? result.value
          : result.format === "json"
            ? JSON.stringify(result.value ?? null)
            : result.value.map((part) =>
                part.type === "image"
                  ? imageBlock(part.source)
                  : ({ type: "text", text: part.type === "text" ? part.text : JSON.stringify(part.value ?? null) } satisfies TextBlockParam),
              );
      const block: ContentBlockParam = { type: "tool_result", tool_use_id: message.toolCallId, content, ...(message.isError ? { is_error: true } : {}) };
      // Tool results lead their user message: put them before any user content already merged.
      const last = out.at(-1);
      if (last !== undefined && last.role === "user") {
        const firstOther = last.content.findIndex((existing) => existing.type !== "tool_result");
        if (firstOther === -1) last.content.push(block);
        else last.content.splice(firstOther, 0, block);
      } else {
        out.push({ role: "user", content: [block] });
      }
    }
  }
  return out;
}

function finishOf(reason: string | null | undefined): FinishReason {
  switch (reason) {
    case "tool_use":
      return "tool_calls";
    case "max_tokens":
    case "model_context_window_exceeded":
      return "length";
    case "refusal":
      return "refusal";
    default:
      return "stop";
  }
}

interface OpenBlock {
  kind: "text" | "thinking" | "tool_use" | "other";
  id?: string;
  name?: string;
  json?: string;
  signature?: string;
}

export async function* streamMessages(request: ModelRequest, attempt: Attempt): AsyncGenerator<ModelStreamEvent> {
  const { model } = request;
  const maxTokens = request.maxOutputTokens ?? (model.limits.outputUnits > 0 ? model.limits.outputUnits : FALLBACK_MAX_TOKENS);
  let budget = request.reasoningEffort !== undefined && model.reasoning ? THINKING_BUDGETS[request.reasoningEffort] : undefined;
  if (budget !== undefined && budget >= maxTokens) budget = maxTokens - 1;
  const thinking = budget !== undefined && budget >= MIN_THINKING_BUDGET;
  const tools = model.capabilities.tools && request.tools.length > 0 ? request.tools : [];
  const body: MessageCreateParamsStreaming = {
    model: model.upstreamId,
    max_tokens: maxTokens,
    messages: anthropicMessages(request.messages, model.providerId),
    stream: true,
    ...(request.system !== undefined && request.system !== "" ? { system: request.system } : {}),
    ...(tools.length > 0
      ? { tools: tools.map((tool) => ({ name: tool.name, description: tool.description, input_schema: tool.inputSchema as { type: "object"; [key: string]: unknown } })) }
      : {}),
    ...(thinking ? { thinking: { type: "enabled" as const, budget_tokens: budget! } } : {}),
    // Anthropic rejects a temperature together with extended thinking.
    ...(request.temperature !== undefined && model.temperature && !thinking ? { temperature: request.temperature } : {}),
  };
  const stream = postSse(
    attempt,
    { endpoint: model.endpoint, headers: model.headers, authentication: model.authentication, ...(request.credential !== undefined ? { credential: request.credential } : {}) },
    body,
    "anthropic",
  ) as AsyncGenerator<RawMessageStreamEvent>;

  const blocks = new Map<number, OpenBlock>();
  let stop: string | null | undefined;
  let stopped = false;
  let inputTokens = 0;
  let cacheRead = 0;
  let cacheWrite = 0;
  let outputTokens = 0;
  let thinkingTokens: number | undefined;
  for await (const event of stream) {
    switch (event.type) {
      case "message_start": {
        const usage = event.message.usage;
        inputTokens = usage.input_tokens ?? 0;
        cacheRead = usage.cache_read_input_tokens ?? 0;
        cacheWrite = usage.cache_creation_input_tokens ?? 0;
        outputTokens = usage.output_tokens ?? 0;
        break;
      }
      case "content_block_start": {
        const block = event.content_block;
        if (block.type === "text") {
          blocks.set(event.index, { kind: "text" });
          if (block.text !== "") yield { type: "text.delta", text: block.text };
        } else if (block.type === "thinking") {
          blocks.set(event.index, { kind: "thinking", signature: block.signature ?? "" });
          if (block.thinking !== "") yield { type: "reasoning.delta", text: block.thinking };
        } else if (block.type === "redacted_thinking") {
          blocks.set(event.index, { kind: "other" });
          yield { type: "reasoning.end", continuation: { protocol: "messages", providerId: model.providerId, data: { redactedData: block.data } } };
        } else if (block.type === "tool_use") {
          const input = block.input;
          const initial = typeof input === "object" && input !== null && Object.keys(input).length > 0 ? JSON.stringify(input) : "";
          blocks.set(event.index, { kind: "tool_use", id: block.id, name: block.name, json: initial });
        } else {
          blocks.set(event.index, { kind: "other" });
        }
        break;
      }
      case "content_block_delta": {
        const open = blocks.get(event.index);
        const delta = event.delta;
        if (delta.type === "text_delta") {
          if (delta.text !== "") yield { type: "text.delta", text: delta.text };
        } else if (delta.type === "thinking_delta") {
          if (delta.thinking !== "") yield { type: "reasoning.delta", text: delta.thinking };
        } else if (delta.type === "signature_delta") {
          if (open !== undefined) open.signature = (open.signature ?? "") + delta.signature;
        } else if (delta.type === "input_json_delta") {
          if (open !== undefined && open.kind === "tool_use") open.json = (open.json ?? "") + delta.partial_json;
        }
        break;
      }
      case "content_block_stop": {
        const open = blocks.get(event.index);
        blocks.delete(event.index);
        if (open?.kind === "thinking") {
          yield {
            type: "reasoning.end",
            ...(open.signature ? { continuation: { protocol: "messages" as const, providerId: model.providerId, data: { signature: open.signature } } } : {}),
          };
        } else if (open?.kind === "tool_use") {
          yield { type: "tool_call", id: open.id!, name: open.name!, arguments: open.json === undefined || open.json === "" ? "{}" : open.json };
        }
        break;
      }
      case "message_delta": {
        stop = event.delta.stop_reason;
        const usage = event.usage as typeof event.usage & { output_tokens_details?: { thinking_tokens?: number | null } | null };
        if (usage.input_tokens != null) inputTokens = usage.input_tokens;
        if (usage.cache_read_input_tokens != null) cacheRead = usage.cache_read_input_tokens;
        if (usage.cache_creation_input_tokens != null) cacheWrite = usage.cache_creation_input_tokens;
        if (usage.output_tokens != null) outputTokens = usage.output_tokens;
        if (usage.output_tokens_details?.thinking_tokens != null) thinkingTokens = usage.output_tokens_details.thinking_tokens;
        break;
      }
      case "message_stop":
        stopped = true;
        break;
      default:
        break;
    }
    if (stopped) break;
  }
  if (!stopped) throw attempt.record(attempt.fail("transport", "the stream ended before the model finished"));
  yield {
    type: "usage",
    promptTokens: inputTokens + cacheRead + cacheWrite,
    completionTokens: outputTokens,
    cachedPromptTokens: cacheRead,
    ...(cacheWrite > 0 ? { cacheWriteTokens: cacheWrite } : {}),
    ...(thinkingTokens !== undefined ? { reasoningTokens: thinkingTokens } : {}),
  };
  yield { type: "finish", reason: finishOf(stop) };
}
