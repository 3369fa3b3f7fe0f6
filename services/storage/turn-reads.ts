/**
 * The Turns repository, reads: Turns, their parts and steering input, pages, transcripts, and
 * the event log the watch streams replay. Raw statements prepared once per connection; a read
 * through the handle joins the caller's open transaction (it sees that transaction's writes).
 */
import { isStorageHandle, type StorageHandle, type StorageTransaction } from "./database.js";
import { inChunks } from "./chunks.js";
import type { SqlExecutor } from "./engine.js";
import { mapBusy } from "./errors.js";
import { isTooBig, resolveParsed } from "./spill.js";
import { TURN_SELECT, eventFromRow, partFromRow, placeholders, steerFromRow, turnFromRow } from "./rows.js";
import type { TurnEventRow, TurnPartRow, TurnRow, TurnSteerRow } from "./schema.js";

type Context = StorageHandle | StorageTransaction;

function read<T>(context: Context, fn: (sql: SqlExecutor) => Promise<T>): Promise<T> {
  return isStorageHandle(context) ? mapBusy(() => fn(context.reader().sql)) : fn(context.sql);
}

export function getTurn(context: Context, sessionId: string, turnId: string): Promise<TurnRow | undefined> {
  return read(context, async (sql) => {
    const raw = await sql.get(`SELECT ${TURN_SELECT} FROM turn WHERE id = ? AND session_id = ?`, [turnId, sessionId]);
    return raw ? turnFromRow(raw) : undefined;
  });
}

export function getTurnById(context: Context, turnId: string): Promise<TurnRow | undefined> {
  return read(context, async (sql) => {
    const raw = await sql.get(`SELECT ${TURN_SELECT} FROM turn WHERE id = ?`, [turnId]);
    return raw ? turnFromRow(raw) : undefined;
  });
}

/**
 * A Turn with its parts and steering input, in one statement (the parts and steers as JSON
 * arrays); with `within`, only when it belongs to that Session on that server.
 */
export function getTurnWithParts(
  context: Context,
  turnId: string,
  within?: { readonly server: string; readonly sessionId: string },
): Promise<{ turn: TurnRow; parts: TurnPartRow[]; steers: TurnSteerRow[] } | undefined> {
  return read(context, async (sql) => {
    const scope = within ? " AND session_id = ? AND EXISTS (SELECT 1 FROM session s WHERE s.id = turn.session_id AND s.server = ?)" : "";
    const args = within ? [turnId, within.sessionId, within.server] : [turnId];
    let raw: Record<string, unknown> | undefined;
    try {
      raw = await sql.get(
        `SELECT ${TURN_SELECT},
           (SELECT json_group_array(json_object('ordinal', ordinal, 'data', json(data))) FROM (SELECT ordinal, data FROM turn_part WHERE turn_id = turn.id ORDER BY ordinal)) AS parts_json,
           (SELECT json_group_array(json_object('steer_id', steer_id, 'session_id', session_id, 'turn_id', turn_id, 'sequence', sequence, 'data', json(data), 'request_hash', request_hash))
              FROM (SELECT * FROM turn_steer WHERE turn_id = turn.id ORDER BY sequence)) AS steers_json
         FROM turn WHERE id = ?${scope}`,
        args,
      );
    } catch (error) {
      // The parts together are longer than one SQL value may be (a Durable Object's 2 MB):
      // the Turn, its parts and its steers in three statements instead.
      if (!isTooBig(error)) throw error;
      const alone = await sql.get(`SELECT ${TURN_SELECT} FROM turn WHERE id = ?${scope}`, args);
      if (!alone) return undefined;
      const parts = await sql.all("SELECT turn_id, ordinal, data FROM turn_part WHERE turn_id = ? ORDER BY ordinal", [turnId]);
      const steers = await sql.all("SELECT steer_id, session_id, turn_id, sequence, data, request_hash FROM turn_steer WHERE turn_id = ? ORDER BY sequence", [turnId]);
      return { turn: turnFromRow(alone), parts: parts.map(partFromRow), steers: steers.map(steerFromRow) };
    }
    if (!raw) return undefined;
    const parts = (JSON.parse(raw["parts_json"] as string) as { ordinal: number; data: unknown }[]).map((part) => ({ turnId, ordinal: part.ordinal, data: part.data }));
    const steers = (JSON.parse(raw["steers_json"] as string) as Record<string, unknown>[]).map((steer) => ({ ...steerFromRow({ ...steer, data: null }), data: steer["data"] }));
    // A spilled part or steer is its marker in the aggregate: read back here (spill.ts).
    await resolveParsed(sql, parts, "data");
    await resolveParsed(sql, steers, "data");
    return { turn: turnFromRow(raw), parts, steers };
  });
}

