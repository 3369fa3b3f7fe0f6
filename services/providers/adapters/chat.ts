// Chat Completions (`POST <baseURL>/chat/completions`): the request and chunk shapes are the
// official `openai` SDK's types; the request itself goes through sse-post.ts, without the SDK
// (its per-request cost was most of a warm host's CPU per one-step Turn; see sse-post.ts). The
// body is built as JSON text, each history message's and each tool's part made once (`chatRequestJson`).
//
// Lowering: the system prompt is a `system` message; user images are `image_url` parts (base64
// as data URLs); an assistant's tool calls are `tool_calls`; each tool result is a `tool`
// message. Chat accepts only text in tool replies, so text and JSON go in the reply and images
// follow the contiguous tool replies in one user message, labeled with their tool call IDs.
// Reasoning is replayed (as the field it arrived in) only to the same provider, and only on
// assistant messages with tool calls, where interleaved-thinking providers require it.
import { randomUUID } from "node:crypto";
import type {
  ChatCompletionChunk,
  ChatCompletionContentPart,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
  ChatCompletionMessageToolCall,
  ChatCompletionTool,
} from "openai/resources/chat/completions";
import type { ImageSource } from "../../../generated/client/types.gen.js";
import type { FinishReason, ModelRequest, ModelStreamEvent, ModelTool } from "../events.js";
import { sharedLeadingMessages, toolResultText, type AssistantMessage, type ModelMessage, type ReasoningContinuation, type UserMessage } from "../history.js";
import { JsonText, postSse } from "../sse-post.js";
import type { Attempt } from "../wire.js";


type ReasoningField = "reasoning_content" | "reasoning";

export const imageUrl = (source: ImageSource): string =>
  source.type === "url" ? source.url : `data:${source.mimeType};base64,${source.data}`;

function chatReasoningField(continuation: ReasoningContinuation | undefined, providerId: string): ReasoningField | undefined {
  if (continuation?.protocol !== "chat" || continuation.providerId !== providerId) return undefined;
  const field = continuation.data["field"];
  return field === "reasoning_content" || field === "reasoning" ? field : undefined;
}

/** A user message as Chat Completions' `user` message. */
function userParam(message: UserMessage): ChatCompletionMessageParam {
  const onlyText = message.content.every((part) => part.type === "text");
  return {
    role: "user",
    content: onlyText
      ? message.content.map((part) => (part.type === "text" ? part.text : "")).join("")
      : message.content.map(
          (part): ChatCompletionContentPart =>
            part.type === "text" ? { type: "text", text: part.text } : { type: "image_url", image_url: { url: imageUrl(part.source) } },
        ),
  };
}

/** An assistant message as Chat's `assistant` message; undefined when nothing of it is sent. */
function assistantParam(message: AssistantMessage, providerId: string): ChatCompletionMessageParam | undefined {
  let text = "";
  const reasoning: Partial<Record<ReasoningField, string>> = {};
  const toolCalls: ChatCompletionMessageToolCall[] = [];
  for (const part of message.content) {
    if (part.type === "text" || part.type === "refusal") text += part.text;
    else if (part.type === "tool_call") toolCalls.push({ id: part.id, type: "function", function: { name: part.name, arguments: part.arguments } });
    else {
      const field = chatReasoningField(part.continuation, providerId);
      if (field !== undefined) reasoning[field] = (reasoning[field] ?? "") + part.text;
    }
  }
  if (text === "" && toolCalls.length === 0) return undefined;
  return {
    role: "assistant",
    content: text === "" ? null : text,
    ...(toolCalls.length > 0 ? { tool_calls: toolCalls, ...reasoning } : {}),
  } as ChatCompletionMessageParam;
}

/**
 * The run of tool results starting at `start`: one `tool` message each, then their images in one
 * user message, appended to `out`. Returns the index after the run.
 */
function toolRun(messages: readonly ModelMessage[], start: number, out: ChatCompletionMessageParam[]): number {
  const images: ChatCompletionContentPart[] = [];
  let cursor = start;
  for (; cursor < messages.length; cursor += 1) {
    const result = messages[cursor]!;
    if (result.role !== "tool") break;
    out.push({ role: "tool", tool_call_id: result.toolCallId, content: toolResultText(result.result) });
    if (result.result.format === "content") {
      const parts = result.result.value.filter((part) => part.type === "image");
      if (parts.length > 0) {
        images.push({ type: "text", text: `Images from tool call ${result.toolCallId}:` });
        for (const part of parts) images.push({ type: "image_url", image_url: { url: imageUrl(part.source) } });
      }
    }
  }
  if (images.length > 0) out.push({ role: "user", content: images });
  return cursor;
}

