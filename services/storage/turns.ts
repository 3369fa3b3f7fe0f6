/**
 * The Turns repository: admission, claims, parts, steering input and the event log. Every
 * durable change of a Turn is one transaction that updates its row and parts and appends its
 * events to `turn_event`, each event with the next Turn revision, the next Session activity
 * cursor and the next server cursor. Functions take the handle or a running transaction.
 */
import { and, asc, desc, eq, gt, inArray, lte, sql } from "drizzle-orm";
import { nextServerCursor, nextSessionActivityCursor } from "./cursors.js";
import { isStorageHandle, type Durability, type StorageExecutor, type StorageHandle, type StorageTransaction } from "./database.js";
import { mapBusy } from "./errors.js";
import {
  session,
  turn,
  turnEvent,
  turnPart,
  turnSteer,
  type TurnEventRow,
  type TurnInsert,
  type TurnPartRow,
  type TurnRow,
  type TurnSteerRow,
} from "./schema.js";

export type StorageContext = StorageHandle | StorageTransaction;

function write<T>(context: StorageContext, fn: (tx: StorageTransaction) => Promise<T>, durability?: Durability): Promise<T> {
  return isStorageHandle(context) ? context.transaction(fn, durability ? { durability } : undefined) : fn(context);
}

function read<T>(context: StorageContext, fn: (db: StorageExecutor) => Promise<T>): Promise<T> {
  return isStorageHandle(context) ? mapBusy(() => fn(context.db)) : fn(context);
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

/** Appends events for `turnId`, stamping revision and cursors; returns the rows and the last revision. */
async function appendEvents(
  tx: StorageTransaction,
  sessionId: string,
  turnId: string,
  fromRevision: number,
  events: readonly NewTurnEvent[],
): Promise<{ rows: TurnEventRow[]; revision: number; activityCursor: number; serverCursor: number }> {
  const rows: TurnEventRow[] = [];
  let revision = fromRevision;
  let activityCursor = 0;
  let serverCursor = 0;
  for (const event of events) {
    revision += 1;
    const cursor = await nextSessionActivityCursor(tx, sessionId);
    if (cursor === undefined) throw new Error(`Session ${sessionId} is missing`);
    activityCursor = cursor;
    serverCursor = await nextServerCursor(tx);
    const inserted = await tx
      .insert(turnEvent)
      .values({ sessionId, turnId, revision, activityCursor, serverCursor, type: event.type, data: event.data ?? null })
      .returning();
    rows.push(inserted[0]!);
  }
  return { rows, revision, activityCursor, serverCursor };
}

export type NewTurn = Omit<TurnInsert, "sequence" | "revision" | "activityCursor" | "serverCursor">;

/**
 * Admits a Turn: takes the Session's next sequence, inserts the row at revision 0 and appends
 * `events` (at least one). Returns the stored row.
 */
export function admitTurn(context: StorageContext, row: NewTurn, events: readonly NewTurnEvent[]): Promise<{ turn: TurnRow; events: TurnEventRow[] }> {
  return write(context, async (tx) => {
    const sequence = await takeSequence(tx, row.sessionId);
    await tx.insert(turn).values({ ...row, sequence, revision: 0, activityCursor: 0, serverCursor: 0 });
    const appended = await appendEvents(tx, row.sessionId, row.id, 0, events);
    const updated = await tx
      .update(turn)
      .set({ revision: appended.revision, activityCursor: appended.activityCursor, serverCursor: appended.serverCursor })
      .where(eq(turn.id, row.id))
      .returning();
    return { turn: updated[0]!, events: appended.rows };
  });
}

/** The Session's next admission sequence (shared by Turns and steers), advanced in `tx`. */
export async function takeSequence(tx: StorageTransaction, sessionId: string): Promise<number> {
  const rows = await tx
    .update(session)
    .set({ nextSequence: sql`${session.nextSequence} + 1` })
    .where(eq(session.id, sessionId))
    .returning({ next: session.nextSequence });
  const next = rows[0]?.next;
  if (next === undefined) throw new Error(`Session ${sessionId} is missing`);
  return next - 1;
}

export interface TurnChange {
  readonly patch?: TurnPatch;
  readonly parts?: readonly PartWrite[];
  readonly events: readonly NewTurnEvent[];
  /** Apply only while the Turn is in one of these phases (compare-and-set). */
  readonly expectPhases?: readonly TurnRow["phase"][];
  /** Apply only while this process instance owns the claim. */
  readonly expectOwner?: string;
  /** `relaxed` for re-derivable progress (see `Durability`); joined transactions keep the outer one's. */
  readonly durability?: Durability;
}

/** What a change reads and returns of the Turn row: its guards and stamps, not the JSON payloads. */
const turnStamps = {
  id: turn.id,
  sessionId: turn.sessionId,
  phase: turn.phase,
  revision: turn.revision,
  activityCursor: turn.activityCursor,
  serverCursor: turn.serverCursor,
  ownerInstance: turn.ownerInstance,
  cancellation: turn.cancellation,
};

export type TurnStamps = Pick<TurnRow, keyof typeof turnStamps>;

/**
 * Applies one durable change: patch + parts + events in one transaction. Returns undefined,
 * writing nothing, when the Turn is gone or a compare-and-set guard fails. Reads and returns
 * only the row's guards and stamps (the request, policy and transcript JSON are not re-read on
 * every streamed commit); `getTurn` reads the whole row.
 */
export function changeTurn(
  context: StorageContext,
  turnId: string,
  change: TurnChange,
): Promise<{ turn: TurnStamps; events: TurnEventRow[] } | undefined> {
  return write(context, async (tx) => {
    const current = (await tx.select(turnStamps).from(turn).where(eq(turn.id, turnId)))[0];
    if (!current) return undefined;
    if (change.expectPhases && !change.expectPhases.includes(current.phase)) return undefined;
    if (change.expectOwner !== undefined && current.ownerInstance !== change.expectOwner) return undefined;
    for (const part of change.parts ?? []) {
      await tx
        .insert(turnPart)
        .values({ turnId, ordinal: part.ordinal, data: part.data })
        .onConflictDoUpdate({ target: [turnPart.turnId, turnPart.ordinal], set: { data: part.data } });
    }
    const appended = change.events.length > 0 ? await appendEvents(tx, current.sessionId, turnId, current.revision, change.events) : undefined;
    const stamps = appended
      ? { revision: appended.revision, activityCursor: appended.activityCursor, serverCursor: appended.serverCursor }
      : {};
    const patch = { ...(change.patch ?? {}), ...stamps };
    if (Object.keys(patch).length === 0) return { turn: current, events: [] };
    const updated = await tx.update(turn).set(patch).where(eq(turn.id, turnId)).returning(turnStamps);
    return { turn: updated[0]!, events: appended?.rows ?? [] };
  }, change.durability);
}

export function getTurn(context: StorageContext, sessionId: string, turnId: string): Promise<TurnRow | undefined> {
  return read(context, async (db) => (await db.select().from(turn).where(and(eq(turn.sessionId, sessionId), eq(turn.id, turnId))))[0]);
}

export function getTurnById(context: StorageContext, turnId: string): Promise<TurnRow | undefined> {
  return read(context, async (db) => (await db.select().from(turn).where(eq(turn.id, turnId)))[0]);
}

export function listParts(context: StorageContext, turnIds: readonly string[]): Promise<TurnPartRow[]> {
  if (turnIds.length === 0) return Promise.resolve([]);
  return read(context, (db) =>
    db.select().from(turnPart).where(inArray(turnPart.turnId, [...turnIds])).orderBy(asc(turnPart.turnId), asc(turnPart.ordinal)),
  );
}

/** One part of a Turn, or undefined when it has none at that ordinal. */
export function getPart(context: StorageContext, turnId: string, ordinal: number): Promise<TurnPartRow | undefined> {
  return read(context, async (db) => (await db.select().from(turnPart).where(and(eq(turnPart.turnId, turnId), eq(turnPart.ordinal, ordinal))))[0]);
}

export function listSteers(context: StorageContext, turnIds: readonly string[]): Promise<TurnSteerRow[]> {
  if (turnIds.length === 0) return Promise.resolve([]);
  return read(context, (db) =>
    db.select().from(turnSteer).where(inArray(turnSteer.turnId, [...turnIds])).orderBy(asc(turnSteer.sequence)),
  );
}

export function getSteer(context: StorageContext, steerId: string): Promise<TurnSteerRow | undefined> {
  return read(context, async (db) => (await db.select().from(turnSteer).where(eq(turnSteer.steerId, steerId)))[0]);
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
    guard((await tx.select().from(turn).where(eq(turn.id, row.turnId)))[0]);
    const sequence = await takeSequence(tx, row.sessionId);
    const inserted = await tx.insert(turnSteer).values({ ...row, sequence, data: buildData(sequence) }).returning();
    if (events.length > 0) await changeTurn(tx, row.turnId, { events });
    return inserted[0]!;
  });
}

