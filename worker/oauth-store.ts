// The MCP OAuth credential stores of a server object, in the object's own SQLite, holding the same
// entry the Node host keeps in auth.json under `mcp:<reference>` (services/mcp/oauth-store.ts):
// tokens, the registered client and a pending authorization's PKCE verifier.
//
// - Server-wide (`worker_mcp_oauth_credential`, one row per reference): the credentials of the
//   HARNESS_MCP servers, shared by every Session of the server.
// - Per Session (`worker_mcp_session_oauth_credential`, one row per Session and reference): the
//   credentials of the servers a Session's plugin overlay declares. A client declares those
//   servers, so their credentials never mix with the server's namespace nor with another
//   Session's; the rows go when the Session is deleted (`forgetSessionCredentials`).
//
// The tables are Worker-only side migrations under their own ledger (worker/side-migrations.ts),
// applied after the server migrations at wake. The first one keeps `IF NOT EXISTS`: objects made
// before the ledger existed already have the server-wide table, and adopting it is what it
// records. Nothing stored here leaves the object: statuses, events and logs carry none of it. The
// object runs one request's synchronous SQL at a time, so each save is atomic; concurrent
// refreshes are deduplicated by the lifecycle (McpOAuth) above it.
import { credentialOf, type McpCredentialStorage, type StoredCredential } from "../services/mcp/oauth-store.js";
import type { FilesStorageInput } from "./files/index.js";
import { applySideMigrations, type SideMigration } from "./side-migrations.js";

export const OAUTH_TABLE = "worker_mcp_oauth_credential";
export const SESSION_OAUTH_TABLE = "worker_mcp_session_oauth_credential";
export const OAUTH_LEDGER_TABLE = "worker_mcp_oauth_migration";

export const oauthMigrations: readonly SideMigration[] = [
  { id: "0001_server_credentials", statements: [`CREATE TABLE IF NOT EXISTS ${OAUTH_TABLE} (reference TEXT PRIMARY KEY NOT NULL, entry TEXT NOT NULL, updated_at INTEGER NOT NULL)`] },
  {
    id: "0002_session_credentials",
    statements: [`CREATE TABLE ${SESSION_OAUTH_TABLE} (session_id TEXT NOT NULL, reference TEXT NOT NULL, entry TEXT NOT NULL, updated_at INTEGER NOT NULL, PRIMARY KEY (session_id, reference))`],
  },
];

/** Brings the credential tables up to date (at wake, inside the object's blockConcurrencyWhile); returns the ids applied now. */
export function migrateOAuthStore(storage: FilesStorageInput): string[] {
  return applySideMigrations(storage, OAUTH_LEDGER_TABLE, "The MCP OAuth credential store", oauthMigrations);
}

/** One credential namespace: the server's (no `sessionId`) or one Session's. */
export class DurableObjectCredentialStore implements McpCredentialStorage {
  readonly #storage: FilesStorageInput;
  readonly #sessionId: string | undefined;

  /** The tables must be migrated already (`migrateOAuthStore`). */
  constructor(storage: FilesStorageInput, scope: { readonly sessionId?: string } = {}) {
    this.#storage = storage;
    this.#sessionId = scope.sessionId;
  }

  async load(reference: string, endpoint?: string): Promise<StoredCredential | undefined> {
    const row = (
      this.#sessionId === undefined
        ? this.#storage.sql.exec(`SELECT entry FROM ${OAUTH_TABLE} WHERE reference = ?`, reference)
        : this.#storage.sql.exec(`SELECT entry FROM ${SESSION_OAUTH_TABLE} WHERE session_id = ? AND reference = ?`, this.#sessionId, reference)
    ).toArray()[0];
    if (row === undefined) return undefined;
    return credentialOf(parse(String(row["entry"])), endpoint);
  }

  async save(reference: string, entry: StoredCredential): Promise<void> {
    if (this.#sessionId === undefined) {
      this.#storage.sql.exec(
        `INSERT INTO ${OAUTH_TABLE} (reference, entry, updated_at) VALUES (?, ?, ?) ON CONFLICT (reference) DO UPDATE SET entry = excluded.entry, updated_at = excluded.updated_at`,
        reference,
        JSON.stringify(entry),
        Date.now(),
      );
      return;
    }
    this.#storage.sql.exec(
      `INSERT INTO ${SESSION_OAUTH_TABLE} (session_id, reference, entry, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (session_id, reference) DO UPDATE SET entry = excluded.entry, updated_at = excluded.updated_at`,
      this.#sessionId,
      reference,
      JSON.stringify(entry),
      Date.now(),
    );
  }

  /** The reference whose pending authorization carries `state` in this namespace (the callback's `state` selects it), if any. */
  pendingReference(state: string): string | undefined {
    const rows = this.#sessionId === undefined ? this.#storage.sql.exec(`SELECT reference, entry FROM ${OAUTH_TABLE}`) : this.#storage.sql.exec(`SELECT reference, entry FROM ${SESSION_OAUTH_TABLE} WHERE session_id = ?`, this.#sessionId);
    for (const row of rows.toArray()) {
      const entry = credentialOf(parse(String(row["entry"])));
      if (entry?.pending !== undefined && entry.pending.state === state) return String(row["reference"]);
    }
    return undefined;
  }
}

/** The Session and reference whose pending Session-scoped authorization carries `state`, if any. */
export function pendingSessionCredential(storage: FilesStorageInput, state: string): { readonly sessionId: string; readonly reference: string } | undefined {
  for (const row of storage.sql.exec(`SELECT session_id, reference, entry FROM ${SESSION_OAUTH_TABLE}`).toArray()) {
    const entry = credentialOf(parse(String(row["entry"])));
    if (entry?.pending !== undefined && entry.pending.state === state) return { sessionId: String(row["session_id"]), reference: String(row["reference"]) };
  }
  return undefined;
}

/** Deletes every credential of the Session (it was deleted). */
export function forgetSessionCredentials(storage: FilesStorageInput, sessionId: string): void {
  storage.sql.exec(`DELETE FROM ${SESSION_OAUTH_TABLE} WHERE session_id = ?`, sessionId);
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
