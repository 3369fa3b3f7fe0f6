// Longer than ~400 lines on purpose: refusal checks, backup and the locked apply are one
// sequence whose invariants (nothing written before a refusal, one batch) are read together.
/**
 * The migration runner: a ledger (`harness_migration`) of applied migrations and a record
 * (`harness_schema_object`) of the schema objects they left behind.
 *
 * On open:
 * 1. Read the ledger (read-only) and refuse — writing nothing — when the database predates
 *    migrations, was migrated by an incompatible newer build, diverged from this build's
 *    registry, or had a recorded object dropped or redefined. Nothing pending → no write.
 * 2. A file database that already holds data is copied to `<db>.pre-<first pending id>.bak`
 *    (0600; an existing copy of that name is replaced by the newest). If the copy fails,
 *    nothing is migrated (`StorageMigrationFailed`).
 * 3. On ONE connection: foreign keys off, `BEGIN IMMEDIATE`, re-read the ledger, apply every
 *    pending migration, `PRAGMA foreign_key_check`, commit. Any failure rolls the batch back.
 */
import { randomBytes } from "node:crypto";
import { constants as fsConstants } from "node:fs";
import { chmod, open, rename, rm, stat } from "node:fs/promises";
import { dirname } from "node:path";
import type { Client, InStatement, ResultSet } from "@libsql/client";
import {
  StorageMigrationDiverged,
  StorageMigrationFailed,
  StorageNewerThanBinary,
  StorageResetRequired,
  StorageSchemaDrifted,
  isStorageError,
  toStorageError,
  type SchemaDrift,
} from "./errors.js";
import type { DatabaseLocation } from "./location.js";
import type { Migration, MigrationRegistry, MigrationTransaction } from "./migrations/types.js";

export const LEDGER_TABLE = "harness_migration";
export const SCHEMA_OBJECT_TABLE = "harness_schema_object";

const LEDGER_DDL = `
CREATE TABLE IF NOT EXISTS ${LEDGER_TABLE} (
  id text PRIMARY KEY NOT NULL,
  ordinal integer NOT NULL UNIQUE,
  breaking integer NOT NULL,
  compatible_floor text,
  applied_at integer NOT NULL
);
CREATE TABLE IF NOT EXISTS ${SCHEMA_OBJECT_TABLE} (
  type text NOT NULL,
  name text NOT NULL,
  sql text NOT NULL,
  PRIMARY KEY (type, name)
);
`;

const MIGRATION_ID = /^\d{14}_[a-z0-9][a-z0-9_-]*$/;

export type StorageMigrationProgress =
  | { readonly kind: "backup-started"; readonly path: string; readonly totalBytes: number; /** Where the copy is written until it is complete (its size is the copy's progress). */ readonly temporaryPath: string }
  | { readonly kind: "backup-finished"; readonly path: string; readonly bytes: number }
  | { readonly kind: "migration-started"; readonly id: string; readonly index: number; readonly total: number; /** The database held data before (an upgrade, not a new database). */ readonly upgrade: boolean }
  | { readonly kind: "migrations-committed"; readonly ids: readonly string[] };

export interface ApplyMigrationsOptions {
  /** The database's client; inspection and the backup read through it. */
  readonly client: Client;
  readonly location: DatabaseLocation;
  /** The registry to bring the database to; injectable for tests. */
  readonly migrations: MigrationRegistry;
  /** Opens a throw-away single-connection client on the same database (files and servers). */
  readonly dedicated: () => Promise<Client>;
  readonly onProgress?: ((progress: StorageMigrationProgress) => void) | undefined;
  readonly now?: (() => number) | undefined;
}

export interface MigrationReport {
  /** Ids applied by this open, in order (empty when nothing was pending). */
  readonly applied: readonly string[];
  /** The backup written before migrating, if any. */
  readonly backupPath: string | null;
}

interface LedgerRow {
  readonly id: string;
  readonly ordinal: number;
  readonly breaking: boolean;
  readonly compatibleFloor: string | null;
}

interface SchemaObject {
  readonly type: string;
  readonly name: string;
  readonly sql: string;
}

interface DatabaseState {
  readonly userTables: readonly string[];
  readonly hasLedger: boolean;
  readonly ledger: readonly LedgerRow[];
  readonly recorded: readonly SchemaObject[];
  readonly objects: ReadonlyMap<string, SchemaObject>;
}