export function updateSteers(context: StorageContext, updates: readonly { steerId: string; data: unknown }[]): Promise<void> {
  return write(context, async (tx) => {
    for (const update of updates) await tx.update(turnSteer).set({ data: update.data }).where(eq(turnSteer.steerId, update.steerId));
  });
}

export interface TurnPage {
  readonly afterSequence?: number | undefined;
  readonly throughSequence?: number | undefined;
  readonly limit: number;
}

/** Turns of a Session in sequence order within the page bounds. */
export function listTurns(context: StorageContext, sessionId: string, page: TurnPage): Promise<TurnRow[]> {
  return read(context, (db) =>
    db
      .select()
      .from(turn)
      .where(
        and(
          eq(turn.sessionId, sessionId),
          page.afterSequence !== undefined ? gt(turn.sequence, page.afterSequence) : undefined,
          page.throughSequence !== undefined ? lte(turn.sequence, page.throughSequence) : undefined,
        ),
      )
      .orderBy(asc(turn.sequence))
      .limit(page.limit),
  );
}

/** The model transcripts of the Session's settled Turns before `beforeSequence`, in order (the next Turn's history). */
export function listTranscripts(context: StorageContext, sessionId: string, beforeSequence: number): Promise<unknown[][]> {
  return read(context, async (db) => {
    const rows = await db
      .select({ messages: turn.messages })
      .from(turn)
      .where(and(eq(turn.sessionId, sessionId), lte(turn.sequence, beforeSequence - 1), inArray(turn.phase, ["completed", "cancelled", "failed"])))
      .orderBy(asc(turn.sequence));
    return rows.map((row) => row.messages);
  });
}