export function listParts(context: Context, turnIds: readonly string[]): Promise<TurnPartRow[]> {
  if (turnIds.length === 0) return Promise.resolve([]);
  // Ids sorted as SQLite compares them (bytes), so chunk after chunk keeps the (turn_id, ordinal) order.
  const sorted = [...new Set(turnIds)].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  return read(context, async (sql) =>
    inChunks(sorted, 0, async (ids) => (await sql.all(`SELECT turn_id, ordinal, data FROM turn_part WHERE turn_id IN (${placeholders(ids.length)}) ORDER BY turn_id, ordinal`, ids)).map(partFromRow)),
  );
}

/** One part of a Turn, or undefined when it has none at that ordinal. */
export function getPart(context: Context, turnId: string, ordinal: number): Promise<TurnPartRow | undefined> {
  return read(context, async (sql) => {
    const raw = await sql.get("SELECT turn_id, ordinal, data FROM turn_part WHERE turn_id = ? AND ordinal = ?", [turnId, ordinal]);
    return raw ? partFromRow(raw) : undefined;
  });
}

export function listSteers(context: Context, turnIds: readonly string[]): Promise<TurnSteerRow[]> {
  if (turnIds.length === 0) return Promise.resolve([]);
  return read(context, async (sql) => {
    const steers = await inChunks([...new Set(turnIds)], 0, async (ids) =>
      (await sql.all(`SELECT steer_id, session_id, turn_id, sequence, data, request_hash FROM turn_steer WHERE turn_id IN (${placeholders(ids.length)}) ORDER BY sequence`, ids)).map(steerFromRow),
    );
    return steers.sort((a, b) => a.sequence - b.sequence);
  });
}

export function getSteer(context: Context, steerId: string): Promise<TurnSteerRow | undefined> {
  return read(context, async (sql) => {
    const raw = await sql.get("SELECT steer_id, session_id, turn_id, sequence, data, request_hash FROM turn_steer WHERE steer_id = ?", [steerId]);
    return raw ? steerFromRow(raw) : undefined;
  });
}

export interface TurnPage {
  readonly afterSequence?: number | undefined;
  readonly throughSequence?: number | undefined;
  readonly limit: number;
}

/** Turns of a Session in sequence order within the page bounds. */
export function listTurns(context: Context, sessionId: string, page: TurnPage): Promise<TurnRow[]> {
  return read(context, async (sql) =>
    (
      await sql.all(
        `SELECT ${TURN_SELECT} FROM turn WHERE session_id = ? AND (?2 IS NULL OR sequence > ?2) AND (?3 IS NULL OR sequence <= ?3) ORDER BY sequence LIMIT ?4`,
        [sessionId, page.afterSequence ?? null, page.throughSequence ?? null, page.limit],
      )
    ).map(turnFromRow),
  );
}

/**
 * The model transcripts of the Session's settled Turns after `afterSequence` and before
 * `beforeSequence`, in order (the next Turn's history, or the part of it a cache lacks).
 */
export function listTranscripts(context: Context, sessionId: string, beforeSequence: number, afterSequence = 0): Promise<unknown[][]> {
  return read(context, async (sql) =>
    (
      await sql.all<{ messages: string }>(
        "SELECT messages FROM turn WHERE session_id = ? AND sequence > ? AND sequence < ? AND phase IN ('completed', 'cancelled', 'failed') ORDER BY sequence",
        [sessionId, afterSequence, beforeSequence],
      )
    ).map((row) => JSON.parse(row.messages) as unknown[]),
  );
}

