/**
 * Session history, storage side: conversation entries (appended under the Session's next history
 * revision), the ranged reads the history model assembles a Turn's model-visible history from
 * (settled Turns' transcripts and entries between two revisions), id checks for visibility
 * filters, and the copy a fork makes. Raw statements, each prepared once per connection.
 */
import { isStorageHandle, type StorageHandle, type StorageTransaction } from "./database.js";
import { inChunks } from "./chunks.js";
import type { SqlExecutor } from "./engine.js";
import { mapBusy } from "./errors.js";
import { SESSION_SELECT, TURN_SELECT, eventFromRow, jsonValue, placeholders, sessionFromRow, turnColumn, turnFromRow } from "./rows.js";
import { entryRows, publishRows, publishSettledTurn } from "./history-rows.js";
import { insertSession } from "./sessions.js";
import type { ConversationEntryRow, SessionInsert, SessionRow, TurnRow } from "./schema.js";

type Context = StorageHandle | StorageTransaction;

function read<T>(context: Context, fn: (sql: SqlExecutor) => Promise<T>): Promise<T> {
  return isStorageHandle(context) ? mapBusy(() => fn(context.reader().sql)) : fn(context.sql);
}

function write<T>(context: Context, fn: (tx: StorageTransaction) => Promise<T>): Promise<T> {
  return isStorageHandle(context) ? context.transaction(fn) : fn(context);
}

const ENTRY_SELECT = "id, session_id, history_revision, content, attribution, accepted_at, request_hash";

const parse = (value: unknown): unknown => (typeof value === "string" ? JSON.parse(value) : (value ?? null));

function entryFromRow(raw: Record<string, unknown>): ConversationEntryRow {
  return {
    id: raw["id"] as string,
    sessionId: raw["session_id"] as string,
    historyRevision: raw["history_revision"] as number,
    content: parse(raw["content"]) as unknown[],
    attribution: parse(raw["attribution"]),
    acceptedAt: raw["accepted_at"] as number,
    requestHash: raw["request_hash"] as string,
  };
}

export type NewConversationEntry = Omit<ConversationEntryRow, "historyRevision" | "sessionId">;

/**
 * Appends a conversation entry under the Session's next history revision: one UPDATE takes the
 * revision (only on `server`), one INSERT writes the entry. Resolves undefined when the Session
 * does not exist there; throws the driver's constraint error when the entry id exists (callers
 * replay).
 */
export function appendConversationEntry(context: Context, target: { readonly server: string; readonly sessionId: string }, entry: NewConversationEntry): Promise<ConversationEntryRow | undefined> {
  return write(context, async (tx) => {
    const taken = await tx.sql.get<{ revision: number }>(
      "UPDATE session SET history_revision = history_revision + 1 WHERE id = ? AND server = ? RETURNING history_revision AS revision",
      [target.sessionId, target.server],
    );
    if (!taken) return undefined;
    const raw = await tx.sql.get(
      `INSERT INTO conversation_entry (${ENTRY_SELECT}) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING ${ENTRY_SELECT}`,
      [entry.id, target.sessionId, taken.revision, jsonValue(entry.content), jsonValue(entry.attribution), entry.acceptedAt, entry.requestHash],
    );
    const appended = entryFromRow(raw!);
    await publishRows(tx, target.sessionId, entryRows(appended));
    return appended;
  });
}

export function getConversationEntry(context: Context, entryId: string): Promise<ConversationEntryRow | undefined> {
  return read(context, async (sql) => {
    const raw = await sql.get(`SELECT ${ENTRY_SELECT} FROM conversation_entry WHERE id = ?`, [entryId]);
    return raw ? entryFromRow(raw) : undefined;
  });
}

