import type { Transaction } from "@libsql/client";

/**
 * What a migration's `up` receives: the single libSQL connection the runner holds, inside its
 * `BEGIN IMMEDIATE` transaction with foreign keys off. Run SQL, read rows, re-encode JSON.
 */
export type MigrationTransaction = Pick<Transaction, "execute" | "batch" | "executeMultiple">;

export interface Migration {
  /** `<YYYYMMDDHHMMSS>_<name>`, matching the module file `<YYYYMMDDHHMMSS>-<name>.ts`. */
  readonly id: string;
  /** True when a build without this migration could no longer safely read or write the database. */
  readonly breaking: boolean;
  up(tx: MigrationTransaction): Promise<void>;
}

/** Migrations in application order. Append only: never edit, remove or reorder a shipped one. */
export type MigrationRegistry = readonly Migration[];
