// A libSQL client for local databases (a file or `:memory:`) over the native `libsql` driver's
// synchronous API, with every statement prepared once per connection and reused. It has the
// shape of @libsql/client's `Client` (so drizzle and the migration runner use it unchanged) plus
// `sql`: the raw, object-row executor the hot paths use. @libsql/client itself (≈ 120 ms of
// imports, a statement prepared again on every call) is loaded only for libSQL servers.
//
// One connection per client: local statements run synchronously on the event loop, so a pool
// would add no concurrency. A transaction holds the connection; other calls on the client wait
// for it to finish (only `:memory:` shares one client between reads and writes).
import { createRequire } from "node:module";
import type { Client, InArgs, InStatement, InValue, ResultSet, Transaction, TransactionMode } from "@libsql/client";
import { StorageCorrupt } from "./errors.js";
import { resultSet, toRow } from "./row.js";

/** One positional SQL argument. */
export type SqlValue = string | number | bigint | null | Uint8Array;

/** The raw executor: rows as plain objects keyed by column name. */
export interface SqlExecutor {
  all<T = Record<string, unknown>>(sql: string, args?: readonly SqlValue[]): Promise<T[]>;
  get<T = Record<string, unknown>>(sql: string, args?: readonly SqlValue[]): Promise<T | undefined>;
  run(sql: string, args?: readonly SqlValue[]): Promise<{ readonly changes: number }>;
}

interface NativeStatement {
  readonly reader: boolean;
  raw(toggle?: boolean): NativeStatement;
  all(args: unknown): unknown[];
  get(args: unknown): unknown;
  run(args: unknown): { changes: number; lastInsertRowid: number | bigint };
  columns(): { name: string; type: string | null }[];
}

interface NativeDatabase {
  readonly inTransaction: boolean;
  readonly open: boolean;
  prepare(sql: string): NativeStatement;
  exec(sql: string): void;
  close(): void;
}

type NativeDatabaseClass = new (path: string, options: { timeout: number }) => NativeDatabase;

let nativeClass: NativeDatabaseClass | undefined;
const native = (): NativeDatabaseClass => (nativeClass ??= createRequire(import.meta.url)("libsql") as NativeDatabaseClass);

/** SQLite's primary result codes, by number (an extended code is `primary | (detail << 8)`). */
const PRIMARY_CODES = [
  "SQLITE_OK", "SQLITE_ERROR", "SQLITE_INTERNAL", "SQLITE_PERM", "SQLITE_ABORT", "SQLITE_BUSY", "SQLITE_LOCKED",
  "SQLITE_NOMEM", "SQLITE_READONLY", "SQLITE_INTERRUPT", "SQLITE_IOERR", "SQLITE_CORRUPT", "SQLITE_NOTFOUND",
  "SQLITE_FULL", "SQLITE_CANTOPEN", "SQLITE_PROTOCOL", "SQLITE_EMPTY", "SQLITE_SCHEMA", "SQLITE_TOOBIG",
  "SQLITE_CONSTRAINT", "SQLITE_MISMATCH", "SQLITE_MISUSE", "SQLITE_NOLFS", "SQLITE_AUTH", "SQLITE_FORMAT",
  "SQLITE_RANGE", "SQLITE_NOTADB",
];

/**
 * A failed statement, shaped like @libsql/client's `LibsqlError`: `code` is the primary result
 * code (`SQLITE_CONSTRAINT`), `extendedCode` the precise one (`SQLITE_CONSTRAINT_PRIMARYKEY`).
 */
export class SqlError extends Error {
  readonly code: string;
  readonly extendedCode: string | undefined;
  readonly rawCode: number | undefined;
  constructor(cause: { message: string; code?: string; rawCode?: number }) {
    super(cause.message, { cause });
    this.name = "SqlError";
    this.rawCode = cause.rawCode;
    this.extendedCode = cause.code;
    this.code = cause.rawCode !== undefined ? (PRIMARY_CODES[cause.rawCode & 0xff] ?? `SQLITE_UNKNOWN_${cause.rawCode & 0xff}`) : (cause.code ?? "SQLITE_UNKNOWN");
  }
}

function asSqlError(error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  return error instanceof Error && typeof code === "string" && code.startsWith("SQLITE_") ? new SqlError(error as Error & { code: string }) : error;
}

