// The `/workspace` store's own tables in the server object's SQLite, created by its own migrations
// under their own ledger (`worker_files_migration`), apart from the server migrations'
// `harness_migration`: the Worker-only tables are no part of the Node schema, and the server
// runner tolerates tables it did not record (it checks only the objects it recorded). Run them
// after the server migrations (`openDurableObjectStorage`): on a database without the server
// ledger they refuse, because the server runner would then find unrecorded tables and ask for a
// reset. Each wake applies what is missing in one synchronous transaction; a ledger naming a
// migration this build does not know is refused (the database is newer than this build).
import type { DurableObjectSqlStorage } from "../storage.js";

export const FILES_LEDGER_TABLE = "worker_files_migration";

export interface FilesMigration {
  readonly id: string;
  readonly statements: readonly string[];
}

/** In order; append only (an applied migration is never edited). */
export const filesMigrations: readonly FilesMigration[] = [
  {
    id: "0001_workspace_entries",
    statements: [
      // One row per file or directory; `parent` is the directory's path (`/` for the root).
      `CREATE TABLE workspace_entry (
        path TEXT PRIMARY KEY NOT NULL,
        parent TEXT NOT NULL,
        name TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('file', 'directory')),
        size INTEGER NOT NULL DEFAULT 0,
        updated_at INTEGER NOT NULL
      ) WITHOUT ROWID`,
      "CREATE INDEX workspace_entry_parent_idx ON workspace_entry (parent, name)",
      // A file's bytes in order, in chunks under the platform's row size limit (2 MB).
      `CREATE TABLE workspace_chunk (
        path TEXT NOT NULL,
        seq INTEGER NOT NULL,
        bytes BLOB NOT NULL,
        PRIMARY KEY (path, seq)
      ) WITHOUT ROWID`,
      "INSERT INTO workspace_entry (path, parent, name, kind, size, updated_at) VALUES ('/workspace', '/', 'workspace', 'directory', 0, 0)",
    ],
  },
];

/** What the store needs of `ctx.storage` (a SQLite-backed Durable Object's). */
export interface FilesStorageInput {
  readonly sql: DurableObjectSqlStorage;
  transactionSync<T>(fn: () => T): T;
}

/** Brings the store's tables up to date; returns the ids applied now. Throws when it cannot. */
export function migrateWorkspaceFiles(storage: FilesStorageInput): string[] {
  return storage.transactionSync(() => {
    const tables = new Set(storage.sql.exec("SELECT name FROM sqlite_master WHERE type = 'table'").toArray().map((row) => String(row["name"])));
    if (!tables.has("harness_migration")) throw new Error("The /workspace store migrates after the server migrations: this database has no harness_migration ledger yet");
    if (!tables.has(FILES_LEDGER_TABLE)) storage.sql.exec(`CREATE TABLE ${FILES_LEDGER_TABLE} (id TEXT PRIMARY KEY NOT NULL, ordinal INTEGER NOT NULL, applied_at INTEGER NOT NULL)`);
    const ledger = storage.sql.exec(`SELECT id FROM ${FILES_LEDGER_TABLE} ORDER BY ordinal`).toArray().map((row) => String(row["id"]));
    ledger.forEach((id, index) => {
      if (filesMigrations[index]?.id !== id) throw new Error(`The /workspace store's ledger diverges from this build at ${index + 1}: the database applied ${id}`);
    });
    const applied: string[] = [];
    for (const [index, migration] of filesMigrations.entries()) {
      if (index < ledger.length) continue;
      for (const statement of migration.statements) storage.sql.exec(statement);
      storage.sql.exec(`INSERT INTO ${FILES_LEDGER_TABLE} (id, ordinal, applied_at) VALUES (?, ?, ?)`, migration.id, index + 1, Date.now());
      applied.push(migration.id);
    }
    return applied;
  });
}
