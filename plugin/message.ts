// `message`: the provider-neutral conversation a model request carries.
import type { JsonObject, JsonSchema, JsonValue } from "./json.js";

export type ImageMimeType = "image/jpeg" | "image/png" | "image/gif" | "image/webp";

export type ImageReference =
  | { readonly type: "url"; readonly url: string; readonly mimeType?: ImageMimeType | undefined }
  | { readonly type: "base64"; readonly data: string; readonly mimeType: ImageMimeType };

export interface PromptTextPart {
  readonly type: "text";
  /** Non-empty. */
  readonly text: string;
}

export interface PromptImagePart {
  readonly type: "image";
  readonly source: ImageReference;
}

export type PromptContentPart = PromptTextPart | PromptImagePart;

/** Non-empty user-authored content, such as a Turn's prompt. */
export type PromptContent = readonly [PromptContentPart, ...PromptContentPart[]];

export interface ReasoningPart {
  readonly type: "reasoning";
  readonly text: string;
}

/** The position of a reasoning item that has no visible text. */
export interface ReasoningBoundaryPart {
  readonly type: "reasoning-boundary";
}

export interface RefusalPart {
  readonly type: "refusal";
  readonly text: string;
}

export interface ModelToolCallPart {
  readonly type: "tool-call";
  readonly id: string;
  readonly name: string;
  readonly input: JsonObject;
}

export type ToolResultContentPart = { readonly type: "text"; readonly text: string } | { readonly type: "json"; readonly value: JsonValue } | PromptImagePart;

export type ToolResultValue =
  | { readonly type: "content"; readonly content: readonly [ToolResultContentPart, ...ToolResultContentPart[]] }
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "json"; readonly value: JsonValue };

export interface ToolResultPart {
  readonly type: "tool-result";
  readonly toolCallId: string;
  readonly output: ToolResultValue;
  readonly isError: boolean;
}

export type AssistantContentPart = PromptTextPart | ReasoningPart | ReasoningBoundaryPart | RefusalPart | ModelToolCallPart;

/** One message in the conversation sent to a model; each has non-empty `content`. */
export type ModelMessage =
  | { readonly role: "developer"; readonly content: readonly { readonly type: "text"; readonly text: string }[] }
  | { readonly role: "user"; readonly content: readonly PromptContentPart[] }
  | { readonly role: "assistant"; readonly content: readonly AssistantContentPart[] }
  | { readonly role: "tool"; readonly content: readonly ToolResultPart[] };

/** One instruction that precedes the conversation. */
export interface ModelInstruction {
  readonly role: "system" | "developer";
  /** Non-empty. */
  readonly text: string;
}

export type ModelInstructions = readonly ModelInstruction[];

export type ModelToolChoice =
  | { readonly mode: "auto" }
  | { readonly mode: "none" }
  | { readonly mode: "required" }
  | { readonly mode: "tool"; readonly name: string };

export interface ModelToolDescriptor {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: JsonSchema;
}

/** Every field optional; absent means unset. */
export interface GenerationSettings {
  readonly temperature?: number | undefined;
  readonly topP?: number | undefined;
  readonly maxOutputUnits?: number | undefined;
  readonly stopSequences?: readonly [string, ...string[]] | undefined;
  readonly seed?: number | undefined;
  readonly reasoningEffort?: "none" | "minimal" | "low" | "medium" | "high" | "xhigh" | "max" | undefined;
}

export type ImageReferenceKind = "url" | "base64";
