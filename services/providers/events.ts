// The one internal streaming interface between the Turn loop and every adapter: a
// `ModelRequest` in, an ordered `ModelStreamEvent` sequence out (or a thrown `ProviderFailure`).
import type { ReasoningEffort } from "../../generated/client/types.gen.js";
import type { JsonValue } from "../config/types.js";
import type { ModelMessage, ReasoningContinuation } from "./history.js";
import type { ResolvedModel } from "./registry.js";
import type { Secret } from "./secret.js";

/** A tool the model may call. `inputSchema` is a JSON Schema object. */
export interface ModelTool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: { readonly [key: string]: JsonValue };
}

export interface ModelRequest {
  readonly model: ResolvedModel;
  /** The credential for `model`'s provider (from `openModel` / `resolveCredential`); omit only for `authentication: none`. */
  readonly credential?: Secret;
  readonly system?: string;
  readonly messages: readonly ModelMessage[];
  readonly tools: readonly ModelTool[];
  /** Omitted = the provider's default. `none` turns reasoning off where the protocol allows. */
  readonly reasoningEffort?: ReasoningEffort;
  /** The output cap; Messages requires one, so it falls back to the model's output limit, then 4096. */
  readonly maxOutputTokens?: number;
  /** Sent only to models that accept a temperature. */
  readonly temperature?: number;
  readonly signal: AbortSignal;
  /** The Session whose Turn makes the request (a native provider's stream context sees it). */
  readonly sessionId?: string;
  /**
   * The whole-attempt deadline in milliseconds, counted from the call (request setup, every body
   * read, error-body reads). The effective bound is the smaller of this and the provider's
   * configured timeout; neither = unlimited. Progress never extends it.
   */
  readonly timeoutMs?: number;
}

export type FinishReason = "stop" | "tool_calls" | "length" | "refusal" | "content_filter";

export type ModelStreamEvent =
  | { readonly type: "text.delta"; readonly text: string }
  | { readonly type: "reasoning.delta"; readonly text: string }
  /** Closes the current reasoning part; `continuation` is what replays it to the same provider. */
  | { readonly type: "reasoning.end"; readonly continuation?: ReasoningContinuation }
  | { readonly type: "refusal.delta"; readonly text: string }
  /** A complete tool call (arguments accumulated across the stream). */
  | { readonly type: "tool_call"; readonly id: string; readonly name: string; readonly arguments: string }
  /**
   * Token usage in OpenAI's sense, whatever the protocol: `promptTokens` includes cached (and
   * cache-written) prompt tokens; `completionTokens` includes reasoning tokens.
   */
  | {
      readonly type: "usage";
      readonly promptTokens: number;
      readonly completionTokens: number;
      readonly cachedPromptTokens?: number;
      readonly cacheWriteTokens?: number;
      readonly reasoningTokens?: number;
    }
  /** Always the last event of a successful stream. */
  | { readonly type: "finish"; readonly reason: FinishReason };
