// The provider-neutral conversation history the Turn loop persists and replays: `ModelMessage`.
// Adapters lower it to their wire format on every request, so a history recorded with one
// protocol replays through another. Content parts reuse the contract's shapes (`TextPart`,
// `ImagePart`, `ToolResult`), so what is persisted is what the API shows.
//
// Provider-private data needed to continue a conversation (Anthropic thinking signatures,
// Responses reasoning item IDs and encrypted content, a Chat reasoning field) rides on a
// reasoning part as an opaque `continuation` tagged with the protocol and provider that made
// it; adapters replay it only to that same provider and protocol, and drop it elsewhere.
import type { ImagePart, TextPart, ToolResult } from "../../generated/client/types.gen.js";
import type { JsonValue } from "../config/types.js";
import type { ModelStreamEvent } from "./events.js";
import type { ModelProtocol } from "./protocol.js";

/** What a user message holds: text and images (URL or base64). */
export type UserContentPart = TextPart | ImagePart;

export interface UserMessage {
  readonly role: "user";
  readonly content: readonly UserContentPart[];
}

/** Opaque provider data that lets a later request continue from this reasoning. */
export interface ReasoningContinuation {
  readonly protocol: ModelProtocol;
  readonly providerId: string;
  /**
   * messages: `{ signature }` for a thinking block or `{ redactedData }` for a redacted one;
   * responses: `{ id, encryptedContent? }`; chat: `{ field }` (the delta field the reasoning came in).
   */
  readonly data: { readonly [key: string]: JsonValue };
}

export interface ReasoningPart {
  readonly type: "reasoning";
  /** The visible reasoning (or summary) text; empty for redacted reasoning. */
  readonly text: string;
  readonly continuation?: ReasoningContinuation;
}

export interface RefusalPart {
  readonly type: "refusal";
  readonly text: string;
}

export interface ToolCallPart {
  readonly type: "tool_call";
  /** The provider's call ID; the matching tool result carries it as `toolCallId`. */
  readonly id: string;
  readonly name: string;
  /** The arguments exactly as the model streamed them (JSON text; not validated here). */
  readonly arguments: string;
}

export type AssistantContentPart = TextPart | ReasoningPart | RefusalPart | ToolCallPart;

export interface AssistantMessage {
  readonly role: "assistant";
  readonly content: readonly AssistantContentPart[];
}

/** One tool call's result. Consecutive tool messages answer the preceding assistant's calls. */
export interface ToolResultMessage {
  readonly role: "tool";
  readonly toolCallId: string;
  readonly toolName: string;
  /** Text, JSON, or content parts (text / JSON / image). */
  readonly result: ToolResult;
  readonly isError: boolean;
}

export type ModelMessage = UserMessage | AssistantMessage | ToolResultMessage;

/**
 * Folds a stream's content events into the assistant message to persist. Adjacent deltas of one
 * kind extend one part; `reasoning.end` closes the open reasoning part (attaching its
 * continuation; with none open it records a text-less, e.g. redacted, reasoning part).
 */
export class AssistantMessageBuilder {
  readonly #parts: AssistantContentPart[] = [];
  #reasoningOpen = false;

  add(event: ModelStreamEvent): void {
    switch (event.type) {
      case "text.delta":
      case "refusal.delta": {
        const type = event.type === "text.delta" ? "text" : "refusal";
        const last = this.#parts.at(-1);
        if (last !== undefined && last.type === type) {
          this.#parts[this.#parts.length - 1] = { ...last, text: last.text + event.text } as AssistantContentPart;
        } else {
          this.#parts.push({ type, text: event.text });
        }
        this.#reasoningOpen = false;
        return;
      }
      case "reasoning.delta": {
        const last = this.#parts.at(-1);
        if (this.#reasoningOpen && last !== undefined && last.type === "reasoning") {
          this.#parts[this.#parts.length - 1] = { ...last, text: last.text + event.text };
        } else {
          this.#parts.push({ type: "reasoning", text: event.text });
          this.#reasoningOpen = true;
        }
        return;
      }
      case "reasoning.end": {
        const last = this.#parts.at(-1);
        const open = this.#reasoningOpen && last !== undefined && last.type === "reasoning";
        const part: ReasoningPart = {
          type: "reasoning",
          text: open ? last.text : "",
          ...(event.continuation !== undefined ? { continuation: event.continuation } : {}),
        };
        if (open) this.#parts[this.#parts.length - 1] = part;
        else this.#parts.push(part);
        this.#reasoningOpen = false;
        return;
      }
      case "tool_call":
        this.#parts.push({ type: "tool_call", id: event.id, name: event.name, arguments: event.arguments });
        this.#reasoningOpen = false;
        return;
      default:
        return;
    }
  }

  message(): AssistantMessage {
    return { role: "assistant", content: [...this.#parts] };
  }
}

/** The assistant message a finished list of stream events describes. */
export function assembleAssistantMessage(events: Iterable<ModelStreamEvent>): AssistantMessage {
  const builder = new AssistantMessageBuilder();
  for (const event of events) builder.add(event);
  return builder.message();
}

/** A tool result rendered as text (JSON pretty-free, images noted), for wires that carry text only. */
export function toolResultText(result: ToolResult): string {
  if (result.format === "text") return result.value;
  if (result.format === "json") return JSON.stringify(result.value ?? null);
  return result.value
    .map((part) => (part.type === "text" ? part.text : part.type === "json" ? JSON.stringify(part.value ?? null) : "[image]"))
    .join("\n");
}

/**
 * How many leading messages two histories share as the same objects: a Session's next request
 * repeats most of the last one's (caches keyed by a history's first message reuse that run).
 */
export function sharedLeadingMessages(known: readonly ModelMessage[], messages: readonly ModelMessage[]): number {
  const limit = Math.min(known.length, messages.length);
  let same = 0;
  while (same < limit && known[same] === messages[same]) same += 1;
  return same;
}
