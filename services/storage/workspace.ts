/**
 * Recorded workdir states and Turn patches (services/core/rewind): content-addressed blobs,
 * each Session's last manifest, one immutable patch per settled Turn, and rewinds. JSON columns
 * hold plain arrays; their shapes are declared here.
 */
import { isStorageHandle, type StorageHandle, type StorageTransaction } from "./database.js";
import type { SqlExecutor } from "./engine.js";
import { inChunks } from "./chunks.js";
import { mapBusy } from "./errors.js";
import { placeholders } from "./rows.js";

type Context = StorageHandle | StorageTransaction;

/** One file of a recorded workdir state: [pathBase64, sha256, mode, size, mtimeMs, ino]. */
export type ManifestEntry = [path: string, sha256: string, mode: number, size: number, mtimeMs: number, ino: string];

export interface StoredManifest {
  readonly turnId: string | null;
  readonly files: ManifestEntry[];
  readonly recordedAt: number;
}

/** One changed file of a patch, as stored (the contract's TurnPatchFile plus modes). */
export interface StoredPatchFile {
  readonly path: string;
  readonly change: "added" | "modified" | "deleted";
  readonly content: "text" | "binary";
  readonly beforeSha256?: string;
  readonly afterSha256?: string;
  readonly beforeSize?: number;
  readonly afterSize?: number;
  readonly beforeMode?: number;
  readonly afterMode?: number;
}

export interface TurnPatchRow {
  readonly turnId: string;
  readonly sessionId: string;
  readonly turnSequence: number;
  readonly files: StoredPatchFile[];
  readonly patch: string;
  readonly size: number;
  readonly sha256: string;
  readonly capturedAt: number;
  readonly rewoundAt: number | null;
}

const read = <T>(context: Context, query: (sql: SqlExecutor) => Promise<T>): Promise<T> =>
  isStorageHandle(context) ? mapBusy(() => query(context.reader().sql)) : query(context.sql);

const write = <T>(context: Context, fn: (tx: StorageTransaction) => Promise<T>): Promise<T> => (isStorageHandle(context) ? context.transaction(fn) : fn(context));

/**
 * Recordings the workdir itself can re-derive (blobs, manifests, patches) settle at commit without
 * waiting for the WAL sync (`relaxed`): they survive a process crash, and a power loss takes the
 * workdir's unsynced writes with them. A rewind, a user's decision, stays fully durable.
 */
const record = <T>(context: Context, fn: (tx: StorageTransaction) => Promise<T>): Promise<T> =>
  isStorageHandle(context) ? context.transaction(fn, { durability: "relaxed" }) : fn(context);

export function putBlobs(context: Context, blobs: readonly { readonly sha256: string; readonly bytes: Uint8Array }[]): Promise<void> {
  if (blobs.length === 0) return Promise.resolve();
  return record(context, async (tx) => {
    for (const blob of blobs) await tx.sql.run("INSERT OR IGNORE INTO workspace_blob (sha256, size, bytes) VALUES (?, ?, ?)", [blob.sha256, blob.bytes.length, blob.bytes]);
  });
}

export async function getBlob(context: Context, sha256: string): Promise<Buffer | undefined> {
  const row = await read(context, (sql) => sql.get<{ bytes: Uint8Array }>("SELECT bytes FROM workspace_blob WHERE sha256 = ?", [sha256]));
  return row ? Buffer.from(row.bytes) : undefined;
}

/** Which of these digests are stored. */
export async function storedBlobs(context: Context, digests: readonly string[]): Promise<Set<string>> {
  const found = new Set<string>();
  const rows = await inChunks(digests, 0, (chunk) => read(context, (sql) => sql.all<{ sha256: string }>(`SELECT sha256 FROM workspace_blob WHERE sha256 IN (${placeholders(chunk.length)})`, chunk)));
  for (const row of rows) found.add(row.sha256);
  return found;
}

export async function readManifest(context: Context, sessionId: string): Promise<StoredManifest | undefined> {
  const row = await read(context, (sql) => sql.get<{ turn_id: string | null; files: string; recorded_at: number }>("SELECT turn_id, files, recorded_at FROM workspace_manifest WHERE session_id = ?", [sessionId]));
  return row ? { turnId: row.turn_id, files: JSON.parse(row.files) as ManifestEntry[], recordedAt: row.recorded_at } : undefined;
}

const UPSERT_MANIFEST = `INSERT INTO workspace_manifest (session_id, turn_id, files, recorded_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (session_id) DO UPDATE SET turn_id = excluded.turn_id, files = excluded.files, recorded_at = excluded.recorded_at`;

export function writeManifest(context: Context, sessionId: string, turnId: string | null, files: readonly ManifestEntry[], now: number): Promise<void> {
  return record(context, async (tx) => {
    await tx.sql.run(UPSERT_MANIFEST, [sessionId, turnId, JSON.stringify(files), now]);
  });
}