/** The history as Chat Completions messages. */
export function chatMessages(request: Pick<ModelRequest, "system" | "messages" | "model">): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = [];
  if (request.system !== undefined && request.system !== "") out.push({ role: "system", content: request.system });
  const messages = request.messages;
  for (let index = 0; index < messages.length; index += 1) {
    const message = messages[index]!;
    if (message.role === "user") out.push(userParam(message));
    else if (message.role === "assistant") {
      const param = assistantParam(message, request.model.providerId);
      if (param !== undefined) out.push(param);
    } else index = toolRun(messages, index, out) - 1;
  }
  return out;
}

/**
 * Each user and assistant message's Chat JSON, by message ("" when it sends nothing) and the
 * provider its reasoning was lowered for. History messages are immutable (as the context
 * measure's `jsonLength` also assumes) and a Session's settled ones are the same objects Turn
 * after Turn (core/history/assemble.ts `HistoryCache`): a long Session's request is then
 * serialized once per message, not again on every request (issue 21 §2).
 */
const loweredJson = new WeakMap<ModelMessage, { readonly providerId: string; readonly json: string }>();

function messageJson(message: UserMessage | AssistantMessage, providerId: string): string {
  const cached = loweredJson.get(message);
  if (cached !== undefined && (message.role === "user" || cached.providerId === providerId)) return cached.json;
  const param = message.role === "user" ? userParam(message) : assistantParam(message, providerId);
  const json = param === undefined ? "" : JSON.stringify(param);
  loweredJson.set(message, { providerId, json });
  return json;
}

/**
 * The joined JSON of a history's leading messages, by the history's first message: the next
 * request of the Session repeats most of them (the same objects, in the same order) and adds a
 * few, so only those are looked up and joined — a 1,000-Turn Session's request otherwise walks and
 * joins every message again (issue 21 §2). Not all of them: the last Turn's prompt was the Turn's
 * own message object, and the next Turn's history holds the one read back from its row, so the
 * kept JSON is cut back to the longest run of leading messages both requests share. `ends[c]` is
 * the JSON's length covering the first `c` messages where a cut may fall (after a user or
 * assistant message: cutting inside a tool run would lower it differently), else -1; `messages`
 * ends before any trailing tool message, and `json` is their elements, comma-joined.
 */
interface JoinedPrefix {
  readonly providerId: string;
  readonly messages: readonly ModelMessage[];
  readonly json: string;
  readonly ends: readonly number[];
}
const joinedPrefixes = new WeakMap<ModelMessage, JoinedPrefix>();

const NOTHING_REUSED = { count: 0, json: "", ends: [0] } as const;

/** The kept JSON of the longest leading run of `messages` the prefix covers, cut where a cut may fall. */
function reusable(prefix: JoinedPrefix | undefined, messages: readonly ModelMessage[], providerId: string): { readonly count: number; readonly json: string; readonly ends: readonly number[] } {
  if (prefix === undefined || prefix.providerId !== providerId) return NOTHING_REUSED;
  const known = prefix.messages;
  let count = sharedLeadingMessages(known, messages);
  while (count > 0 && prefix.ends[count]! < 0) count -= 1;
  if (count === 0) return NOTHING_REUSED;
  const end = prefix.ends[count]!;
  // A slice of a kept (flattened, once written) string shares its characters rather than copying them.
  return { count, json: end === prefix.json.length ? prefix.json : prefix.json.slice(0, end), ends: count === known.length ? prefix.ends : prefix.ends.slice(0, count + 1) };
}

