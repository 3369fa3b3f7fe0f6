// Longer than ~400 lines on purpose: every write here shares one stamping transaction shape
// (guards, revision, cursors, parts, events); reading them together keeps that shape identical.
/**
 * The Turns repository, writes: admission, durable changes, claims, leases and steering input.
 * Every durable change of a Turn is one transaction that updates its row (guards in the WHERE,
 * the new revision and cursors in the SET), upserts its parts and appends its events to
 * `turn_event` with the next Turn revision, Session activity cursor and server cursor — the
 * three watch streams' resume points (the `turn_event_stamps` trigger advances both counters).
 * Hot paths: raw statements prepared once per connection (see engine.ts), a handful per change.
 * Functions take the handle (they run their own transaction) or a running transaction (they
 * join it). Reads live in turn-reads.ts.
 */
import { SETTLED_TURN_COLUMNS, publishSettledTurn, type SettledTurnRead } from "./history-rows.js";
import { isStorageHandle, type Durability, type StorageHandle, type StorageTransaction } from "./database.js";
import { chunked, inChunks, valueRows } from "./chunks.js";
import type { SqlValue } from "./engine.js";
import type { PreparedRequestRecord } from "./diagnostics.js";
import { SESSION_SELECT, TURN_SELECT, eventFromRow, jsonValue, placeholders, sessionFromRow, steerFromRow, turnColumn, turnFromRow } from "./rows.js";
import type { SessionRow, TurnEventRow, TurnInsert, TurnRow, TurnSteerRow } from "./schema.js";

export * from "./turn-reads.js";

export type StorageContext = StorageHandle | StorageTransaction;

function write<T>(context: StorageContext, fn: (tx: StorageTransaction) => Promise<T>, durability?: Durability): Promise<T> {
  return isStorageHandle(context) ? context.transaction(fn, durability ? { durability } : undefined) : fn(context);
}

/** One event to append: its type and payload (null for `turn.snapshot`). */
export interface NewTurnEvent {
  readonly type: string;
  readonly data: unknown;
}

/** A part to write at its ordinal (insert or replace). */
export interface PartWrite {
  readonly ordinal: number;
  readonly data: unknown;
}

/** Fields of a Turn a change may set. */
export type TurnPatch = Partial<
  Omit<TurnInsert, "id" | "sessionId" | "sequence" | "revision" | "activityCursor" | "serverCursor" | "requestHash" | "acceptedAt">
>;

/** What a change returns of the Turn row: its guards and stamps, not its JSON payloads. */
export type TurnStamps = Pick<TurnRow, "id" | "sessionId" | "phase" | "revision" | "activityCursor" | "serverCursor" | "ownerInstance" | "cancellation">;

const STAMPS = "id, session_id, phase, revision, activity_cursor, server_cursor, owner_instance, cancellation";

const stampsFromRow = (raw: Record<string, unknown>): TurnStamps => ({
  id: raw["id"] as string,
  sessionId: raw["session_id"] as string,
  phase: raw["phase"] as TurnRow["phase"],
  revision: raw["revision"] as number,
  activityCursor: raw["activity_cursor"] as number,
  serverCursor: raw["server_cursor"] as number,
  ownerInstance: (raw["owner_instance"] as string | null) ?? null,
  cancellation: typeof raw["cancellation"] === "string" ? JSON.parse(raw["cancellation"]) : null,
});

/** Appends events with explicit stamps (the trigger advances the counters); returns the rows. */
async function insertEvents(
  tx: StorageTransaction,
  sessionId: string,
  turnId: string,
  first: { revision: number; activityCursor: number; serverCursor: number },
  events: readonly NewTurnEvent[],
): Promise<TurnEventRow[]> {
  if (events.length === 0) return [];
  const appended: TurnEventRow[] = [];
  let index = 0;
  for (const chunk of chunked(events, 7)) {
    const args: SqlValue[] = [];
    for (const event of chunk) {
      args.push(sessionId, turnId, first.revision + index, first.activityCursor + index, first.serverCursor + index, event.type, jsonValue(event.data));
      index += 1;
    }
    const rows = await tx.sql.all(
      `INSERT INTO turn_event (session_id, turn_id, revision, activity_cursor, server_cursor, type, data) VALUES ${valueRows(chunk.length, 7)} RETURNING id, session_id, turn_id, revision, activity_cursor, server_cursor, type, data`,
      args,
    );
    // RETURNING gives no order guarantee: the events keep theirs by revision.
    appended.push(...rows.map(eventFromRow).sort((a, b) => a.revision - b.revision));
  }
  tx.events.push(...appended);
  return appended;
}