function patchFromRow(raw: Record<string, unknown>): TurnPatchRow {
  return {
    turnId: raw["turn_id"] as string,
    sessionId: raw["session_id"] as string,
    turnSequence: raw["turn_sequence"] as number,
    files: JSON.parse(raw["files"] as string) as StoredPatchFile[],
    patch: raw["patch"] as string,
    size: raw["size"] as number,
    sha256: raw["sha256"] as string,
    capturedAt: raw["captured_at"] as number,
    rewoundAt: (raw["rewound_at"] as number | null) ?? null,
  };
}

const INSERT_PATCH = "INSERT INTO turn_patch (turn_id, session_id, turn_sequence, files, patch, size, sha256, captured_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (turn_id) DO NOTHING RETURNING *";

/** Inserts a patch unless the Turn has one (one statement when it has none); resolves with the stored one either way. */
async function insertPatch(tx: StorageTransaction, patch: Omit<TurnPatchRow, "rewoundAt">): Promise<TurnPatchRow> {
  const inserted = await tx.sql.get(INSERT_PATCH, [patch.turnId, patch.sessionId, patch.turnSequence, JSON.stringify(patch.files), patch.patch, patch.size, patch.sha256, patch.capturedAt]);
  return patchFromRow((inserted ?? (await tx.sql.get("SELECT * FROM turn_patch WHERE turn_id = ?", [patch.turnId])))!);
}

/** Inserts a patch unless the Turn has one; resolves with the stored one either way. */
export function insertTurnPatch(context: Context, patch: Omit<TurnPatchRow, "rewoundAt">): Promise<TurnPatchRow> {
  return record(context, (tx) => insertPatch(tx, patch));
}

/**
 * A capture: the Turn's patch (unless it has one) and the Session's state after it, in one
 * transaction — a crash never leaves the patch recorded with the manifest still naming the Turn.
 */
export function recordTurnPatch(context: Context, patch: Omit<TurnPatchRow, "rewoundAt">, after: { readonly files: readonly ManifestEntry[]; readonly recordedAt: number }): Promise<TurnPatchRow> {
  return record(context, async (tx) => {
    const stored = await insertPatch(tx, patch);
    await tx.sql.run(UPSERT_MANIFEST, [patch.sessionId, null, JSON.stringify(after.files), after.recordedAt]);
    return stored;
  });
}

export async function getTurnPatch(context: Context, turnId: string): Promise<TurnPatchRow | undefined> {
  const raw = await read(context, (sql) => sql.get("SELECT * FROM turn_patch WHERE turn_id = ?", [turnId]));
  return raw ? patchFromRow(raw) : undefined;
}

/** The Session's patches from this Turn sequence on, oldest first. */
export async function sessionPatchesFrom(context: Context, sessionId: string, fromSequence: number): Promise<TurnPatchRow[]> {
  const rows = await read(context, (sql) => sql.all("SELECT * FROM turn_patch WHERE session_id = ? AND turn_sequence >= ? ORDER BY turn_sequence", [sessionId, fromSequence]));
  return rows.map(patchFromRow);
}

/** The Session's Turns from this sequence on, oldest first. */
export function turnsFrom(context: Context, sessionId: string, fromSequence: number): Promise<{ id: string; sequence: number; phase: string }[]> {
  return read(context, (sql) => sql.all<{ id: string; sequence: number; phase: string }>("SELECT id, sequence, phase FROM turn WHERE session_id = ? AND sequence >= ? ORDER BY sequence", [sessionId, fromSequence]));
}

export interface NewRewind {
  readonly sessionId: string;
  readonly turnId: string;
  readonly turnIds: readonly string[];
  readonly restored: readonly string[];
  readonly filesOnly: boolean;
  readonly rewoundAt: number;
}

/** Records a rewind and marks its Turns' patches rewound. */
export function recordRewind(context: Context, rewind: NewRewind): Promise<void> {
  return write(context, async (tx) => {
    await tx.sql.run("INSERT INTO session_rewind (session_id, turn_id, turn_ids, restored, files_only, rewound_at) VALUES (?, ?, ?, ?, ?, ?)", [
      rewind.sessionId,
      rewind.turnId,
      JSON.stringify(rewind.turnIds),
      JSON.stringify(rewind.restored),
      rewind.filesOnly ? 1 : 0,
      rewind.rewoundAt,
    ]);
    for (const turnId of rewind.turnIds) await tx.sql.run("UPDATE turn_patch SET rewound_at = ? WHERE turn_id = ? AND rewound_at IS NULL", [rewind.rewoundAt, turnId]);
  });
}

/** The Turns rewinds took out of the Session's conversation (not `filesOnly` ones). */
export async function hiddenTurnIds(context: Context, sessionId: string): Promise<string[]> {
  const rows = await read(context, (sql) => sql.all<{ turn_ids: string }>("SELECT turn_ids FROM session_rewind WHERE session_id = ? AND files_only = 0", [sessionId]));
  return [...new Set(rows.flatMap((row) => JSON.parse(row.turn_ids) as string[]))];
}