/** The JSON array elements of `messages` lowered for `providerId`, comma-joined, and how many leading messages were reused rather than looked up. */
export function joinedMessagesJson(messages: readonly ModelMessage[], providerId: string): { readonly json: string; readonly reused: number } {
  const first = messages[0];
  const reuse = reusable(first !== undefined ? joinedPrefixes.get(first) : undefined, messages, providerId);
  const start = reuse.count;
  // The reused part stays one string (concatenated, not joined: a join would copy it on every
  // request; the body is flattened once, when it is written).
  const reused = reuse.json;
  const parts: string[] = [];
  const ends = reuse.ends.slice();
  // The joined length so far, as `reused` and the parts would join.
  let length = reused.length;
  // Where the messages that may be reused next time end: before a trailing run of tool messages.
  let boundary = start;
  let boundaryParts = 0;
  for (let index = start; index < messages.length; index += 1) {
    const message = messages[index]!;
    if (message.role !== "tool") {
      const json = messageJson(message, providerId);
      if (json !== "") {
        parts.push(json);
        length += (length > 0 ? 1 : 0) + json.length;
      }
      ends.push(length);
      boundary = index + 1;
      boundaryParts = parts.length;
      continue;
    }
    const run: ChatCompletionMessageParam[] = [];
    const after = toolRun(messages, index, run);
    for (const param of run) {
      const json = JSON.stringify(param);
      parts.push(json);
      length += (length > 0 ? 1 : 0) + json.length;
    }
    for (; index < after; index += 1) ends.push(-1);
    index = after - 1;
  }
  const added = parts.slice(0, boundaryParts).join(",");
  const kept = reused === "" || added === "" ? reused + added : `${reused},${added}`;
  if (first !== undefined && boundary > start) joinedPrefixes.set(first, { providerId, messages: messages.slice(0, boundary), json: kept, ends: ends.slice(0, boundary + 1) });
  const rest = parts.slice(boundaryParts).join(",");
  return { json: kept === "" || rest === "" ? kept + rest : `${kept},${rest}`, reused: start };
}

/** `JSON.stringify(chatMessages(request))`, with each user and assistant message's JSON made once and a Session's repeated leading messages joined once. */
export function chatMessagesJson(request: Pick<ModelRequest, "system" | "messages" | "model">): string {
  const body = joinedMessagesJson(request.messages, request.model.providerId).json;
  if (request.system === undefined || request.system === "") return `[${body}]`;
  const system = JSON.stringify({ role: "system", content: request.system });
  return body === "" ? `[${system}]` : `[${system},${body}]`;
}

/**
 * Each tool's Chat JSON, made once: a Turn's `ModelTool`s are the same objects Turn after Turn
 * (core/turns/setup.ts builds one per tool definition and description), and their schemas and
 * descriptions are most of a short request's body.
 */
const toolJson = new WeakMap<ModelTool, string>();

function chatToolJson(tool: ModelTool): string {
  let json = toolJson.get(tool);
  if (json === undefined) {
    const param: ChatCompletionTool = { type: "function", function: { name: tool.name, description: tool.description, parameters: tool.inputSchema } };
    toolJson.set(tool, (json = JSON.stringify(param)));
  }
  return json;
}

/** The request body: `JSON.stringify` of the request's parameters (in this key order), the tools' and messages' JSON made once each. */
export function chatRequestJson(request: ModelRequest, tools: readonly ModelTool[]): string {
  const { model } = request;
  const head: Pick<ChatCompletionCreateParamsStreaming, "model" | "stream" | "stream_options"> = { model: model.upstreamId, stream: true, stream_options: { include_usage: true } };
  const rest: Pick<ChatCompletionCreateParamsStreaming, "max_tokens" | "reasoning_effort" | "temperature"> = {
    ...(request.maxOutputTokens !== undefined ? { max_tokens: request.maxOutputTokens } : {}),
    ...(request.reasoningEffort !== undefined && model.reasoning ? { reasoning_effort: request.reasoningEffort as ChatCompletionCreateParamsStreaming["reasoning_effort"] } : {}),
    ...(request.temperature !== undefined && model.temperature ? { temperature: request.temperature } : {}),
  };
  let json = JSON.stringify(head).slice(0, -1);
  if (tools.length > 0) json += `,"tools":[${tools.map(chatToolJson).join(",")}]`;
  const restJson = JSON.stringify(rest);
  if (restJson !== "{}") json += `,${restJson.slice(1, -1)}`;
  return `${json},"messages":${chatMessagesJson(request)}}`;
}

