/**
 * The compactions repository: admission of manual compactions (one work sequence and history
 * revision taken in the same UPDATE as a Turn's), automatic compactions recorded inside their
 * Turn, claims (a manual compaction starts only when it is the Session's oldest pending work and
 * nothing of the Session runs), guarded changes, leases, the checkpoint lookup and the page.
 * Raw statements; JSON columns hold the contract's shapes (core encodes and decodes them).
 */
import { isStorageHandle, type StorageHandle, type StorageTransaction } from "./database.js";
import type { SqlExecutor, SqlValue } from "./engine.js";
import { mapBusy } from "./errors.js";
import { SESSION_SELECT, jsonValue, placeholders, sessionFromRow } from "./rows.js";
import type { CompactionRow, SessionRow } from "./schema.js";

type Context = StorageHandle | StorageTransaction;

function read<T>(context: Context, fn: (sql: SqlExecutor) => Promise<T>): Promise<T> {
  return isStorageHandle(context) ? mapBusy(() => fn(context.reader().sql)) : fn(context.sql);
}

function write<T>(context: Context, fn: (tx: StorageTransaction) => Promise<T>): Promise<T> {
  return isStorageHandle(context) ? context.transaction(fn) : fn(context);
}

type Column = readonly [property: keyof CompactionRow, column: string, json?: true];

const COLUMNS: readonly Column[] = [
  ["id", "id"],
  ["sessionId", "session_id"],
  ["sequence", "sequence"],
  ["ordinal", "ordinal"],
  ["historyRevision", "history_revision"],
  ["turnId", "turn_id"],
  ["trigger", '"trigger"', true],
  ["request", "request", true],
  ["attribution", "attribution", true],
  ["model", "model"],
  ["modelLeaseId", "model_lease_id"],
  ["requestOptionsId", "request_options_id"],
  ["providerOptions", "provider_options", true],
  ["policy", "policy", true],
  ["phase", "phase"],
  ["revision", "revision"],
  ["visibilityKey", "visibility_key"],
  ["throughHistoryRevision", "through_history_revision"],
  ["cancellation", "cancellation", true],
  ["usage", "usage", true],
  ["outcome", "outcome", true],
  ["acceptedAt", "accepted_at"],
  ["startedAt", "started_at"],
  ["completedAt", "completed_at"],
  ["requestHash", "request_hash"],
  ["ownerProcessId", "owner_process_id"],
  ["ownerInstance", "owner_instance"],
  ["leaseExpiresAt", "lease_expires_at"],
];

const COLUMN_OF = new Map(COLUMNS.map(([property, column, json]) => [property, { column, json: json === true }]));
const SELECT = COLUMNS.map(([, column]) => column).join(", ");
const bare = (column: string): string => column.replaceAll('"', "");

function fromRow(raw: Record<string, unknown>): CompactionRow {
  const row: Record<string, unknown> = {};
  for (const [property, column, json] of COLUMNS) {
    const value = raw[bare(column)];
    row[property] = json ? (typeof value === "string" ? JSON.parse(value) : (value ?? null)) : (value ?? null);
  }
  return row as unknown as CompactionRow;
}

function encode(property: keyof CompactionRow, value: unknown): { column: string; value: SqlValue } {
  const spec = COLUMN_OF.get(property);
  if (!spec) throw new Error(`compaction has no column for ${String(property)}`);
  return { column: spec.column, value: spec.json ? jsonValue(value) : ((value ?? null) as SqlValue) };
}

async function insertRow(tx: StorageTransaction, row: CompactionRow): Promise<void> {
  const encoded = COLUMNS.map(([property]) => encode(property, row[property]));
  await tx.sql.run(`INSERT INTO compaction (${encoded.map((e) => e.column).join(", ")}) VALUES (${placeholders(encoded.length)})`, encoded.map((e) => e.value));
}

/** A compaction row before the position and counters are assigned. */
export type NewCompaction = Omit<CompactionRow, "sequence" | "ordinal" | "historyRevision" | "revision">;

/**
 * Admits a manual compaction: one UPDATE takes the Session's next work sequence and history
 * revision (returning the Session row, which `plan` validates and builds the row from — a throw
 * rolls back), one INSERT writes it at ordinal 1 with revision 1. Resolves undefined when the
 * Session does not exist on `server`; throws the driver's constraint error when the id exists.
 */
