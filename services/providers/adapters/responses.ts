// Responses (`POST <baseURL>/responses`), stateless: `store: false`, the whole history sent each
// time. The request and event shapes are the official `openai` SDK's types; the request itself
// goes through sse-post.ts without the SDK, as Chat Completions does (the SDK's per-request
// machinery cost more CPU than a one-step Turn's own handling; issue 21 §2). Reasoning models ask for reasoning summaries
// and `reasoning.encrypted_content`, which is what lets a reasoning item be replayed without
// server-side storage; a reasoning item is replayed only to the same provider, and only when it
// carries encrypted content (an ID alone names nothing when nothing is stored).
//
// Lowering: system → `instructions`; user text/images → `input_text` / `input_image`; assistant
// text → assistant messages; tool calls → `function_call` items; tool results →
// `function_call_output` whose `output` is text, or content parts when the result has images.
import { randomUUID } from "node:crypto";
import type {
  ResponseCreateParamsStreaming,
  ResponseFunctionCallOutputItem,
  ResponseInputItem,
  ResponseStreamEvent,
} from "openai/resources/responses/responses";
import type { JsonValue } from "../../config/types.js";
import type { FinishReason, ModelRequest, ModelStreamEvent } from "../events.js";
import { kindOfCode, type ProviderFailure } from "../failure.js";
import { toolResultText, type ModelMessage } from "../history.js";
import { streamedDescription, type Attempt } from "../wire.js";
import { postSse } from "../sse-post.js";
import { imageUrl } from "./chat.js";


/** The history as Responses input items. */
export function responsesInput(messages: readonly ModelMessage[], providerId: string): ResponseInputItem[] {
  const items: ResponseInputItem[] = [];
  for (const message of messages) {
    if (message.role === "user") {
      items.push({
        role: "user",
        content: message.content.map((part) =>
          part.type === "text"
            ? { type: "input_text" as const, text: part.text }
            : { type: "input_image" as const, image_url: imageUrl(part.source), detail: "auto" as const },
        ),
      });
      continue;
    }
    if (message.role === "assistant") {
      for (const part of message.content) {
        if (part.type === "text" || part.type === "refusal") {
          if (part.text !== "") items.push({ role: "assistant", content: part.text });
        } else if (part.type === "tool_call") {
          items.push({ type: "function_call", call_id: part.id, name: part.name, arguments: part.arguments });
        } else {
          const continuation = part.continuation;
          if (continuation?.protocol !== "responses" || continuation.providerId !== providerId) continue;
          const id = continuation.data["id"];
          const encrypted = continuation.data["encryptedContent"];
          if (typeof id !== "string" || typeof encrypted !== "string") continue;
          items.push({
            type: "reasoning",
            id,
            encrypted_content: encrypted,
            summary: part.text !== "" ? [{ type: "summary_text", text: part.text }] : [],
          });
        }
      }
      continue;
    }
    const result = message.result;
    const hasImage = result.format === "content" && result.value.some((part) => part.type === "image");
    const output: string | ResponseFunctionCallOutputItem[] = hasImage && result.format === "content"
      ? result.value.map(
          (part): ResponseFunctionCallOutputItem =>
            part.type === "image"
              ? { type: "input_image", image_url: imageUrl(part.source), detail: "auto" }
              : { type: "input_text", text: part.type === "text" ? part.text : JSON.stringify(part.value ?? null) },
        )
      : toolResultText(result);
    items.push({ type: "function_call_output", call_id: message.toolCallId, output });
  }
  return items;
}

