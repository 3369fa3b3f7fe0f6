// The adapter of a code-defined native provider (`defineProvider`): the request is lowered to the
// provider-neutral `PluginModelRequest` of `ze-harness/plugin`, the definition's `acquireModel`
// builds the model service (synchronously, with the validated options and the credential as a
// `Redacted`), and its `PluginModelEvent`s are lifted back to the stream events every adapter
// yields. Whatever the definition throws becomes our own wording (never its text).
import type { JsonObject, JsonValue } from "../../../plugin/json.js";
import type { AssistantContentPart as NeutralAssistantPart, ModelMessage as NeutralMessage, ToolResultValue } from "../../../plugin/message.js";
import type { PluginModelEvent, PluginModelRequest } from "../../../plugin/model.js";
import type { ProviderModelService, Redacted } from "../../../plugin/provider.js";
import type { ToolResult } from "../../../generated/client/types.gen.js";
import type { FinishReason, ModelRequest, ModelStreamEvent } from "../events.js";
import { ProviderFailure } from "../failure.js";
import type { ModelMessage } from "../history.js";
import type { Secret } from "../secret.js";
import type { Attempt } from "../wire.js";

/** The symbol `ze-harness/plugin`'s `revealRedacted` reads (shared by every copy through `Symbol.for`). */
const REDACTED_VALUE = Symbol.for("ze-harness.redacted.value");

function redacted(secret: Secret): Redacted {
  const value = {
    _tag: "Redacted" as const,
    toString: () => "<redacted>",
    toJSON: () => "<redacted>",
    [Symbol.for("nodejs.util.inspect.custom")]: () => "<redacted>",
  };
  Object.defineProperty(value, REDACTED_VALUE, { value: () => secret.reveal(), enumerable: false });
  return Object.freeze(value);
}

const parseInput = (text: string): JsonObject => {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as JsonObject) : {};
  } catch {
    return {};
  }
};

function toolOutput(result: ToolResult): ToolResultValue {
  if (result.format === "text") return { type: "text", text: result.value };
  if (result.format === "json") return { type: "json", value: (result.value ?? null) as JsonValue };
  return { type: "content", content: result.value as unknown as Extract<ToolResultValue, { type: "content" }>["content"] };
}

/** The conversation in `ze-harness/plugin`'s neutral shape (consecutive tool results become one message). */
export function neutralMessages(messages: readonly ModelMessage[]): NeutralMessage[] {
  const out: NeutralMessage[] = [];
  for (const message of messages) {
    if (message.role === "user") {
      out.push({ role: "user", content: message.content.map((part) => (part.type === "text" ? { type: "text", text: part.text } : { type: "image", source: part.source })) });
    } else if (message.role === "assistant") {
      const content: NeutralAssistantPart[] = message.content.map((part) => {
        if (part.type === "tool_call") return { type: "tool-call", id: part.id, name: part.name, input: parseInput(part.arguments) };
        if (part.type === "reasoning") return part.text === "" ? { type: "reasoning-boundary" } : { type: "reasoning", text: part.text };
        return { type: part.type, text: part.text };
      });
      if (content.length > 0) out.push({ role: "assistant", content });
    } else {
      const part = { type: "tool-result" as const, toolCallId: message.toolCallId, output: toolOutput(message.result), isError: message.isError };
      const last = out.at(-1);
      if (last?.role === "tool") out[out.length - 1] = { role: "tool", content: [...last.content, part] };
      else out.push({ role: "tool", content: [part] });
    }
  }
  return out;
}

export function neutralRequest(request: ModelRequest): PluginModelRequest {
  return {
    model: request.model.ref,
    instructions: request.system !== undefined && request.system !== "" ? [{ role: "system", text: request.system }] : [],
    messages: neutralMessages(request.messages),
    tools: request.tools.map((tool) => ({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema as JsonObject })),
    toolChoice: { mode: "auto" },
    settings: {
      ...(request.reasoningEffort !== undefined ? { reasoningEffort: request.reasoningEffort } : {}),
      ...(request.maxOutputTokens !== undefined ? { maxOutputUnits: request.maxOutputTokens } : {}),
      ...(request.temperature !== undefined && request.model.temperature ? { temperature: request.temperature } : {}),
    },
    providerOptions: undefined,
  };
}

const FINISH: Readonly<Record<Extract<PluginModelEvent, { _tag: "ResponseFinished" }>["reason"], FinishReason>> = {
  stop: "stop",
  "tool-calls": "tool_calls",
  length: "length",
  "content-filter": "content_filter",
  other: "stop",
};

const isThenable = (value: unknown): boolean =>
  (typeof value === "object" || typeof value === "function") && value !== null && typeof (value as { then?: unknown }).then === "function";

export async function* streamNative(request: ModelRequest, attempt: Attempt): AsyncGenerator<ModelStreamEvent> {
  const { model } = request;
  const binding = model.native!;
  const broken = (what: string): ProviderFailure =>
    new ProviderFailure({ kind: "server", retryable: false, beforeOutput: !attempt.outputStarted, message: `${model.ref}: the native provider "${binding.definition.definitionId}" ${what}` });
  let events: AsyncIterable<PluginModelEvent>;
  try {
    const service: ProviderModelService = binding.definition.acquireModel({
      providerId: model.providerId,
      modelId: model.id,
      upstreamModelId: model.upstreamId,
      apiRoot: binding.apiRoot,
      protocol: model.protocol,
      options: binding.options as JsonObject,
      credentials: request.credential !== undefined ? redacted(request.credential) : undefined,
    });
    if (isThenable(service) || typeof service?.stream !== "function") throw broken("did not return a model service synchronously");
    events = service.stream(neutralRequest(request), { signal: attempt.signal, sessionId: request.sessionId ?? "" });
    if (isThenable(events) || typeof (events as { [Symbol.asyncIterator]?: unknown })?.[Symbol.asyncIterator] !== "function") {
      throw broken("stream did not return an async iterable synchronously");
    }
  } catch (error) {
    if (error instanceof ProviderFailure) throw error;
    throw broken("failed to start the request");
  }
  let finished = false;
  try {
    for await (const event of events) {
      switch (event?._tag) {
        case "ContentDelta":
          if (event.delta === "") break;
          yield { type: event.contentType === "text" ? "text.delta" : event.contentType === "reasoning" ? "reasoning.delta" : "refusal.delta", text: event.delta };
          break;
        case "ContentCompleted":
          if (event.content.type === "reasoning" || event.content.type === "reasoning-boundary") yield { type: "reasoning.end" };
          break;
        case "ToolCallCompleted":
          yield { type: "tool_call", id: event.toolCall.id, name: event.toolCall.name, arguments: JSON.stringify(event.toolCall.input ?? {}) };
          break;
        case "Usage":
          yield {
            type: "usage",
            promptTokens: event.usage.inputUnits,
            completionTokens: event.usage.outputUnits,
            cachedPromptTokens: event.usage.cacheReadInputUnits,
            cacheWriteTokens: event.usage.cacheWriteInputUnits,
            reasoningTokens: event.usage.reasoningUnits,
          };
          break;
        case "ResponseFinished":
          finished = true;
          yield { type: "finish", reason: FINISH[event.reason] ?? "stop" };
          return;
        default:
          break;
      }
    }
  } catch (error) {
    if (error instanceof ProviderFailure) throw error;
    if (attempt.signal.aborted) throw error;
    throw broken("failed while streaming");
  }
  if (!finished) throw broken("ended its stream without ResponseFinished");
}
