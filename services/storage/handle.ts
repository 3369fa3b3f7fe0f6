// The storage handle every repository uses, whatever the database is: reads that join the
// caller's open transaction, queued (group-committed) write transactions with a durability
// choice, after-commit callbacks and close. `openDatabase` (database.ts) builds it over libSQL;
// the Worker host builds it over a Durable Object's SQLite (worker/storage.ts) — this module
// imports no driver and nothing Node-only besides AsyncLocalStorage, so both hosts bundle it.
import { AsyncLocalStorage } from "node:async_hooks";
import type { Client, ResultSet } from "@libsql/client";
import type { ExtractTablesWithRelations } from "drizzle-orm";
import type { LibSQLDatabase } from "drizzle-orm/libsql/driver-core";
import type { BaseSQLiteDatabase } from "drizzle-orm/sqlite-core";
import type { SqlExecutor } from "./engine.js";
import { spilling } from "./spill.js";
import { mapBusy } from "./errors.js";
import type { DatabaseLocation } from "./location.js";
import type { MigrationReport } from "./migrate.js";
import { GroupCommitter, type ActiveTransaction } from "./commit.js";
import type { Queue } from "./queue.js";
import type { StorageSchema, TurnEventRow } from "./schema.js";

export type StorageDatabase = LibSQLDatabase<StorageSchema>;
/**
 * A write transaction: drizzle's transaction, the raw executor on the same connection, and the
 * Turn events it appended (announced to `onTurnEvents` listeners once it commits).
 */
export type StorageTransaction = Parameters<Parameters<StorageDatabase["transaction"]>[0]>[0] & {
  readonly sql: SqlExecutor;
  readonly events: TurnEventRow[];
};
/** Either the root database or a transaction: what read helpers accept. */
export type StorageExecutor = BaseSQLiteDatabase<"async", ResultSet, StorageSchema, ExtractTablesWithRelations<StorageSchema>>;

const HANDLE = Symbol.for("ze-harness.storage.handle");

/**
 * How a write transaction is synced. `full` (the default) settles only once the WAL is synced
 * after its commit: the change survives power loss. `relaxed` settles at commit (WAL +
 * no sync): it survives a crash of the process but may roll back on power loss — for
 * progress that is re-derivable (streamed content, activity), never for an acknowledged
 * admission, a claim or a settlement.
 */
export type Durability = "full" | "relaxed";

export interface StorageHandle {
  readonly [HANDLE]: true;
  readonly location: DatabaseLocation;
  /** The process id that claims made through this handle stamp as their owner. */
  readonly processId: number;
  /** The read client (a libSQL `Client`); write only through `transaction()`. */
  readonly client: Client;
  /** drizzle over the read client. */
  readonly db: StorageDatabase;
  /** What opening did to the schema (applied migrations, backup path). */
  readonly migration: MigrationReport;
  /** Where a read made now runs: the caller's open transaction, or the read connection. */
  reader(): { readonly db: StorageExecutor; readonly sql: SqlExecutor };
  /**
   * Runs `fn` in one write transaction (`BEGIN IMMEDIATE`) and commits, or rolls back when `fn`
   * throws. Write transactions to one file are queued across this process's handles (a second
   * local connection waiting for the lock would block the event loop the first needs to finish).
   * Called again inside `fn` (also through reads and writes that take the handle), it nests as a
   * savepoint of the running transaction. BUSY/LOCKED failures reject with `StorageBusy`.
   */
  transaction<T>(fn: (tx: StorageTransaction) => Promise<T>, options?: { readonly durability?: Durability }): Promise<T>;
  /**
   * Runs `fn` once the caller's outermost transaction commits (dropped if it rolls back), or at
   * once outside a transaction: announcements of durable changes are made only after they are.
   */
  afterCommit(fn: () => void): void;
  /**
   * Runs `fn` as soon as the caller's outermost transaction has committed — before it is durable —
   * with a promise that settles once it is (dropped if it rolls back; at once outside a
   * transaction). For in-process work that lets nothing of the change out before `durable`
   * resolves (a Turn's launch: its model request waits for its admission to be durable).
   */
  whenCommitted(fn: (durable: Promise<void>) => void): void;
  /**
   * Calls `listener` with the Turn events every transaction of this handle appended, once it
   * committed, in cursor order: in-process watchers take them instead of reading them back.
   */
  onTurnEvents(listener: (events: readonly TurnEventRow[]) => void): () => void;
  /**
   * Caps a file database at `pages` pages (`PRAGMA max_page_count` on the write connection, kept
   * when that connection is replaced; `undefined` lifts the cap): a write that would grow the file
   * past it fails `StorageFull`, exactly as on a full disk, and succeeds again once the cap is
   * raised. Takes effect between write transactions.
   */
  limitPages(pages: number | undefined): Promise<void>;
  /** Refuses new transactions, waits for this handle's queued ones, then closes every connection. */
  close(): Promise<void>;
}