/** Inserts or replaces parts (one statement per chunk of them, see chunks.ts). */
async function writeParts(tx: StorageTransaction, turnId: string, parts: readonly PartWrite[]): Promise<void> {
  for (const chunk of chunked(parts, 3)) {
    const args: SqlValue[] = [];
    for (const part of chunk) args.push(turnId, part.ordinal, jsonValue(part.data));
    await tx.sql.run(`INSERT INTO turn_part (turn_id, ordinal, data) VALUES ${valueRows(chunk.length, 3)} ON CONFLICT (turn_id, ordinal) DO UPDATE SET data = excluded.data`, args);
  }
}

export interface TurnChange {
  readonly patch?: TurnPatch;
  readonly parts?: readonly PartWrite[];
  readonly events: readonly NewTurnEvent[];
  /** Apply only while the Turn is in one of these phases (compare-and-set). */
  readonly expectPhases?: readonly TurnRow["phase"][];
  /** Apply only while this process instance owns the claim. */
  readonly expectOwner?: string;
  /** Apply only while no steering input of the Turn waits for promotion. */
  readonly expectNoWaitingSteers?: boolean;
  /** `relaxed` for re-derivable progress (see `Durability`); joined transactions keep the outer one's. */
  readonly durability?: Durability;
  /** Further writes that ride this change's transaction once it applied (records such as a prepared request). */
  readonly within?: (tx: StorageTransaction) => Promise<void>;
  /** A settlement that publishes the Turn's prompt alone, reading none of its parts (a Turn whose full settlement could not be written). */
  readonly promptOnly?: boolean;
  /**
   * A settlement's every part as stored once this change applied, in ordinal order, when the
   * caller holds them all (its own writes): published as given instead of read back.
   */
  readonly allParts?: readonly unknown[];
  /**
   * The Turn changed nothing recorded (Turn recording knows it at settlement): its empty patch is
   * recorded as `turn.empty_patch_at` by this change's UPDATE, not as a `turn_patch` row.
   */
  readonly emptyPatchAt?: number;
  /**
   * A prepared Main request this change records: set as `turn.prepared_request` by its UPDATE,
   * whose trigger inserts it in `session_context` (no statement of its own).
   */
  readonly preparedRequest?: PreparedRequestRecord;
}

/**
 * Applies one durable change: patch + parts + events in one transaction. Returns undefined,
 * writing nothing, when the Turn is gone or a compare-and-set guard fails. One UPDATE checks the
 * guards, applies the patch and takes the stamps; one INSERT appends the events; one upsert
 * writes the parts.
 */
