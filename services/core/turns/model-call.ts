// One model request of a running Turn: the context check (compacting the Turn's history when the
// request would not fit, before failing with `model_context`), the attempts with the policy's
// retries (only attempts the provider rejected before any output retry; pacing between them;
// per-attempt and elapsed deadlines), the streamed events applied to the Turn's parts, and the
// usage and context use the provider reported.
import type { CompactionOutcome, ContextUse, ReasoningEffort } from "../../../generated/client/types.gen.js";
import { AssistantMessageBuilder, isProviderFailure, type AssistantMessage, type ModelMessage, type ModelStreamEvent, type ModelTool } from "../../providers/index.js";
import { compactInTurn, withCurrentHistory } from "../compaction/automatic.js";
import { addUsage } from "../compaction/summarize.js";
import { RunRecords, arrayJsonLength, contextReport, messagesJsonLength } from "../diagnostics/record.js";
import type { RunningTurn } from "./running.js";
import { StopSignal, fault, finite, limitReached } from "./stop.js";

export interface ModelToolCall {
  readonly id: string;
  readonly name: string;
  readonly arguments: string;
}

export interface ModelAnswer {
  readonly message: AssistantMessage;
  readonly toolCalls: readonly ModelToolCall[];
}

export interface ModelRequest {
  readonly system: string | undefined;
  readonly messages: readonly ModelMessage[];
  readonly tools: readonly ModelTool[];
}

/** One model request with the policy's retries. */
export async function callModel(t: RunningTurn, original: ModelRequest): Promise<ModelAnswer> {
  const { request, estimated } = await fitContext(t, original);
  // The prepared Main request and each failed attempt are recorded for `context` and `diagnostics`.
  const records = new RunRecords(t.deps.storage, t.deps.now);
  const prepared = records.prepared(t.recorder, t.row.sessionId, t.row.id, t.row.model, contextReport(request, t.deps.gateway.limits(t.row.model)?.context));
  const provider = t.policy.provider;
  const maxAttempts = finite(provider.maxAttempts);
  const attemptTimeout = finite(provider.attemptTimeoutMs);
  const elapsedLimit = finite(provider.elapsedMs);
  const started = t.deps.now();
  const effort = (t.row.request as { reasoningEffort?: ReasoningEffort }).reasoningEffort;
  const overElapsed = (): StopSignal => limitReached("provider_elapsed", provider.elapsedMs, elapsedLimit!, "milliseconds", "The model request ran out of its elapsed-time budget");
  for (let attempt = 1; ; attempt++) {
    t.checkStopped();
    const builder = new AssistantMessageBuilder();
    const toolCalls: ModelToolCall[] = [];
    let output = false;
    let reported = false;
    const attemptController = new AbortController();
    const onAbort = (): void => attemptController.abort(t.signal.reason);
    t.signal.addEventListener("abort", onAbort, { once: true });
    let timedOut = false;
    const budget = elapsedLimit !== undefined ? elapsedLimit - (t.deps.now() - started) : undefined;
    const deadline = [attemptTimeout, budget].filter((value): value is number => value !== undefined);
    const timeoutMs = deadline.length > 0 ? Math.max(1, Math.min(...deadline)) : undefined;
    const timer = timeoutMs !== undefined ? setTimeout(() => ((timedOut = true), attemptController.abort(new Error("attempt timeout"))), timeoutMs) : undefined;
    try {
      for await (const event of t.deps.gateway.stream({
        model: t.row.model,
        sessionId: t.sessionId,
        turnId: t.row.id,
        ...(request.system !== undefined ? { system: request.system } : {}),
        messages: request.messages,
        tools: request.tools,
        ...(effort !== undefined ? { reasoningEffort: effort } : {}),
        signal: attemptController.signal,
        ...(timeoutMs !== undefined ? { timeoutMs } : {}),
      })) {
        if (attemptController.signal.aborted) break;
        if (event.type === "usage") {
          reported = true;
          prepared.usage(event.promptTokens);
        }
        output = applyEvent(t, event, builder, toolCalls) || output;
      }
      if (attemptController.signal.aborted) throw attemptController.signal.reason;
      // A provider that reports no usage still leaves the Turn (and Session) its estimated context use.
      if (!reported && estimated !== undefined) t.recorder.stage([], { contextUse: estimated });
      // The content is written by the change that follows (a tool call, or the completion).
      t.recorder.closeContent();
      return { message: builder.message(), toolCalls };
    } catch (error) {
      t.recorder.closeContent();
      await t.recorder.flush().catch(() => {});
      t.checkStopped();
      // The gateway's own stop (an embedder's content reference it could not resolve: content.ts) is the Turn's.
      if (error instanceof StopSignal) throw error;
      const attemptFailure = isProviderFailure(error) ? error : undefined;
      if (attemptFailure || timedOut) {
        await records.modelStepFailed(t.row.sessionId, t.row.id, attempt, {
          code: timedOut ? "provider_attempt_timeout" : `provider_${attemptFailure!.kind}`,
          message: timedOut ? "A model request attempt timed out" : attemptFailure!.message,
          providerCode: attemptFailure?.providerCode,
        });
      }
      const exhausted = maxAttempts !== undefined && attempt >= maxAttempts;
      const elapsedOver = elapsedLimit !== undefined && t.deps.now() - started >= elapsedLimit;
      if (timedOut) {
        if (elapsedOver) throw overElapsed();
        if (output || exhausted) throw limitReached("provider_attempt_timeout", provider.attemptTimeoutMs, attemptTimeout!, "milliseconds", "A model request attempt timed out");
      } else {
        const failure = isProviderFailure(error) ? error : undefined;
        const retryable = failure ? failure.retryable && failure.beforeOutput && !output : false;
        if (!retryable) {
          // Provider failures carry only our own safe wording; anything else gets a generic one.
          const message = failure?.message ?? "The model request failed";
          throw new StopSignal({ kind: "failed", fault: fault(`provider_${failure?.kind ?? "error"}`, message, failure?.providerCode) });
        }
        if (elapsedOver) throw overElapsed();
        if (exhausted) throw limitReached("provider_attempts", provider.maxAttempts, maxAttempts!, "attempts", `The model request failed ${attempt} time(s): ${failure!.message}`);
      }
      await pace(t, attempt, isProviderFailure(error) ? error.retryAfterMs : undefined);
    } finally {
      if (timer) clearTimeout(timer);
      t.signal.removeEventListener("abort", onAbort);
    }
  }
}

