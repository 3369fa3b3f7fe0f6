// Opening the database and the handle every repository uses: reads (joining the caller's open
// transaction, so work inside a unit of work sees its own writes), queued write transactions
// with a durability choice, after-commit callbacks, and close.
import { AsyncLocalStorage } from "node:async_hooks";
import { mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import type { Client, ResultSet } from "@libsql/client";
import type { ExtractTablesWithRelations } from "drizzle-orm";
import * as driverCore from "drizzle-orm/libsql/driver-core";
import type { LibSQLDatabase } from "drizzle-orm/libsql/driver-core";
import type { BaseSQLiteDatabase } from "drizzle-orm/sqlite-core";
import { LocalClient, type SqlExecutor } from "./engine.js";
import { mapBusy } from "./errors.js";
import { openFailure, prepareDatabaseFile } from "./file.js";
import { resolveDatabaseLocation, type DatabaseLocation } from "./location.js";
import { applyMigrations, type MigrationReport, type StorageMigrationProgress } from "./migrate.js";
import { serverMigrations, type MigrationRegistry } from "./migrations/registry.js";
import { GroupCommitter, type ActiveTransaction } from "./commit.js";
import { writeQueueFor } from "./queue.js";
import { WalSync } from "./wal-sync.js";
import { RemoteClient } from "./remote.js";
import { schema, type StorageSchema, type TurnEventRow } from "./schema.js";

export const DEFAULT_BUSY_TIMEOUT_MS = 5000;

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

/** The client kinds the engine builds: both know their open transaction and offer `sql`. */
type EngineClient = (LocalClient | RemoteClient) & Client;

const HANDLE = Symbol.for("ze-harness.storage.handle");

/**
 * How a write transaction is synced. `full` (the default) settles only once the WAL is synced
 * after its commit: the change survives power loss. `relaxed` settles at commit (WAL +
 * synchronous=NORMAL): it survives a crash of the process but may roll back on power loss — for
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

export interface OpenDatabaseOptions {
  /** `:memory:`, a `file:` URL, an absolute or relative path (under `stateDirectory`), or a `libsql://`, `http(s)://`, `ws(s)://` URL. */
  readonly url: string;
  /** Only for libSQL server URLs. */
  readonly authToken?: string | undefined;
  readonly stateDirectory: string;
  /** Owner id stamped on claims; defaults to `process.pid`. */
  readonly processId?: number | undefined;
  /** The migration registry (tests inject their own); defaults to `serverMigrations`. */
  readonly migrations?: MigrationRegistry | undefined;
  /** SQLite busy timeout; defaults to 5000 ms. */
  readonly busyTimeoutMs?: number | undefined;
  readonly onMigrationProgress?: ((progress: StorageMigrationProgress) => void) | undefined;
}

export function isStorageHandle(value: unknown): value is StorageHandle {
  return typeof value === "object" && value !== null && (value as { [HANDLE]?: unknown })[HANDLE] === true;
}

// drizzle's libSQL driver minus `drizzle()` (whose module imports all of @libsql/client): the
// same constructor, undeclared in its types.
const { construct } = driverCore as unknown as { construct: (client: Client, config: { schema: StorageSchema }) => StorageDatabase };
const drizzleOver = (client: Client): StorageDatabase => construct(client, { schema });

/**
 * Where write transactions run. For a file: a dedicated connection committing with
 * `synchronous = NORMAL`, whose changes that must survive power loss then wait for an
 * off-thread WAL sync (`wal-sync.ts`); it is replaced after a failed transaction — libsql
 * 0.5.29 leaves a statement that failed with SQLITE_BUSY "in progress" on its connection, and
 * every later COMMIT there fails (libsql-client-ts#352, libsql-js#237/#238). Writes are queued,
 * so nothing else uses the connection when it is replaced. `:memory:` (one connection) and
 * servers use the main client and their own durability.
 */
class Writer {
  #connection: { client: EngineClient; db: StorageDatabase } | undefined;
  /** `PRAGMA max_page_count` of the write connection (a per-connection setting, so applied to each new one). */
  #pageLimit: number | undefined;
  readonly #shared: { client: EngineClient; db: StorageDatabase } | null;
  readonly walSync: WalSync | null;

  constructor(
    private readonly location: DatabaseLocation,
    main: EngineClient,
    private readonly busyTimeoutMs: number,
  ) {
    this.#shared = location.kind === "file" ? null : { client: main, db: drizzleOver(main) };
    this.walSync = location.kind === "file" ? new WalSync(location.path) : null;
  }

