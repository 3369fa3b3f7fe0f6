// The server object's cache of `Bundle` plugin bytes, by SHA-256 digest, in its own SQLite
// (`worker_plugin_bundle`, `worker_plugin_chunk`), created by its own migrations under its own
// ledger (`worker_plugins_migration`, run after the server migrations, as worker/files/ does).
// Recovery after eviction reloads the exact activated bytes from here without the URL; an entry
// no recorded desired or active revision (nor the server plugin list) references is freed
// (`prune`); a server list's bytes are held (`hold`) from their download until the list is recorded,
// so a Session's plugin change pruning meanwhile keeps them. Bytes are kept in chunks under the
// platform's 2 MB row limit.
//
// Bounds, fair between Sessions (one caller's Sessions must not deny or evict another's):
// - one bundle is at most MAX_BUNDLE_BYTES (refused, nothing stored);
// - each entry has an owner: the Session whose add stored it, or the server plugin list. A
//   Session's own entries are at most SESSION_QUOTA_BYTES (its active bundle and the one it adds):
//   before charging, the Session's own entries nothing else references are freed at once (so
//   pruning deferred by other Sessions' adds in flight never piles up its stale bytes), and past
//   the quota its add is refused with `PluginCacheQuotaExceeded` (503 `storage_full`), nothing
//   stored. Bytes it brought that other Sessions still use stay its own;
// - the Sessions' entries together are at most SESSION_POOL_BYTES. A bundle that does not fit is
//   not refused and evicts nothing: it is left uncached (`put` answers "uncached"), and a later
//   load fetches it again and checks its digest, as for a lost entry;
// - the server plugin list's entries are the embedder's (trusted) and count against neither.
import { applySideMigrations } from "./side-migrations.js";
import type { DurableObjectSqlStorage } from "./storage.js";

export const PLUGINS_LEDGER_TABLE = "worker_plugins_migration";
/** The largest bundle fetched or cached, in bytes. */
export const MAX_BUNDLE_BYTES = 8 * 1024 * 1024;
/** The most the Sessions' entries hold together, in bytes. */
export const SESSION_POOL_BYTES = 64 * 1024 * 1024;
/** The most one Session's own entries hold, in bytes: its active bundle and the one it adds. */
export const SESSION_QUOTA_BYTES = 2 * MAX_BUNDLE_BYTES;
const CHUNK_BYTES = 512 * 1024;