type Reader = { execute(stmt: InStatement): Promise<ResultSet> };

const key = (type: string, name: string): string => `${type}\u0000${name}`;

/** Throws `TypeError` when a registry is malformed (a build bug, not a database state). */
export function validateRegistry(migrations: MigrationRegistry): void {
  const seen = new Set<string>();
  let previous = "";
  for (const migration of migrations) {
    if (!MIGRATION_ID.test(migration.id)) {
      throw new TypeError(`Migration id ${JSON.stringify(migration.id)} is not <YYYYMMDDHHMMSS>_<name>`);
    }
    if (seen.has(migration.id)) throw new TypeError(`Migration ${migration.id} is registered twice`);
    if (migration.id.slice(0, 14) < previous.slice(0, 14)) {
      throw new TypeError(`Migration ${migration.id} is registered after the newer ${previous}`);
    }
    seen.add(migration.id);
    previous = migration.id;
  }
}

/**
 * Tables and schema objects that are never the harness's: SQLite's own (`sqlite_*`) and a Durable
 * Object's (`_cf_*`, e.g. `_cf_KV` once its key-value API stored something — names Cloudflare
 * reserves: SQL there cannot create them).
 */
const FOREIGN_NAMES = `name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name NOT LIKE '\\_cf\\_%' ESCAPE '\\'`;

/** Schema objects (tables, indexes, triggers, views) other than SQLite's, the platform's and the ledger's own. */
async function readSchemaObjects(reader: Reader): Promise<Map<string, SchemaObject>> {
  const result = await reader.execute(
    `SELECT type, name, sql FROM sqlite_master
      WHERE sql IS NOT NULL AND ${FOREIGN_NAMES}
        AND name NOT IN ('${LEDGER_TABLE}', '${SCHEMA_OBJECT_TABLE}')`,
  );
  const objects = new Map<string, SchemaObject>();
  for (const row of result.rows) {
    const object = { type: String(row["type"]), name: String(row["name"]), sql: String(row["sql"]) };
    objects.set(key(object.type, object.name), object);
  }
  return objects;
}

async function readState(reader: Reader): Promise<DatabaseState> {
  const tables = await reader.execute(
    `SELECT name FROM sqlite_master WHERE type = 'table' AND ${FOREIGN_NAMES}`,
  );
  const names = new Set(tables.rows.map((row) => String(row["name"])));
  const hasLedger = names.has(LEDGER_TABLE);
  const userTables = [...names].filter((name) => name !== LEDGER_TABLE && name !== SCHEMA_OBJECT_TABLE).sort();
  const objects = await readSchemaObjects(reader);
  if (!hasLedger) return { userTables, hasLedger, ledger: [], recorded: [], objects };

  const ledger = (
    await reader.execute(
      `SELECT id, ordinal, breaking, compatible_floor FROM ${LEDGER_TABLE} ORDER BY ordinal`,
    )
  ).rows.map(
    (row): LedgerRow => ({
      id: String(row["id"]),
      ordinal: Number(row["ordinal"]),
      breaking: Number(row["breaking"]) !== 0,
      compatibleFloor: row["compatible_floor"] === null ? null : String(row["compatible_floor"]),
    }),
  );
  const recorded = names.has(SCHEMA_OBJECT_TABLE)
    ? (await reader.execute(`SELECT type, name, sql FROM ${SCHEMA_OBJECT_TABLE} ORDER BY type, name`)).rows.map(
        (row): SchemaObject => ({ type: String(row["type"]), name: String(row["name"]), sql: String(row["sql"]) }),
      )
    : null;
  if (recorded === null) {
    throw new StorageSchemaDrifted(
      `The migration ledger is present but ${SCHEMA_OBJECT_TABLE} is missing`,
      [{ type: "table", name: SCHEMA_OBJECT_TABLE, reason: "missing" }],
    );
  }
  return { userTables, hasLedger, ledger, recorded, objects };
}

