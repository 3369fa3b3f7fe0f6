// The receipts of admitted work: a queued Turn's (from its row) and a steer's. A replay of the
// same admission returns the same receipt.
import type { Attribution, PromptReceipt, Steer } from "../../../generated/client/types.gen.js";
import type { TurnRow } from "../../storage/index.js";

export function queueReceipt(row: TurnRow): PromptReceipt {
  const receipt: PromptReceipt = {
    delivery: "queue",
    sessionId: row.sessionId,
    turnId: row.id,
    modelLeaseId: row.modelLeaseId,
    requestOptionsId: row.requestOptionsId,
    sequence: row.sequence,
    acceptedAt: row.acceptedAt,
  };
  if (row.attribution !== null) receipt.attribution = row.attribution as Attribution;
  return receipt;
}

export function steerReceipt(steer: Steer): PromptReceipt {
  return {
    delivery: "steer",
    sessionId: steer.sessionId,
    turnId: steer.turnId,
    steerId: steer.steerId,
    sequence: steer.sequence,
    acceptedAt: steer.acceptedAt,
    attribution: steer.attribution,
  };
}

