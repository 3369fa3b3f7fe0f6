/**
 * The plugin journal: durable plugin-reported facts, each numbered within its Turn and read in
 * (Turn sequence, entry sequence) order. Plugins append through `appendJournalEntry` (the
 * plugin room arrives later); the API reads pages with `listJournal`.
 */
import { isStorageHandle, type StorageHandle, type StorageTransaction } from "./database.js";
import type { SqlExecutor } from "./engine.js";
import { mapBusy } from "./errors.js";
import type { PluginJournalRow } from "./schema.js";

type Context = StorageHandle | StorageTransaction;

const SELECT = "session_id, turn_id, turn_sequence, sequence, plugin_id, kind, summary, data, logical_call_ordinal, tool_call_id, recorded_at";

function fromRow(raw: Record<string, unknown>): PluginJournalRow {
  return {
    sessionId: raw["session_id"] as string,
    turnId: raw["turn_id"] as string,
    turnSequence: raw["turn_sequence"] as number,
    sequence: raw["sequence"] as number,
    pluginId: raw["plugin_id"] as string,
    kind: raw["kind"] as string,
    summary: raw["summary"] as string,
    data: JSON.parse(raw["data"] as string) as unknown,
    logicalCallOrdinal: (raw["logical_call_ordinal"] as number | null) ?? null,
    toolCallId: (raw["tool_call_id"] as string | null) ?? null,
    recordedAt: raw["recorded_at"] as number,
  };
}

export type NewJournalEntry = Omit<PluginJournalRow, "sessionId" | "turnSequence" | "sequence">;

/**
 * Appends one entry to its Turn's journal: the next sequence within the Turn, the Turn's
 * Session and sequence, in one statement. Resolves undefined when the Turn does not exist.
 */
export function appendJournalEntry(context: Context, entry: NewJournalEntry): Promise<PluginJournalRow | undefined> {
  const run = async (tx: StorageTransaction): Promise<PluginJournalRow | undefined> => {
    const raw = await tx.sql.get(
      `INSERT INTO plugin_journal (${SELECT})
       SELECT t.session_id, t.id, t.sequence, COALESCE((SELECT max(j.sequence) FROM plugin_journal j WHERE j.turn_id = t.id), 0) + 1, ?, ?, ?, ?, ?, ?, ?
       FROM turn t WHERE t.id = ?
       RETURNING ${SELECT}`,
      [entry.pluginId, entry.kind, entry.summary, JSON.stringify(entry.data ?? null), entry.logicalCallOrdinal, entry.toolCallId, entry.recordedAt, entry.turnId],
    );
    return raw ? fromRow(raw) : undefined;
  };
  return isStorageHandle(context) ? context.transaction(run) : run(context);
}

/** A page of the Session's journal (optionally one Turn's) after the (Turn sequence, sequence) position. */
export function listJournal(
  context: Context,
  sessionId: string,
  page: { readonly turnId?: string | undefined; readonly after: readonly [number, number]; readonly limit: number },
): Promise<PluginJournalRow[]> {
  const query = (sql: SqlExecutor) =>
    sql.all(
      `SELECT ${SELECT} FROM plugin_journal WHERE session_id = ?1 AND (?2 IS NULL OR turn_id = ?2)
         AND (turn_sequence > ?3 OR (turn_sequence = ?3 AND sequence > ?4))
       ORDER BY turn_sequence, sequence LIMIT ?5`,
      [sessionId, page.turnId ?? null, page.after[0], page.after[1], page.limit],
    );
  return (isStorageHandle(context) ? mapBusy(() => query(context.reader().sql)) : query(context.sql)).then((rows) => rows.map(fromRow));
}
