// `hook`: awaited handlers at Core's hook points (`context.hooks.register`).
import type { ModelMessage, PromptContent } from "./message.js";
import type { ToolApprovalDecision } from "./permission.js";

/** Input to `turn.before`. Read-only. */
export type TurnBeforeInput = {
  readonly turnId: string;
  readonly prompt: PromptContent;
  readonly model: { readonly providerId: string; readonly modelId: string };
};

/** Input to `model.request.before`. Read-only. */
export type ModelRequestBeforeInput = {
  readonly turnId: string;
  readonly providerId: string;
  readonly modelId: string;
  /** Zero-based index of this request within the Turn. */
  readonly iteration: number;
  readonly systemPrompt?: string | undefined;
  readonly messages: readonly ModelMessage[];
};

/** Input to `tool.execute.before`. */
export type ToolExecuteBeforeInput = {
  readonly turnId: string;
  readonly toolId: string;
  readonly toolCallId: string;
  /** Validated against the Tool's `inputSchema`; an earlier hook's replacement when it made one. */
  readonly input: unknown;
};

/** What a `tool.execute.before` handler may return; nothing leaves the call unchanged. */
export type ToolExecuteBeforeResult = {
  /** Replacement input, used whenever the property is present, validated again. */
  readonly input?: unknown;
  /** `deny` refuses every check of the call; `allow` approves checks that would otherwise ask. */
  readonly approval?: ToolApprovalDecision | undefined;
};

/** Input to `tool.execute.after`. */
export type ToolExecuteAfterInput = ToolExecuteBeforeInput & {
  readonly ok: boolean;
  /** What the model sees: a string, a JSON value, or `{ error }` for a failed call. */
  readonly result: unknown;
};

/**
 * Hook names and handler signatures. Core awaits every handler, one at a time: host hooks first,
 * then Session hooks, each in plugin order and then registration order. A throw fails the Turn
 * with `runtime_failed`, worded by a thrown `PluginError`'s `publicMessage`.
 */
export interface HookHandlers {
  readonly "turn.before": (input: TurnBeforeInput) => Promise<void>;
  readonly "model.request.before": (input: ModelRequestBeforeInput) => Promise<void>;
  readonly "tool.execute.before": (input: ToolExecuteBeforeInput) => Promise<void | ToolExecuteBeforeResult>;
  readonly "tool.execute.after": (input: ToolExecuteAfterInput) => Promise<void>;
}

export type HookName = keyof HookHandlers;

export type HookHandler<TName extends HookName> = HookHandlers[TName];

export type HookResult = void | ToolExecuteBeforeResult;