/** A driver error as this room throws it: a malformed image is `StorageCorrupt` naming the file, any other SQLite error a `SqlError`. */
function shaped(error: unknown, path: string): unknown {
  const mapped = asSqlError(error);
  return mapped instanceof SqlError && mapped.code === "SQLITE_CORRUPT" && path !== ":memory:" ? new StorageCorrupt(path, { cause: mapped }) : mapped;
}

/** What a cached statement knows about itself. */
interface Prepared {
  readonly objects: NativeStatement;
  readonly reader: boolean;
  /** Raw-mode twin and column names, made on first use through the `Client` surface. */
  rows?: { readonly statement: NativeStatement; readonly columns: string[]; readonly types: string[] };
}

function argsOf(args: InArgs | readonly SqlValue[] | undefined): unknown {
  if (args === undefined) return [];
  if (Array.isArray(args)) return args.map(toSqlValue);
  const named: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(args)) named[name[0] === "@" || name[0] === "$" || name[0] === ":" ? name.slice(1) : name] = toSqlValue(value);
  return named;
}

function toSqlValue(value: InValue | undefined): unknown {
  if (typeof value === "boolean") return value ? 1 : 0;
  if (value instanceof Date) return value.valueOf();
  if (value instanceof ArrayBuffer) return Buffer.from(value);
  if (value === undefined) throw new TypeError("undefined cannot be passed as argument to the database");
  return value;
}


/** One native connection and its statement cache. */
export class LocalConnection implements SqlExecutor {
  readonly #db: NativeDatabase;
  readonly #statements = new Map<string, Prepared>();

  constructor(
    private readonly path: string,
    timeoutMs: number,
  ) {
    try {
      this.#db = new (native())(path, { timeout: timeoutMs });
    } catch (error) {
      throw shaped(error, path);
    }
  }

  get inTransaction(): boolean {
    return this.#db.inTransaction;
  }

  #prepared(sql: string): Prepared {
    let prepared = this.#statements.get(sql);
    if (prepared === undefined) {
      const objects = this.#db.prepare(sql);
      prepared = { objects, reader: objects.reader };
      this.#statements.set(sql, prepared);
    }
    return prepared;
  }

  /**
   * Runs `use` on the cached statement; a statement that failed is dropped from the cache (libsql
   * 0.5.29 can leave a failed statement "in progress", and reusing it would fail the connection).
   */
  #with<T>(sql: string, use: (prepared: Prepared) => T): T {
    try {
      return use(this.#prepared(sql));
    } catch (error) {
      this.#statements.delete(sql);
      throw shaped(error, this.path);
    }
  }

  allSync<T>(sql: string, args?: readonly SqlValue[] | InArgs): T[] {
    return this.#with(sql, (prepared) => (prepared.reader ? (prepared.objects.all(argsOf(args)) as T[]) : (prepared.objects.run(argsOf(args)), [])));
  }

  getSync<T>(sql: string, args?: readonly SqlValue[] | InArgs): T | undefined {
    return this.#with(sql, (prepared) => {
      if (!prepared.reader) {
        prepared.objects.run(argsOf(args));
        return undefined;
      }
      return (prepared.objects.get(argsOf(args)) ?? undefined) as T | undefined;
    });
  }

  runSync(sql: string, args?: readonly SqlValue[] | InArgs): { changes: number } {
    return this.#with(sql, (prepared) => {
      if (prepared.reader) return { changes: prepared.objects.all(argsOf(args)).length };
      return { changes: prepared.objects.run(argsOf(args)).changes };
    });
  }

  async all<T = Record<string, unknown>>(sql: string, args?: readonly SqlValue[]): Promise<T[]> {
    return this.allSync<T>(sql, args);
  }

  async get<T = Record<string, unknown>>(sql: string, args?: readonly SqlValue[]): Promise<T | undefined> {
    return this.getSync<T>(sql, args);
  }

  async run(sql: string, args?: readonly SqlValue[]): Promise<{ readonly changes: number }> {
    return this.runSync(sql, args);
  }

  /** A statement in @libsql/client's `ResultSet` form (what drizzle and the migration runner read). */
  executeSync(stmt: InStatement | string, args?: InArgs): ResultSet {
    const sql = typeof stmt === "string" ? stmt : stmt.sql;
    const values = typeof stmt === "string" ? args : stmt.args;
    return this.#with(sql, (prepared) => {
      if (!prepared.reader) {
        const info = prepared.objects.run(argsOf(values));
        return resultSet([], [], [], info.changes, BigInt(info.lastInsertRowid));
      }
      prepared.rows ??= (() => {
        const statement = this.#db.prepare(sql).raw(true);
        const columns = statement.columns();
        return { statement, columns: columns.map((column) => column.name), types: columns.map((column) => column.type ?? "") };
      })();
      const { statement, columns, types } = prepared.rows;
      const rows = (statement.all(argsOf(values)) as unknown[][]).map((values) => toRow(values, columns));
      return resultSet(columns, types, rows, 0, undefined);
    });
  }

  /** Several statements separated by semicolons, without arguments or results. */
  exec(sql: string): void {
    try {
      this.#db.exec(sql);
    } catch (error) {
      throw shaped(error, this.path);
    }
  }

  close(): void {
    this.#statements.clear();
    if (this.#db.open) this.#db.close();
  }
}