/** Decides what to apply, or throws the refusal that fits. Pure: reads only `state`. */
function plan(state: DatabaseState, migrations: MigrationRegistry): readonly Migration[] {
  if (!state.hasLedger) {
    if (state.userTables.length > 0) {
      throw new StorageResetRequired(
        `The database holds tables (${state.userTables.join(", ")}) but no migration ledger: it predates ` +
          `schema migrations. Move it aside and start again.`,
        state.userTables,
      );
    }
    return migrations;
  }

  const { ledger } = state;
  for (let index = 0; index < ledger.length; index++) {
    const row = ledger[index]!;
    const expected = migrations[index];
    if (row.ordinal !== index + 1 || (expected !== undefined && expected.id !== row.id)) {
      throw new StorageMigrationDiverged(
        `The migration ledger diverges from this build at ordinal ${index + 1}: ` +
          `the database applied ${row.id}, this build expects ${expected?.id ?? "nothing"}.`,
        index + 1,
        expected?.id ?? null,
        row.id,
      );
    }
  }

  if (ledger.length > migrations.length) {
    const unknown = ledger.slice(migrations.length).map((row) => row.id);
    const floor = ledger[ledger.length - 1]!.compatibleFloor;
    if (floor !== null && !migrations.some((migration) => migration.id === floor)) {
      throw new StorageNewerThanBinary(
        `The database was migrated by a newer build (${unknown.join(", ")}); its compatible floor ` +
          `${floor} is unknown to this build. Upgrade.`,
        unknown,
        floor,
      );
    }
  }

  const drift: SchemaDrift[] = [];
  for (const object of state.recorded) {
    const current = state.objects.get(key(object.type, object.name));
    if (current === undefined) drift.push({ type: object.type, name: object.name, reason: "missing" });
    else if (current.sql !== object.sql) drift.push({ type: object.type, name: object.name, reason: "redefined" });
  }
  if (drift.length > 0) {
    throw new StorageSchemaDrifted(
      `Schema objects recorded by migrations were changed outside a migration: ` +
        drift.map((item) => `${item.type} ${item.name} (${item.reason})`).join(", "),
      drift,
    );
  }

  return migrations.slice(ledger.length);
}

/** Reads the ledger and returns the migrations this build would apply (throws a refusal). */
export async function pendingMigrations(client: Client, migrations: MigrationRegistry): Promise<readonly Migration[]> {
  validateRegistry(migrations);
  return plan(await readState(client), migrations);
}

async function ensureWal(client: Client): Promise<void> {
  const mode = await client.execute("PRAGMA journal_mode");
  if (String(mode.rows[0]?.["journal_mode"]).toLowerCase() !== "wal") {
    await client.execute("PRAGMA journal_mode = WAL");
  }
}

async function fileSize(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch {
    return 0;
  }
}

/** What VACUUM INTO will write: the database's used pages (WAL content included), else its files' size. */
async function logicalSize(client: Client, databasePath: string): Promise<number> {
  try {
    const pages = Number((await client.execute("PRAGMA page_count")).rows[0]?.[0]);
    const free = Number((await client.execute("PRAGMA freelist_count")).rows[0]?.[0]);
    const size = Number((await client.execute("PRAGMA page_size")).rows[0]?.[0]);
    if (Number.isFinite(pages * size) && pages > 0) return (pages - (Number.isFinite(free) ? free : 0)) * size;
  } catch {
    // Fall back to the files.
  }
  return (await fileSize(databasePath)) + (await fileSize(`${databasePath}-wal`));
}

/** Copies the live database to `backupPath` (mode 0600) through SQLite, so WAL content is included. */
async function writeBackup(
  client: Client,
  databasePath: string,
  backupPath: string,
  onProgress: ApplyMigrationsOptions["onProgress"],
): Promise<void> {
  const temporary = `${backupPath}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`;
  onProgress?.({
    kind: "backup-started",
    path: backupPath,
    totalBytes: await logicalSize(client, databasePath),
    temporaryPath: temporary,
  });
  try {
    // Create the (empty) target owner-only first: SQLite keeps an existing file's mode.
    const created = await open(temporary, fsConstants.O_CREAT | fsConstants.O_EXCL | fsConstants.O_WRONLY, 0o600);
    await created.close();
    await chmod(temporary, 0o600);
    await client.execute({ sql: "VACUUM INTO ?", args: [temporary] });
    const written = await open(temporary, "r+");
    try {
      await written.sync();
    } finally {
      await written.close();
    }
    await rename(temporary, backupPath);
    await chmod(backupPath, 0o600);
    try {
      const directory = await open(dirname(backupPath), "r");
      try {
        await directory.sync();
      } finally {
        await directory.close();
      }
    } catch {
      // Directory fsync is best effort (not every filesystem allows it).
    }
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => undefined);
    throw error;
  }
  onProgress?.({ kind: "backup-finished", path: backupPath, bytes: await fileSize(backupPath) });
}

