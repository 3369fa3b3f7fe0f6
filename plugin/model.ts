// `model`: models a plugin contributes to the catalog (`context.models.register`).
import type { JournalEntry } from "./journal.js";
import type { JsonObject } from "./json.js";
import type {
  GenerationSettings,
  ImageMimeType,
  ImageReferenceKind,
  ModelInstructions,
  ModelMessage,
  ModelToolCallPart,
  ModelToolChoice,
  ModelToolDescriptor,
  PromptTextPart,
  ReasoningBoundaryPart,
  ReasoningPart,
  RefusalPart,
} from "./message.js";

/** Catalog metadata for one plugin model; validated at activation. */
export interface PluginModelMetadata {
  /** Non-empty, at most 256 characters, no surrounding whitespace. */
  readonly displayName: string;
  readonly capabilities: {
    readonly input: readonly ["text" | "image", ...("text" | "image")[]];
    readonly output: readonly ["text", ..."text"[]];
    readonly tools: boolean;
    /** Required exactly when `input` includes `'image'`. */
    readonly image?:
      | { readonly referenceTypes: readonly [ImageReferenceKind, ...ImageReferenceKind[]]; readonly mimeTypes: readonly [ImageMimeType, ...ImageMimeType[]] }
      | undefined;
  };
  /** Non-negative integers; zero means not advertised. */
  readonly limits: { readonly contextUnits: number; readonly outputUnits: number };
  readonly pricing?:
    | {
        readonly version: "v1";
        readonly currency: string;
        readonly unit: "million_model_units";
        readonly rates: { readonly input: string; readonly output: string; readonly cacheReadInput?: string | undefined; readonly cacheWriteInput?: string | undefined };
      }
    | { readonly version: "unknown" }
    | undefined;
  readonly defaults?: GenerationSettings | undefined;
}

/** One sibling model a plugin model may delegate to. */
export interface PluginModelCandidate {
  readonly ref: string;
  readonly providerId: string;
  readonly modelId: string;
  readonly displayName: string;
  readonly capabilities: PluginModelMetadata["capabilities"];
  readonly limits: PluginModelMetadata["limits"];
  readonly pricing: NonNullable<PluginModelMetadata["pricing"]>;
  readonly defaults: GenerationSettings | undefined;
}

/** One provider-neutral model request. */
export interface PluginModelRequest {
  /** `providerId/modelId` of the model being called. */
  readonly model: string;
  readonly instructions: ModelInstructions;
  readonly messages: readonly ModelMessage[];
  readonly tools: readonly ModelToolDescriptor[];
  readonly toolChoice: ModelToolChoice;
  readonly settings: GenerationSettings;
  readonly providerOptions: JsonObject | undefined;
}

/** Usage for one response, as non-negative integers. */
export interface PluginModelEventUsage {
  readonly freshInputUnits: number;
  readonly cacheReadInputUnits: number;
  readonly cacheWriteInputUnits: number;
  readonly inputUnits: number;
  readonly outputUnits: number;
  readonly reasoningUnits: number;
  readonly totalUnits: number;
}

/** One event of a plugin model's response stream: `ResponseStarted` first, `ResponseFinished` last. */
export type PluginModelEvent =
  | { readonly _tag: "ResponseStarted" }
  | { readonly _tag: "ContentDelta"; readonly index: number; readonly contentId: string; readonly contentType: "text" | "reasoning" | "refusal"; readonly delta: string }
  | { readonly _tag: "ContentCompleted"; readonly index: number; readonly contentId: string; readonly content: PromptTextPart | ReasoningPart | ReasoningBoundaryPart | RefusalPart }
  | { readonly _tag: "ToolCallInputDelta"; readonly index: number; readonly toolCallId: string; readonly toolName: string; readonly delta: string }
  | { readonly _tag: "ToolCallCompleted"; readonly index: number; readonly toolCall: ModelToolCallPart }
  | { readonly _tag: "Usage"; readonly usage: PluginModelEventUsage }
  | { readonly _tag: "ResponseFinished"; readonly reason: "stop" | "tool-calls" | "length" | "content-filter" | "other" };

/** Per-call context Core passes to {@link ModelDeclaration.stream}. */
export interface PluginModelStreamContext {
  /** Empty when Core calls the model without a Session. */
  readonly sessionId: string;
  /** Empty outside a Turn (titles, compaction). */
  readonly turnId: string;
  readonly signal: AbortSignal;
  readonly listCandidates: () => Promise<readonly PluginModelCandidate[]>;
  readonly delegate: (ref: string, request: PluginModelRequest) => AsyncIterable<PluginModelEvent>;
  readonly reportJournal: (entry: JournalEntry) => Promise<void>;
}

/** A model listed as `providerId/modelId`; Core calls `stream` for each request to it. */
export interface ModelDeclaration {
  /** ≤ 128 characters `[a-z][a-z0-9]*([._-][a-z0-9]+)*`; must not name a composed native provider. */
  readonly providerId: string;
  readonly providerDisplayName: string;
  /** ≤ 512 characters: letters, digits, `.`, `_`, `:`, `-` in `/`-separated segments starting with a letter or digit. */
  readonly modelId: string;
  readonly metadata: PluginModelMetadata;
  readonly stream: (request: PluginModelRequest, context: PluginModelStreamContext) => AsyncIterable<PluginModelEvent>;
}
