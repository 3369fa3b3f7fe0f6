// Automatic compaction inside a running Turn: when the next model request would not fit the
// context window, the Turn records a compaction of its history (`preflight` before its first
// model call, `overflow` when a later step grew past the window) on its own sequence, runs it
// under the Turn's stop signal, and — when it produced a checkpoint — continues with the
// summary plus what follows instead of the compacted history. The Turn's own transcript is
// never compacted: it is what the Turn is working on.
import { randomUUID } from "node:crypto";
import type { Attribution, CompactionOutcome } from "../../../generated/client/types.gen.js";
import type { ModelMessage } from "../../providers/index.js";
import { compactions as store } from "../../storage/index.js";
import { assembleHistory, turnHistoryTarget } from "../history/assemble.js";
import { normalizeVisibility, visibilityKey } from "../history/visibility.js";
import { requestHash } from "../sessions.js";
import type { RunningTurn } from "../turns/running.js";
import { executeCompaction, type CompactionRun } from "./execute.js";

/** Turns whose history was compacted while they ran: the history their next requests start with. */
const compacted = new WeakMap<RunningTurn, readonly ModelMessage[]>();

/**
 * The request messages with the Turn's current history in front of its transcript (the loop
 * sends the history it launched with followed by the transcript).
 */
export function withCurrentHistory(t: RunningTurn, messages: readonly ModelMessage[]): readonly ModelMessage[] {
  const replacement = compacted.get(t);
  return replacement ? [...replacement, ...messages.slice(t.history.length)] : messages;
}

export interface InTurnCompaction {
  /** The history after a completed checkpoint; undefined when the compaction made none. */
  readonly history: readonly ModelMessage[] | undefined;
  readonly outcome: CompactionOutcome | undefined;
}

/** Records and runs one compaction of the Turn's history; throws the Turn's stop when it stopped meanwhile. */
export async function compactInTurn(t: RunningTurn, trigger: "preflight" | "overflow", onUsage: NonNullable<CompactionRun["onUsage"]>): Promise<InTurnCompaction> {
  const target = turnHistoryTarget(t.row);
  const visibility = normalizeVisibility(target.visibility);
  const id = randomUUID();
  const now = t.deps.now();
  const request = { sessionId: t.sessionId, compactionId: id, model: t.row.model, ...(target.visibility !== undefined ? { visibility: target.visibility } : {}) };
  const row = await store.insertTurnCompaction(t.deps.storage, {
    id,
    sessionId: t.sessionId,
    sequence: t.row.sequence,
    historyRevision: t.row.historyRevision,
    turnId: t.id,
    trigger: { kind: trigger, turnId: t.id },
    request,
    attribution: (t.row.attribution as Attribution | null) ?? null,
    // A Turn acquires its model once and reuses it for in-Turn compaction.
    model: t.row.model,
    modelLeaseId: t.row.modelLeaseId,
    requestOptionsId: t.row.requestOptionsId,
    providerOptions: t.row.providerOptions,
    policy: t.policy,
    phase: "running",
    visibilityKey: visibilityKey(visibility),
    throughHistoryRevision: null,
    cancellation: null,
    usage: null,
    outcome: null,
    acceptedAt: now,
    startedAt: now,
    completedAt: null,
    requestHash: requestHash(request),
    ownerProcessId: process.pid,
    ownerInstance: t.deps.instance,
    leaseExpiresAt: null,
  });
  const settled = await executeCompaction(
    { storage: t.deps.storage, gateway: t.deps.gateway, now: t.deps.now, instance: t.deps.instance },
    { row, target, signal: t.signal, onUsage },
  );
  t.checkStopped();
  const outcome = (settled?.outcome ?? undefined) as CompactionOutcome | undefined;
  if (outcome?.kind !== "completed") return { history: undefined, outcome };
  const history = await assembleHistory(t.deps.storage, target);
  compacted.set(t, history);
  return { history, outcome };
}
