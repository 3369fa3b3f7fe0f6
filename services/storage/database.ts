// Opening a libSQL database (a file, `:memory:` or a server) as the handle every repository uses
// (assembled in handle.ts, which the Worker host's Durable Object adapter shares): reads joining
// the caller's open transaction, queued write transactions with a durability choice,
// after-commit callbacks, and close.
import { dirname } from "node:path";
import type { Client } from "@libsql/client";
import * as driverCore from "drizzle-orm/libsql/driver-core";
import { LocalClient, SqlError, type LocalConnection, type SqlExecutor, type SqlValue } from "./engine.js";
import { openFailure, prepareDatabaseFile } from "./file.js";
import { resolveDatabaseLocation, type DatabaseLocation } from "./location.js";
import { applyMigrations, type MigrationReport, type StorageMigrationProgress } from "./migrate.js";
import { serverMigrations, type MigrationRegistry } from "./migrations/registry.js";
import { createStorageHandle, type Durability, type HandleWriter, type StorageDatabase, type StorageHandle, type StorageTransaction } from "./handle.js";
import { writeQueueFor } from "./queue.js";
import { WalSync } from "./wal-sync.js";
import { Checkpointer } from "./checkpoint.js";
import { RemoteClient } from "./remote.js";
import { schema, type StorageSchema, type TurnEventRow } from "./schema.js";
import { makeDirectory } from "../contract/directory.js";

export { createStorageHandle, isStorageHandle, type Durability, type HandleWriter, type StorageDatabase, type StorageExecutor, type StorageHandle, type StorageHandleParts, type StorageTransaction } from "./handle.js";

/** The client kinds the engine builds: both know their open transaction and offer `sql`. */
type EngineClient = (LocalClient | RemoteClient) & Client;

export const DEFAULT_BUSY_TIMEOUT_MS = 5000;
/** WAL frames that start a checkpoint (SQLite's own autocheckpoint default). */
const CHECKPOINT_PAGES = 1000;
/** A restarted -wal file longer than this is cut back (normally it peaks just past CHECKPOINT_PAGES pages). */
const JOURNAL_SIZE_LIMIT = 8 * 1024 * 1024;
/**
 * Commits after which a file database's checkpoint worker starts (checkpoint.ts). Until then the
 * write connection keeps SQLite's own automatic checkpoint (every CHECKPOINT_PAGES pages: a handful
 * of commits never reach it), and `close()` empties the -wal file with a TRUNCATE checkpoint of its
 * own: a short-lived process — a one-shot `run --embedded`, a CLI command on its own
 * database — makes a few commits and never pays for a worker thread (a Node start and a libSQL
 * load on the second core: ≈ 3–10 % of a one-shot run, interleaved runs with and without it). A
 * host that keeps committing moves its checkpoints off the event loop from then on.
 */
export const CHECKPOINT_WORKER_AFTER_COMMITS = 32;

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
  /** Text one statement binds before its largest strings are spilled across rows (`StorageHandleParts.spillBudget`); absent: no limit by size. */
  readonly spillBudget?: number | undefined;
}


// drizzle's libSQL driver minus `drizzle()` (whose module imports all of @libsql/client): the
// same constructor, undeclared in its types.
const { construct } = driverCore as unknown as { construct: (client: Client, config: { schema: StorageSchema }) => StorageDatabase };
export const drizzleOver = (client: Client): StorageDatabase => construct(client, { schema });

/**
 * Where write transactions run. For a file: a dedicated connection committing with
 * `synchronous = NORMAL` (its checkpoints run in a worker: checkpoint.ts), whose changes that must survive power loss then wait for an
 * off-thread WAL sync (`wal-sync.ts`); it is replaced after a failed transaction — libsql
 * 0.5.29 leaves a statement that failed with SQLITE_BUSY "in progress" on its connection, and
 * every later COMMIT there fails (libsql-client-ts#352, libsql-js#237/#238). Writes are queued,
 * so nothing else uses the connection when it is replaced. `:memory:` (one connection) and
 * servers use the main client and their own durability.
 */
class Writer implements HandleWriter {
  #connection: { client: EngineClient; db: StorageDatabase; autocheckpoint?: number } | undefined;
  /** `PRAGMA max_page_count` of the write connection (a per-connection setting, so applied to each new one). */
  #pageLimit: number | undefined;
  readonly #shared: { client: EngineClient; db: StorageDatabase } | null;
  readonly walSync: WalSync | null;
  /** Runs the WAL checkpoints of a file off the event loop (checkpoint.ts); null until it starts, once lost, and for other kinds. */
  #checkpointer: Checkpointer | null = null;
  /** Commits still to come before the checkpoint worker starts (a file database's); 0: started, lost or none. */
  #commitsBeforeWorker: number;
  /** The write connection's `wal_autocheckpoint`: 0 while the checkpoint worker runs, SQLite's 1000 before it starts and if it was lost. */
  #autocheckpoint = CHECKPOINT_PAGES;

  constructor(
    private readonly location: DatabaseLocation,
    main: EngineClient,
    private readonly busyTimeoutMs: number,
  ) {
    this.#shared = location.kind === "file" ? null : { client: main, db: drizzleOver(main) };
    this.walSync = location.kind === "file" ? new WalSync(location.path) : null;
    this.#commitsBeforeWorker = location.kind === "file" ? CHECKPOINT_WORKER_AFTER_COMMITS : 0;
  }