/** Applies one stream event; returns true when it was model output. */
function applyEvent(t: RunningTurn, event: ModelStreamEvent, builder: AssistantMessageBuilder, toolCalls: ModelToolCall[]): boolean {
  builder.add(event);
  switch (event.type) {
    case "text.delta":
      t.recorder.appendContent("text", event.text, t.messageIndex);
      return true;
    case "reasoning.delta":
      t.recorder.appendContent("reasoning", event.text, t.messageIndex);
      return true;
    case "refusal.delta":
      t.recorder.appendContent("refusal", event.text, t.messageIndex);
      return true;
    case "reasoning.end":
      if (t.recorder.isOpen("reasoning")) t.recorder.closeContent();
      return true;
    case "tool_call":
      t.recorder.closeContent();
      toolCalls.push({ id: event.id, name: event.name, arguments: event.arguments });
      return true;
    case "usage":
      recordUsage(t, event);
      return false;
    case "finish":
      return false;
  }
}

type AttemptUsage = Pick<Extract<ModelStreamEvent, { type: "usage" }>, "promptTokens" | "completionTokens" | "cachedPromptTokens" | "reasoningTokens">;

/**
 * Adds an attempt's usage to the Turn's and commits both (with the context use it implies, for
 * the Turn's own requests; a compaction request's usage counts but says nothing of the context).
 */
function recordUsage(t: RunningTurn, event: AttemptUsage, context = true): void {
  const attempt = addUsage(undefined, event);
  t.usage = addUsage(t.usage, event);
  const window = context ? t.deps.gateway.limits(t.row.model, t.sessionId)?.context : undefined;
  const contextUse = window !== undefined ? { model: t.row.model, usedUnits: event.promptTokens + event.completionTokens, contextUnits: window } : undefined;
  // Usage arrives as a stream ends: it rides the change that follows instead of one of its own.
  t.recorder.stage([{ type: "turn.usage", data: { usage: attempt, ...(contextUse ? { contextUse } : {}) } }], { usage: t.usage, ...(contextUse ? { contextUse } : {}) });
}

