// The server object's cache of `Bundle` plugin bytes, by SHA-256 digest, in its own SQLite
// (`worker_plugin_bundle`, `worker_plugin_chunk`), created by its own migration under its own
// ledger (`worker_plugins_migration`, run after the server migrations, as worker/files/ does).
// Recovery after eviction reloads the exact activated bytes from here without the URL; an entry
// no recorded desired or active revision references is freed (`prune`). Bounded: one bundle is at
// most MAX_BUNDLE_BYTES, the whole cache at most MAX_CACHE_BYTES (a bundle past it is refused,
// nothing stored). Bytes are kept in chunks under the platform's 2 MB row limit.
import { applySideMigrations } from "./side-migrations.js";
import type { DurableObjectSqlStorage } from "./storage.js";

export const PLUGINS_LEDGER_TABLE = "worker_plugins_migration";
/** The largest bundle fetched or cached, in bytes. */
export const MAX_BUNDLE_BYTES = 8 * 1024 * 1024;
/** The most the cache holds, in bytes, across every referenced bundle. */
export const MAX_CACHE_BYTES = 64 * 1024 * 1024;
const CHUNK_BYTES = 512 * 1024;

const migrations: readonly { readonly id: string; readonly statements: readonly string[] }[] = [
  {
    id: "0001_plugin_bundles",
    statements: [
      `CREATE TABLE worker_plugin_bundle (
        digest TEXT PRIMARY KEY NOT NULL,
        size INTEGER NOT NULL,
        created_at INTEGER NOT NULL
      ) WITHOUT ROWID`,
      `CREATE TABLE worker_plugin_chunk (
        digest TEXT NOT NULL,
        seq INTEGER NOT NULL,
        bytes BLOB NOT NULL,
        PRIMARY KEY (digest, seq)
      ) WITHOUT ROWID`,
    ],
  },
];

/** What the cache needs of `ctx.storage` (a SQLite-backed Durable Object's). */
export interface PluginCacheStorageInput {
  readonly sql: DurableObjectSqlStorage;
  transactionSync<T>(fn: () => T): T;
}

/** Brings the cache's tables up to date; returns the ids applied now. Throws when it cannot. */
export function migratePluginCache(storage: PluginCacheStorageInput): string[] {
  return applySideMigrations(storage, PLUGINS_LEDGER_TABLE, "The plugin bundle cache", migrations);
}

/** Why the cache refused to store a bundle. */
export class PluginCacheFull extends Error {
  readonly _tag = "PluginCacheFull" as const;
}

export class PluginBundleCache {
  constructor(
    private readonly storage: PluginCacheStorageInput,
    private readonly now: () => number = Date.now,
  ) {
    migratePluginCache(storage);
  }

  has(digest: string): boolean {
    return this.storage.sql.exec("SELECT 1 AS one FROM worker_plugin_bundle WHERE digest = ?", digest).toArray().length > 0;
  }

  /** The cached bytes of `digest`, or undefined. */
  get(digest: string): Uint8Array | undefined {
    const entry = this.storage.sql.exec("SELECT size FROM worker_plugin_bundle WHERE digest = ?", digest).toArray()[0];
    if (entry === undefined) return undefined;
    const bytes = new Uint8Array(Number(entry["size"]));
    let offset = 0;
    for (const row of this.storage.sql.exec("SELECT bytes FROM worker_plugin_chunk WHERE digest = ? ORDER BY seq", digest).toArray()) {
      const chunk = new Uint8Array(row["bytes"] as ArrayBuffer);
      bytes.set(chunk, offset);
      offset += chunk.byteLength;
    }
    return offset === bytes.byteLength ? bytes : undefined;
  }

  /** Stores `bytes` under `digest` (the caller verified it); a no-op when present. Throws {@link PluginCacheFull} past the bounds. */
  put(digest: string, bytes: Uint8Array): void {
    if (bytes.byteLength > MAX_BUNDLE_BYTES) throw new PluginCacheFull(`The bundle is larger than ${MAX_BUNDLE_BYTES} bytes.`);
    this.storage.transactionSync(() => {
      if (this.has(digest)) return;
      const used = Number(this.storage.sql.exec("SELECT COALESCE(SUM(size), 0) AS used FROM worker_plugin_bundle").toArray()[0]?.["used"] ?? 0);
      if (used + bytes.byteLength > MAX_CACHE_BYTES) throw new PluginCacheFull(`The plugin bundle cache is full (${MAX_CACHE_BYTES} bytes): remove a Session plugin first.`);
      this.storage.sql.exec("INSERT INTO worker_plugin_bundle (digest, size, created_at) VALUES (?, ?, ?)", digest, bytes.byteLength, this.now());
      for (let offset = 0, seq = 0; offset < bytes.byteLength || seq === 0; offset += CHUNK_BYTES, seq += 1) {
        const chunk = bytes.slice(offset, offset + CHUNK_BYTES);
        this.storage.sql.exec("INSERT INTO worker_plugin_chunk (digest, seq, bytes) VALUES (?, ?, ?)", digest, seq, chunk.buffer);
      }
    });
  }

  /** Frees every entry whose digest is not in `keep`; returns the freed digests. */
  prune(keep: ReadonlySet<string>): string[] {
    return this.storage.transactionSync(() => {
      const freed = this.storage.sql
        .exec("SELECT digest FROM worker_plugin_bundle")
        .toArray()
        .map((row) => String(row["digest"]))
        .filter((digest) => !keep.has(digest));
      for (const digest of freed) {
        this.storage.sql.exec("DELETE FROM worker_plugin_chunk WHERE digest = ?", digest);
        this.storage.sql.exec("DELETE FROM worker_plugin_bundle WHERE digest = ?", digest);
      }
      return freed;
    });
  }

  /** The cached digests (for diagnostics and tests). */
  digests(): string[] {
    return this.storage.sql.exec("SELECT digest FROM worker_plugin_bundle ORDER BY digest").toArray().map((row) => String(row["digest"]));
  }
}
