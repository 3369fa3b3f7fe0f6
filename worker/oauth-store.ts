// The server-wide MCP OAuth credential store of a server object: one row per credential
// reference in the object's own SQLite (`worker_mcp_oauth_credential`, created after the server
// migrations, like the /workspace store's tables), holding the same entry the Node host keeps in
// auth.json under `mcp:<reference>` (services/mcp/oauth-store.ts): tokens, the registered client
// and a pending authorization's PKCE verifier. It never leaves the object: statuses, events and
// logs carry nothing from it. The object runs one request's synchronous SQL at a time, so each
// save is atomic; concurrent refreshes are deduplicated by the lifecycle (McpOAuth) above it.
import { credentialOf, type McpCredentialStorage, type StoredCredential } from "../services/mcp/oauth-store.js";
import type { FilesStorageInput } from "./files/index.js";

export const OAUTH_TABLE = "worker_mcp_oauth_credential";

export class DurableObjectCredentialStore implements McpCredentialStorage {
  readonly #storage: FilesStorageInput;

  /** Creates the table when missing (at wake, inside the object's blockConcurrencyWhile). */
  constructor(storage: FilesStorageInput) {
    this.#storage = storage;
    storage.sql.exec(`CREATE TABLE IF NOT EXISTS ${OAUTH_TABLE} (reference TEXT PRIMARY KEY NOT NULL, entry TEXT NOT NULL, updated_at INTEGER NOT NULL)`);
  }

  async load(reference: string, endpoint?: string): Promise<StoredCredential | undefined> {
    const row = this.#storage.sql.exec(`SELECT entry FROM ${OAUTH_TABLE} WHERE reference = ?`, reference).toArray()[0];
    if (row === undefined) return undefined;
    return credentialOf(parse(String(row["entry"])), endpoint);
  }

  async save(reference: string, entry: StoredCredential): Promise<void> {
    this.#storage.sql.exec(
      `INSERT INTO ${OAUTH_TABLE} (reference, entry, updated_at) VALUES (?, ?, ?) ON CONFLICT (reference) DO UPDATE SET entry = excluded.entry, updated_at = excluded.updated_at`,
      reference,
      JSON.stringify(entry),
      Date.now(),
    );
  }

  /** The reference whose pending authorization carries `state` (the callback's `state` selects it), if any. */
  pendingReference(state: string): string | undefined {
    for (const row of this.#storage.sql.exec(`SELECT reference, entry FROM ${OAUTH_TABLE}`).toArray()) {
      const entry = credentialOf(parse(String(row["entry"])));
      if (entry?.pending !== undefined && entry.pending.state === state) return String(row["reference"]);
    }
    return undefined;
  }
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