function finishOf(reason: string | null | undefined, sawToolCalls: boolean, sawRefusal: boolean): FinishReason {
  if (reason === "length") return "length";
  if (reason === "content_filter") return "content_filter";
  if (reason === "tool_calls" || reason === "function_call" || sawToolCalls) return "tool_calls";
  return sawRefusal ? "refusal" : "stop";
}

interface PendingCall {
  id: string;
  name: string;
  arguments: string;
}

export async function* streamChat(request: ModelRequest, attempt: Attempt): AsyncGenerator<ModelStreamEvent> {
  const { model } = request;
  const tools = model.capabilities.tools && request.tools.length > 0 ? request.tools : [];
  const body = new JsonText(chatRequestJson(request, tools));
  const stream = postSse(attempt, {
    endpoint: model.endpoint,
    headers: model.headers,
    authentication: model.authentication,
    ...(request.credential !== undefined ? { credential: request.credential } : {}),
  }, body) as AsyncGenerator<ChatCompletionChunk>;

  const calls = new Map<number, PendingCall>();
  let reasoningField: ReasoningField | undefined;
  let reasoningOpen = false;
  let finish: string | null | undefined;
  let sawRefusal = false;
  let usage: ChatCompletionChunk["usage"];
  const closeReasoning = function* (): Generator<ModelStreamEvent> {
    if (!reasoningOpen) return;
    reasoningOpen = false;
    yield {
      type: "reasoning.end",
      ...(reasoningField !== undefined ? { continuation: { protocol: "chat", providerId: model.providerId, data: { field: reasoningField } } } : {}),
    };
  };

  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    for (const choice of chunk.choices ?? []) {
      if (choice.index !== 0 && choice.index !== undefined) continue;
      const delta = (choice.delta ?? {}) as ChatCompletionChunk.Choice.Delta & { reasoning_content?: unknown; reasoning?: unknown };
      // Providers name the field differently (DeepSeek/vLLM `reasoning_content`, OpenRouter `reasoning`); some send both.
      const field: ReasoningField | undefined =
        typeof delta.reasoning_content === "string" && delta.reasoning_content !== ""
          ? "reasoning_content"
          : typeof delta.reasoning === "string" && delta.reasoning !== ""
            ? "reasoning"
            : undefined;
      if (field !== undefined) {
        reasoningField ??= field;
        reasoningOpen = true;
        yield { type: "reasoning.delta", text: delta[field] as string };
      }
      if (typeof delta.content === "string" && delta.content !== "") {
        yield* closeReasoning();
        yield { type: "text.delta", text: delta.content };
      }
      if (typeof delta.refusal === "string" && delta.refusal !== "") {
        yield* closeReasoning();
        sawRefusal = true;
        yield { type: "refusal.delta", text: delta.refusal };
      }
      for (const call of delta.tool_calls ?? []) {
        const slot = call.index ?? calls.size;
        const pending = calls.get(slot) ?? { id: "", name: "", arguments: "" };
        if (call.id) pending.id = call.id;
        if (call.function?.name) pending.name += call.function.name;
        if (call.function?.arguments) pending.arguments += call.function.arguments;
        calls.set(slot, pending);
      }
      if (choice.finish_reason) finish = choice.finish_reason;
    }
  }
  yield* closeReasoning();
  if (finish === undefined || finish === null) {
    throw attempt.record(attempt.fail("transport", "the stream ended before the model finished"));
  }
  for (const slot of [...calls.keys()].sort((a, b) => a - b)) {
    const call = calls.get(slot)!;
    if (call.name === "") throw attempt.record(attempt.fail("server", "the provider streamed a tool call without a name"));
    yield { type: "tool_call", id: call.id !== "" ? call.id : `call_${randomUUID().replace(/-/g, "")}`, name: call.name, arguments: call.arguments === "" ? "{}" : call.arguments };
  }
  if (usage) {
    yield {
      type: "usage",
      promptTokens: usage.prompt_tokens ?? 0,
      completionTokens: usage.completion_tokens ?? 0,
      ...(usage.prompt_tokens_details?.cached_tokens != null ? { cachedPromptTokens: usage.prompt_tokens_details.cached_tokens } : {}),
      ...(usage.completion_tokens_details?.reasoning_tokens != null ? { reasoningTokens: usage.completion_tokens_details.reasoning_tokens } : {}),
    };
  }
  yield { type: "finish", reason: finishOf(finish, calls.size > 0, sawRefusal) };
}