/** Waits between attempts as the policy's pacing (and the provider's retry-after) say; a stop ends the wait. */
async function pace(t: RunningTurn, attempt: number, retryAfterMs: number | undefined): Promise<void> {
  const pacing = t.policy.provider.pacing;
  let delay = 0;
  if (pacing.kind === "fixed") delay = pacing.delayMs;
  if (pacing.kind === "exponential") {
    delay = Math.min(pacing.maximumDelayMs, pacing.initialDelayMs * 2 ** (attempt - 1));
    if (pacing.jitter) delay = Math.round(delay / 2 + Math.random() * (delay / 2));
  }
  if (retryAfterMs !== undefined) delay = Math.max(delay, retryAfterMs);
  if (delay <= 0) return;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, delay);
    t.signal.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
  });
}

/** Compaction rounds a request may take before it fails with `model_context` (each compacts what the last could not fit). */
const MAX_COMPACTION_ROUNDS = 3;

/** The request's estimate against the model's window (estimated at 4 characters a unit). */
function measure(t: RunningTurn, context: number, output: number | undefined, request: ModelRequest) {
  const estimated = Math.ceil((messagesJsonLength(request.messages) + (request.system?.length ?? 0) + arrayJsonLength(request.tools)) / 4);
  const outputReserve = Math.min(output ?? 4096, context);
  const safetyReserve = t.policy.context.safetyReserve.units;
  const available = Math.max(0, context - outputReserve - safetyReserve);
  return { estimated, outputReserve, safetyReserve, available, fits: estimated <= available };
}

/**
 * Makes the request fit the model's context window: with the Turn's current (possibly already
 * compacted) history; when it does not fit, compacts the history in the Turn (`preflight` before
 * the first model call, `overflow` later) and measures again; refuses with `model_context` when
 * compaction cannot make it fit. Returns the request to send and its estimated context use.
 */
async function fitContext(t: RunningTurn, original: ModelRequest): Promise<{ request: ModelRequest; estimated: ContextUse | undefined }> {
  let request: ModelRequest = { ...original, messages: withCurrentHistory(t, original.messages) };
  const limits = t.deps.gateway.limits(t.row.model, t.sessionId);
  if (limits?.context === undefined) return { request, estimated: undefined };
  const transcript = original.messages.slice(t.history.length);
  let compaction: CompactionOutcome | undefined;
  for (let round = 0; ; round++) {
    const check = measure(t, limits.context, limits.output, request);
    if (check.fits) return { request, estimated: { model: t.row.model, usedUnits: check.estimated, contextUnits: limits.context } };
    const previous = compaction?.kind === "completed" ? compaction.checkpoint.throughHistoryRevision : undefined;
    const stuck = compaction !== undefined && (compaction.kind !== "completed" || round >= MAX_COMPACTION_ROUNDS);
    if (!stuck) {
      const result = await compactInTurn(t, t.iteration <= 1 ? "preflight" : "overflow", (attempt) => recordUsage(t, attempt, false));
      compaction = result.outcome;
      const advanced = compaction?.kind === "completed" && compaction.checkpoint.throughHistoryRevision !== previous;
      if (result.history && advanced) {
        request = { ...original, messages: [...result.history, ...transcript] };
        continue;
      }
    }
    const why = compaction ? ` (context compaction: ${compaction.kind === "failed" ? compaction.fault.code : compaction.kind})` : "";
    throw new StopSignal({
      kind: "limit",
      limit: {
        name: "model_context",
        origin: "provider",
        value: limits.context,
        unit: "model_units",
        estimatedInputUnits: check.estimated,
        outputReserveUnits: check.outputReserve,
        safetyReserveUnits: check.safetyReserve,
        availableInputUnits: check.available,
        estimator: "utf16-chars/4",
      },
      diagnostic: { code: "model_context", message: `The request needs about ${check.estimated} units; ${check.available} are available${why}` },
    });
  }
}