  /** Starts the checkpoint worker: the next write connection turns SQLite's automatic checkpoint off. */
  #startCheckpointer(path: string): void {
    this.#checkpointer = new Checkpointer(path, {
      thresholdPages: CHECKPOINT_PAGES,
      // The worker ended early: SQLite's automatic checkpoint on the next write connection.
      onLost: () => {
        this.#checkpointer = null;
        this.#autocheckpoint = CHECKPOINT_PAGES;
      },
    });
    this.#autocheckpoint = 0;
  }

  #open(): { client: EngineClient; db: StorageDatabase } {
    if (this.#shared !== null) return this.#shared;
    if (this.#connection !== undefined && this.#connection.autocheckpoint !== this.#autocheckpoint) this.#replace();
    if (this.#connection === undefined) {
      const client = new LocalClient((this.location as { path: string }).path, {
        timeoutMs: this.busyTimeoutMs,
        // The checkpoint worker takes the write lock for a moment (its RESTART): wait on timers, not asleep on the event loop.
        asyncBusy: true,
        // NORMAL, never OFF: a commit writes WAL frames unsynced (a `full` one is acknowledged after
        // wal-sync.ts's fdatasync), but the first commit after the WAL restarts syncs the new
        // header before it overwrites the old frames. Without that sync (OFF), power loss after an
        // out-of-order write can leave the old header with a prefix of the old frames, still
        // valid, followed by a new frame: recovery replays that prefix over the checkpointed
        // database and rolls back what later old frames committed (SQLite ticket ff5be73dee;
        // tests/storage/durability.test.ts rebuilds that file). One fsync every ~1,000 pages.
        synchronous: "NORMAL",
        maxPageCount: this.#pageLimit,
        walAutocheckpoint: this.#autocheckpoint,
        journalSizeLimit: JOURNAL_SIZE_LIMIT,
      });
      this.#connection = { client, db: drizzleOver(client), autocheckpoint: this.#autocheckpoint };
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
      const result = await db.transaction((tx) => fn(Object.assign(tx, { sql: client.current!.sql, events: [] as TurnEventRow[] })));
      if (this.#checkpointer !== null) this.#checkpointer.committed();
      else if (this.#commitsBeforeWorker > 0 && --this.#commitsBeforeWorker === 0) this.#startCheckpointer((this.location as { path: string }).path);
      return result;
    } catch (error) {
      if (this.#shared === null) this.#replace();
      throw error;
    }
  }

  /**
   * The write connection when it exists and no transaction holds it: a read run there at once (a
   * synchronous statement) sees exactly what is committed, with a page cache that stays warm across
   * this connection's own commits — the read connection's is dropped after every one of them.
   */
  idleConnection(): LocalConnection | undefined {
    return this.#shared === null ? (this.#connection?.client as LocalClient | undefined)?.idleConnection : undefined;
  }

  /** Replaces the write connection before its next transaction (a statement failed on it: libsql 0.5.29 could fail its next COMMIT). */
  discard(): void {
    if (this.#connection !== undefined && (this.#connection.client as LocalClient).idleConnection !== undefined) this.#replace();
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
    // No worker ran (a short-lived handle): empty the -wal file here, as its final checkpoint
    // would have (SQLite's own checkpoint at the last close is not made by the read connection,
    // which closes last). Busy (another process reading) leaves it to the next checkpoint.
    if (this.#checkpointer === null && this.walSync !== null) {
      try {
        (this.#connection?.client as LocalClient | undefined)?.idleConnection?.exec("PRAGMA wal_checkpoint(TRUNCATE)");
      } catch {
        // nothing is lost: the WAL stays, and is checkpointed by the next writer
      }
    }
    this.#replace();
    await this.walSync?.close();
    // After the write connection closed: the worker's final checkpoint empties the -wal file.
    await this.#checkpointer?.close();
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
    await makeDirectory(dirname(location.path), 0o700);
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

  const writer = new Writer(location, client, busyTimeoutMs);
  const readSql = location.kind === "file" ? writerWhenIdle(writer, client.sql) : undefined;
  return createStorageHandle({ location, processId: options.processId ?? process.pid, client, db: drizzleOver(client), migration, queue, writer, readSql, spillBudget: options.spillBudget });
}

/**
 * Raw reads outside a transaction on the write connection when it is idle (decided and run in one
 * synchronous step, so no transaction can begin between), else on the read connection. A read
 * the write connection finds busy (its busy timeout is 0) runs again on the read connection; any
 * other failure there has the write connection replaced before its next transaction.
 */
function writerWhenIdle(writer: Writer, reads: SqlExecutor): SqlExecutor {
  const run = async <T>(use: (connection: LocalConnection) => T, fallback: () => Promise<T>): Promise<T> => {
    const connection = writer.idleConnection();
    if (connection === undefined) return fallback();
    try {
      return use(connection);
    } catch (error) {
      writer.discard();
      if (error instanceof SqlError && (error.code === "SQLITE_BUSY" || error.code === "SQLITE_LOCKED")) return fallback();
      throw error;
    }
  };
  return {
    all: <T>(sql: string, args?: readonly SqlValue[]) => run((c) => c.allSync<T>(sql, args), () => reads.all<T>(sql, args)),
    get: <T>(sql: string, args?: readonly SqlValue[]) => run((c) => c.getSync<T>(sql, args), () => reads.get<T>(sql, args)),
    run: (sql: string, args?: readonly SqlValue[]) => run((c) => c.runSync(sql, args), () => reads.run(sql, args)),
  };
}
