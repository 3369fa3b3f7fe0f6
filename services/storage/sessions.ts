/**
 * The Sessions repository: plain functions over drizzle. Each takes a `StorageContext` — the
 * handle (the function runs its own transaction) or a running transaction (it joins it, so a
 * caller can compose several changes atomically).
 */
import { and, asc, eq, gt, inArray, sql } from "drizzle-orm";
import { inChunks } from "./chunks.js";
import { nextServerCursor } from "./cursors.js";
import {
  isStorageHandle,
  type StorageExecutor,
  type StorageHandle,
  type StorageTransaction,
} from "./database.js";
import type { SqlExecutor } from "./engine.js";
import { mapBusy } from "./errors.js";
import { SESSION_SELECT, sessionFromRow } from "./rows.js";
import {
  deletedSession,
  savedPermission,
  session,
  type DeletedSessionRow,
  type SavedPermissionInsert,
  type SavedPermissionRow,
  type SessionInsert,
  type SessionRow,
} from "./schema.js";

export type StorageContext = StorageHandle | StorageTransaction;

/** A new Session: the cursors are stamped by `insertSession`. */
export type NewSession = Omit<SessionInsert, "serverCursor" | "activityCursor">;

/** Fields `updateSession` may change (identity, creation time and cursors are not among them). */
export type SessionPatch = Partial<Omit<SessionInsert, "id" | "server" | "createdAt" | "serverCursor" | "activityCursor">>;

function write<T>(context: StorageContext, fn: (tx: StorageTransaction) => Promise<T>): Promise<T> {
  return isStorageHandle(context) ? context.transaction(fn) : fn(context);
}

function read<T>(context: StorageContext, fn: (db: StorageExecutor) => Promise<T>): Promise<T> {
  return isStorageHandle(context) ? mapBusy(() => fn(context.reader().db)) : fn(context);
}

// ---------------------------------------------------------------------------
// Sessions

/**
 * Inserts a Session, stamping it with the next server cursor and activity cursor 1 in the same
 * transaction. Does not check retirement: callers refuse retired identities with `isRetired`.
 */
export function insertSession(context: StorageContext, row: NewSession): Promise<SessionRow> {
  return write(context, async (tx) => {
    const serverCursor = await nextServerCursor(tx);
    const inserted = await tx
      .insert(session)
      .values({ ...row, serverCursor, activityCursor: 1 })
      .returning();
    return inserted[0]!;
  });
}

// The two lookups every request and launch makes: raw statements (prepared once per connection).
function readRaw<T>(context: StorageContext, fn: (sql: SqlExecutor) => Promise<T>): Promise<T> {
  return isStorageHandle(context) ? mapBusy(() => fn(context.reader().sql)) : fn(context.sql);
}

export function getSession(context: StorageContext, server: string, id: string): Promise<SessionRow | undefined> {
  return readRaw(context, async (sql) => {
    const raw = await sql.get(`SELECT ${SESSION_SELECT} FROM session WHERE id = ? AND server = ?`, [id, server]);
    return raw ? sessionFromRow(raw) : undefined;
  });
}

/** A Session by id alone, whatever its server (internal lookups such as the Turn runner's). */
export function getSessionById(context: StorageContext, id: string): Promise<SessionRow | undefined> {
  return readRaw(context, async (sql) => {
    const raw = await sql.get(`SELECT ${SESSION_SELECT} FROM session WHERE id = ?`, [id]);
    return raw ? sessionFromRow(raw) : undefined;
  });
}

/** A server's Sessions (optionally one project's), oldest first; same-millisecond ties in insertion order. */
export function listSessions(context: StorageContext, server: string, projectId?: string): Promise<SessionRow[]> {
  return read(context, (db) =>
    db
      .select()
      .from(session)
      .where(
        projectId === undefined
          ? eq(session.server, server)
          : and(eq(session.server, server), eq(session.projectId, projectId)),
      )
      .orderBy(asc(session.createdAt), asc(sql`rowid`)),
  );
}