/** The newest breaking migration among `migrations[0..index]`, or null. */
function compatibleFloor(migrations: MigrationRegistry, index: number): string | null {
  for (let i = index; i >= 0; i--) if (migrations[i]!.breaking) return migrations[i]!.id;
  return null;
}

async function recordSchemaChanges(
  tx: MigrationTransaction,
  before: ReadonlyMap<string, SchemaObject>,
  after: ReadonlyMap<string, SchemaObject>,
): Promise<void> {
  for (const [objectKey, object] of after) {
    if (before.get(objectKey)?.sql === object.sql) continue;
    await tx.execute({
      sql: `INSERT INTO ${SCHEMA_OBJECT_TABLE} (type, name, sql) VALUES (?, ?, ?)
            ON CONFLICT (type, name) DO UPDATE SET sql = excluded.sql`,
      args: [object.type, object.name, object.sql],
    });
  }
  for (const [objectKey, object] of before) {
    if (after.has(objectKey)) continue;
    await tx.execute({
      sql: `DELETE FROM ${SCHEMA_OBJECT_TABLE} WHERE type = ? AND name = ?`,
      args: [object.type, object.name],
    });
  }
}

/**
 * Brings the database to `migrations`. Refusals (`StorageResetRequired`,
 * `StorageNewerThanBinary`, `StorageMigrationDiverged`, `StorageSchemaDrifted`) write nothing;
 * `StorageMigrationFailed` means the batch rolled back; `StorageBusy` means the write lock could
 * not be taken within the busy timeout.
 */
export async function applyMigrations(options: ApplyMigrationsOptions): Promise<MigrationReport> {
  const { client, location, migrations, onProgress } = options;
  const now = options.now ?? Date.now;
  validateRegistry(migrations);
  try {
    const state = await readState(client);
    const pending = plan(state, migrations);
    if (location.kind === "file") await ensureWal(client);
    if (pending.length === 0) return { applied: [], backupPath: null };

    let backupPath: string | null = null;
    if (location.kind === "file" && state.ledger.length > 0) {
      const firstId = pending[0]!.id;
      backupPath = `${location.path}.pre-${firstId}.bak`;
      try {
        await writeBackup(client, location.path, backupPath, onProgress);
      } catch (error) {
        throw new StorageMigrationFailed(
          `Could not write the pre-migration backup ${backupPath}; nothing was migrated: ${
            error instanceof Error ? error.message : String(error)
          }`,
          firstId,
          { cause: error },
        );
      }
    }

    const applied = await migrateOnOneConnection(options, now);
    if (applied.length > 0) onProgress?.({ kind: "migrations-committed", ids: applied });
    return { applied, backupPath };
  } catch (error) {
    throw toStorageError(error);
  }
}

export interface HostTransactionMigrationOptions {
  /** Reads and writes run here (inside `transaction` for the writes). */
  readonly client: MigrationTransaction;
  readonly migrations: MigrationRegistry;
  /** The host's own transaction (a Durable Object's `storage.transaction`): commits, or rolls back when `fn` throws. */
  readonly transaction: <T>(fn: () => Promise<T>) => Promise<T>;
  readonly onProgress?: ((progress: StorageMigrationProgress) => void) | undefined;
  readonly now?: (() => number) | undefined;
}

/**
 * Brings a database whose host owns transactions to `migrations`: a Durable Object's SQLite,
 * where SQL may not BEGIN or SAVEPOINT and foreign keys cannot be switched off. The same ledger,
 * refusals and schema-object records as `applyMigrations`; no backup (the platform keeps
 * point-in-time recovery); foreign keys are deferred to the commit (`PRAGMA defer_foreign_keys`),
 * so a table rebuild's copy never trips them — but a DROP still runs its cascades, which a
 * rebuild migration of a table other rows reference must keep in mind.
 */