export function changeTurn(context: StorageContext, turnId: string, change: TurnChange): Promise<{ turn: TurnStamps; events: TurnEventRow[] } | undefined> {
  return write(
    context,
    async (tx) => {
      const n = change.events.length;
      const sets: string[] = [];
      const args: SqlValue[] = [];
      for (const [property, value] of Object.entries(change.patch ?? {})) {
        if (value === undefined) continue;
        const encoded = turnColumn(property as keyof TurnRow, value);
        sets.push(`${encoded.column} = ?`);
        args.push(encoded.value);
      }
      if (change.preparedRequest) {
        const { model, report, preparedAt, reportedInputTokens } = change.preparedRequest;
        sets.push("prepared_request = ?");
        args.push(JSON.stringify({ model, report, preparedAt, reportedInputTokens }));
      }
      if (change.emptyPatchAt !== undefined) {
        sets.push("empty_patch_at = ?");
        args.push(change.emptyPatchAt);
      }
      if (n > 0) {
        sets.push(
          `revision = revision + ${n}`,
          `activity_cursor = (SELECT activity_cursor FROM session WHERE id = turn.session_id) + ${n}`,
          `server_cursor = (SELECT cursor FROM server_activity WHERE id = 1) + ${n}`,
        );
      }
      const where = ["id = ?"];
      args.push(turnId);
      if (change.expectPhases) {
        where.push(`phase IN (${placeholders(change.expectPhases.length)})`);
        args.push(...change.expectPhases);
      }
      if (change.expectOwner !== undefined) {
        where.push("owner_instance = ?");
        args.push(change.expectOwner);
      }
      if (change.expectNoWaitingSteers) {
        where.push("NOT EXISTS (SELECT 1 FROM turn_steer s WHERE s.turn_id = turn.id AND json_extract(s.data, '$.state.state') = 'accepted')");
      }
      // A settlement publishes the Turn's history rows in the same transaction (history-rows.ts):
      // its UPDATE returns the row's fields they are built from; the parts are read after this change's are written.
      const settles = change.events.some((event) => event.type === "turn.finished");
      const returning = settles && sets.length > 0 ? `${STAMPS}, ${SETTLED_TURN_COLUMNS}` : STAMPS;
      const row =
        sets.length > 0
          ? await tx.sql.get(`UPDATE turn SET ${sets.join(", ")} WHERE ${where.join(" AND ")} RETURNING ${returning}`, args)
          : await tx.sql.get(`SELECT ${STAMPS} FROM turn WHERE ${where.join(" AND ")}`, args);
      if (!row) return undefined;
      const turn = stampsFromRow(row);
      await writeParts(tx, turnId, change.parts ?? []);
      const events = await insertEvents(
        tx,
        turn.sessionId,
        turnId,
        { revision: turn.revision - n + 1, activityCursor: turn.activityCursor - n + 1, serverCursor: turn.serverCursor - n + 1 },
        change.events,
      );
      if (settles) {
        const settled = returning === STAMPS ? undefined : (row as unknown as SettledTurnRead);
        await publishSettledTurn(tx, turnId, { diagnostics: true, ...(settled ? { settled } : {}), ...(change.promptOnly ? { promptOnly: true } : {}), ...(change.allParts ? { parts: change.allParts } : {}) });
      }
      if (change.within) await change.within(tx);
      return { turn, events };
    },
    change.durability,
  );
}

export type NewTurn = Omit<TurnInsert, "sequence" | "revision" | "activityCursor" | "serverCursor" | "historyRevision">;

/** A claim of a Turn (or of a Session's runner lease) by a host instance. */
export interface Claim {
  readonly ownerProcessId: number;
  readonly ownerInstance: string;
  readonly leaseExpiresAt: number;
  readonly startedAt: number;
}

/** What an admission writes, decided from the Session row it read (and locked) in the same transaction. */
export interface AdmissionPlan {
  readonly row: NewTurn;
  /** At least one. */
  readonly events: readonly NewTurnEvent[];
  /** A first prompt's automatic title, set (and stamped) only while the Session has none. */
  readonly title?: { readonly title: string; readonly updatedAt: number } | undefined;
  /**
   * Start the Turn in the same transaction when the Session has no pending or running Turn and
   * this host may run it: `lease` takes (or renews) the Session's runner lease for this host
   * (an embedded host); without it the Session must have no live lease of another host.
   */
  readonly claim?: (Claim & { readonly lease: boolean; readonly started: (row: TurnRow) => readonly NewTurnEvent[] }) | undefined;
}

export type AdmissionClaim = NonNullable<AdmissionPlan["claim"]>;

export interface Admission {
  readonly turn: TurnRow;
  readonly events: TurnEventRow[];
  /** The Session row as the admission read it (before its own changes). */
  readonly session: SessionRow;
  /** True when the Turn was admitted running, claimed by the given owner. */
  readonly claimed: boolean;
}

/**
 * Admits a Turn in one transaction of three statements: one UPDATE takes the Session's next
 * sequence (returning the Session row, which `plan` validates and builds the Turn from — a throw
 * rolls everything back), sets the first title and the runner lease; one INSERT writes the row;
 * one appends its events (and `turn.started` when the admission claims it). Throws the driver's
 * constraint error when the Turn id exists (callers replay); resolves undefined when the Session
 * does not exist on `server`. With a handle, `committed` sees the admission at COMMIT, before it
 * is durable (the promise settles once it is; see `StorageHandle.whenCommitted`).
 */