export function admitCompaction(context: Context, target: { readonly server: string; readonly sessionId: string }, plan: (session: SessionRow) => Promise<NewCompaction>): Promise<{ compaction: CompactionRow; session: SessionRow } | undefined> {
  return write(context, async (tx) => {
    const raw = await tx.sql.get<Record<string, unknown>>(
      `UPDATE session SET next_sequence = next_sequence + 1, history_revision = history_revision + 1 WHERE id = ? AND server = ? RETURNING ${SESSION_SELECT}`,
      [target.sessionId, target.server],
    );
    if (!raw) return undefined;
    const locked = sessionFromRow(raw);
    const session: SessionRow = { ...locked, nextSequence: locked.nextSequence - 1, historyRevision: locked.historyRevision - 1 };
    const planned = await plan(session);
    const compaction: CompactionRow = { ...planned, sequence: session.nextSequence, ordinal: 1, historyRevision: locked.historyRevision, revision: 1 };
    await insertRow(tx, compaction);
    return { compaction, session };
  });
}

/** Records an automatic compaction inside its Turn: the Turn's sequence at the next ordinal, the Turn's history revision. */
export function insertTurnCompaction(context: Context, row: NewCompaction & { readonly sequence: number; readonly historyRevision: number }): Promise<CompactionRow> {
  return write(context, async (tx) => {
    const next = await tx.sql.get<{ ordinal: number }>("SELECT COALESCE(max(ordinal), 0) + 1 AS ordinal FROM compaction WHERE session_id = ? AND sequence = ?", [row.sessionId, row.sequence]);
    const compaction: CompactionRow = { ...row, ordinal: next!.ordinal, revision: 1 };
    await insertRow(tx, compaction);
    return compaction;
  });
}

export function getCompaction(context: Context, id: string): Promise<CompactionRow | undefined> {
  return read(context, async (sql) => {
    const raw = await sql.get(`SELECT ${SELECT} FROM compaction WHERE id = ?`, [id]);
    return raw ? fromRow(raw) : undefined;
  });
}

export type CompactionPatch = Partial<Omit<CompactionRow, "id" | "sessionId" | "sequence" | "ordinal" | "historyRevision" | "revision" | "requestHash" | "acceptedAt">>;

/**
 * Applies `patch` and takes the next revision, only while the compaction is in `expectPhases`
 * (and owned by `expectOwner`); returns the changed row or undefined, writing nothing.
 */
export function changeCompaction(
  context: Context,
  id: string,
  change: { readonly patch: CompactionPatch; readonly expectPhases?: readonly CompactionRow["phase"][]; readonly expectOwner?: string },
): Promise<CompactionRow | undefined> {
  return write(context, async (tx) => {
    const sets = ["revision = revision + 1"];
    const args: SqlValue[] = [];
    for (const [property, value] of Object.entries(change.patch)) {
      if (value === undefined) continue;
      const encoded = encode(property as keyof CompactionRow, value);
      sets.push(`${encoded.column} = ?`);
      args.push(encoded.value);
    }
    const where = ["id = ?"];
    args.push(id);
    if (change.expectPhases) {
      where.push(`phase IN (${placeholders(change.expectPhases.length)})`);
      args.push(...change.expectPhases);
    }
    if (change.expectOwner !== undefined) {
      where.push("owner_instance = ?");
      args.push(change.expectOwner);
    }
    const raw = await tx.sql.get(`UPDATE compaction SET ${sets.join(", ")} WHERE ${where.join(" AND ")} RETURNING ${SELECT}`, args);
    return raw ? fromRow(raw) : undefined;
  });
}

/**
 * Claims the Session's oldest pending manual compaction when it is the Session's oldest pending
 * work (no pending Turn has a lower sequence) and nothing of the Session runs, under the same
 * runner-lease rule as `claimNextTurn`. One transaction.
 */
export function claimNextCompaction(
  context: Context,
  sessionId: string,
  claim: { readonly ownerProcessId: number; readonly ownerInstance: string; readonly leaseExpiresAt: number; readonly startedAt: number; readonly lease: boolean },
): Promise<CompactionRow | undefined> {
  return write(context, async (tx) => {
    const leaseCondition = claim.lease ? "s.runner_instance = ?" : "(s.runner_instance IS NULL OR s.runner_instance = ? OR COALESCE(s.runner_lease_expires_at, 0) < ?)";
    const raw = await tx.sql.get(
      `UPDATE compaction SET phase = 'running', revision = revision + 1, started_at = ?, owner_process_id = ?, owner_instance = ?, lease_expires_at = ?
       WHERE id = (
         SELECT c.id FROM compaction c JOIN session s ON s.id = c.session_id
         WHERE c.session_id = ? AND c.phase = 'pending' AND c.turn_id IS NULL AND ${leaseCondition}
           AND NOT EXISTS (SELECT 1 FROM turn t WHERE t.session_id = c.session_id AND (t.phase = 'running' OR (t.phase = 'pending' AND t.sequence < c.sequence)))
           AND NOT EXISTS (SELECT 1 FROM compaction r WHERE r.session_id = c.session_id AND r.phase = 'running')
         ORDER BY c.sequence LIMIT 1)
       AND phase = 'pending'
       RETURNING ${SELECT}`,
      [claim.startedAt, claim.ownerProcessId, claim.ownerInstance, claim.leaseExpiresAt, sessionId, ...(claim.lease ? [claim.ownerInstance] : [claim.ownerInstance, claim.startedAt])],
    );
    return raw ? fromRow(raw) : undefined;
  });
}