/** The highest sequence any Turn of the Session has (0 when none). */
export function lastTurnSequence(context: StorageContext, sessionId: string): Promise<number> {
  return read(context, async (db) => {
    const rows = await db.select({ sequence: turn.sequence }).from(turn).where(eq(turn.sessionId, sessionId)).orderBy(desc(turn.sequence)).limit(1);
    return rows[0]?.sequence ?? 0;
  });
}

/** Turns of the Session in the given phases, oldest first. */
export function turnsInPhases(context: StorageContext, sessionId: string, phases: readonly TurnRow["phase"][]): Promise<TurnRow[]> {
  return read(context, (db) =>
    db
      .select()
      .from(turn)
      .where(and(eq(turn.sessionId, sessionId), inArray(turn.phase, [...phases])))
      .orderBy(asc(turn.sequence)),
  );
}

/** Every Turn in the given phases across the database (recovery and scheduling). */
export function allTurnsInPhases(context: StorageContext, phases: readonly TurnRow["phase"][]): Promise<TurnRow[]> {
  return read(context, (db) => db.select().from(turn).where(inArray(turn.phase, [...phases])).orderBy(asc(turn.acceptedAt), asc(turn.sequence)));
}

export interface Claim {
  readonly ownerProcessId: number;
  readonly ownerInstance: string;
  readonly leaseExpiresAt: number;
  readonly startedAt: number;
}