export function admitTurn(
  context: StorageContext,
  target: { readonly server: string; readonly sessionId: string },
  plan: (session: SessionRow) => Promise<AdmissionPlan>,
  claim?: AdmissionClaim,
  committed?: (admission: Admission, durable: Promise<void>) => void,
): Promise<Admission | undefined> {
  return write(context, async (tx) => {
    // SET reads the old row: the sequence, the runner lease (`?7`: taken for this host when it is
    // free, expired or already ours) and what the claim decision needs. The title is set below.
    const free = "(runner_instance IS NULL OR runner_instance = ?3 OR COALESCE(runner_lease_expires_at, 0) < ?4)";
    const raw = await tx.sql.get<Record<string, unknown>>(
      `UPDATE session SET next_sequence = next_sequence + 1, history_revision = history_revision + 1,
         runner_instance = CASE WHEN ?7 AND ${free} THEN ?3 ELSE runner_instance END,
         runner_process_id = CASE WHEN ?7 AND ${free} THEN ?5 ELSE runner_process_id END,
         runner_lease_expires_at = CASE WHEN ?7 AND ${free} THEN ?6 ELSE runner_lease_expires_at END
       WHERE id = ?1 AND server = ?2
       RETURNING ${SESSION_SELECT},
         (SELECT cursor FROM server_activity WHERE id = 1) AS server_now,
         (SELECT count(*) FROM turn WHERE turn.session_id = session.id AND turn.phase IN ('pending', 'running'))
           + (SELECT count(*) FROM compaction c WHERE c.session_id = session.id AND c.phase IN ('pending', 'running')) AS active`,
      [target.sessionId, target.server, claim?.ownerInstance ?? null, claim?.startedAt ?? 0, claim?.ownerProcessId ?? null, claim?.leaseExpiresAt ?? null, claim?.lease ? 1 : 0],
    );
    if (!raw) return undefined;
    const locked = sessionFromRow(raw);
    // The Session as it was before this admission (the sequence it hands out is the old next one).
    const session: SessionRow = { ...locked, nextSequence: locked.nextSequence - 1, historyRevision: locked.historyRevision - 1 };
    const { row, events, title } = await plan(session);
    const serverNow = raw["server_now"] as number;
    const runner = locked.runnerInstance;
    const runnerLive = runner !== null && (locked.runnerLeaseExpiresAt ?? 0) >= (claim?.startedAt ?? 0);
    const mayRun = claim !== undefined && (raw["active"] as number) === 0 && (claim.lease ? runner === claim.ownerInstance : !runnerLive || runner === claim.ownerInstance);
    // The title takes the next server cursor (as `updateSession` would stamp it); the events the ones after.
    const titled = title !== undefined && session.title === null;
    if (titled) {
      await tx.sql.run("UPDATE session SET title = ?, updated_at = ?, server_cursor = ? WHERE id = ?", [title.title, title.updatedAt, serverNow + 1, target.sessionId]);
    }
    const base: TurnRow = {
      ...(row as TurnRow),
      sequence: session.nextSequence,
      historyRevision: locked.historyRevision,
      instructions: row.instructions ?? null,
      attribution: row.attribution ?? null,
      providerOptions: row.providerOptions ?? null,
      messages: [],
      steeringGate: "open",
      promotedBatchCount: 0,
      usage: null,
      contextUse: null,
      cancellation: null,
      outcome: null,
      startedAt: null,
      completedAt: null,
      ownerProcessId: null,
      ownerInstance: null,
      leaseExpiresAt: null,
      revision: 0,
      activityCursor: 0,
      serverCursor: 0,
    };
    const turn: TurnRow = mayRun
      ? { ...base, phase: "running", startedAt: claim!.startedAt, ownerProcessId: claim!.ownerProcessId, ownerInstance: claim!.ownerInstance, leaseExpiresAt: claim!.leaseExpiresAt }
      : base;
    const all = mayRun ? [...events, ...claim!.started(turn)] : [...events];
    const n = all.length;
    const first = { revision: 1, activityCursor: session.activityCursor + 1, serverCursor: serverNow + (titled ? 2 : 1) };
    const stamped: TurnRow = { ...turn, revision: n, activityCursor: first.activityCursor + n - 1, serverCursor: first.serverCursor + n - 1 };
    const columns: string[] = [];
    const values: SqlValue[] = [];
    for (const [property, value] of Object.entries(stamped)) {
      const encoded = turnColumn(property as keyof TurnRow, value);
      columns.push(encoded.column);
      values.push(encoded.value);
    }
    await tx.sql.run(`INSERT INTO turn (${columns.join(", ")}) VALUES (${placeholders(columns.length)})`, values);
    const appended = await insertEvents(tx, target.sessionId, row.id, first, all);
    const admission: Admission = { turn: stamped, events: appended, session, claimed: mayRun };
    if (committed && isStorageHandle(context)) context.whenCommitted((durable) => committed(admission, durable));
    return admission;
  });
}