const BEGIN: Record<TransactionMode, string> = { write: "BEGIN IMMEDIATE", read: "BEGIN TRANSACTION READONLY", deferred: "BEGIN DEFERRED" };

/** A transaction on a local connection, in @libsql/client's `Transaction` shape plus `sql`. */
export class LocalTransaction implements Transaction {
  #open = true;

  constructor(
    private readonly connection: LocalConnection,
    private readonly release: () => void,
  ) {}

  get closed(): boolean {
    return !this.#open;
  }

  get sql(): SqlExecutor {
    return this.connection;
  }

  #check(): LocalConnection {
    if (!this.#open) throw new Error("The transaction is closed");
    return this.connection;
  }

  async execute(stmt: InStatement | string, args?: InArgs): Promise<ResultSet> {
    return this.#check().executeSync(stmt, args);
  }

  async batch(stmts: (InStatement | [string, InArgs?])[]): Promise<ResultSet[]> {
    const connection = this.#check();
    return stmts.map((stmt) => (Array.isArray(stmt) ? connection.executeSync({ sql: stmt[0], args: stmt[1] ?? [] }) : connection.executeSync(stmt)));
  }

  async executeMultiple(sql: string): Promise<void> {
    this.#check().exec(sql);
  }

  async commit(): Promise<void> {
    try {
      this.#check().runSync("COMMIT");
    } finally {
      this.close();
    }
  }

