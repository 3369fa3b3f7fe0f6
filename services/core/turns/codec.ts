// Rows ↔ the contract's Turn. The storage room keeps JSON columns untyped; this is the one
// place they are read back as the contract's shapes (core wrote them from the same types).
import type { Attribution, Steer, Turn, TurnPart } from "../../../generated/client/types.gen.js";
import type { TurnPartRow, TurnRow, TurnSteerRow } from "../../storage/index.js";

export function toTurn(row: TurnRow, parts: readonly TurnPartRow[], steers: readonly TurnSteerRow[]): Turn {
  const turn: Turn = {
    id: row.id,
    sessionId: row.sessionId,
    sequence: row.sequence,
    request: row.request as Turn["request"],
    model: row.model,
    modelLeaseId: row.modelLeaseId,
    requestOptionsId: row.requestOptionsId,
    policy: row.policy as Turn["policy"],
    steering: {
      gate: row.steeringGate,
      promotedBatchCount: row.promotedBatchCount,
      steers: steers.filter((steer) => steer.turnId === row.id).map((steer) => steer.data as Steer),
    },
    phase: row.phase,
    revision: row.revision,
    parts: parts.filter((part) => part.turnId === row.id).map((part) => part.data as TurnPart),
    acceptedAt: row.acceptedAt,
  };
  if (row.attribution !== null) turn.attribution = row.attribution as Attribution;
  if (row.usage !== null) turn.usage = row.usage as NonNullable<Turn["usage"]>;
  if (row.contextUse !== null) turn.contextUse = row.contextUse as NonNullable<Turn["contextUse"]>;
  if (row.cancellation !== null) turn.cancellation = row.cancellation as NonNullable<Turn["cancellation"]>;
  if (row.outcome !== null) turn.outcome = row.outcome as NonNullable<Turn["outcome"]>;
  if (row.startedAt !== null) turn.startedAt = row.startedAt;
  if (row.completedAt !== null) turn.completedAt = row.completedAt;
  return turn;
}

export const isTerminal = (phase: Turn["phase"]): boolean => phase === "completed" || phase === "cancelled" || phase === "failed";