  #open(): { client: EngineClient; db: StorageDatabase } {
    if (this.#shared !== null) return this.#shared;
    if (this.#connection === undefined) {
      const client = new LocalClient((this.location as { path: string }).path, { timeoutMs: this.busyTimeoutMs, synchronous: "NORMAL", maxPageCount: this.#pageLimit });
      this.#connection = { client, db: drizzleOver(client) };
    }
    return this.#connection;
  }

  /** The page cap of every write connection from now on (see `StorageHandle.limitPages`); run between transactions. */
  limitPages(pages: number | undefined): void {
    if (this.#shared !== null) throw new Error("Only a file database's size can be capped");
    this.#pageLimit = pages === undefined ? undefined : Math.max(1, Math.floor(pages));
    // A fresh connection takes the new cap (or SQLite's default when lifted).
    this.#replace();
  }

  async transaction<T>(fn: (tx: StorageTransaction) => Promise<T>): Promise<T> {
    const { client, db } = this.#open();
    try {
      return await db.transaction((tx) => fn(Object.assign(tx, { sql: client.current!.sql, events: [] as TurnEventRow[] })));
    } catch (error) {
      if (this.#shared === null) this.#replace();
      throw error;
    }
  }

  /** Resolves once what was committed so far is as durable as `durability` asks. */
  durable(durability: Durability): Promise<void> {
    return durability === "full" && this.walSync !== null ? this.walSync.sync() : Promise.resolve();
  }

  #replace(): void {
    this.#connection?.client.close();
    this.#connection = undefined;
  }

  async close(): Promise<void> {
    this.#replace();
    await this.walSync?.close();
  }
}

/** A local client (file or `:memory:`) or a server client for `location`. */
async function connect(location: DatabaseLocation, busyTimeoutMs: number, authToken: string | undefined, concurrency?: number): Promise<EngineClient> {
  if (location.kind === "remote") return (await RemoteClient.connect(location.url, { authToken, ...(concurrency !== undefined ? { concurrency } : {}) })) as EngineClient;
  return new LocalClient(location.kind === "file" ? location.path : ":memory:", { timeoutMs: busyTimeoutMs });
}

/**
 * Opens (creating if needed) the database, brings it to this build's schema, and returns a
 * handle. Rejects with a typed storage error (`_tag`) when the schema cannot be used, the file
 * is not a database (`StorageNotADatabase`) or a server cannot be reached (`StorageUnreachable`).
 */
export async function openDatabase(options: OpenDatabaseOptions): Promise<StorageHandle> {
  const location = resolveDatabaseLocation(options.url, options.stateDirectory);
  const busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
  if (location.kind === "file") {
    await mkdir(dirname(location.path), { recursive: true, mode: 0o700 });
    await prepareDatabaseFile(location.path);
  }

  let client: EngineClient;
  try {
    client = await connect(location, busyTimeoutMs, options.authToken);
  } catch (error) {
    throw openFailure(error, location);
  }

  const queue = writeQueueFor(location);
  let migration: MigrationReport;
  try {
    migration = await queue.run(() =>
      applyMigrations({
        client,
        location,
        migrations: options.migrations ?? serverMigrations,
        onProgress: options.onMigrationProgress,
        // A file or server migrates on a throw-away single connection (see migrate.ts).
        dedicated: () => connect(location, busyTimeoutMs, options.authToken, 1),
      }),
    );
    // libSQL enables foreign keys on every new connection; a single-connection `:memory:`
    // client is the only one where setting it here reaches every later statement.
    const foreignKeys = await client.execute("PRAGMA foreign_keys");
    if (Number(foreignKeys.rows[0]?.["foreign_keys"] ?? 0) !== 1) await client.execute("PRAGMA foreign_keys = ON");
  } catch (error) {
    client.close();
    throw openFailure(error, location);
  }

  const db = drizzleOver(client);
  const writer = new Writer(location, client, busyTimeoutMs);
  const current = new AsyncLocalStorage<ActiveTransaction>();
  const inFlight = new Set<Promise<void>>();
  const eventListeners = new Set<(events: readonly TurnEventRow[]) => void>();
  let closed = false;
  const readDb = { db: db as unknown as StorageExecutor, sql: client.sql };
  const committer = new GroupCommitter(
    queue,
    (fn) => writer.transaction(fn),
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
    processId: options.processId ?? process.pid,
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