/** The highest sequence any Turn of the Session has (0 when none). */
export function lastTurnSequence(context: Context, sessionId: string): Promise<number> {
  return read(context, async (sql) => (await sql.get<{ last: number | null }>("SELECT max(sequence) AS last FROM turn WHERE session_id = ?", [sessionId]))?.last ?? 0);
}

/** Turns of the Session in the given phases, oldest first. */
export function turnsInPhases(context: Context, sessionId: string, phases: readonly TurnRow["phase"][]): Promise<TurnRow[]> {
  return read(context, async (sql) =>
    (await sql.all(`SELECT ${TURN_SELECT} FROM turn WHERE session_id = ? AND phase IN (${placeholders(phases.length)}) ORDER BY sequence`, [sessionId, ...phases])).map(turnFromRow),
  );
}

/** Every Turn in the given phases across the database (recovery and scheduling). */
export function allTurnsInPhases(context: Context, phases: readonly TurnRow["phase"][]): Promise<TurnRow[]> {
  return read(context, async (sql) =>
    (await sql.all(`SELECT ${TURN_SELECT} FROM turn WHERE phase IN (${placeholders(phases.length)}) ORDER BY accepted_at, sequence`, [...phases])).map(turnFromRow),
  );
}

/** The Sessions with a pending Turn, and each Session's runner lease. */
export function sessionsWithPendingTurns(context: Context): Promise<{ sessionId: string; runnerInstance: string | null; runnerProcessId: number | null; runnerLeaseExpiresAt: number | null }[]> {
  return read(context, async (sql) =>
    (
      await sql.all<Record<string, unknown>>(
        `SELECT s.id AS session_id, s.runner_instance, s.runner_process_id, s.runner_lease_expires_at, min(t.accepted_at) AS first
         FROM turn t JOIN session s ON s.id = t.session_id WHERE t.phase = 'pending' GROUP BY s.id ORDER BY first`,
      )
    ).map((row) => ({
      sessionId: row["session_id"] as string,
      runnerInstance: (row["runner_instance"] as string | null) ?? null,
      runnerProcessId: (row["runner_process_id"] as number | null) ?? null,
      runnerLeaseExpiresAt: (row["runner_lease_expires_at"] as number | null) ?? null,
    })),
  );
}

const EVENT_SELECT = "SELECT id, session_id, turn_id, revision, activity_cursor, server_cursor, type, data FROM turn_event";

/** Durable events of one Turn after `afterRevision`, in revision order. */
export function listTurnEvents(context: Context, turnId: string, afterRevision: number, limit = 1000): Promise<TurnEventRow[]> {
  return read(context, async (sql) => (await sql.all(`${EVENT_SELECT} WHERE turn_id = ? AND revision > ? ORDER BY revision LIMIT ?`, [turnId, afterRevision, limit])).map(eventFromRow));
}

/** Durable events of one Session after `afterActivityCursor`, in cursor order. */
export function listSessionEvents(context: Context, sessionId: string, afterActivityCursor: number, limit = 500): Promise<TurnEventRow[]> {
  return read(context, async (sql) =>
    (await sql.all(`${EVENT_SELECT} WHERE session_id = ? AND activity_cursor > ? ORDER BY activity_cursor LIMIT ?`, [sessionId, afterActivityCursor, limit])).map(eventFromRow),
  );
}

/** Durable Turn events of one server's Sessions after `afterServerCursor`, in cursor order. */
export function listServerTurnEvents(context: Context, server: string, afterServerCursor: number, limit = 500): Promise<TurnEventRow[]> {
  return read(context, async (sql) =>
    (
      await sql.all(
        "SELECT e.id, e.session_id, e.turn_id, e.revision, e.activity_cursor, e.server_cursor, e.type, e.data FROM turn_event e JOIN session s ON s.id = e.session_id WHERE s.server = ? AND e.server_cursor > ? ORDER BY e.server_cursor LIMIT ?",
        [server, afterServerCursor, limit],
      )
    ).map(eventFromRow),
  );
}