/** Extends a manual compaction's lease while this instance runs it; false when it lost the claim. */
export function renewCompactionLease(context: Context, id: string, ownerInstance: string, leaseExpiresAt: number): Promise<boolean> {
  return write(context, async (tx) => {
    const { changes } = await tx.sql.run("UPDATE compaction SET lease_expires_at = ? WHERE id = ? AND owner_instance = ? AND phase = 'running'", [leaseExpiresAt, id, ownerInstance]);
    return changes > 0;
  });
}

/** Every running compaction (recovery), with whether its Turn (for an automatic one) still runs. */
export function runningCompactions(context: Context): Promise<(CompactionRow & { readonly turnRunning: boolean })[]> {
  return read(context, async (sql) =>
    (
      await sql.all(
        `SELECT ${SELECT}, EXISTS (SELECT 1 FROM turn t WHERE t.id = compaction.turn_id AND t.phase = 'running' AND t.owner_instance = compaction.owner_instance) AS turn_running
         FROM compaction WHERE phase = 'running' ORDER BY accepted_at`,
      )
    ).map((raw) => ({ ...fromRow(raw), turnRunning: raw["turn_running"] === 1 })),
  );
}

/** The Sessions with a pending manual compaction, with each Session's runner lease (scheduling). */
export function sessionsWithPendingCompactions(context: Context): Promise<{ sessionId: string; runnerInstance: string | null; runnerProcessId: number | null; runnerLeaseExpiresAt: number | null }[]> {
  return read(context, async (sql) =>
    (
      await sql.all<Record<string, unknown>>(
        `SELECT s.id AS session_id, s.runner_instance, s.runner_process_id, s.runner_lease_expires_at, min(c.accepted_at) AS first
         FROM compaction c JOIN session s ON s.id = c.session_id WHERE c.phase = 'pending' GROUP BY s.id ORDER BY first`,
      )
    ).map((row) => ({
      sessionId: row["session_id"] as string,
      runnerInstance: (row["runner_instance"] as string | null) ?? null,
      runnerProcessId: (row["runner_process_id"] as number | null) ?? null,
      runnerLeaseExpiresAt: (row["runner_lease_expires_at"] as number | null) ?? null,
    })),
  );
}

/** A page of the Session's compactions in (sequence, ordinal) order after `after` and through `through`. */
export function listCompactions(
  context: Context,
  sessionId: string,
  page: { readonly after: readonly [number, number]; readonly through: readonly [number, number]; readonly limit: number },
): Promise<CompactionRow[]> {
  return read(context, async (sql) =>
    (
      await sql.all(
        `SELECT ${SELECT} FROM compaction WHERE session_id = ?1
           AND (sequence > ?2 OR (sequence = ?2 AND ordinal > ?3))
           AND (sequence < ?4 OR (sequence = ?4 AND ordinal <= ?5))
         ORDER BY sequence, ordinal LIMIT ?6`,
        [sessionId, page.after[0], page.after[1], page.through[0], page.through[1], page.limit],
      )
    ).map(fromRow),
  );
}

/**
 * The last (sequence, ordinal) of the Session's compactions, or of those at or before sequence
 * `upTo` (reported as [upTo, 0] when that sequence has none); [0, 0] when none.
 */
export function lastCompactionPosition(context: Context, sessionId: string, upTo?: number): Promise<[number, number]> {
  return read(context, async (sql) => {
    const raw = await sql.get<{ sequence: number; ordinal: number }>(
      "SELECT sequence, ordinal FROM compaction WHERE session_id = ? AND sequence <= ? ORDER BY sequence DESC, ordinal DESC LIMIT 1",
      [sessionId, upTo ?? Number.MAX_SAFE_INTEGER],
    );
    if (upTo !== undefined) return [upTo, raw?.sequence === upTo ? raw.ordinal : 0];
    return raw ? [raw.sequence, raw.ordinal] : [0, 0];
  });
}
