// What a request may say about the history its work sees: a `visibility` filter (a floor
// revision, excluded Turns and entries) and, on a prompt, the conversation entry the prompt was
// recorded as. Both are checked against the Session at admission — ids must name the Session's
// own Turns and entries — each failure a ValidationError naming the field as a JSON pointer.
import type { ConversationEntryPosition, HistoryVisibility } from "../../../generated/client/types.gen.js";
import { validationFailure } from "../../contract/failure.js";
import { history as store, type SessionRow, type StorageHandle, type StorageTransaction } from "../../storage/index.js";

type Context = StorageHandle | StorageTransaction;

/**
 * The filter in one canonical form: undefined when it hides nothing (absent, empty lists, a
 * floor of 0 or 1), ids sorted and unique — so equal filters compare (and key checkpoints) equal.
 */
export function normalizeVisibility(visibility: HistoryVisibility | null | undefined): HistoryVisibility | undefined {
  if (!visibility) return undefined;
  const out: HistoryVisibility = {};
  if (visibility.floorHistoryRevision !== undefined && visibility.floorHistoryRevision > 1) out.floorHistoryRevision = visibility.floorHistoryRevision;
  const turns = [...new Set(visibility.excludedTurnIds ?? [])].sort();
  const entries = [...new Set(visibility.excludedEntryIds ?? [])].sort();
  if (turns.length > 0) out.excludedTurnIds = turns;
  if (entries.length > 0) out.excludedEntryIds = entries;
  return Object.keys(out).length > 0 ? out : undefined;
}

/** The checkpoint key of a filter: work reuses only checkpoints made under the same filter ("" for none). */
export function visibilityKey(visibility: HistoryVisibility | null | undefined): string {
  const normalized = normalizeVisibility(visibility);
  if (!normalized) return "";
  return JSON.stringify([normalized.floorHistoryRevision ?? 0, normalized.excludedTurnIds ?? [], normalized.excludedEntryIds ?? []]);
}

/** Whether an item at `revision` passes the filter. */
export function isVisible(visibility: HistoryVisibility | undefined, item: { readonly kind: "turn" | "entry"; readonly id: string; readonly revision: number }): boolean {
  if (!visibility) return true;
  if (visibility.floorHistoryRevision !== undefined && item.revision < visibility.floorHistoryRevision) return false;
  const excluded = item.kind === "turn" ? visibility.excludedTurnIds : visibility.excludedEntryIds;
  return !excluded?.includes(item.id);
}

/**
 * Checks a `visibility` filter for work admitted at history revision `revision` of `session`:
 * the floor lies within 0…revision, every excluded id names a Turn (or entry) of this Session.
 */
export async function checkVisibility(context: Context, session: Pick<SessionRow, "id">, visibility: HistoryVisibility | null | undefined, revision: number, field = "/visibility"): Promise<void> {
  if (!visibility) return;
  const floor = visibility.floorHistoryRevision;
  if (floor !== undefined && (!Number.isSafeInteger(floor) || floor < 0 || floor > revision)) {
    throw validationFailure(`Invalid request: ${field}/floorHistoryRevision: must be an integer from 0 to ${revision} (this work's history revision), not ${floor}`);
  }
  for (const [kind, name, ids] of [
    ["turn", "excludedTurnIds", visibility.excludedTurnIds ?? []],
    ["entry", "excludedEntryIds", visibility.excludedEntryIds ?? []],
  ] as const) {
    const found = await store.existingHistoryIds(context, session.id, kind, ids);
    const missing = ids.findIndex((id) => !found.has(id));
    if (missing >= 0) {
      const what = kind === "turn" ? "Turn" : "conversation entry";
      throw validationFailure(`Invalid request: ${field}/${name}/${missing}: ${ids[missing]} is not a ${what} of Session ${session.id}`);
    }
  }
}

/** Checks that a prompt's `conversationEntry` names an entry of the Session at exactly that history revision. */
export async function checkConversationEntry(context: Context, session: Pick<SessionRow, "id">, position: ConversationEntryPosition | undefined, field = "/conversationEntry"): Promise<void> {
  if (!position) return;
  const entry = await store.getConversationEntry(context, position.entryId);
  if (!entry || entry.sessionId !== session.id) {
    throw validationFailure(`Invalid request: ${field}/entryId: ${position.entryId} is not a conversation entry of Session ${session.id}`);
  }
  if (entry.historyRevision !== position.historyRevision) {
    throw validationFailure(`Invalid request: ${field}/historyRevision: entry ${position.entryId} is at history revision ${entry.historyRevision}, not ${position.historyRevision}`);
  }
}

/**
 * The admission check of a queued prompt's history selection (`visibility`, `conversationEntry`).
 * Call it inside the admission transaction with the Session row the admission locked (whose
 * `historyRevision` is the last one handed out before this Turn): reads join that transaction.
 */
export async function checkHistorySelection(
  context: Context,
  session: Pick<SessionRow, "id" | "historyRevision">,
  request: { readonly visibility?: HistoryVisibility | undefined; readonly conversationEntry?: ConversationEntryPosition | undefined },
): Promise<void> {
  await checkVisibility(context, session, request.visibility, session.historyRevision + 1);
  await checkConversationEntry(context, session, request.conversationEntry);
}