/** The sub-agent children spawned from `parentId`, oldest first, ties in insertion order. */
export function listChildren(context: StorageContext, server: string, parentId: string): Promise<SessionRow[]> {
  return read(context, (db) =>
    db
      .select()
      .from(session)
      .where(and(eq(session.server, server), eq(session.spawnedFromSessionId, parentId)))
      .orderBy(asc(session.createdAt), asc(sql`rowid`)),
  );
}

/** Sessions stamped after `afterServerCursor`, in cursor order (for server activity replay). */
export function listSessionsStampedAfter(
  context: StorageContext,
  server: string,
  afterServerCursor: number,
): Promise<SessionRow[]> {
  return read(context, (db) =>
    db
      .select()
      .from(session)
      .where(and(eq(session.server, server), gt(session.serverCursor, afterServerCursor)))
      .orderBy(asc(session.serverCursor)),
  );
}

export interface UpdateSessionOptions {
  /** Compare-and-set: update only while the row's `configurationRevision` is this value. */
  readonly expectedConfigurationRevision?: number | undefined;
}

/**
 * Applies `patch` and stamps the row with the next server cursor and its next activity cursor,
 * in one transaction. Returns the updated row, or `undefined` (writing nothing) when the Session
 * is absent or its configuration revision is not `options.expectedConfigurationRevision`.
 */
export function updateSession(
  context: StorageContext,
  server: string,
  id: string,
  patch: SessionPatch,
  options: UpdateSessionOptions = {},
): Promise<SessionRow | undefined> {
  return write(context, async (tx) => {
    const existing = await tx
      .select({ activityCursor: session.activityCursor, configurationRevision: session.configurationRevision })
      .from(session)
      .where(and(eq(session.server, server), eq(session.id, id)));
    const current = existing[0];
    if (current === undefined) return undefined;
    const expected = options.expectedConfigurationRevision;
    if (expected !== undefined && current.configurationRevision !== expected) return undefined;
    const serverCursor = await nextServerCursor(tx);
    const updated = await tx
      .update(session)
      .set({ ...stripIdentity(patch), serverCursor, activityCursor: current.activityCursor + 1 })
      .where(and(eq(session.server, server), eq(session.id, id)))
      .returning();
    return updated[0];
  });
}

function stripIdentity(patch: SessionPatch): SessionPatch {
  // Guard against callers passing a wider object than the type admits.
  const { id: _id, server: _server, createdAt: _createdAt, serverCursor: _s, activityCursor: _a, ...rest } =
    patch as SessionInsert;
  return rest;
}

/** True when `id` was deleted on `server`: retired identities stay retired. */
export function isRetired(context: StorageContext, server: string, id: string): Promise<boolean> {
  return read(context, async (db) => {
    const rows = await db
      .select({ sessionId: deletedSession.sessionId })
      .from(deletedSession)
      .where(and(eq(deletedSession.server, server), eq(deletedSession.sessionId, id)));
    return rows.length > 0;
  });
}

/** Deletion markers after `afterServerCursor`, in cursor order. */
export function listDeletedSessions(
  context: StorageContext,
  server: string,
  afterServerCursor = 0,
): Promise<DeletedSessionRow[]> {
  return read(context, (db) =>
    db
      .select()
      .from(deletedSession)
      .where(and(eq(deletedSession.server, server), gt(deletedSession.serverCursor, afterServerCursor)))
      .orderBy(asc(deletedSession.serverCursor)),
  );
}