export async function* streamResponses(request: ModelRequest, attempt: Attempt): AsyncGenerator<ModelStreamEvent> {
  const { model } = request;
  const tools = model.capabilities.tools && request.tools.length > 0 ? request.tools : [];
  const body: ResponseCreateParamsStreaming = {
    model: model.upstreamId,
    input: responsesInput(request.messages, model.providerId),
    stream: true,
    store: false,
    ...(request.system !== undefined && request.system !== "" ? { instructions: request.system } : {}),
    ...(tools.length > 0
      ? { tools: tools.map((tool) => ({ type: "function" as const, name: tool.name, description: tool.description, parameters: tool.inputSchema as Record<string, unknown>, strict: false })) }
      : {}),
    ...(model.reasoning
      ? {
          reasoning: {
            summary: "auto" as const,
            ...(request.reasoningEffort !== undefined ? { effort: request.reasoningEffort as NonNullable<NonNullable<ResponseCreateParamsStreaming["reasoning"]>["effort"]> } : {}),
          },
          include: ["reasoning.encrypted_content" as const],
        }
      : {}),
    ...(request.maxOutputTokens !== undefined ? { max_output_tokens: request.maxOutputTokens } : {}),
    ...(request.temperature !== undefined && model.temperature ? { temperature: request.temperature } : {}),
  };
  const stream = postSse(attempt, {
    endpoint: model.endpoint,
    headers: model.headers,
    authentication: model.authentication,
    ...(request.credential !== undefined ? { credential: request.credential } : {}),
  }, body) as AsyncGenerator<ResponseStreamEvent>;

  let reasoningItem: string | undefined;
  let sawToolCall = false;
  let sawRefusal = false;
  let finished = false;
  for await (const event of stream) {
    switch (event.type) {
      case "response.output_text.delta":
        if (event.delta !== "") yield { type: "text.delta", text: event.delta };
        break;
      case "response.refusal.delta":
        sawRefusal = true;
        if (event.delta !== "") yield { type: "refusal.delta", text: event.delta };
        break;
      case "response.reasoning_summary_part.added":
        // Separate the summary parts of one reasoning item.
        if (event.summary_index > 0 && reasoningItem === event.item_id) yield { type: "reasoning.delta", text: "\n\n" };
        break;
      case "response.reasoning_summary_text.delta":
      case "response.reasoning_text.delta":
        reasoningItem = event.item_id;
        if (event.delta !== "") yield { type: "reasoning.delta", text: event.delta };
        break;
      case "response.output_item.done": {
        const item = event.item;
        if (item.type === "reasoning") {
          reasoningItem = undefined;
          const data: { [key: string]: JsonValue } = { id: item.id };
          if (typeof item.encrypted_content === "string" && item.encrypted_content !== "") data["encryptedContent"] = item.encrypted_content;
          yield { type: "reasoning.end", continuation: { protocol: "responses", providerId: model.providerId, data } };
        } else if (item.type === "function_call") {
          sawToolCall = true;
          yield {
            type: "tool_call",
            id: item.call_id !== "" ? item.call_id : `call_${randomUUID().replace(/-/g, "")}`,
            name: item.name,
            arguments: item.arguments === "" ? "{}" : item.arguments,
          };
        }
        break;
      }
      case "response.completed":
      case "response.incomplete": {
        const response = event.response;
        const usage = response.usage;
        if (usage) {
          yield {
            type: "usage",
            promptTokens: usage.input_tokens ?? 0,
            completionTokens: usage.output_tokens ?? 0,
            ...(usage.input_tokens_details?.cached_tokens != null ? { cachedPromptTokens: usage.input_tokens_details.cached_tokens } : {}),
            ...(usage.output_tokens_details?.reasoning_tokens != null ? { reasoningTokens: usage.output_tokens_details.reasoning_tokens } : {}),
          };
        }
        let reason: FinishReason = sawToolCall ? "tool_calls" : sawRefusal ? "refusal" : "stop";
        if (event.type === "response.incomplete") {
          reason = response.incomplete_details?.reason === "content_filter" ? "content_filter" : "length";
        }
        finished = true;
        yield { type: "finish", reason };
        break;
      }
      case "response.failed": {
        const error = event.response.error;
        throw attempt.record(streamedError(attempt, error?.code));
      }
      case "error":
        throw attempt.record(streamedError(attempt, event.code ?? undefined));
      default:
        break;
    }
    if (finished) break;
  }
  if (!finished) throw attempt.record(attempt.fail("transport", "the stream ended before the model finished"));
}

/**
 * A failure the provider reported inside the stream (no HTTP status): classified by its code.
 * The event's `message` is never read — provider text does not reach a failure (failure.ts).
 */
function streamedError(attempt: Attempt, code: unknown): ProviderFailure {
  const safeCode = attempt.token(code);
  const kind = kindOfCode(typeof code === "string" ? code : undefined) ?? "server";
  return attempt.fail(kind, streamedDescription(kind), safeCode !== undefined ? { providerCode: safeCode } : {});
}
