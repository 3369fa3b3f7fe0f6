import { AsyncLocalStorage } from "node:async_hooks";
import { chmod, mkdir, open, stat } from "node:fs/promises";
import { dirname } from "node:path";
import { createClient, type Client, type ResultSet } from "@libsql/client";
import type { ExtractTablesWithRelations } from "drizzle-orm";
import { drizzle, type LibSQLDatabase } from "drizzle-orm/libsql";
import type { BaseSQLiteDatabase } from "drizzle-orm/sqlite-core";
import { StorageNotADatabase, StorageUnreachable, isStorageError, mapBusy, toStorageError } from "./errors.js";
import { redactedServerUrl, resolveDatabaseLocation, type DatabaseLocation } from "./location.js";
import { applyMigrations, type MigrationReport, type StorageMigrationProgress } from "./migrate.js";
import { serverMigrations, type MigrationRegistry } from "./migrations/registry.js";
import { writeQueueFor } from "./queue.js";
import { schema, type StorageSchema } from "./schema.js";

export const DEFAULT_BUSY_TIMEOUT_MS = 5000;

export type StorageDatabase = LibSQLDatabase<StorageSchema>;
export type StorageTransaction = Parameters<Parameters<StorageDatabase["transaction"]>[0]>[0];
/** Either the root database or a transaction: what read helpers accept. */
export type StorageExecutor = BaseSQLiteDatabase<
  "async",
  ResultSet,
  StorageSchema,
  ExtractTablesWithRelations<StorageSchema>
>;

const HANDLE = Symbol.for("ze-harness.storage.handle");

export interface StorageHandle {
  readonly [HANDLE]: true;
  readonly location: DatabaseLocation;
  /** The process id that claims made through this handle stamp as their owner. */
  readonly processId: number;
  /**
   * The pooled client and its drizzle database, for READS. Write only through `transaction()`:
   * a write outside it skips the process-wide write queue, so its connection can sleep on the
   * event loop a running transaction needs (and then fail busy).
   */
  readonly client: Client;
  readonly db: StorageDatabase;
  /** What opening did to the schema (applied migrations, backup path). */
  readonly migration: MigrationReport;
  /**
   * Runs `fn` in one write transaction (`BEGIN IMMEDIATE`) and commits, or rolls back when `fn`
   * throws. Write transactions to one file are queued across this process's handles (a second
   * local connection waiting for the lock would block the event loop the first needs to finish). Called again inside `fn`, it
   * nests as a savepoint of the running transaction. BUSY/LOCKED failures reject with
   * `StorageBusy`. Inside `fn` use only `tx`: on `:memory:` the root `db` waits for the
   * connection the transaction holds.
   */
  transaction<T>(fn: (tx: StorageTransaction) => Promise<T>, options?: { readonly durability?: Durability }): Promise<T>;
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

/**
 * Where write transactions run. For a file this is a dedicated single-connection client, so a
 * failed transaction can throw its connection away: libsql 0.5.29 leaves a statement that failed
 * with SQLITE_BUSY "in progress" on its connection, and every later COMMIT there fails with
 * "cannot commit transaction - SQL statements in progress" (libsql-client-ts#352,
 * libsql-js#237/#238). Writes are queued, so nothing else is using the connection when it is
 * replaced. `:memory:` (one connection) and servers (no such defect) use the main client.
 */
class Writer {
  #client: Client | null = null;
  #db: StorageDatabase | null = null;
  readonly #shared: StorageDatabase | null;
  readonly #url: string;
  readonly #busyTimeoutMs: number;

  constructor(location: DatabaseLocation, main: Client, busyTimeoutMs: number) {
    this.#shared = location.kind === "file" ? null : drizzle(main, { schema });
    this.#url = location.url;
    this.#busyTimeoutMs = busyTimeoutMs;
  }

  #database(): StorageDatabase {
    if (this.#shared !== null) return this.#shared;
    if (this.#db === null) {
      this.#client = createClient({ url: this.#url, timeout: this.#busyTimeoutMs, concurrency: 1 });
      this.#db = drizzle(this.#client, { schema });
    }
    return this.#db;
  }