export function isStorageHandle(value: unknown): value is StorageHandle {
  return typeof value === "object" && value !== null && (value as { [HANDLE]?: unknown })[HANDLE] === true;
}

/** Where a handle's write transactions run (the libSQL writer connection, or a Durable Object's storage). */
export interface HandleWriter {
  transaction<T>(fn: (tx: StorageTransaction) => Promise<T>): Promise<T>;
  /** Resolves once what was committed so far is as durable as `durability` asks. */
  durable(durability: Durability): Promise<void>;
  limitPages(pages: number | undefined): void;
  close(): Promise<void>;
}

export interface StorageHandleParts {
  readonly location: DatabaseLocation;
  readonly processId: number;
  /** The read client; `client.sql` is the raw read executor. */
  readonly client: Client & { readonly sql: SqlExecutor };
  /** drizzle over the read client. */
  readonly db: StorageDatabase;
  readonly migration: MigrationReport;
  /** Write transactions take turns through this queue. */
  readonly queue: Queue;
  readonly writer: HandleWriter;
  /** The raw executor of reads outside a transaction; `client.sql` when absent. */
  readonly readSql?: SqlExecutor | undefined;
  /**
   * The UTF-16 units of text one statement may bind before its largest strings are spilled across
   * rows (spill.ts). Absent: no limit by size (libSQL takes a value up to 1 GB, so a Node database
   * keeps every value in its own row and SQL over it sees it whole); a Durable Object, whose SQLite
   * refuses a value or row over 2 MB, passes SPILL_BUDGET. Marker-shaped strings spill either way.
   */
  readonly spillBudget?: number | undefined;
}

/** Assembles the handle from an opened, migrated database. */
export function createStorageHandle(parts: StorageHandleParts): StorageHandle {
  const { location, processId, client, db, migration, queue, writer } = parts;
  const current = new AsyncLocalStorage<ActiveTransaction>();
  const inFlight = new Set<Promise<void>>();
  const eventListeners = new Set<(events: readonly TurnEventRow[]) => void>();
  let closed = false;
  // Every raw executor spills large values across rows and reads them back joined (spill.ts).
  const budget = parts.spillBudget ?? Number.POSITIVE_INFINITY;
  const readDb = { db: db as unknown as StorageExecutor, sql: spilling(parts.readSql ?? client.sql, budget) };
  const committer = new GroupCommitter(
    queue,
    (fn) => writer.transaction((tx) => fn(Object.assign(tx, { sql: spilling(tx.sql, budget) }))),
    current,
    (events, committed) => {
      // One listener or callback that throws never keeps the others from hearing of the commit.
      const each = (fn: () => void): void => {
        try {
          fn();
        } catch {
          // the listener reports its own failures
        }
      };
      if (events.length > 0) for (const listener of [...eventListeners]) each(() => listener(events));
      for (const callback of committed) each(callback);
    },
    (durability) => writer.durable(durability),
  );

  const handle: StorageHandle = {
    [HANDLE]: true,
    location,
    processId,
    client,
    db,
    migration,
    reader() {
      const frame = current.getStore();
      return frame?.active ? { db: frame.tx as unknown as StorageExecutor, sql: frame.tx.sql } : readDb;
    },
    transaction<T>(fn: (tx: StorageTransaction) => Promise<T>, options?: { readonly durability?: Durability }): Promise<T> {
      const outer = current.getStore();
      if (outer?.active) {
        return mapBusy(() =>
          outer.tx.transaction(async (nested) => {
            // A savepoint: its events join the outer transaction's only if it is released.
            const tx = Object.assign(nested, { sql: outer.tx.sql, events: [] as TurnEventRow[] }) as StorageTransaction;
            const frame: ActiveTransaction = { tx, active: true, committed: outer.committed, early: outer.early };
            try {
              const result = await current.run(frame, () => fn(tx));
              outer.tx.events.push(...tx.events);
              return result;
            } finally {
              frame.active = false;
            }
          }),
        );
      }
      if (closed) return Promise.reject(new Error("The storage handle is closed"));
      const running = committer.submit(fn, options?.durability ?? "full");
      const settled = running.then(
        () => undefined,
        () => undefined,
      );
      inFlight.add(settled);
      void settled.then(() => inFlight.delete(settled));
      return running;
    },
    afterCommit(fn) {
      const frame = current.getStore();
      if (frame?.active) frame.committed.push(fn);
      else fn();
    },
    whenCommitted(fn) {
      const frame = current.getStore();
      if (frame?.active) frame.early.push(fn);
      else fn(Promise.resolve());
    },
    limitPages(pages) {
      return queue.run(async () => writer.limitPages(pages));
    },
    onTurnEvents(listener) {
      eventListeners.add(listener);
      return () => eventListeners.delete(listener);
    },
    async close() {
      if (closed) return;
      closed = true;
      await Promise.all(inFlight);
      await writer.close();
      client.close();
    },
  };
  return handle;
}
