// Running one compaction (manual or inside a Turn) to its one outcome: read the history it
// compacts (from its admission revision, after the checkpoint it would replace, under its
// visibility), refuse when nothing is compressible or the model's limits are unknown, ask the
// model for the summary, and settle the checkpoint — `throughHistoryRevision`, the summary and
// an estimate of the compacted history — or the failure, cancellation or limit that stopped it.
import { randomUUID } from "node:crypto";
import type { CompactionCheckpoint, CompactionOutcome, Fault, TurnPolicy, TurnUsage } from "../../../generated/client/types.gen.js";
import { compactions as store, type CompactionRow, type StorageHandle } from "../../storage/index.js";
import type { ModelGateway } from "../turns/gateway.js";
import { StopSignal, fault, type Stop } from "../turns/stop.js";
import { readHistory, summaryMessage, visibleItems, type HistoryTarget } from "../history/assemble.js";
import { CHARS_PER_UNIT, ESTIMATOR, SUMMARY_SYSTEM, addUsage, estimateUnits, parseSummary, requestSummary, summarySource } from "./summarize.js";

export interface CompactionDeps {
  readonly storage: StorageHandle;
  readonly gateway: ModelGateway;
  readonly now: () => number;
  /** The owner a settlement is guarded by. */
  readonly instance: string;
}

export interface CompactionRun {
  /** The compaction, already running under `deps.instance`. */
  readonly row: CompactionRow;
  readonly target: HistoryTarget;
  /** Aborted with a `Stop` (or a StopSignal carrying one) to end the compaction early. */
  readonly signal?: AbortSignal;
  /** Each summary attempt's usage (an automatic compaction reports it on its Turn). */
  readonly onUsage?: (attempt: { promptTokens: number; completionTokens: number; cachedPromptTokens?: number; reasoningTokens?: number }) => void;
}

/** Compactions running in this process, so a cancellation reaches them at once. */
const running = new Map<string, AbortController>();

/** Stops a compaction running in this process (false when it runs elsewhere or not at all). */
export function interruptCompaction(id: string, stop: Stop): boolean {
  const controller = running.get(id);
  if (!controller) return false;
  controller.abort(stop);
  return true;
}

/** The input units a model request may use: the context window less the output and safety reserves. */
export function inputBudget(limits: { context: number; output: number }, policy: TurnPolicy): { available: number; outputReserve: number; safetyReserve: number } {
  const outputReserve = Math.min(limits.output, limits.context);
  const safetyReserve = policy.context.safetyReserve.units;
  return { available: Math.max(0, limits.context - outputReserve - safetyReserve), outputReserve, safetyReserve };
}

function stopOf(reason: unknown): Stop {
  if (reason instanceof StopSignal) return reason.stop;
  if (reason !== null && typeof reason === "object" && "kind" in reason) return reason as Stop;
  return { kind: "failed", fault: fault("internal_error", "The compaction failed unexpectedly") };
}

/** The outcome and phase a stop settles a compaction as (undefined: the claim is gone, write nothing). */
function stoppedOutcome(stop: Stop, usage: TurnUsage | undefined): { phase: CompactionRow["phase"]; outcome: CompactionOutcome } | undefined {
  const used = usage ? { usage } : {};
  switch (stop.kind) {
    case "lost":
      return undefined;
    case "cancelled":
      return { phase: "cancelled", outcome: { kind: "cancelled", ...(stop.reason !== undefined ? { reason: stop.reason } : {}), ...used } };
    case "shutdown":
      return { phase: "failed", outcome: { kind: "failed", fault: fault("host_shutdown", "The server stopped while the compaction was running"), ...used } };
    case "limit":
      return { phase: "failed", outcome: { kind: "limit_reached", limit: stop.limit, diagnostic: stop.diagnostic, ...used } };
    case "failed":
      return { phase: "failed", outcome: { kind: "failed", fault: stop.fault, ...used } };
  }
}

const failed = (value: Fault): Stop => ({ kind: "failed", fault: value });

/**
 * Runs a compaction to its one outcome and returns the settled row (undefined when its claim was
 * lost or it had settled already). Never throws for the compaction's own failures.
 */
export async function executeCompaction(deps: CompactionDeps, run: CompactionRun): Promise<CompactionRow | undefined> {
  const { row, target } = run;
  const own = new AbortController();
  running.set(row.id, own);
  const signal = run.signal ? AbortSignal.any([own.signal, run.signal]) : own.signal;
  let usage: TurnUsage | undefined;
  const settle = async (phase: CompactionRow["phase"], outcome: CompactionOutcome): Promise<CompactionRow | undefined> =>
    store.changeCompaction(deps.storage, row.id, {
      patch: {
        phase,
        outcome,
        completedAt: deps.now(),
        ...(usage ? { usage } : {}),
        ...(outcome.kind === "completed" ? { throughHistoryRevision: outcome.checkpoint.throughHistoryRevision } : {}),
      },
      expectPhases: ["running"],
      expectOwner: deps.instance,
    });
  try {
    const policy = row.policy as TurnPolicy;
    const view = await readHistory(deps.storage, target);
    const items = visibleItems(view, target);
    if (items.length === 0) return await settle("completed", { kind: "no_compressible_history" });
    const limits = deps.gateway.limits(row.model);
    if (limits?.context === undefined || limits.output === undefined) {
      throw new StopSignal(failed(fault("context_limits_unknown", `Context compaction needs the context and output limits of ${row.model}, which it does not advertise`)));
    }
    const budget = inputBudget({ context: limits.context, output: limits.output }, policy);
    const source = summarySource(view.checkpoint?.summary, items, budget.available * CHARS_PER_UNIT - SUMMARY_SYSTEM.length);
    const answer = await requestSummary({
      gateway: deps.gateway,
      model: row.model,
      policy,
      text: source.text,
      signal,
      scope: { sessionId: row.sessionId, compactionId: row.id },
      onUsage: (attempt) => {
        usage = addUsage(usage, attempt);
        run.onUsage?.(attempt);
      },
    });
    const summary = parseSummary(answer);
    if (!summary) throw new StopSignal(failed(fault("compaction_empty_summary", "The model answered the compaction request with no summary")));
    // Everything below the work's revision is covered when every item fit; else through the last one that did.
    const through = source.included.length === items.length ? target.revision - 1 : source.included.at(-1)!.revision;
    const remaining = items.filter((item) => item.revision > through).flatMap((item) => item.messages);
    const inputUnits = estimateUnits([summaryMessage(summary), ...remaining]);
    const checkpoint: CompactionCheckpoint = {
      id: randomUUID(),
      compactionId: row.id,
      sessionId: row.sessionId,
      throughHistoryRevision: through,
      throughChronologyRevision: 0,
      sourceMessageCount: source.messageCount,
      summary,
      chronology: [],
      estimate: {
        estimator: ESTIMATOR,
        inputUnits,
        contextUnits: limits.context,
        outputUnits: budget.outputReserve,
        safetyReserveUnits: budget.safetyReserve,
        availableInputUnits: budget.available,
        fits: inputUnits <= budget.available,
      },
      createdAt: deps.now(),
    };
    return await settle("completed", { kind: "completed", checkpoint, ...(usage ? { usage } : {}) });
  } catch (error) {
    const stop = signal.aborted ? stopOf(signal.reason) : stopOf(error instanceof StopSignal ? error : failed(fault("internal_error", "The compaction failed unexpectedly")));
    const stopped = stoppedOutcome(stop, usage);
    return stopped ? await settle(stopped.phase, stopped.outcome).catch(() => undefined) : undefined;
  } finally {
    running.delete(row.id);
  }
}