  async transaction<T>(fn: (tx: StorageTransaction) => Promise<T>, durability: Durability = "full"): Promise<T> {
    const db = this.#database();
    // Only a file's dedicated writer can switch: the setting is per connection.
    const relax = durability === "relaxed" && this.#client !== null;
    try {
      if (relax) await this.#client!.execute("PRAGMA synchronous = NORMAL");
      return await db.transaction(fn);
    } catch (error) {
      if (this.#shared === null) this.close();
      throw error;
    } finally {
      if (relax) await this.#client?.execute("PRAGMA synchronous = FULL").catch(() => this.close());
    }
  }

  close(): void {
    this.#client?.close();
    this.#client = null;
    this.#db = null;
  }
}

/**
 * How a write transaction is synced. `full` (the default) fsyncs the WAL at commit: the change
 * survives power loss. `relaxed` (WAL + synchronous=NORMAL) survives a crash of the process but
 * may roll back on power loss — for progress that is re-derivable (streamed content, activity),
 * never for an acknowledged admission, a claim or a settlement.
 */
export type Durability = "full" | "relaxed";

interface ActiveTransaction {
  readonly tx: StorageTransaction;
  active: boolean;
}

/** The first 16 bytes of every SQLite database file. */
const SQLITE_HEADER = Buffer.from("SQLite format 3\0", "latin1");

const errorCode = (error: unknown): unknown => (error as { code?: unknown } | null)?.code;

/** Tightens `path` to 0600 when group or others have any access; a missing file is fine. */
async function ownerOnly(path: string): Promise<void> {
  let mode: number;
  try {
    mode = (await stat(path)).mode;
  } catch (error) {
    if (errorCode(error) === "ENOENT") return;
    throw error;
  }
  if ((mode & 0o077) === 0) return;
  try {
    await chmod(path, 0o600);
  } catch (error) {
    // Someone else's file, opened on purpose: their mode is theirs to choose.
    if (errorCode(error) !== "EPERM") throw error;
  }
}

/**
 * Readies a database file before libSQL opens it. SQLite creates the -wal and -shm files with
 * the database file's mode, so this decides theirs too: a missing file is created empty with
 * 0600 (`wx`: when another opener wins the race, its file is used), and an existing one (with any
 * -wal/-shm beside it) that group or others can access is tightened to 0600 — wherever it lives,
 * since a path outside the 0700 state directory has no directory to protect it. A non-empty file
 * without the SQLite header is refused before anything is created next to it.
 */
async function prepareDatabaseFile(path: string): Promise<void> {
  try {
    await (await open(path, "wx", 0o600)).close();
  } catch (error) {
    if (errorCode(error) !== "EEXIST") throw error;
  }
  const file = await open(path, "r");
  try {
    const header = Buffer.alloc(SQLITE_HEADER.length);
    const { bytesRead } = await file.read(header, 0, header.length, 0);
    if (bytesRead > 0 && !header.equals(SQLITE_HEADER)) throw new StorageNotADatabase(path);
  } finally {
    await file.close();
  }
  for (const companion of [path, `${path}-wal`, `${path}-shm`]) await ownerOnly(companion);
}

/** True when `error` or its cause chain is SQLite's NOTADB (a file with a bad header or encrypted). */
function isNotADatabase(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Object && depth < 4; current = (current as { cause?: unknown }).cause, depth += 1) {
    const { code, extendedCode } = current as { code?: unknown; extendedCode?: unknown };
    if (code === "SQLITE_NOTADB" || extendedCode === "SQLITE_NOTADB") return true;
  }
  return false;
}

/** The first short upper-case code on `error`'s cause chain (ECONNREFUSED, HRANA_WEBSOCKET_ERROR…). */
function connectionCode(error: unknown): string | null {
  for (let current = error, depth = 0; current instanceof Object && depth < 4; current = (current as { cause?: unknown }).cause, depth += 1) {
    const code = errorCode(current);
    if (typeof code === "string" && /^[A-Z][A-Z0-9_]{1,40}$/.test(code)) return code;
  }
  return null;
}

/**
 * What a failure while opening means: a file that is not a database, or a server that could not
 * be reached (anything but a storage error or an SQLite error from a server is the connection
 * failing), named by path or redacted URL. Busy and migration errors pass through typed.
 */
function openFailure(error: unknown, location: DatabaseLocation): unknown {
  if (isStorageError(error)) return error;
  if (location.kind === "file" && isNotADatabase(error)) return new StorageNotADatabase(location.path, { cause: error });
  const mapped = toStorageError(error);
  if (mapped !== error || location.kind !== "remote") return mapped;
  const code = connectionCode(error);
  if (code !== null && code.startsWith("SQLITE_")) return error;
  return new StorageUnreachable(redactedServerUrl(location.url), code);
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

  let client: Client;
  try {
    client = createClient({
      url: location.url,
      timeout: busyTimeoutMs,
      ...(location.kind === "remote" && options.authToken !== undefined ? { authToken: options.authToken } : {}),
    });
  } catch (error) {
    throw openFailure(error, location);
  }

  const queue = writeQueueFor(location);
  let migration: MigrationReport;
  try {
    migration = await queue.run(() => applyMigrations({
      client,
      location,
      authToken: options.authToken,
      migrations: options.migrations ?? serverMigrations,
      busyTimeoutMs,
      onProgress: options.onMigrationProgress,
    }));
    // libSQL enables foreign keys on every new connection; a single-connection `:memory:`
    // client is the only one where setting it here reaches every later statement.
    const foreignKeys = await client.execute("PRAGMA foreign_keys");
    if (Number(foreignKeys.rows[0]?.["foreign_keys"] ?? 0) !== 1) await client.execute("PRAGMA foreign_keys = ON");
  } catch (error) {
    client.close();
    throw openFailure(error, location);
  }

  const db = drizzle(client, { schema });
  const writer = new Writer(location, client, busyTimeoutMs);
  const current = new AsyncLocalStorage<ActiveTransaction>();
  const inFlight = new Set<Promise<void>>();
  let closed = false;

  const handle: StorageHandle = {
    [HANDLE]: true,
    location,
    processId: options.processId ?? process.pid,
    client,
    db,
    migration,
    transaction<T>(fn: (tx: StorageTransaction) => Promise<T>, options?: { readonly durability?: Durability }): Promise<T> {
      const inFrame = async (tx: StorageTransaction): Promise<T> => {
        const frame: ActiveTransaction = { tx, active: true };
        try {
          return await current.run(frame, () => fn(tx));
        } finally {
          frame.active = false;
        }
      };
      const outer = current.getStore();
      if (outer?.active) return mapBusy(() => outer.tx.transaction(inFrame));
      if (closed) return Promise.reject(new Error("The storage handle is closed"));
      const running = queue.run(() => mapBusy(() => writer.transaction(inFrame, options?.durability)));
      const settled = running.then(
        () => undefined,
        () => undefined,
      );
      inFlight.add(settled);
      void settled.then(() => inFlight.delete(settled));
      return running;
    },
    async close() {
      if (closed) return;
      closed = true;
      await Promise.all(inFlight);
      writer.close();
      client.close();
    },
  };
  return handle;
}