/** `rootId` and its spawned descendants, deepest first (so deletion never orphans a child). */
async function subtree(tx: StorageTransaction, rootId: string): Promise<{ id: string; server: string }[]> {
  const levels: { id: string; server: string }[][] = [];
  const seen = new Set<string>();
  const root = await tx.select({ id: session.id, server: session.server }).from(session).where(eq(session.id, rootId));
  let frontier = root;
  while (frontier.length > 0) {
    for (const node of frontier) seen.add(node.id);
    levels.push(frontier);
    const children = await inChunks(
      frontier.map((node) => node.id),
      0,
      (ids) =>
        tx
          .select({ id: session.id, server: session.server, createdAt: session.createdAt, rowid: sql<number>`rowid` })
          .from(session)
          .where(inArray(session.spawnedFromSessionId, ids)),
    );
    children.sort((a, b) => a.createdAt - b.createdAt || a.rowid - b.rowid);
    frontier = children.filter((child) => !seen.has(child.id)).map((child) => ({ id: child.id, server: child.server }));
  }
  return levels.reverse().flat();
}

async function deleteTree(tx: StorageTransaction, rootId: string, deletedAt: number): Promise<string[]> {
  const deleted: string[] = [];
  for (const node of await subtree(tx, rootId)) {
    await tx.delete(savedPermission).where(eq(savedPermission.sessionId, node.id));
    await tx.delete(session).where(eq(session.id, node.id));
    const serverCursor = await nextServerCursor(tx);
    await tx
      .insert(deletedSession)
      .values({ sessionId: node.id, server: node.server, deletedAt, serverCursor })
      .onConflictDoUpdate({
        target: deletedSession.sessionId,
        set: { server: node.server, deletedAt, serverCursor },
      });
    deleted.push(node.id);
  }
  return deleted;
}

/**
 * Deletes a Session with its saved permissions and, recursively, its spawned children; writes a
 * deletion marker per Session, each stamped with its own server cursor; all in one transaction.
 * Returns the deleted ids, children before parents (empty when the Session does not exist).
 */
export function deleteSession(
  context: StorageContext,
  server: string,
  id: string,
  deletedAt: number,
): Promise<string[]> {
  return write(context, async (tx) => {
    const exists = await tx
      .select({ id: session.id })
      .from(session)
      .where(and(eq(session.server, server), eq(session.id, id)));
    if (exists.length === 0) return [];
    return deleteTree(tx, id, deletedAt);
  });
}

/**
 * Deletes every Session of `server` (or of one project on it), as `deleteSession` does, in one
 * transaction. Returns the deleted ids.
 */
export function deleteServer(
  context: StorageContext,
  server: string,
  deletedAt: number,
  projectId?: string,
): Promise<string[]> {
  return write(context, async (tx) => {
    const roots = await listSessions(tx, server, projectId);
    const deleted: string[] = [];
    const gone = new Set<string>();
    for (const root of roots) {
      if (gone.has(root.id)) continue;
      for (const id of await deleteTree(tx, root.id, deletedAt)) {
        gone.add(id);
        deleted.push(id);
      }
    }
    return deleted;
  });
}

// ---------------------------------------------------------------------------
// Saved permissions

/** A Session's saved grants, oldest first, ties by id. */
export function listSavedPermissions(context: StorageContext, sessionId: string): Promise<SavedPermissionRow[]> {
  return read(context, (db) =>
    db
      .select()
      .from(savedPermission)
      .where(eq(savedPermission.sessionId, sessionId))
      .orderBy(asc(savedPermission.createdAt), asc(savedPermission.id)),
  );
}

export function insertSavedPermission(
  context: StorageContext,
  row: SavedPermissionInsert,
): Promise<SavedPermissionRow> {
  return write(context, async (tx) => {
    const inserted = await tx.insert(savedPermission).values(row).returning();
    return inserted[0]!;
  });
}

/** Removes one grant; returns it, or `undefined` when the Session has no such grant. */
export function removeSavedPermission(
  context: StorageContext,
  sessionId: string,
  id: string,
): Promise<SavedPermissionRow | undefined> {
  return write(context, async (tx) => {
    const removed = await tx
      .delete(savedPermission)
      .where(and(eq(savedPermission.sessionId, sessionId), eq(savedPermission.id, id)))
      .returning();
    return removed[0];
  });
}
