// The Durable Object storage adapter: the storage room's handle (services/storage/handle.ts)
// over a SQLite-backed Durable Object's SQL API instead of libSQL. It offers the subset of
// @libsql/client's `Client` the repositories, drizzle and the migration runner use (execute,
// batch, executeMultiple, transaction) plus the raw `sql` executor, over `storage.sql.exec`.
//
// Transactions: a Durable Object refuses BEGIN and SAVEPOINT in SQL; `storage.transaction(async
// fn)` is its transaction (it commits when `fn` resolves and rolls back when it throws, and
// nests as a savepoint when called inside another). A write transaction holds the object's one
// SQLite connection, so reads outside it wait for it to end (as on a single-connection
// `:memory:` libSQL client), and reads inside it go through the transaction (the handle's
// `reader()`). Durability is the platform's: the output gate holds every response until the
// writes before it are durable, so `durable()` has nothing left to wait for.
//
// Types are structural (no Cloudflare type package): what `ctx.storage` offers that this uses.
import type { Client, InArgs, InStatement, InValue, ResultSet, Transaction, TransactionMode } from "@libsql/client";
import {
  applyMigrationsInHostTransaction,
  createStorageHandle,
  drizzleOver,
  serverMigrations,
  resultSet,
  toRow,
  Queue,
  type HandleWriter,
  type MigrationRegistry,
  type SqlExecutor,
  type SqlValue,
  type StorageHandle,
  type StorageMigrationProgress,
  type StorageTransaction,
  type TurnEventRow,
} from "../services/storage/index.js";
import { DURABLE_OBJECT_MAX_BOUND_VALUES, limitBoundValues } from "../services/storage/chunks.js";
import { SPILL_BUDGET } from "../services/storage/spill.js";

// Multi-row statements are cut to the platform's 100 bound values (a Turn's history rows, its parts).
limitBoundValues(DURABLE_OBJECT_MAX_BOUND_VALUES);


export type DurableObjectSqlValue = string | number | null | ArrayBuffer;

export interface DurableObjectSqlCursor {
  readonly columnNames: string[];
  toArray(): Record<string, DurableObjectSqlValue>[];
  raw(): IterableIterator<DurableObjectSqlValue[]>;
}

export interface DurableObjectSqlStorage {
  exec(query: string, ...bindings: unknown[]): DurableObjectSqlCursor;
}

export interface DurableObjectStorageInput {
  readonly sql: DurableObjectSqlStorage;
  transaction<T>(fn: () => Promise<T>): Promise<T>;
}

export interface DurableObjectStorageOptions {
  readonly storage: DurableObjectStorageInput;
  /** The one server name this object is permanently bound to. */
  readonly server: string;
  /** The registry to bring the database to (tests inject their own); defaults to `serverMigrations`. */
  readonly migrations?: MigrationRegistry | undefined;
  /** The owner id claims stamp; a Durable Object has no process id, so one per object instance. */
  readonly processId?: number | undefined;
  readonly onMigrationProgress?: ((progress: StorageMigrationProgress) => void) | undefined;
}

/** A value as the Durable Object SQL API binds it: booleans and dates as numbers, bigints only when exact. */
function bindValue(value: InValue | SqlValue | undefined): unknown {
  if (value === undefined) throw new TypeError("undefined cannot be passed as argument to the database");
  if (typeof value === "boolean") return value ? 1 : 0;
  if (value instanceof Date) return value.valueOf();
  if (typeof value === "bigint") {
    if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER)) {
      throw new RangeError(`${value} is outside the integers a Durable Object binds exactly`);
    }
    return Number(value);
  }
  return value;
}

function bindings(args: InArgs | readonly SqlValue[] | undefined): unknown[] {
  if (args === undefined) return [];
  if (Array.isArray(args)) return args.map(bindValue);
  // Named arguments are not used by this project's SQL (drizzle binds positionally).
  throw new TypeError("Named SQL arguments are not supported on Durable Object storage");
}

/** Blobs come back as ArrayBuffer; the repositories read bytes as Uint8Array (what libSQL gives). */
const readValue = (value: DurableObjectSqlValue): unknown => (value instanceof ArrayBuffer ? new Uint8Array(value) : value);

