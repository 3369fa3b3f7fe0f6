// Worker-only tables in a server object's SQLite (the /workspace store, the plugin bundle cache),
// each set created by its own migrations under its own ledger, apart from the server migrations'
// `harness_migration`: they are no part of the Node schema, and the server runner tolerates tables
// it did not record (it checks only the objects it recorded). They run after the server migrations:
// on a database without the server ledger they refuse, because the server runner would then find
// unrecorded tables and ask for a reset. Each wake applies what is missing in one synchronous
// transaction; a ledger naming a migration this build does not know is refused (the database is
// newer than this build).
import type { DurableObjectSqlStorage } from "./storage.js";

export interface SideMigration {
  readonly id: string;
  readonly statements: readonly string[];
}

/** What side migrations need of `ctx.storage` (a SQLite-backed Durable Object's). */
export interface SideMigrationStorage {
  readonly sql: DurableObjectSqlStorage;
  transactionSync<T>(fn: () => T): T;
}

/**
 * Brings one set of Worker-only tables up to date under `ledger` (`what` names the set in refusals);
 * returns the ids applied now. Throws when it cannot.
 */
export function applySideMigrations(storage: SideMigrationStorage, ledger: string, what: string, migrations: readonly SideMigration[]): string[] {
  return storage.transactionSync(() => {
    const tables = new Set(storage.sql.exec("SELECT name FROM sqlite_master WHERE type = 'table'").toArray().map((row) => String(row["name"])));
    if (!tables.has("harness_migration")) throw new Error(`${what} migrates after the server migrations: this database has no harness_migration ledger yet`);
    if (!tables.has(ledger)) storage.sql.exec(`CREATE TABLE ${ledger} (id TEXT PRIMARY KEY NOT NULL, ordinal INTEGER NOT NULL, applied_at INTEGER NOT NULL)`);
    const recorded = storage.sql.exec(`SELECT id FROM ${ledger} ORDER BY ordinal`).toArray().map((row) => String(row["id"]));
    recorded.forEach((id, index) => {
      if (migrations[index]?.id !== id) throw new Error(`${what}'s ledger diverges from this build at ${index + 1}: the database applied ${id}`);
    });
    const applied: string[] = [];
    for (const [index, migration] of migrations.entries()) {
      if (index < recorded.length) continue;
      for (const statement of migration.statements) storage.sql.exec(statement);
      storage.sql.exec(`INSERT INTO ${ledger} (id, ordinal, applied_at) VALUES (?, ?, ?)`, migration.id, index + 1, Date.now());
      applied.push(migration.id);
    }
    return applied;
  });
}