/** Which of `ids` name Turns (or entries) of the Session. */
export function existingHistoryIds(context: Context, sessionId: string, kind: "turn" | "entry", ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return Promise.resolve(new Set());
  const table = kind === "turn" ? "turn" : "conversation_entry";
  return read(context, async (sql) => {
    const rows = await inChunks([...new Set(ids)], 1, (chunk) => sql.all<{ id: string }>(`SELECT id FROM ${table} WHERE session_id = ? AND id IN (${placeholders(chunk.length)})`, [sessionId, ...chunk]));
    return new Set(rows.map((row) => row.id));
  });
}

/** One settled Turn's transcript or one conversation entry, at its history revision. */
export type StoredHistoryItem =
  | { readonly kind: "turn"; readonly id: string; readonly revision: number; readonly messages: unknown[]; readonly request: unknown }
  | { readonly kind: "entry"; readonly id: string; readonly revision: number; readonly content: unknown[] };

/** The checkpoint a history read starts from: its compaction id and outcome (holding the checkpoint). */
export interface StoredCheckpoint {
  readonly compactionId: string;
  readonly throughHistoryRevision: number;
  readonly outcome: unknown;
}

export interface HistoryRange {
  /** The work's admission revision: items below it. */
  readonly before: number;
  /** The checkpoints that may apply: those made under this visibility key. */
  readonly visibilityKey: string;
  /** Items below this revision are hidden. */
  readonly floor?: number | undefined;
  /**
   * What the caller already holds: the items through `after` from the checkpoint of compaction
   * `compactionId` (null: none). Used only while that checkpoint is still the one that applies.
   */
  readonly base?: { readonly compactionId: string | null; readonly after: number } | undefined;
  /**
   * Also read the Turns rewinds took out of the Session's conversation (session_rewind, not
   * `filesOnly`), in the same statement: a Turn's launch learns both at once (services/core/turns/runner.ts).
   */
  readonly hidden?: boolean | undefined;
}

/**
 * One statement: the checkpoint that applies to work at `before` (the completed compaction of
 * `visibilityKey` admitted no later than the work with the highest `throughHistoryRevision`
 * below it, the latest on ties), then the Session's settled Turns' transcripts and conversation
 * entries after it (or after `base.after` while `base`'s checkpoint still applies) and below
 * `before`, in revision order. Unsettled Turns are left out: their transcripts are not final.
 * With `range.hidden`, the same statement also returns the Turns rewinds hid (`hidden`; else []).
 */
export function readHistoryRange(
  context: Context,
  sessionId: string,
  range: HistoryRange,
): Promise<{ checkpoint: StoredCheckpoint | undefined; items: StoredHistoryItem[]; hidden: string[] }> {
  return read(context, async (sql) => {
    const rows = await sql.all<{ kind: string; id: string; revision: number; body: string; request: string | null }>(
      `WITH cp AS (
         SELECT id, through_history_revision AS through, outcome FROM compaction
         WHERE session_id = ?1 AND visibility_key = ?2 AND through_history_revision < ?3 AND history_revision <= ?3 AND phase = 'completed'
         ORDER BY through_history_revision DESC, completed_at DESC LIMIT 1),
       low AS (
         SELECT max(CASE WHEN ?5 IS NOT NULL AND (SELECT id FROM cp) IS ?4 THEN ?5 ELSE COALESCE((SELECT through FROM cp), 0) END, ?6 - 1) AS after)
       SELECT 'checkpoint' AS kind, id, through AS revision, outcome AS body, NULL AS request FROM cp
       UNION ALL
       SELECT 'turn', id, history_revision, messages, request FROM turn
       WHERE session_id = ?1 AND history_revision > (SELECT after FROM low) AND history_revision < ?3 AND phase IN ('completed', 'cancelled', 'failed')
       UNION ALL
       SELECT 'entry', id, history_revision, content, NULL FROM conversation_entry
       WHERE session_id = ?1 AND history_revision > (SELECT after FROM low) AND history_revision < ?3${
         range.hidden
           ? `
       UNION ALL
       SELECT 'hidden', NULL, 0, turn_ids, NULL FROM session_rewind WHERE session_id = ?1 AND files_only = 0`
           : ""
       }
       ORDER BY revision`,
      [sessionId, range.visibilityKey, range.before, range.base?.compactionId ?? null, range.base?.after ?? null, range.floor ?? 0],
    );
    let checkpoint: StoredCheckpoint | undefined;
    const items: StoredHistoryItem[] = [];
    const hidden = new Set<string>();
    for (const row of rows) {
      if (row.kind === "hidden") for (const id of JSON.parse(row.body) as string[]) hidden.add(id);
      else if (row.kind === "checkpoint") checkpoint = { compactionId: row.id, throughHistoryRevision: row.revision, outcome: JSON.parse(row.body) as unknown };
      else if (row.kind === "turn") items.push({ kind: "turn", id: row.id, revision: row.revision, messages: JSON.parse(row.body) as unknown[], request: JSON.parse(row.request!) as unknown });
      else items.push({ kind: "entry", id: row.id, revision: row.revision, content: JSON.parse(row.body) as unknown[] });
    }
    return { checkpoint, items, hidden: [...hidden] };
  });
}