/**
 * Claims the Session's oldest pending Turn when none of its Turns (or compactions) is running, no
 * manual compaction admitted before it waits, and the Session's runner lease allows this host
 * (`lease`: this host must hold it; otherwise no other host may hold a live one): sets it running
 * with the owner and lease and appends `events(turn)`. One transaction, so two claimers never
 * run two Turns of one Session.
 */
export function claimNextTurn(
  context: StorageContext,
  sessionId: string,
  claim: Claim & { readonly lease: boolean },
  events: (row: TurnRow) => readonly NewTurnEvent[],
): Promise<TurnRow | undefined> {
  return write(context, async (tx) => {
    const leaseCondition = claim.lease
      ? "s.runner_instance = ?"
      : "(s.runner_instance IS NULL OR s.runner_instance = ? OR COALESCE(s.runner_lease_expires_at, 0) < ?)";
    const raw = await tx.sql.get(
      `SELECT ${TURN_SELECT} FROM turn WHERE id = (
         SELECT t.id FROM turn t JOIN session s ON s.id = t.session_id
         WHERE t.session_id = ? AND t.phase = 'pending' AND ${leaseCondition}
           AND NOT EXISTS (SELECT 1 FROM turn r WHERE r.session_id = t.session_id AND r.phase = 'running')
           AND NOT EXISTS (SELECT 1 FROM compaction c WHERE c.session_id = t.session_id AND (c.phase = 'running' OR (c.phase = 'pending' AND c.sequence < t.sequence)))
         ORDER BY t.sequence LIMIT 1)`,
      claim.lease ? [sessionId, claim.ownerInstance] : [sessionId, claim.ownerInstance, claim.startedAt],
    );
    if (!raw) return undefined;
    const current = turnFromRow(raw);
    const started: TurnRow = { ...current, phase: "running", startedAt: claim.startedAt, ownerProcessId: claim.ownerProcessId, ownerInstance: claim.ownerInstance, leaseExpiresAt: claim.leaseExpiresAt };
    const result = await changeTurn(tx, current.id, {
      patch: { phase: "running", startedAt: claim.startedAt, ownerProcessId: claim.ownerProcessId, ownerInstance: claim.ownerInstance, leaseExpiresAt: claim.leaseExpiresAt },
      events: events(started),
      expectPhases: ["pending"],
    });
    if (!result) return undefined;
    return { ...started, revision: result.turn.revision, activityCursor: result.turn.activityCursor, serverCursor: result.turn.serverCursor };
  });
}

/** Extends the lease while this instance still owns the Turn; false when it lost the claim. */
export function renewLease(context: StorageContext, turnId: string, ownerInstance: string, leaseExpiresAt: number): Promise<boolean> {
  return write(context, async (tx) => {
    const { changes } = await tx.sql.run("UPDATE turn SET lease_expires_at = ? WHERE id = ? AND owner_instance = ? AND phase = 'running'", [leaseExpiresAt, turnId, ownerInstance]);
    return changes > 0;
  });
}

/**
 * Takes or renews the runner lease of Sessions for `owner` (those free, expired, or already
 * its own); returns the ids it now holds.
 */
