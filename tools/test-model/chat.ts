// OpenAI Chat Completions (`POST …/chat/completions`): chunks and completions typed against
// the openai SDK's own response types, so `tsc` catches a shape the SDK would not expect.
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionMessage } from "openai/resources/chat/completions";
import type { CompletionUsage } from "openai/resources/completions";
import {
  argumentsJson,
  modelOf,
  segmentsOf,
  splitArguments,
  splitWords,
  sse,
  type Frame,
  type RenderContext,
  type ResolvedTurn,
  type StopKind,
} from "./script.js";

type Delta = ChatCompletionChunk.Choice.Delta & { reasoning_content?: string; reasoning?: string };
type FinishReason = ChatCompletion.Choice["finish_reason"];

function finishReason(stop: StopKind): FinishReason {
  // OpenAI reports a refusal with finish_reason "stop" and the text in `refusal`.
  return stop === "refusal" ? "stop" : stop;
}

function usageOf(turn: ResolvedTurn): CompletionUsage {
  const { promptTokens, completionTokens, cachedPromptTokens, reasoningTokens } = turn.usage;
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    prompt_tokens_details: { cached_tokens: cachedPromptTokens, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: reasoningTokens,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

export function* chatStream(turn: ResolvedTurn, context: RenderContext): Generator<Frame> {
  const id = context.ids.next("chatcmpl");
  const created = Math.floor(context.now / 1000);
  const model = modelOf(context.request);
  const includeUsage = context.request.body?.stream_options?.include_usage === true;
  const reasoningField = context.options.chatReasoningField;

  const chunk = (choices: ChatCompletionChunk.Choice[], usage: CompletionUsage | null = null): ChatCompletionChunk => ({
    id,
    object: "chat.completion.chunk",
    created,
    model,
    choices,
    // With include_usage OpenAI sends `"usage": null` on every chunk but the last.
    ...(includeUsage ? { usage } : {}),
  });
  const delta = (value: Delta, finish: FinishReason | null = null): Frame =>
    sse(chunk([{ index: 0, delta: value, logprobs: null, finish_reason: finish }]));

  yield delta({ role: "assistant", content: "", refusal: null });
  let toolIndex = 0;
  for (const event of turn.events) {
    switch (event.type) {
      case "delay":
        yield { kind: "delay", ms: event.ms };
        break;
      case "drop":
        yield { kind: "drop" };
        return;
      case "error":
        // What OpenAI-compatible servers send mid-stream: a chunk that is only an error envelope.
        yield sse(openaiErrorBody(event.message, event.code, event.code));
        return;
      case "text":
        for (const piece of splitWords(event.text)) yield delta({ content: piece });
        break;
      case "reasoning":
        for (const piece of splitWords(event.text)) yield delta({ [reasoningField]: piece });
        break;
      case "refusal":
        for (const piece of splitWords(event.text)) yield delta({ refusal: piece });
        break;
      case "tool_call": {
        const index = toolIndex++;
        const callId = event.id ?? context.ids.next("call");
        yield delta({ tool_calls: [{ index, id: callId, type: "function", function: { name: event.name, arguments: "" } }] });
        for (const piece of splitArguments(argumentsJson(event.arguments))) {
          yield delta({ tool_calls: [{ index, function: { arguments: piece } }] });
        }
        break;
      }
    }
  }
  yield delta({}, finishReason(turn.stop));
  if (includeUsage) yield sse(chunk([], usageOf(turn)));
  yield sse("[DONE]");
}

export function chatCompletion(turn: ResolvedTurn, context: RenderContext): ChatCompletion {
  let content = "";
  let refusal = "";
  let reasoning = "";
  const toolCalls: NonNullable<ChatCompletionMessage["tool_calls"]> = [];
  for (const segment of segmentsOf(turn.events)) {
    if (segment.kind === "tool_call") {
      toolCalls.push({
        id: segment.id ?? context.ids.next("call"),
        type: "function",
        function: { name: segment.name, arguments: argumentsJson(segment.arguments) },
      });
    } else if (segment.kind === "text") content += segment.text;
    else if (segment.kind === "refusal") refusal += segment.text;
    else reasoning += segment.text;
  }
  const message: ChatCompletionMessage & { reasoning_content?: string; reasoning?: string } = {
    role: "assistant",
    content: content === "" ? null : content,
    refusal: refusal === "" ? null : refusal,
    annotations: [],
    ...(reasoning === "" ? {} : { [context.options.chatReasoningField]: reasoning }),
    ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
  };
  return {
    id: context.ids.next("chatcmpl"),
    object: "chat.completion",
    created: Math.floor(context.now / 1000),
    model: modelOf(context.request),
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason(turn.stop) }],
    usage: usageOf(turn),
  };
}

/** OpenAI's error envelope, used by both OpenAI protocols. */
export function openaiErrorBody(message: string, type: string, code: string | null = null): unknown {
  return { error: { message, type, param: null, code } };
}