  async rollback(): Promise<void> {
    if (!this.#open) return;
    try {
      if (this.connection.inTransaction) this.connection.runSync("ROLLBACK");
    } finally {
      this.close();
    }
  }

  close(): void {
    if (!this.#open) return;
    this.#open = false;
    // A transaction abandoned without commit or rollback must not leak into the next borrower.
    if (this.connection.inTransaction) {
      try {
        this.connection.runSync("ROLLBACK");
      } catch {
        // the caller replaces a connection that cannot roll back
      }
    }
    this.release();
  }
}

/** A single-connection local client in @libsql/client's `Client` shape, plus `sql`. */
export class LocalClient implements Client {
  readonly protocol = "file";
  readonly #connection: LocalConnection;
  #closed = false;
  /** Resolves when the transaction holding the connection ends. */
  #held: Promise<void> | undefined;
  /** The transaction holding the connection, if any. */
  current: LocalTransaction | undefined;

  /** Set: the connection's busy timeout is 0 and `BEGIN` waits for the lock on timers, up to this long. */
  readonly #asyncBusyMs: number | undefined;

  constructor(
    path: string,
    options: {
      readonly timeoutMs: number;
      /**
       * Wait for a locked database off the event loop: the connection's busy timeout is 0 (SQLite's
       * busy handler would sleep on the event loop) and `transaction()` retries its `BEGIN` on
       * timers for up to `timeoutMs` instead. For a write connection, where only `BEGIN` takes a
       * lock that can be busy.
       */
      readonly asyncBusy?: boolean | undefined;
      readonly synchronous?: "FULL" | "NORMAL" | "OFF";
      readonly maxPageCount?: number | undefined;
      /** `PRAGMA wal_autocheckpoint` (0: off, the checkpoint worker runs them; see checkpoint.ts). */
      readonly walAutocheckpoint?: number | undefined;
      /** `PRAGMA journal_size_limit` in bytes: a restarted WAL longer than this is cut back at its first commit. */
      readonly journalSizeLimit?: number | undefined;
    },
  ) {
    this.#asyncBusyMs = options.asyncBusy === true ? options.timeoutMs : undefined;
    this.#connection = new LocalConnection(path, options.asyncBusy === true ? 0 : options.timeoutMs);
    if (options.synchronous !== undefined) this.#connection.exec(`PRAGMA synchronous = ${options.synchronous}`);
    if (options.maxPageCount !== undefined) this.#connection.exec(`PRAGMA max_page_count = ${Math.floor(options.maxPageCount)}`);
    if (options.walAutocheckpoint !== undefined) this.#connection.exec(`PRAGMA wal_autocheckpoint = ${Math.floor(options.walAutocheckpoint)}`);
    if (options.journalSizeLimit !== undefined) this.#connection.exec(`PRAGMA journal_size_limit = ${Math.floor(options.journalSizeLimit)}`);
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** The connection itself when no transaction holds it (nor waits to BEGIN on it), for a read run at once; else undefined. */
  get idleConnection(): LocalConnection | undefined {
    // SQLite's own word too: a connection a failed ROLLBACK left inside a transaction (before the
    // writer replaces it) must not answer a read with that transaction's uncommitted rows.
    return this.#closed || this.#held !== undefined || this.#connection.inTransaction ? undefined : this.#connection;
  }

  /** The raw executor on this client's connection (outside any transaction). */
  get sql(): SqlExecutor {
    return {
      all: async (sql, args) => (await this.#idle(), this.#connection.allSync(sql, args)),
      get: async (sql, args) => (await this.#idle(), this.#connection.getSync(sql, args)),
      run: async (sql, args) => (await this.#idle(), this.#connection.runSync(sql, args)),
    };
  }

  async #idle(): Promise<void> {
    if (this.#closed) throw new Error("The client is closed");
    while (this.#held !== undefined) await this.#held;
  }

  async execute(stmt: InStatement | string, args?: InArgs): Promise<ResultSet> {
    await this.#idle();
    return this.#connection.executeSync(stmt, args);
  }

  async batch(stmts: (InStatement | [string, InArgs?])[], mode: TransactionMode = "deferred"): Promise<ResultSet[]> {
    const tx = await this.transaction(mode);
    try {
      const results = await tx.batch(stmts);
      await tx.commit();
      return results;
    } finally {
      tx.close();
    }
  }

  async migrate(stmts: InStatement[]): Promise<ResultSet[]> {
    return this.batch(stmts, "deferred");
  }

  async transaction(mode: TransactionMode = "write"): Promise<LocalTransaction> {
    await this.#idle();
    let release!: () => void;
    this.#held = new Promise<void>((resolve) => (release = resolve));
    try {
      if (this.#asyncBusyMs === undefined) this.#connection.runSync(BEGIN[mode]);
      else await this.#beginWaiting(BEGIN[mode], this.#asyncBusyMs);
    } catch (error) {
      this.#held = undefined;
      release();
      throw error;
    }
    const tx = new LocalTransaction(this.#connection, () => {
      this.#held = undefined;
      this.current = undefined;
      release();
    });
    this.current = tx;
    return tx;
  }

  /**
   * Runs `begin`, retrying on SQLITE_BUSY after 1, 2, 4, then every 8 ms until `timeoutMs` passed.
   * Through `exec`: a prepared statement that failed busy stays "in progress" in libsql 0.5.29 and
   * would fail the connection's next COMMIT.
   */
  async #beginWaiting(begin: string, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (let wait = 1; ; wait = Math.min(wait * 2, 8)) {
      try {
        this.#connection.exec(begin);
        return;
      } catch (error) {
        if (!(error instanceof SqlError && error.code === "SQLITE_BUSY") || Date.now() >= deadline) throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }

  async executeMultiple(sql: string): Promise<void> {
    await this.#idle();
    this.#connection.exec(sql);
  }

  async sync(): Promise<undefined> {
    return undefined;
  }

  reconnect(): void {}

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#connection.close();
  }
}