/** One connection's statements: what the client and its transactions share. */
class Statements implements SqlExecutor {
  constructor(private readonly sql: DurableObjectSqlStorage) {}

  /** Runs one statement to its end; `changes` is SQLite's own count (the cursor's `rowsWritten` also counts index rows). */
  #run(query: string, args: InArgs | readonly SqlValue[] | undefined): { columns: string[]; rows: unknown[][]; changes: number; lastInsertRowid: bigint | undefined } {
    const cursor = this.sql.exec(query, ...bindings(args));
    const rows = [...cursor.raw()].map((values) => values.map(readValue));
    const columns = cursor.columnNames;
    if (columns.length > 0) return { columns, rows, changes: 0, lastInsertRowid: undefined };
    const [stamp] = this.sql.exec("SELECT changes() AS changes, last_insert_rowid() AS rowid").toArray();
    return { columns, rows, changes: Number(stamp?.["changes"] ?? 0), lastInsertRowid: BigInt(Number(stamp?.["rowid"] ?? 0)) };
  }

  executeSync(stmt: InStatement | string, args?: InArgs): ResultSet {
    const query = typeof stmt === "string" ? stmt : stmt.sql;
    const values = typeof stmt === "string" ? args : stmt.args;
    const { columns, rows, changes, lastInsertRowid } = this.#run(query, values);
    return resultSet(columns, columns.map(() => ""), rows.map((row) => toRow(row, columns)), changes, lastInsertRowid);
  }

  objects<T>(query: string, args?: readonly SqlValue[]): T[] {
    const { columns, rows } = this.#run(query, args);
    return rows.map((values) => {
      const row: Record<string, unknown> = {};
      for (let index = 0; index < columns.length; index++) row[columns[index]!] = values[index];
      return row as T;
    });
  }

  async all<T = Record<string, unknown>>(query: string, args?: readonly SqlValue[]): Promise<T[]> {
    return this.objects<T>(query, args);
  }

  async get<T = Record<string, unknown>>(query: string, args?: readonly SqlValue[]): Promise<T | undefined> {
    return this.objects<T>(query, args)[0];
  }

  async run(query: string, args?: readonly SqlValue[]): Promise<{ readonly changes: number }> {
    return { changes: this.#run(query, args).changes };
  }

  /** Several statements separated by semicolons (the SQL API runs them all), without results. */
  exec(query: string): void {
    [...this.sql.exec(query).raw()];
  }
}

/**
 * Statements inside the running transaction: the migration runner's and drizzle's `Transaction`.
 * Its commit and rollback are the enclosing `storage.transaction`'s (it ends with its callback).
 */
class DurableObjectTransaction implements Transaction {
  constructor(private readonly statements: Statements) {}
  readonly closed = false;
  get sql(): SqlExecutor {
    return this.statements;
  }
  async execute(stmt: InStatement | string, args?: InArgs): Promise<ResultSet> {
    return this.statements.executeSync(stmt, args);
  }
  async batch(stmts: (InStatement | [string, InArgs?])[]): Promise<ResultSet[]> {
    return stmts.map((stmt) => (Array.isArray(stmt) ? this.statements.executeSync({ sql: stmt[0], args: stmt[1] ?? [] }) : this.statements.executeSync(stmt)));
  }
  async executeMultiple(query: string): Promise<void> {
    this.statements.exec(query);
  }
  // The enclosing storage.transaction commits when its callback returns and rolls back when it throws.
  async commit(): Promise<void> {}
  async rollback(): Promise<void> {}
  close(): void {}
}

/** The object's SQLite in @libsql/client's `Client` shape plus `sql`; statements wait while a write transaction holds the connection. */
export class DurableObjectClient implements Client {
  readonly protocol = "file";
  readonly closed = false;
  readonly statements: Statements;
  readonly inside: DurableObjectTransaction;
  #held: Promise<void> | undefined;

  constructor(private readonly storage: DurableObjectStorageInput) {
    this.statements = new Statements(storage.sql);
    this.inside = new DurableObjectTransaction(this.statements);
  }

  async #idle(): Promise<void> {
    while (this.#held !== undefined) await this.#held;
  }

