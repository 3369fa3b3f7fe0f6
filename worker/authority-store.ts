// The provider authority's connection store: one table in the authority object's own SQLite
// (`ctx.storage.sql`), one row per provider (a connect replaces the previous connection, as
// auth.json does on Node), plus the credential revision the catalog's `hostRevision` folds in.
// Every write is one `transactionSync`, and a Durable Object runs one at a time, so concurrent
// connection writes are serialized. The credential column is JSON (`{"type":"api","key":…}`);
// a row whose credential cannot be read is reported as such (it blocks the environment
// fallback), never skipped. Nothing here logs.
import type { DurableObjectSqlStorage } from "./storage.js";

export interface AuthoritySqlStorage {
  readonly sql: DurableObjectSqlStorage;
  transactionSync<T>(fn: () => T): T;
}

/** A stored connection's metadata (safe) and its credential, or `undefined` when unreadable. */
export interface StoredConnection {
  readonly providerId: string;
  readonly connectionId: string;
  readonly label: string;
  readonly createdAt: number;
  readonly updatedAt: number;
  /** The API key; undefined when the stored credential cannot be read. */
  readonly key: string | undefined;
}

const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS provider_connection (
     provider_id TEXT PRIMARY KEY NOT NULL,
     connection_id TEXT NOT NULL,
     label TEXT NOT NULL,
     credential TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     updated_at INTEGER NOT NULL
   ) STRICT`,
  `CREATE TABLE IF NOT EXISTS authority_state (name TEXT PRIMARY KEY NOT NULL, value INTEGER NOT NULL) STRICT`,
];

const REVISION = "credential_revision";

function keyOf(credential: unknown): string | undefined {
  if (typeof credential !== "string") return undefined;
  try {
    const parsed = JSON.parse(credential) as unknown;
    if (typeof parsed !== "object" || parsed === null) return undefined;
    const { type, key } = parsed as { type?: unknown; key?: unknown };
    return type === "api" && typeof key === "string" && key !== "" ? key : undefined;
  } catch {
    return undefined;
  }
}

export class ConnectionStore {
  constructor(private readonly storage: AuthoritySqlStorage) {
    storage.transactionSync(() => {
      for (const statement of SCHEMA) storage.sql.exec(statement);
    });
  }

  list(): StoredConnection[] {
    return this.storage.sql
      .exec("SELECT provider_id, connection_id, label, credential, created_at, updated_at FROM provider_connection ORDER BY provider_id")
      .toArray()
      .map((row) => ({
        providerId: String(row["provider_id"]),
        connectionId: String(row["connection_id"]),
        label: String(row["label"]),
        createdAt: Number(row["created_at"]),
        updatedAt: Number(row["updated_at"]),
        key: keyOf(row["credential"]),
      }));
  }

  /** The credential revision: moves with every credential change, never with a label. */
  revision(): number {
    const row = this.storage.sql.exec("SELECT value FROM authority_state WHERE name = ?", REVISION).toArray()[0];
    return row === undefined ? 0 : Number(row["value"]);
  }

  #bump(): void {
    this.storage.sql.exec(
      "INSERT INTO authority_state (name, value) VALUES (?, 1) ON CONFLICT (name) DO UPDATE SET value = value + 1",
      REVISION,
    );
  }

  /** Stores `key` as the provider's connection (replacing any) and publishes a new credential revision. */
  connect(providerId: string, connectionId: string, key: string, label: string, now: number): StoredConnection {
    return this.storage.transactionSync(() => {
      this.storage.sql.exec(
        `INSERT INTO provider_connection (provider_id, connection_id, label, credential, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (provider_id) DO UPDATE SET connection_id = excluded.connection_id, label = excluded.label,
           credential = excluded.credential, created_at = excluded.created_at, updated_at = excluded.updated_at`,
        providerId,
        connectionId,
        label,
        JSON.stringify({ type: "api", key }),
        now,
        now,
      );
      this.#bump();
      return { providerId, connectionId, label, createdAt: now, updatedAt: now, key };
    });
  }

  /** Changes a connection's label only: no new credential revision. Undefined when it is not stored. */
  relabel(providerId: string, connectionId: string, label: string, now: number): StoredConnection | undefined {
    return this.storage.transactionSync(() => {
      this.storage.sql.exec("UPDATE provider_connection SET label = ?, updated_at = ? WHERE provider_id = ? AND connection_id = ?", label, now, providerId, connectionId);
      return this.list().find((row) => row.providerId === providerId && row.connectionId === connectionId);
    });
  }

  /** Deletes the connection (a credential change: a new revision). False when it is not stored. */
  delete(providerId: string, connectionId: string): boolean {
    return this.storage.transactionSync(() => {
      const found = this.storage.sql.exec("SELECT 1 AS one FROM provider_connection WHERE provider_id = ? AND connection_id = ?", providerId, connectionId).toArray().length > 0;
      if (!found) return false;
      this.storage.sql.exec("DELETE FROM provider_connection WHERE provider_id = ? AND connection_id = ?", providerId, connectionId);
      this.#bump();
      return true;
    });
  }
}
