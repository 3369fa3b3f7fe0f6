/**
 * Activity cursors. The one-row `server_activity` counter is per database: every stamped change
 * (Session created or updated, Turn changed, Session deleted) takes the next value in the same
 * transaction as the change. `session.activity_cursor` is the per-Session counter that stamps
 * that Session's changed rows. Both only grow.
 */
import { eq, sql } from "drizzle-orm";
import { mapBusy } from "./errors.js";
import { isStorageHandle, type StorageExecutor, type StorageHandle, type StorageTransaction } from "./database.js";
import { serverActivity, session } from "./schema.js";

/** Increments the server cursor and returns the new value. Call inside the changing transaction. */
export async function nextServerCursor(tx: StorageTransaction): Promise<number> {
  const rows = await tx
    .update(serverActivity)
    .set({ cursor: sql`${serverActivity.cursor} + 1` })
    .where(eq(serverActivity.id, 1))
    .returning({ cursor: serverActivity.cursor });
  const row = rows[0];
  if (row === undefined) throw new Error("The server_activity row is missing");
  return row.cursor;
}

/** The current server cursor (the value of the newest stamped change; 0 before any). */
export async function readServerCursor(db: StorageHandle | StorageExecutor): Promise<number> {
  const executor: StorageExecutor = isStorageHandle(db) ? db.reader().db : db;
  const rows = await mapBusy(() =>
    executor.select({ cursor: serverActivity.cursor }).from(serverActivity).where(eq(serverActivity.id, 1)),
  );
  const row = rows[0];
  if (row === undefined) throw new Error("The server_activity row is missing");
  return row.cursor;
}

/**
 * Increments `sessionId`'s activity cursor and returns the new value, or `undefined` when the
 * Session does not exist. Call inside the changing transaction.
 */
export async function nextSessionActivityCursor(
  tx: StorageTransaction,
  sessionId: string,
): Promise<number | undefined> {
  const rows = await tx
    .update(session)
    .set({ activityCursor: sql`${session.activityCursor} + 1` })
    .where(eq(session.id, sessionId))
    .returning({ cursor: session.activityCursor });
  return rows[0]?.cursor;
}