/** Revisions and phases of every Turn (and the revision of every entry) of the Session below `before`: what a fork selects from. */
export function listHistoryIndex(
  context: Context,
  sessionId: string,
  before: number,
): Promise<{ kind: "turn" | "entry"; id: string; revision: number; phase: TurnRow["phase"] | "settled"; messageCount: number }[]> {
  return read(context, async (sql) => {
    // A spilled `messages` (spill.ts) is its marker to SQL: it is read back whole and counted here.
    const turns = await sql.all<{ id: string; history_revision: number; phase: TurnRow["phase"]; count: number; spilled: string | null }>(
      `SELECT id, history_revision, phase, json_array_length(messages) AS count, CASE WHEN substr(messages, 1, 10) = '"\\u0001zc:' THEN messages END AS spilled
       FROM turn WHERE session_id = ? AND history_revision < ? ORDER BY history_revision`,
      [sessionId, before],
    );
    for (const row of turns) if (row.spilled !== null) row.count = (JSON.parse(row.spilled) as unknown[]).length;
    const entries = await sql.all<{ id: string; history_revision: number }>("SELECT id, history_revision FROM conversation_entry WHERE session_id = ? AND history_revision < ? ORDER BY history_revision", [
      sessionId,
      before,
    ]);
    return [
      ...turns.map((row) => ({ kind: "turn" as const, id: row.id, revision: row.history_revision, phase: row.phase, messageCount: row.count })),
      ...entries.map((row) => ({ kind: "entry" as const, id: row.id, revision: row.history_revision, phase: "settled" as const, messageCount: 1 })),
    ].sort((a, b) => a.revision - b.revision);
  });
}

/** What a fork copies, in history order, and how copied ids and JSON are rewritten. */
export interface ForkCopy {
  /** The new Session (its counters are set by the copy). */
  readonly session: Omit<SessionInsert, "serverCursor" | "activityCursor" | "nextSequence" | "historyRevision">;
  readonly items: readonly { readonly kind: "turn" | "entry"; readonly sourceId: string }[];
  /** The fork's id for a copied Turn, steer or entry. */
  readonly idOf: (sourceId: string) => string;
  /** Rewrites a copied JSON value (source ids → fork ids). */
  readonly rewrite: (value: unknown) => unknown;
}

/**
 * Creates a forked Session and copies the selected Turns (row, transcript, parts and steering
 * input, each with a fresh id, sequence and history revision) and conversation entries into it,
 * in one transaction. Each copied Turn gets one `turn.snapshot` event so the fork's Session and
 * server streams show it. Returns the new Session row.
 */
