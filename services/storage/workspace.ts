/**
 * Recorded workdir states and Turn patches (services/core/rewind): content-addressed blobs
 * (compressed when that saves space) with their references, each Session's last manifest, the
 * before-images file tools took, one immutable patch per settled Turn, and rewinds. JSON columns
 * hold plain arrays; their shapes are declared here.
 *
 * Every blob is stored in the same transaction as a reference to it (`workspace_blob_ref`:
 * owner `t:<turnId>` or `m:<sessionId>`), and the trigger `workspace_blob_gc` deletes a blob in
 * the statement that removes its last reference: deleting a Session (its references cascade), a
 * rewind (the rewound Turns' references) and a replaced manifest free exactly what nothing else
 * needs, and no recording of the same content can race the check.
 */
import { createHash } from "node:crypto";
import { deflateRawSync, inflateRawSync } from "node:zlib";
import { isStorageHandle, type StorageHandle, type StorageTransaction } from "./database.js";
import type { SqlExecutor, SqlValue } from "./engine.js";
import { chunked, inChunks, valueRows } from "./chunks.js";
import { mapBusy } from "./errors.js";
import { placeholders } from "./rows.js";

type Context = StorageHandle | StorageTransaction;

/**
 * One recorded file of a workdir state: [pathBase64, sha256, mode, size, mtimeMs, ino]. The
 * digest is "" when the content is not stored (a file the scan saw but never had to read).
 */
export type ManifestEntry = [path: string, sha256: string, mode: number, size: number, mtimeMs: number, ino: string];

/** How a Session's Turns are recorded (config `workspace.recording`, "off" never writes a manifest). */
export type RecordedMode = "tools" | "repository";

/** A recorded workdir state: the mode it was recorded in, and (repository) the files' stat data. */
export interface ManifestContent {
  readonly mode: RecordedMode;
  readonly files: readonly ManifestEntry[];
}