  get sql(): SqlExecutor {
    return {
      all: async (query, args) => (await this.#idle(), this.statements.objects(query, args)),
      get: async (query, args) => (await this.#idle(), this.statements.objects(query, args)[0]),
      run: async (query, args) => (await this.#idle(), this.statements.run(query, args)),
    } as SqlExecutor;
  }

  /**
   * Runs `fn` in one `storage.transaction`, holding the connection: statements through this
   * client wait until it ends. Called while one is held (a nested unit of work), it is a
   * savepoint of that one and takes no hold of its own.
   */
  async hold<T>(fn: () => Promise<T>): Promise<T> {
    if (this.#held !== undefined) throw new Error("A Durable Object write transaction is already running");
    let release!: () => void;
    this.#held = new Promise<void>((resolve) => (release = resolve));
    try {
      return await this.storage.transaction(fn);
    } finally {
      this.#held = undefined;
      release();
    }
  }

  async execute(stmt: InStatement | string, args?: InArgs): Promise<ResultSet> {
    await this.#idle();
    return this.statements.executeSync(stmt, args);
  }

  async batch(stmts: (InStatement | [string, InArgs?])[]): Promise<ResultSet[]> {
    await this.#idle();
    return this.hold(() => this.inside.batch(stmts));
  }

  async migrate(stmts: InStatement[]): Promise<ResultSet[]> {
    return this.batch(stmts);
  }

  /** drizzle's transactions: already inside `hold` (the writer opens it first), so statements run in place. */
  async transaction(_mode?: TransactionMode): Promise<Transaction> {
    return this.inside;
  }

  async executeMultiple(query: string): Promise<void> {
    await this.#idle();
    this.statements.exec(query);
  }

  async sync(): Promise<undefined> {
    return undefined;
  }

  reconnect(): void {}

  close(): void {}
}

/** The handle's writer over `storage.transaction`; nested transactions are nested `storage.transaction`s (savepoints). */
class DurableObjectWriter implements HandleWriter {
  constructor(
    private readonly client: DurableObjectClient,
    private readonly storage: DurableObjectStorageInput,
  ) {}

  /** A drizzle transaction object over the connection, whose own `transaction` nests a savepoint. */
  #transactionObject(): StorageTransaction {
    const db = drizzleOver(this.client.inside as unknown as Client);
    const tx = Object.assign(db, {
      sql: this.client.inside.sql,
      events: [] as TurnEventRow[],
      rollback: () => {
        throw new Error("Rollback");
      },
    });
    Object.defineProperty(tx, "transaction", {
      value: <T>(fn: (nested: StorageTransaction) => Promise<T>) => this.storage.transaction(() => fn(this.#transactionObject())),
    });
    return tx as unknown as StorageTransaction;
  }

  transaction<T>(fn: (tx: StorageTransaction) => Promise<T>): Promise<T> {
    return this.client.hold(() => fn(this.#transactionObject()));
  }

  async durable(): Promise<void> {}

  limitPages(): void {
    throw new Error("A Durable Object's database size is the platform's limit");
  }

  async close(): Promise<void> {}
}

/**
 * Opens the object's database as a storage handle: migrates it on wake with the server
 * migrations (the same ledger and refusals as libSQL; see services/storage/migrate.ts) and
 * returns the handle every repository and service takes. Run it inside
 * `blockConcurrencyWhile`, so no request sees the database before it is migrated.
 */
export async function openDurableObjectStorage(options: DurableObjectStorageOptions): Promise<StorageHandle> {
  const client = new DurableObjectClient(options.storage);
  const migration = await applyMigrationsInHostTransaction({
    client: client.inside,
    migrations: options.migrations ?? serverMigrations,
    transaction: (fn) => client.hold(fn),
    onProgress: options.onMigrationProgress,
  });
  return createStorageHandle({
    location: { kind: "durable-object", url: `durable-object:${options.server}` },
    processId: options.processId ?? 1,
    client,
    db: drizzleOver(client),
    migration,
    queue: new Queue(),
    writer: new DurableObjectWriter(client, options.storage),
    // Durable Object SQLite refuses a value or row over 2 MB: large values are split across rows.
    spillBudget: SPILL_BUDGET,
  });
}
