// `session`: the observational Turn events `context.events.subscribe` handlers receive.
import type { JsonObject } from "./json.js";
import type { ToolApprovalDecision } from "./permission.js";
import type { QuestionAnswer, QuestionRequest } from "./question.js";
import type { ToolOutputArtifactState } from "./tool.js";

/** Token usage for one model request attempt, as the provider reported it. */
export interface ModelUsage {
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly totalTokens: number;
  readonly cachedPromptTokens?: number | undefined;
  readonly reasoningCompletionTokens?: number | undefined;
}

/** One permission check Core resolves before a Tool call runs. */
export interface PermissionRequest {
  readonly id: string;
  readonly sessionId: string;
  readonly turnId: string;
  readonly toolId: string;
  readonly toolCallId: string;
  readonly action: string;
  readonly resources: readonly [string, ...string[]];
  readonly save?: readonly string[] | undefined;
  readonly metadata?: JsonObject | undefined;
}

export type PermissionReply = "once" | "always" | "reject";

export type ToolApprovalSource = "config" | "saved" | "hook" | "callback" | "remote" | "default" | "timeout" | "terminal";

/** Why a Turn failed. Safe to show to users. */
export interface TurnFault {
  readonly code: string;
  readonly message: string;
  readonly providerCode?: string | undefined;
}

export type ExecutionLimitOrigin = "configured" | "provider" | "platform";

export type ExecutionLimitEvidence =
  | {
      readonly name: "turn_elapsed" | "approval_wait" | "provider_elapsed" | "provider_attempt_timeout";
      readonly origin: ExecutionLimitOrigin;
      readonly value: number;
      readonly unit: "milliseconds";
    }
  | { readonly name: "steering_batches"; readonly origin: ExecutionLimitOrigin; readonly value: number; readonly unit: "batches" }
  | { readonly name: "provider_attempts"; readonly origin: ExecutionLimitOrigin; readonly value: number; readonly unit: "attempts" }
  | {
      readonly name: "model_context";
      readonly origin: ExecutionLimitOrigin;
      readonly value: number;
      readonly unit: "model_units";
      readonly estimatedInputUnits: number;
      readonly outputReserveUnits: number;
      readonly safetyReserveUnits: number;
      readonly availableInputUnits: number;
      readonly estimator: string;
    };

/** How a Turn ended. */
export type TurnOutcome =
  | { readonly kind: "completed"; readonly turnId: string; readonly text: string }
  | { readonly kind: "cancelled"; readonly turnId: string; readonly reason?: string | undefined }
  | { readonly kind: "failed"; readonly turnId: string; readonly fault: TurnFault }
  | { readonly kind: "limit_reached"; readonly turnId: string; readonly limit: ExecutionLimitEvidence; readonly diagnostic: TurnFault };

interface ToolEventFields {
  readonly turnId: string;
  readonly toolId: string;
  readonly toolCallId: string;
}

/** An observational Turn event; every event carries its Turn's `turnId`. */
export type TurnEvent =
  | { readonly type: "turn.started"; readonly turnId: string; readonly model: { readonly providerId: string; readonly modelId: string } }
  | {
      readonly type: "model.text.delta" | "model.refusal.delta" | "model.reasoning.delta";
      readonly turnId: string;
      readonly partId: string;
      readonly offset: number;
      readonly delta: string;
    }
  | { readonly type: "model.usage"; readonly turnId: string; readonly usage: ModelUsage }
  | ({ readonly type: "tool.requested" } & ToolEventFields)
  | ({ readonly type: "approval.requested"; readonly request: PermissionRequest } & ToolEventFields)
  | ({
      readonly type: "approval.resolved";
      readonly requestId: string;
      readonly decision: ToolApprovalDecision;
      readonly source: ToolApprovalSource;
      readonly reply?: PermissionReply | undefined;
      readonly replyMessage?: string | undefined;
    } & ToolEventFields)
  | ({ readonly type: "tool.completed"; readonly ok: boolean } & ToolEventFields)
  | ({
      readonly type: "tool.progress";
      readonly checkpoint: number;
      readonly observedBytes: number;
      readonly truncated: boolean;
      readonly artifactState?: ToolOutputArtifactState | undefined;
    } & ToolEventFields)
  | ({ readonly type: "question.asked"; readonly request: QuestionRequest } & ToolEventFields)
  | ({ readonly type: "question.replied"; readonly requestId: string; readonly answers: readonly [QuestionAnswer, ...QuestionAnswer[]] } & ToolEventFields)
  | ({ readonly type: "question.rejected"; readonly requestId: string } & ToolEventFields)
  | { readonly type: "turn.terminal"; readonly turnId: string; readonly outcome: TurnOutcome };