export function holdRunnerLeases(context: StorageContext, sessionIds: readonly string[], owner: Claim): Promise<string[]> {
  if (sessionIds.length === 0) return Promise.resolve([]);
  return write(context, async (tx) => {
    const rows = await inChunks(sessionIds, 5, (ids) =>
      tx.sql.all<{ id: string }>(
        `UPDATE session SET runner_instance = ?, runner_process_id = ?, runner_lease_expires_at = ?
         WHERE id IN (${placeholders(ids.length)}) AND (runner_instance IS NULL OR runner_instance = ? OR COALESCE(runner_lease_expires_at, 0) < ?)
         RETURNING id`,
        [owner.ownerInstance, owner.ownerProcessId, owner.leaseExpiresAt, ...ids, owner.ownerInstance, owner.startedAt],
      ),
    );
    return rows.map((row) => row.id);
  });
}

/** Gives up the runner leases `ownerInstance` holds (all of them, or those of `sessionIds`). */
export function releaseRunnerLeases(context: StorageContext, ownerInstance: string, sessionIds?: readonly string[]): Promise<void> {
  const release = "UPDATE session SET runner_instance = NULL, runner_process_id = NULL, runner_lease_expires_at = NULL WHERE runner_instance = ?";
  return write(context, async (tx) => {
    if (sessionIds === undefined) {
      await tx.sql.run(release, [ownerInstance]);
      return;
    }
    await inChunks(sessionIds, 1, async (ids) => {
      await tx.sql.run(`${release} AND id IN (${placeholders(ids.length)})`, [ownerInstance, ...ids]);
      return [];
    });
  });
}

/** Clears runner leases held by `ownerInstance` (a host found gone), so the rest may run its Sessions. */
export function clearRunnerLease(context: StorageContext, ownerInstance: string): Promise<void> {
  return releaseRunnerLeases(context, ownerInstance);
}

/** The Session's next admission sequence (shared by Turns and steers), advanced in `tx`. */
export async function takeSequence(tx: StorageTransaction, sessionId: string): Promise<number> {
  const row = await tx.sql.get<{ sequence: number }>("UPDATE session SET next_sequence = next_sequence + 1 WHERE id = ? RETURNING next_sequence - 1 AS sequence", [sessionId]);
  if (row === undefined) throw new Error(`Session ${sessionId} is missing`);
  return row.sequence;
}

/**
 * Inserts a steer (taking the Session's next sequence) and appends `events` to its Turn.
 * `guard` sees the Turn inside the transaction and throws to refuse (e.g. it stopped running
 * or closed its steering gate meanwhile), so a steer never lands on a finished Turn.
 */
export function insertSteer(
  context: StorageContext,
  row: Omit<TurnSteerRow, "sequence">,
  buildData: (sequence: number) => unknown,
  events: readonly NewTurnEvent[],
  guard: (turn: TurnRow | undefined) => void = () => {},
): Promise<TurnSteerRow> {
  return write(context, async (tx) => {
    const raw = await tx.sql.get(`SELECT ${TURN_SELECT} FROM turn WHERE id = ?`, [row.turnId]);
    guard(raw ? turnFromRow(raw) : undefined);
    const sequence = await takeSequence(tx, row.sessionId);
    const inserted = await tx.sql.get(
      "INSERT INTO turn_steer (steer_id, session_id, turn_id, sequence, data, request_hash) VALUES (?, ?, ?, ?, ?, ?) RETURNING steer_id, session_id, turn_id, sequence, data, request_hash",
      [row.steerId, row.sessionId, row.turnId, sequence, jsonValue(buildData(sequence)), row.requestHash],
    );
    if (events.length > 0) await changeTurn(tx, row.turnId, { events });
    return steerFromRow(inserted!);
  });
}

export function updateSteers(context: StorageContext, updates: readonly { steerId: string; data: unknown }[]): Promise<void> {
  if (updates.length === 0) return Promise.resolve();
  return write(context, async (tx) => {
    for (const update of updates) await tx.sql.run("UPDATE turn_steer SET data = ? WHERE steer_id = ?", [jsonValue(update.data), update.steerId]);
  });
}