export function insertFork(context: Context, copy: ForkCopy): Promise<SessionRow> {
  return write(context, async (tx) => {
    const created = await insertSession(tx, copy.session);
    const sessionId = created.id;
    let revision = 0;
    let sequence = 0;
    let activity = 1;
    let server = created.serverCursor;
    for (const item of copy.items) {
      revision += 1;
      if (item.kind === "entry") {
        const raw = await tx.sql.get(`SELECT ${ENTRY_SELECT} FROM conversation_entry WHERE id = ?`, [item.sourceId]);
        const entry = entryFromRow(raw!);
        await tx.sql.run(`INSERT INTO conversation_entry (${ENTRY_SELECT}) VALUES (?, ?, ?, ?, ?, ?, ?)`, [
          copy.idOf(entry.id),
          sessionId,
          revision,
          jsonValue(entry.content),
          jsonValue(entry.attribution),
          entry.acceptedAt,
          entry.requestHash,
        ]);
        await publishRows(tx, sessionId, entryRows({ ...entry, id: copy.idOf(entry.id) }));
        continue;
      }
      const source = turnFromRow((await tx.sql.get(`SELECT ${TURN_SELECT} FROM turn WHERE id = ?`, [item.sourceId]))!);
      const turnId = copy.idOf(source.id);
      sequence += 1;
      activity += 1;
      server += 1;
      const row: TurnRow = {
        ...source,
        id: turnId,
        sessionId,
        sequence,
        historyRevision: revision,
        request: copy.rewrite(source.request),
        outcome: copy.rewrite(source.outcome),
        revision: 1,
        activityCursor: activity,
        serverCursor: server,
        ownerProcessId: null,
        ownerInstance: null,
        leaseExpiresAt: null,
      };
      const encoded = Object.entries(row).map(([property, value]) => turnColumn(property as keyof TurnRow, value));
      await tx.sql.run(`INSERT INTO turn (${encoded.map((column) => column.column).join(", ")}) VALUES (${placeholders(encoded.length)})`, encoded.map((column) => column.value));
      for (const part of await tx.sql.all<{ ordinal: number; data: string }>("SELECT ordinal, data FROM turn_part WHERE turn_id = ? ORDER BY ordinal", [source.id])) {
        await tx.sql.run("INSERT INTO turn_part (turn_id, ordinal, data) VALUES (?, ?, ?)", [turnId, part.ordinal, jsonValue(copy.rewrite(JSON.parse(part.data)))]);
      }
      for (const steer of await tx.sql.all<{ steer_id: string; data: string; request_hash: string }>("SELECT steer_id, data, request_hash FROM turn_steer WHERE turn_id = ? ORDER BY sequence", [source.id])) {
        sequence += 1;
        const data = { ...(copy.rewrite(JSON.parse(steer.data)) as Record<string, unknown>), sequence };
        await tx.sql.run("INSERT INTO turn_steer (steer_id, session_id, turn_id, sequence, data, request_hash) VALUES (?, ?, ?, ?, ?, ?)", [
          copy.idOf(steer.steer_id),
          sessionId,
          turnId,
          sequence,
          jsonValue(data),
          steer.request_hash,
        ]);
      }
      const events = await tx.sql.all(
        "INSERT INTO turn_event (session_id, turn_id, revision, activity_cursor, server_cursor, type, data) VALUES (?, ?, 1, ?, ?, 'turn.snapshot', NULL) RETURNING id, session_id, turn_id, revision, activity_cursor, server_cursor, type, data",
        [sessionId, turnId, activity, server],
      );
      tx.events.push(...events.map(eventFromRow));
      if (row.phase === "completed" || row.phase === "cancelled" || row.phase === "failed") await publishSettledTurn(tx, turnId);
    }
    const raw = await tx.sql.get(`UPDATE session SET next_sequence = ?, history_revision = ? WHERE id = ? RETURNING ${SESSION_SELECT}`, [sequence + 1, revision, sessionId]);
    return sessionFromRow(raw!);
  });
}