/**
 * Claims the Session's oldest pending Turn when none of its Turns is running: sets it running
 * with the owner and lease and appends `events(turn)`. Returns undefined when there is nothing
 * to claim. One transaction, so two claimers never run two Turns of one Session.
 */
export function claimNextTurn(
  context: StorageContext,
  sessionId: string,
  claim: Claim,
  events: (row: TurnRow) => readonly NewTurnEvent[],
): Promise<TurnRow | undefined> {
  return write(context, async (tx) => {
    const active = await tx
      .select()
      .from(turn)
      .where(and(eq(turn.sessionId, sessionId), inArray(turn.phase, ["pending", "running"])))
      .orderBy(asc(turn.sequence));
    if (active.length === 0 || active.some((row) => row.phase === "running")) return undefined;
    const current = active[0]!;
    const result = await changeTurn(tx, current.id, {
      patch: { phase: "running", startedAt: claim.startedAt, ownerProcessId: claim.ownerProcessId, ownerInstance: claim.ownerInstance, leaseExpiresAt: claim.leaseExpiresAt },
      events: events({ ...current, phase: "running", startedAt: claim.startedAt }),
      expectPhases: ["pending"],
    });
    if (!result) return undefined;
    return {
      ...current,
      ...result.turn,
      phase: "running" as const,
      startedAt: claim.startedAt,
      ownerProcessId: claim.ownerProcessId,
      ownerInstance: claim.ownerInstance,
      leaseExpiresAt: claim.leaseExpiresAt,
    };
  });
}

/** Extends the lease while this instance still owns the Turn; false when it lost the claim. */
export function renewLease(context: StorageContext, turnId: string, ownerInstance: string, leaseExpiresAt: number): Promise<boolean> {
  return write(context, async (tx) => {
    const updated = await tx
      .update(turn)
      .set({ leaseExpiresAt })
      .where(and(eq(turn.id, turnId), eq(turn.ownerInstance, ownerInstance), eq(turn.phase, "running")))
      .returning({ id: turn.id });
    return updated.length > 0;
  });
}

/** Durable events of one Turn after `afterRevision`, in revision order. */
export function listTurnEvents(context: StorageContext, turnId: string, afterRevision: number, limit = 1000): Promise<TurnEventRow[]> {
  return read(context, (db) =>
    db
      .select()
      .from(turnEvent)
      .where(and(eq(turnEvent.turnId, turnId), gt(turnEvent.revision, afterRevision)))
      .orderBy(asc(turnEvent.revision))
      .limit(limit),
  );
}

/** Durable events of one Session after `afterActivityCursor`, in cursor order. */
export function listSessionEvents(context: StorageContext, sessionId: string, afterActivityCursor: number, limit = 500): Promise<TurnEventRow[]> {
  return read(context, (db) =>
    db
      .select()
      .from(turnEvent)
      .where(and(eq(turnEvent.sessionId, sessionId), gt(turnEvent.activityCursor, afterActivityCursor)))
      .orderBy(asc(turnEvent.activityCursor))
      .limit(limit),
  );
}

/** Durable Turn events of one server's Sessions after `afterServerCursor`, in cursor order. */
export function listServerTurnEvents(context: StorageContext, server: string, afterServerCursor: number, limit = 500): Promise<TurnEventRow[]> {
  return read(context, async (db) => {
    const rows = await db
      .select({ event: turnEvent })
      .from(turnEvent)
      .innerJoin(session, eq(session.id, turnEvent.sessionId))
      .where(and(eq(session.server, server), gt(turnEvent.serverCursor, afterServerCursor)))
      .orderBy(asc(turnEvent.serverCursor))
      .limit(limit);
    return rows.map((row) => row.event);
  });
}