/** The owner of the server plugin list's entries. */
export const SERVER_OWNER = "server";
/** The owner of a Session's entries. */
export const sessionOwner = (sessionId: string): string => `session:${sessionId}`;

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
  {
    // Entries stored before owners existed have none ('') and count in the Sessions' pool only.
    id: "0002_bundle_owner_server_plugins",
    statements: [
      `ALTER TABLE worker_plugin_bundle ADD COLUMN owner TEXT NOT NULL DEFAULT ''`,
      `CREATE TABLE worker_server_plugin (
        position INTEGER PRIMARY KEY NOT NULL,
        entry TEXT NOT NULL,
        digest TEXT
      )`,
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

/** Why the cache refused to store a bundle (too large). */
export class PluginCacheFull extends Error {
  readonly _tag: string = "PluginCacheFull";
}

/** A Session's own entries would pass its quota: its add is refused, nothing stored. */
export class PluginCacheQuotaExceeded extends PluginCacheFull {
  override readonly _tag = "PluginCacheQuotaExceeded";
  override readonly name = "PluginCacheQuotaExceeded";
}

export interface PluginCacheLimits {
  readonly bundleBytes: number;
  readonly sessionPoolBytes: number;
  readonly sessionQuotaBytes: number;
}

export const DEFAULT_CACHE_LIMITS: PluginCacheLimits = { bundleBytes: MAX_BUNDLE_BYTES, sessionPoolBytes: SESSION_POOL_BYTES, sessionQuotaBytes: SESSION_QUOTA_BYTES };

export interface PutOptions {
  /** `sessionOwner(id)` or SERVER_OWNER; default SERVER_OWNER. */
  readonly owner?: string;
  /**
   * The digests something other than this add still needs (every recorded revision but the
   * Session's own desired one this add replaces, and the server list): the owner's other entries
   * are freed before its quota is charged. Absent: nothing is freed.
   */
  readonly keep?: ReadonlySet<string>;
}

export type PutResult = "cached" | "uncached";

/** One row of the server plugin list as last activated: the entry (JSON) and the digest it pinned. */
export interface StoredServerPlugin {
  readonly entry: string;
  readonly digest: string | undefined;
}

export class PluginBundleCache {
  readonly limits: PluginCacheLimits;
  /** Digests a server list being resolved and activated holds before it is recorded: `prune` keeps them. */
  readonly #held = new Map<string, number>();

  constructor(
    private readonly storage: PluginCacheStorageInput,
    private readonly now: () => number = Date.now,
    limits: Partial<PluginCacheLimits> = {},
  ) {
    this.limits = { ...DEFAULT_CACHE_LIMITS, ...limits };
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

  /**
   * Stores `bytes` under `digest` (the caller verified it) for `owner`; "cached" also when already
   * present (shared, no charge). A Session's bundle that does not fit the Sessions' pool is
   * "uncached" (nothing stored, nothing evicted). Throws {@link PluginCacheFull} for a bundle past
   * the size bound and {@link PluginCacheQuotaExceeded} past the owner's quota.
   */
  put(digest: string, bytes: Uint8Array, options: PutOptions = {}): PutResult {
    const owner = options.owner ?? SERVER_OWNER;
    if (bytes.byteLength > this.limits.bundleBytes) throw new PluginCacheFull(`The bundle is larger than ${this.limits.bundleBytes} bytes.`);
    return this.storage.transactionSync(() => {
      if (this.has(digest)) return "cached";
      if (owner !== SERVER_OWNER) {
        if (options.keep !== undefined) this.#free(owner, options.keep);
        const own = this.#used("owner = ?", owner);
        if (own + bytes.byteLength > this.limits.sessionQuotaBytes) {
          throw new PluginCacheQuotaExceeded(
            `PluginCacheQuotaExceeded: this Session's plugin bundles would hold ${own + bytes.byteLength} bytes of the server's bundle cache, more than its ${this.limits.sessionQuotaBytes}; remove its Session plugin first.`,
          );
        }
        if (this.#used("owner <> ?", SERVER_OWNER) + bytes.byteLength > this.limits.sessionPoolBytes) return "uncached";
      }
      this.storage.sql.exec("INSERT INTO worker_plugin_bundle (digest, size, created_at, owner) VALUES (?, ?, ?, ?)", digest, bytes.byteLength, this.now(), owner);
      for (let offset = 0, seq = 0; offset < bytes.byteLength || seq === 0; offset += CHUNK_BYTES, seq += 1) {
        const chunk = bytes.slice(offset, offset + CHUNK_BYTES);
        this.storage.sql.exec("INSERT INTO worker_plugin_chunk (digest, seq, bytes) VALUES (?, ?, ?)", digest, seq, chunk.buffer);
      }
      return "cached";
    });
  }

  #used(where: string, value: string): number {
    return Number(this.storage.sql.exec(`SELECT COALESCE(SUM(size), 0) AS used FROM worker_plugin_bundle WHERE ${where}`, value).toArray()[0]?.["used"] ?? 0);
  }

  /** Frees `owner`'s entries whose digest is not in `keep`. */
  #free(owner: string, keep: ReadonlySet<string>): void {
    const stale = this.storage.sql
      .exec("SELECT digest FROM worker_plugin_bundle WHERE owner = ?", owner)
      .toArray()
      .map((row) => String(row["digest"]))
      .filter((digest) => !keep.has(digest));
    for (const digest of stale) this.#delete(digest);
  }

  #delete(digest: string): void {
    this.storage.sql.exec("DELETE FROM worker_plugin_chunk WHERE digest = ?", digest);
    this.storage.sql.exec("DELETE FROM worker_plugin_bundle WHERE digest = ?", digest);
  }

  /**
   * Keeps `digest` through every `prune` until the returned release is called (once; later calls do
   * nothing): a server list's bytes between their download and the list's record, which a Session's
   * plugin change pruning meanwhile must not free.
   */
  hold(digest: string): () => void {
    this.#held.set(digest, (this.#held.get(digest) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const count = (this.#held.get(digest) ?? 1) - 1;
      if (count > 0) this.#held.set(digest, count);
      else this.#held.delete(digest);
    };
  }

  /** Frees every entry whose digest is not in `keep` (the server list's pins and held digests are always kept); returns the freed digests. */
  prune(keep: ReadonlySet<string>): string[] {
    return this.storage.transactionSync(() => {
      const pinned = new Set(this.serverPlugins().flatMap((row) => (row.digest !== undefined ? [row.digest] : [])));
      const freed = this.storage.sql
        .exec("SELECT digest FROM worker_plugin_bundle")
        .toArray()
        .map((row) => String(row["digest"]))
        .filter((digest) => !keep.has(digest) && !pinned.has(digest) && !this.#held.has(digest));
      for (const digest of freed) this.#delete(digest);
      return freed;
    });
  }

  /** The cached digests (for diagnostics and tests). */
  digests(): string[] {
    return this.storage.sql.exec("SELECT digest FROM worker_plugin_bundle ORDER BY digest").toArray().map((row) => String(row["digest"]));
  }

  /** The cached entries with their owners and sizes (for diagnostics and tests). */
  entries(): { digest: string; owner: string; size: number }[] {
    return this.storage.sql
      .exec("SELECT digest, owner, size FROM worker_plugin_bundle ORDER BY digest")
      .toArray()
      .map((row) => ({ digest: String(row["digest"]), owner: String(row["owner"]), size: Number(row["size"]) }));
  }

  /** The server plugin list as last activated, in order. */
  serverPlugins(): StoredServerPlugin[] {
    return this.storage.sql
      .exec("SELECT entry, digest FROM worker_server_plugin ORDER BY position")
      .toArray()
      .map((row) => ({ entry: String(row["entry"]), digest: row["digest"] === null ? undefined : String(row["digest"]) }));
  }

  /** Replaces the recorded server plugin list (its pins stay cached: `prune` keeps them). */
  recordServerPlugins(rows: readonly StoredServerPlugin[]): void {
    this.storage.transactionSync(() => {
      this.storage.sql.exec("DELETE FROM worker_server_plugin");
      rows.forEach((row, position) => this.storage.sql.exec("INSERT INTO worker_server_plugin (position, entry, digest) VALUES (?, ?, ?)", position, row.entry, row.digest ?? null));
    });
  }
}
