// The `/workspace` store's own tables in the server object's SQLite, created by its own migrations
// under their own ledger (`worker_files_migration`), after the server migrations
// (`openDurableObjectStorage`), by the rules of worker/side-migrations.ts.
import { applySideMigrations } from "../side-migrations.js";
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
  return applySideMigrations(storage, FILES_LEDGER_TABLE, "The /workspace store", filesMigrations);
}
