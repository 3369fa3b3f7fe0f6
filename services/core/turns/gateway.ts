// What the Turn loop needs from the model side: whether a model can serve a Turn (checked
// at admission), one streaming call per attempt, and a model's limits. The host implements it
// over services/providers; tests can too.
import type { ReasoningEffort } from "../../../generated/client/types.gen.js";
import type { ModelStreamEvent, ModelTool } from "../../providers/index.js";
import type { ModelMessage } from "../../providers/index.js";
import type { ModelAvailability } from "./service.js";

export interface ModelCall {
  readonly model: string;
  readonly system?: string;
  readonly messages: readonly ModelMessage[];
  readonly tools: readonly ModelTool[];
  readonly reasoningEffort?: ReasoningEffort;
  readonly signal: AbortSignal;
  /** The attempt's deadline in milliseconds. */
  readonly timeoutMs?: number;
  /** The Session whose Turn makes the call (the host serves it from the catalog that Turn leased). */
  readonly sessionId?: string;
  /** The Turn making the call (absent outside a Turn: titles, compaction). */
  readonly turnId?: string;
  /** The compaction making the call (with its `sessionId`): names the work to a scoped credential resolver. */
  readonly compactionId?: string;
}

export interface ModelLimits {
  /** Context window, in tokens. */
  readonly context?: number;
  /** Largest output, in tokens. */
  readonly output?: number;
}

export interface ModelGateway extends ModelAvailability {
  /** Streams one attempt; throws a ProviderFailure (or an abort) on failure. */
  stream(call: ModelCall): AsyncIterable<ModelStreamEvent>;
  /** `sessionId`: the Session whose Turn asks (the catalog that Turn leased). */
  limits(model: string, sessionId?: string): ModelLimits | undefined;
}
