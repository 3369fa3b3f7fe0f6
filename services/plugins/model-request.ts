// The request Core sends a plugin model, in the contract's provider-neutral shape
// (plugin/message.ts, plugin/model.ts): the Turn's system prompt as instructions, its history as
// `ModelMessage`s (tool results grouped into one `tool` message per assistant round), the tools it
// may call (none when the model does not take tools), the model's default settings with the
// request's reasoning effort, and no provider options. And back: a plugin's request to a sibling,
// lowered to what the host's adapters take.
import type { ModelDeclaration, PluginModelRequest } from "../../plugin/index.js";
import type { AssistantContentPart as PluginAssistantPart, ModelMessage as PluginMessage, ModelToolDescriptor, PromptContentPart, ToolResultPart, ToolResultValue } from "../../plugin/message.js";
import type { JsonObject } from "../../plugin/json.js";
import type { ModelMessage, ModelTool, ServedModelRequest, SiblingRequest, ToolResultMessage } from "../providers/index.js";
import { isRecord } from "./checks.js";

/** A tool call's streamed arguments as the JSON object the contract carries (`{}` when they are not an object). */
function inputOf(text: string): JsonObject {
  try {
    const value: unknown = JSON.parse(text);
    return isRecord(value) ? (value as JsonObject) : {};
  } catch {
    return {};
  }
}

function resultOf(message: ToolResultMessage): ToolResultValue {
  const result = message.result;
  if (result.format === "text") return { type: "text", text: result.value };
  if (result.format === "json") return { type: "json", value: (result.value ?? null) as JsonObject };
  const content = result.value.map((part) => (part.type === "json" ? { type: "json" as const, value: (part.value ?? null) as JsonObject } : part));
  return content.length > 0 ? { type: "content", content: content as [never, ...never[]] } : { type: "text", text: "" };
}

/** The Turn's history in the contract's message shape; empty parts and messages are left out. */
export function pluginMessages(messages: readonly ModelMessage[]): PluginMessage[] {
  const out: PluginMessage[] = [];
  let results: ToolResultPart[] | undefined;
  for (const message of messages) {
    if (message.role === "tool") {
      const part: ToolResultPart = { type: "tool-result", toolCallId: message.toolCallId, output: resultOf(message), isError: message.isError };
      if (results) results.push(part);
      else out.push({ role: "tool", content: (results = [part]) });
      continue;
    }
    results = undefined;
    if (message.role === "user") {
      const content = message.content.filter((part) => part.type !== "text" || part.text !== "") as PromptContentPart[];
      if (content.length > 0) out.push({ role: "user", content });
      continue;
    }
    const content: PluginAssistantPart[] = [];
    for (const part of message.content) {
      if (part.type === "text" && part.text !== "") content.push({ type: "text", text: part.text });
      else if (part.type === "reasoning") content.push(part.text !== "" ? { type: "reasoning", text: part.text } : { type: "reasoning-boundary" });
      else if (part.type === "refusal" && part.text !== "") content.push({ type: "refusal", text: part.text });
      else if (part.type === "tool_call") content.push({ type: "tool-call", id: part.id, name: part.name, input: inputOf(part.arguments) });
    }
    if (content.length > 0) out.push({ role: "assistant", content });
  }
  return out;
}

/** The `PluginModelRequest` for one call of `declaration`. */
export function pluginRequest(declaration: ModelDeclaration, request: ServedModelRequest): PluginModelRequest {
  const takesTools = declaration.metadata.capabilities.tools;
  const tools: ModelToolDescriptor[] = takesTools ? request.tools.map((tool) => ({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema as JsonObject })) : [];
  const defaults = declaration.metadata.defaults ?? {};
  return {
    model: `${declaration.providerId}/${declaration.modelId}`,
    instructions: request.system !== undefined && request.system !== "" ? [{ role: "system", text: request.system }] : [],
    messages: pluginMessages(request.messages),
    tools,
    toolChoice: tools.length > 0 ? { mode: "auto" } : { mode: "none" },
    settings: { ...defaults, ...(request.reasoningEffort !== undefined ? { reasoningEffort: request.reasoningEffort } : {}) },
    providerOptions: undefined,
  };
}

/**
 * A plugin's request to a sibling, lowered to the host's shape: instructions joined as the system
 * prompt, messages back to the Turn's history shape. Only tools the original request offered are
 * passed on (a delegate cannot grant a tool).
 */
export function siblingRequest(request: PluginModelRequest, offered: readonly ModelTool[]): SiblingRequest {
  const system = (Array.isArray(request.instructions) ? request.instructions : []).map((instruction) => instruction.text).join("\n\n");
  const messages: ModelMessage[] = [];
  for (const message of request.messages) {
    if (message.role === "tool") {
      for (const part of message.content) {
        const output = part.output;
        const result: ToolResultMessage["result"] =
          output.type === "text" ? { format: "text", value: output.text } : output.type === "json" ? { format: "json", value: output.value } : { format: "content", value: output.content as never };
        messages.push({ role: "tool", toolCallId: part.toolCallId, toolName: toolNameOf(request.messages, part.toolCallId), result, isError: part.isError });
      }
    } else if (message.role === "assistant") {
      messages.push({
        role: "assistant",
        content: message.content.map((part) =>
          part.type === "tool-call" ? { type: "tool_call" as const, id: part.id, name: part.name, arguments: JSON.stringify(part.input) } : part.type === "reasoning-boundary" ? { type: "reasoning" as const, text: "" } : { type: part.type, text: part.text },
        ),
      });
    } else {
      messages.push({ role: "user", content: message.content.map((part) => (part.type === "text" ? { type: "text" as const, text: part.text } : { type: "image" as const, source: part.source as never })) });
    }
  }
  const names = new Set(request.tools.map((tool) => tool.name));
  const reasoningEffort = request.settings?.reasoningEffort;
  return {
    ...(system !== "" ? { system } : {}),
    messages,
    tools: offered.filter((tool) => names.has(tool.name)),
    ...(reasoningEffort !== undefined ? { reasoningEffort } : {}),
  };
}

function toolNameOf(messages: readonly PluginMessage[], toolCallId: string): string {
  for (const message of messages) {
    if (message.role !== "assistant") continue;
    for (const part of message.content) if (part.type === "tool-call" && part.id === toolCallId) return part.name;
  }
  return "";
}
