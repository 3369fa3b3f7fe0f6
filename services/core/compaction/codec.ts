// Compaction rows ↔ the contract's Compaction and receipt (core wrote the JSON columns from the
// same types).
import type { Attribution, Compaction, ContextCompactionReceipt } from "../../../generated/client/types.gen.js";
import type { CompactionRow } from "../../storage/index.js";

export function toCompaction(row: CompactionRow): Compaction {
  const compaction: Compaction = {
    id: row.id,
    sessionId: row.sessionId,
    sequence: row.sequence,
    request: row.request as Compaction["request"],
    trigger: row.trigger as Compaction["trigger"],
    model: row.model,
    modelLeaseId: row.modelLeaseId,
    requestOptionsId: row.requestOptionsId,
    policy: row.policy as Compaction["policy"],
    phase: row.phase,
    revision: row.revision,
    acceptedAt: row.acceptedAt,
  };
  if (row.attribution !== null) compaction.attribution = row.attribution as Attribution;
  if (row.cancellation !== null) compaction.cancellation = row.cancellation as NonNullable<Compaction["cancellation"]>;
  if (row.usage !== null) compaction.usage = row.usage as NonNullable<Compaction["usage"]>;
  if (row.outcome !== null) compaction.outcome = row.outcome as NonNullable<Compaction["outcome"]>;
  if (row.startedAt !== null) compaction.startedAt = row.startedAt;
  if (row.completedAt !== null) compaction.completedAt = row.completedAt;
  return compaction;
}

export function compactionReceipt(row: CompactionRow): ContextCompactionReceipt {
  return {
    delivery: "compaction",
    sessionId: row.sessionId,
    compactionId: row.id,
    modelLeaseId: row.modelLeaseId,
    requestOptionsId: row.requestOptionsId,
    sequence: row.sequence,
    acceptedAt: row.acceptedAt,
    attribution: row.attribution as Attribution,
  };
}

export const isSettled = (phase: CompactionRow["phase"]): boolean => phase === "completed" || phase === "cancelled" || phase === "failed";