export interface StoredManifest extends ManifestContent {
  readonly turnId: string | null;
  readonly files: ManifestEntry[];
  readonly filesSha256: string;
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
  /** False when the file existed before the Turn but its content was not recorded. */
  readonly beforeRecorded?: boolean;
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

export interface BlobInput {
  readonly sha256: string;
  readonly bytes: Uint8Array;
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

export const turnOwner = (turnId: string): string => `t:${turnId}`;
export const manifestOwner = (sessionId: string): string => `m:${sessionId}`;

/** Deflated when that saves a tenth or more (source text typically shrinks 3–5×), as-is otherwise. */
function encode(bytes: Uint8Array): { bytes: Uint8Array; encoding: "identity" | "deflate" } {
  if (bytes.length < 64) return { bytes, encoding: "identity" };
  const deflated = deflateRawSync(bytes, { level: 6 });
  return deflated.length <= bytes.length * 0.9 ? { bytes: deflated, encoding: "deflate" } : { bytes, encoding: "identity" };
}

/** Stores blobs (each once) with a reference from `owner`, in one statement pair per chunk. */
async function putReferenced(tx: StorageTransaction, owner: string, sessionId: string, blobs: readonly BlobInput[]): Promise<void> {
  if (blobs.length === 0) return;
  const digests = [...new Set(blobs.map((blob) => blob.sha256))];
  const stored = new Set<string>();
  for (const chunk of chunked(digests, 1)) {
    for (const row of await tx.sql.all<{ sha256: string }>(`SELECT sha256 FROM workspace_blob WHERE sha256 IN (${placeholders(chunk.length)})`, chunk)) stored.add(row.sha256);
  }
  const seen = new Set<string>();
  for (const blob of blobs) {
    if (stored.has(blob.sha256) || seen.has(blob.sha256)) continue;
    seen.add(blob.sha256);
    const encoded = encode(blob.bytes);
    await tx.sql.run("INSERT OR IGNORE INTO workspace_blob (sha256, size, bytes, encoding) VALUES (?, ?, ?, ?)", [blob.sha256, blob.bytes.length, encoded.bytes, encoded.encoding]);
  }
  await addReferences(tx, owner, sessionId, digests);
}

async function addReferences(tx: StorageTransaction, owner: string, sessionId: string, digests: readonly string[]): Promise<void> {
  for (const chunk of chunked(digests, 3)) {
    await tx.sql.run(`INSERT OR IGNORE INTO workspace_blob_ref (owner, sha256, session_id) VALUES ${valueRows(chunk.length, 3)}`, chunk.flatMap((sha) => [owner, sha, sessionId]));
  }
}

/** Stores `blobs` referenced by `owner` (a Turn or a Session's manifest). */
export function putBlobs(context: Context, owner: string, sessionId: string, blobs: readonly BlobInput[]): Promise<void> {
  if (blobs.length === 0) return Promise.resolve();
  return record(context, (tx) => putReferenced(tx, owner, sessionId, blobs));
}

export async function getBlob(context: Context, sha256: string): Promise<Buffer | undefined> {
  const row = await read(context, (sql) => sql.get<{ bytes: Uint8Array; encoding: string }>("SELECT bytes, encoding FROM workspace_blob WHERE sha256 = ?", [sha256]));
  if (!row) return undefined;
  return row.encoding === "deflate" ? inflateRawSync(row.bytes) : Buffer.from(row.bytes);
}

/** Which of these digests are stored. */
export async function storedBlobs(context: Context, digests: readonly string[]): Promise<Set<string>> {
  const found = new Set<string>();
  const rows = await inChunks(digests, 0, (chunk) => read(context, (sql) => sql.all<{ sha256: string }>(`SELECT sha256 FROM workspace_blob WHERE sha256 IN (${placeholders(chunk.length)})`, chunk)));
  for (const row of rows) found.add(row.sha256);
  return found;
}

/** The stored bytes of every blob (for measurements and tests). */
export async function blobBytes(context: Context): Promise<{ blobs: number; bytes: number }> {
  const row = await read(context, (sql) => sql.get<{ blobs: number; bytes: number | null }>("SELECT count(*) AS blobs, sum(length(bytes)) AS bytes FROM workspace_blob"));
  return { blobs: row?.blobs ?? 0, bytes: row?.bytes ?? 0 };
}

// Manifests are content-addressed too: parsed ones are kept by digest (a few recent ones).
const parsedManifests = new Map<string, ManifestContent>();
const PARSED_MANIFESTS = 16;

function rememberManifest(sha256: string, content: ManifestContent): void {
  parsedManifests.delete(sha256);
  parsedManifests.set(sha256, content);
  while (parsedManifests.size > PARSED_MANIFESTS) parsedManifests.delete(parsedManifests.keys().next().value!);
}

export async function readManifest(context: Context, sessionId: string): Promise<StoredManifest | undefined> {
  const row = await read(context, (sql) => sql.get<{ turn_id: string | null; files_sha256: string; recorded_at: number }>("SELECT turn_id, files_sha256, recorded_at FROM workspace_manifest WHERE session_id = ?", [sessionId]));
  if (!row) return undefined;
  let content = parsedManifests.get(row.files_sha256);
  if (!content) {
    const bytes = await getBlob(context, row.files_sha256);
    content = bytes ? (JSON.parse(bytes.toString("utf8")) as ManifestContent) : { mode: "tools", files: [] };
    rememberManifest(row.files_sha256, content);
  }
  return { turnId: row.turn_id, mode: content.mode, files: content.files as ManifestEntry[], filesSha256: row.files_sha256, recordedAt: row.recorded_at };
}

/**
 * Writes the Session's manifest: one small row when its files are what is stored already;
 * otherwise the files' blob and the manifest's references (its own blob and every digest it
 * names) replace the old ones, freeing what only the old manifest needed.
 */
async function putManifest(tx: StorageTransaction, sessionId: string, turnId: string | null, content: ManifestContent, now: number): Promise<void> {
  const json = Buffer.from(JSON.stringify({ mode: content.mode, files: content.files }), "utf8");
  const files = content.files;
  const filesSha256 = createHash("sha256").update(json).digest("hex");
  const current = await tx.sql.get<{ files_sha256: string }>("SELECT files_sha256 FROM workspace_manifest WHERE session_id = ?", [sessionId]);
  await tx.sql.run(
    `INSERT INTO workspace_manifest (session_id, turn_id, files_sha256, recorded_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (session_id) DO UPDATE SET turn_id = excluded.turn_id, files_sha256 = excluded.files_sha256, recorded_at = excluded.recorded_at`,
    [sessionId, turnId, filesSha256, now],
  );
  if (current?.files_sha256 === filesSha256) return;
  rememberManifest(filesSha256, content);
  const owner = manifestOwner(sessionId);
  const wanted = new Set<string>([filesSha256]);
  for (const entry of files) if (entry[1] !== "") wanted.add(entry[1]);
  await putReferenced(tx, owner, sessionId, [{ sha256: filesSha256, bytes: json }]);
  const held = await tx.sql.all<{ sha256: string }>("SELECT sha256 FROM workspace_blob_ref WHERE owner = ?", [owner]);
  const heldSet = new Set(held.map((row) => row.sha256));
  await addReferences(tx, owner, sessionId, [...wanted].filter((sha) => !heldSet.has(sha)));
  const dropped = [...heldSet].filter((sha) => !wanted.has(sha));
  for (const chunk of chunked(dropped, 1, 1)) {
    await tx.sql.run(`DELETE FROM workspace_blob_ref WHERE owner = ? AND sha256 IN (${placeholders(chunk.length)})`, [owner, ...chunk]);
  }
}

export function writeManifest(context: Context, sessionId: string, turnId: string | null, content: ManifestContent, now: number): Promise<void> {
  return record(context, (tx) => putManifest(tx, sessionId, turnId, content, now));
}

/** Names `turnId` as the Turn the Session's unchanged manifest is the state before (one small row). */
export function markManifest(context: Context, sessionId: string, turnId: string | null, now: number): Promise<void> {
  return record(context, async (tx) => {
    await tx.sql.run("UPDATE workspace_manifest SET turn_id = ?, recorded_at = ? WHERE session_id = ?", [turnId, now, sessionId]);
  });
}

/** A before-image a file tool took: null `before` when the file did not exist. */
export interface TouchInput {
  readonly turnId: string;
  readonly sessionId: string;
  readonly path: string;
  readonly before: { readonly sha256: string; readonly bytes: Uint8Array; readonly mode: number } | { readonly unrecorded: true; readonly mode: number; readonly size: number } | null;
}

export interface TouchRow {
  readonly path: string;
  readonly before: { readonly sha256: string; readonly mode: number; readonly size: number } | { readonly unrecorded: true; readonly mode: number; readonly size: number } | null;
}

/** Records a Turn's first before-image of a path (a later one for the same path is ignored). */
export function recordTouch(context: Context, touch: TouchInput): Promise<void> {
  return record(context, async (tx) => {
    const exists = await tx.sql.get("SELECT 1 AS found FROM turn_touch WHERE turn_id = ? AND path = ?", [touch.turnId, touch.path]);
    if (exists) return;
    const before = touch.before;
    if (before && "bytes" in before) await putReferenced(tx, turnOwner(touch.turnId), touch.sessionId, [{ sha256: before.sha256, bytes: before.bytes }]);
    await tx.sql.run("INSERT INTO turn_touch (turn_id, session_id, path, before_sha256, before_mode, before_size) VALUES (?, ?, ?, ?, ?, ?)", [
      touch.turnId,
      touch.sessionId,
      touch.path,
      before && "bytes" in before ? before.sha256 : null,
      before?.mode ?? null,
      before === null ? null : "bytes" in before ? before.bytes.length : before.size,
    ]);
  });
}

/** Whether the Turn already has a before-image of this path. */
export async function hasTouch(context: Context, turnId: string, path: string): Promise<boolean> {
  return (await read(context, (sql) => sql.get("SELECT 1 AS found FROM turn_touch WHERE turn_id = ? AND path = ?", [turnId, path]))) !== undefined;
}

export async function listTouches(context: Context, turnId: string): Promise<TouchRow[]> {
  const rows = await read(context, (sql) => sql.all<{ path: string; before_sha256: string | null; before_mode: number | null; before_size: number | null }>("SELECT path, before_sha256, before_mode, before_size FROM turn_touch WHERE turn_id = ? ORDER BY path", [turnId]));
  // No digest and no size: the file did not exist; a size without a digest: it existed, unrecorded.
  return rows.map((row) => ({
    path: row.path,
    before:
      row.before_sha256 !== null
        ? { sha256: row.before_sha256, mode: row.before_mode ?? 0o100644, size: row.before_size ?? 0 }
        : row.before_size !== null
          ? { unrecorded: true as const, mode: row.before_mode ?? 0o100644, size: row.before_size }
          : null,
  }));
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

/** The digest of the manifest a "tools" recording with nothing pending keeps: no files. */
export const EMPTY_TOOLS_MANIFEST_SHA256 = createHash("sha256").update(JSON.stringify({ mode: "tools", files: [] }), "utf8").digest("hex");
const EMPTY_SHA256 = createHash("sha256").digest("hex");

/** A Turn's empty patch (it changed nothing recorded), as `turn_patch` values after the Turn's id. */
const emptyPatchArgs = (turn: { readonly id: string; readonly sessionId: string; readonly sequence: number }, capturedAt: number): SqlValue[] => [turn.id, turn.sessionId, turn.sequence, "[]", "", 0, EMPTY_SHA256, capturedAt];

/**
 * The recovery of a Turn lost before it settled whose before-state was the Session's "tools"
 * manifest left unmarked (see services/core/rewind/recording.ts): when the manifest names no Turn,
 * records no files, and no file tool of the Turn took a before-image, the Turn changed nothing
 * recorded — its empty patch is written (in the caller's transaction, the lost Turn's settlement),
 * so a rewind of it is not refused for want of a recorded state. Otherwise nothing is written.
 */
export async function repairUnmarkedPatch(tx: StorageTransaction, turn: { readonly id: string; readonly sessionId: string; readonly sequence: number }, capturedAt: number): Promise<boolean> {
  const { changes } = await tx.sql.run(
    `INSERT INTO turn_patch (turn_id, session_id, turn_sequence, files, patch, size, sha256, captured_at)
       SELECT ?, ?, ?, ?, ?, ?, ?, ?
       WHERE EXISTS (SELECT 1 FROM workspace_manifest WHERE session_id = ? AND turn_id IS NULL AND files_sha256 = ?)
         AND NOT EXISTS (SELECT 1 FROM turn_touch WHERE turn_id = ?)
       ON CONFLICT (turn_id) DO NOTHING`,
    [...emptyPatchArgs(turn, capturedAt), turn.sessionId, EMPTY_TOOLS_MANIFEST_SHA256, turn.id],
  );
  return changes > 0;
}

/** Inserts a patch unless the Turn has one; resolves with the stored one either way. */
export function insertTurnPatch(context: Context, patch: Omit<TurnPatchRow, "rewoundAt">): Promise<TurnPatchRow> {
  return record(context, (tx) => insertPatch(tx, patch));
}

/**
 * A capture: the Turn's patch (unless it has one), its contents referenced by the Turn, and the
 * Session's state after it (when recorded), in one transaction — a crash never leaves the patch
 * recorded with the manifest still naming the Turn.
 */
export function recordTurnPatch(
  context: Context,
  patch: Omit<TurnPatchRow, "rewoundAt">,
  contents: readonly BlobInput[],
  after: (ManifestContent & { readonly recordedAt: number }) | { readonly unchanged: true; readonly recordedAt: number },
): Promise<TurnPatchRow> {
  return record(context, async (tx) => {
    await putReferenced(tx, turnOwner(patch.turnId), patch.sessionId, contents);
    const stored = new Set(contents.map((blob) => blob.sha256));
    const digests = patch.files.flatMap((file) => [file.beforeSha256, file.afterSha256]).filter((sha): sha is string => sha !== undefined && !stored.has(sha));
    await addReferences(tx, turnOwner(patch.turnId), patch.sessionId, [...new Set(digests)]);
    const inserted = await insertPatch(tx, patch);
    // Nothing changed: the manifest stays, only its Turn is cleared (one small row, no JSON).
    if ("unchanged" in after) await tx.sql.run("UPDATE workspace_manifest SET turn_id = NULL, recorded_at = ? WHERE session_id = ?", [after.recordedAt, patch.sessionId]);
    else await putManifest(tx, patch.sessionId, null, after, after.recordedAt);
    return inserted;
  });
}

/**
 * `turn_patch` rows, and the empty patches recorded on their Turn (`turn.empty_patch_at`, no row
 * yet: a Turn that changed nothing recorded), as one row set with `turn_patch`'s columns.
 */
const PATCHES = `SELECT turn_id, session_id, turn_sequence, files, patch, size, sha256, captured_at, rewound_at FROM turn_patch
  UNION ALL
  SELECT t.id, t.session_id, t.sequence, '[]', '', 0, '${EMPTY_SHA256}', t.empty_patch_at, NULL FROM turn t
  WHERE t.empty_patch_at IS NOT NULL AND NOT EXISTS (SELECT 1 FROM turn_patch p WHERE p.turn_id = t.id)`;

/** The Turn's patch: its row, or the empty one recorded on the Turn. */
export async function getTurnPatch(context: Context, turnId: string): Promise<TurnPatchRow | undefined> {
  const raw = await read(context, (sql) => sql.get(`SELECT * FROM (${PATCHES}) WHERE turn_id = ?`, [turnId]));
  return raw ? patchFromRow(raw) : undefined;
}

/** The Session's patches from this Turn sequence on, oldest first. */
export async function sessionPatchesFrom(context: Context, sessionId: string, fromSequence: number): Promise<TurnPatchRow[]> {
  const rows = await read(context, (sql) => sql.all(`SELECT * FROM (${PATCHES}) WHERE session_id = ? AND turn_sequence >= ? ORDER BY turn_sequence`, [sessionId, fromSequence]));
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

/**
 * Records a rewind, marks its Turns' patches rewound, writes the restored workdir as the
 * Session's manifest, and drops the rewound Turns' references (their contents are freed unless
 * the new manifest or another Turn or Session still needs them).
 */
export function recordRewind(context: Context, rewind: NewRewind, after: ManifestContent | undefined): Promise<void> {
  return write(context, async (tx) => {
    await tx.sql.run("INSERT INTO session_rewind (session_id, turn_id, turn_ids, restored, files_only, rewound_at) VALUES (?, ?, ?, ?, ?, ?)", [
      rewind.sessionId,
      rewind.turnId,
      JSON.stringify(rewind.turnIds),
      JSON.stringify(rewind.restored),
      rewind.filesOnly ? 1 : 0,
      rewind.rewoundAt,
    ]);
    for (const turnId of rewind.turnIds) {
      await tx.sql.run("UPDATE turn_patch SET rewound_at = ? WHERE turn_id = ? AND rewound_at IS NULL", [rewind.rewoundAt, turnId]);
      // An empty patch recorded on its Turn becomes a row here, to keep when it was rewound.
      await tx.sql.run(
        `INSERT INTO turn_patch (turn_id, session_id, turn_sequence, files, patch, size, sha256, captured_at, rewound_at)
         SELECT id, session_id, sequence, '[]', '', 0, ?, empty_patch_at, ? FROM turn WHERE id = ? AND empty_patch_at IS NOT NULL
         ON CONFLICT (turn_id) DO NOTHING`,
        [EMPTY_SHA256, rewind.rewoundAt, turnId],
      );
    }
    if (after) await putManifest(tx, rewind.sessionId, null, after, rewind.rewoundAt);
    for (const turnId of rewind.turnIds) await tx.sql.run("DELETE FROM workspace_blob_ref WHERE owner = ?", [turnOwner(turnId)]);
  });
}

/** The Turns rewinds took out of the Session's conversation (not `filesOnly` ones). */
export async function hiddenTurnIds(context: Context, sessionId: string): Promise<string[]> {
  const rows = await read(context, (sql) => sql.all<{ turn_ids: string }>("SELECT turn_ids FROM session_rewind WHERE session_id = ? AND files_only = 0", [sessionId]));
  return [...new Set(rows.flatMap((row) => JSON.parse(row.turn_ids) as string[]))];
}