export async function applyMigrationsInHostTransaction(options: HostTransactionMigrationOptions): Promise<MigrationReport> {
  const now = options.now ?? Date.now;
  validateRegistry(options.migrations);
  try {
    const pending = plan(await readState(options.client), options.migrations);
    if (pending.length === 0) return { applied: [], backupPath: null };
    const applied = await options.transaction(async () => {
      await options.client.execute("PRAGMA defer_foreign_keys = ON");
      return applyPending(options.client, options.migrations, options, now);
    });
    if (applied.length > 0) options.onProgress?.({ kind: "migrations-committed", ids: applied });
    return { applied, backupPath: null };
  } catch (error) {
    throw toStorageError(error);
  }
}

/**
 * A file or remote database migrates on a dedicated single-connection client (closed afterwards,
 * so the connection whose foreign keys were switched off never serves anything else). `:memory:`
 * exists only on the main client's single connection, so it migrates there and restores the
 * pragma afterwards.
 */
async function migrateOnOneConnection(options: ApplyMigrationsOptions, now: () => number): Promise<string[]> {
  const { location, migrations } = options;
  const dedicated = location.kind === "memory" ? null : await options.dedicated();
  const client = dedicated ?? options.client;
  try {
    if (location.kind !== "remote") {
      // Single-connection client: the pragma and the transaction below share one connection.
      await client.execute("PRAGMA foreign_keys = OFF");
    }
    const tx = await client.transaction("write");
    try {
      if (location.kind === "remote") {
        // A server stream is one connection, but the transaction API opens it with BEGIN; the
        // pragma is a no-op inside a transaction, so step out, switch it, and take the lock again.
        await tx.executeMultiple("COMMIT; PRAGMA foreign_keys = OFF; BEGIN IMMEDIATE;");
      }
      const applied = await applyPending(tx, migrations, options, now);
      if (applied.length === 0) {
        await tx.rollback();
        return [];
      }
      await tx.commit();
      return applied;
    } finally {
      tx.close();
    }
  } finally {
    if (dedicated !== null) dedicated.close();
    else await client.execute("PRAGMA foreign_keys = ON");
  }
}

async function applyPending(
  tx: MigrationTransaction,
  migrations: MigrationRegistry,
  options: Pick<ApplyMigrationsOptions, "onProgress">,
  now: () => number,
): Promise<string[]> {
  // Another opener may have migrated between our read and our lock: decide again under the lock.
  const state = await readState(tx);
  const pending = plan(state, migrations);
  if (pending.length === 0) return [];
  const upgrade = state.ledger.length > 0;
  await tx.executeMultiple(LEDGER_DDL);
  const firstOrdinal = migrations.length - pending.length + 1;
  const applied: string[] = [];
  for (const [offset, migration] of pending.entries()) {
    const ordinal = firstOrdinal + offset;
    options.onProgress?.({ kind: "migration-started", id: migration.id, index: offset, total: pending.length, upgrade });
    try {
      const before = await readSchemaObjects(tx);
      await migration.up(tx);
      await recordSchemaChanges(tx, before, await readSchemaObjects(tx));
      await tx.execute({
        sql: `INSERT INTO ${LEDGER_TABLE} (id, ordinal, breaking, compatible_floor, applied_at) VALUES (?, ?, ?, ?, ?)`,
        args: [migration.id, ordinal, migration.breaking ? 1 : 0, compatibleFloor(migrations, ordinal - 1), now()],
      });
    } catch (error) {
      if (isStorageError(error) || toStorageError(error) !== error) throw error;
      throw new StorageMigrationFailed(
        `Migration ${migration.id} failed; nothing was migrated: ${error instanceof Error ? error.message : String(error)}`,
        migration.id,
        { cause: error },
      );
    }
    applied.push(migration.id);
  }
  const violations = await tx.execute("PRAGMA foreign_key_check");
  if (violations.rows.length > 0) {
    const tables = [...new Set(violations.rows.map((row) => String(row["table"])))];
    throw new StorageMigrationFailed(
      `Migrations left foreign key violations in ${tables.join(", ")}; nothing was migrated.`,
      applied[applied.length - 1] ?? null,
    );
  }
  return applied;
}
