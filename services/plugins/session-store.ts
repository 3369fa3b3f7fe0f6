// Durable state of Session plugin overlays (tables `session_plugin_revision` and `session_plugin`,
// migration 20261203100000): recorded revisions and each Session's desired revision, activation
// state and active revision. Raw SQL through the storage handle's executor; writes run in the
// caller's transaction or a new one.
import { isStorageHandle, mapBusy, type SqlExecutor, type StorageHandle, type StorageTransaction } from "../storage/index.js";

type Context = StorageHandle | StorageTransaction;

export type ActivationState = "pending" | "started" | "active" | "failed";

export interface StoredRevision {
  readonly sessionId: string;
  readonly id: string;
  readonly sequence: number;
  readonly source: unknown;
  readonly resolved: unknown;
  readonly options: unknown;
  readonly mcpServers: readonly unknown[];
  readonly skills: readonly unknown[];
  /** The pinned snapshot a restart loads (a file path), when the source has one. */
  readonly artifact: string | null;
  readonly requestHash: string;
  readonly createdAt: number;
}

export interface StoredOverlay {
  readonly sessionId: string;
  readonly nextSequence: number;
  readonly desiredRevisionId: string | null;
  readonly activationState: ActivationState | null;
  readonly activationFailure: string | null;
  readonly activeRevisionId: string | null;
}

const REVISION = "session_id, id, sequence, source, resolved, options, mcp_servers, skills, artifact, request_hash, created_at";
const OVERLAY = "session_id, next_sequence, desired_revision_id, activation_state, activation_failure, active_revision_id";

function revisionOf(raw: Record<string, unknown>): StoredRevision {
  return {
    sessionId: raw["session_id"] as string,
    id: raw["id"] as string,
    sequence: raw["sequence"] as number,
    source: JSON.parse(raw["source"] as string),
    resolved: JSON.parse(raw["resolved"] as string),
    options: JSON.parse(raw["options"] as string),
    mcpServers: JSON.parse(raw["mcp_servers"] as string) as unknown[],
    skills: JSON.parse(raw["skills"] as string) as unknown[],
    artifact: (raw["artifact"] as string | null) ?? null,
    requestHash: raw["request_hash"] as string,
    createdAt: raw["created_at"] as number,
  };
}

function overlayOf(raw: Record<string, unknown>): StoredOverlay {
  return {
    sessionId: raw["session_id"] as string,
    nextSequence: raw["next_sequence"] as number,
    desiredRevisionId: (raw["desired_revision_id"] as string | null) ?? null,
    activationState: (raw["activation_state"] as ActivationState | null) ?? null,
    activationFailure: (raw["activation_failure"] as string | null) ?? null,
    activeRevisionId: (raw["active_revision_id"] as string | null) ?? null,
  };
}

function read<T>(context: Context, fn: (sql: SqlExecutor) => Promise<T>): Promise<T> {
  return isStorageHandle(context) ? mapBusy(() => fn(context.reader().sql)) : fn(context.sql);
}

function write<T>(context: Context, fn: (tx: StorageTransaction) => Promise<T>): Promise<T> {
  return isStorageHandle(context) ? context.transaction(fn) : fn(context);
}

export function getOverlay(context: Context, sessionId: string): Promise<StoredOverlay | undefined> {
  return read(context, async (sql) => {
    const raw = await sql.get(`SELECT ${OVERLAY} FROM session_plugin WHERE session_id = ?`, [sessionId]);
    return raw ? overlayOf(raw) : undefined;
  });
}

export function getRevision(context: Context, sessionId: string, id: string): Promise<StoredRevision | undefined> {
  return read(context, async (sql) => {
    const raw = await sql.get(`SELECT ${REVISION} FROM session_plugin_revision WHERE session_id = ? AND id = ?`, [sessionId, id]);
    return raw ? revisionOf(raw) : undefined;
  });
}

/** Sessions whose overlay has an active or desired revision (for recovery and host reloads). */
export function overlaySessions(context: Context): Promise<string[]> {
  return read(context, async (sql) =>
    (await sql.all<{ session_id: string }>("SELECT session_id FROM session_plugin WHERE desired_revision_id IS NOT NULL OR active_revision_id IS NOT NULL ORDER BY session_id")).map(
      (row) => row.session_id,
    ),
  );
}

export type NewRevision = Omit<StoredRevision, "sessionId" | "sequence">;

/** Records `revision` as the Session's next one and makes it the desired revision, pending activation. */
export function recordDesired(context: Context, sessionId: string, revision: NewRevision, now: number): Promise<StoredRevision> {
  return write(context, async (tx) => {
    await tx.sql.run(`INSERT INTO session_plugin (session_id, next_sequence, updated_at) VALUES (?, 1, ?) ON CONFLICT (session_id) DO NOTHING`, [sessionId, now]);
    const overlay = overlayOf((await tx.sql.get(`SELECT ${OVERLAY} FROM session_plugin WHERE session_id = ?`, [sessionId]))!);
    const sequence = overlay.nextSequence;
    await tx.sql.run(`INSERT INTO session_plugin_revision (${REVISION}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, [
      sessionId,
      revision.id,
      sequence,
      JSON.stringify(revision.source),
      JSON.stringify(revision.resolved),
      JSON.stringify(revision.options),
      JSON.stringify(revision.mcpServers),
      JSON.stringify(revision.skills),
      revision.artifact,
      revision.requestHash,
      revision.createdAt,
    ]);
    await tx.sql.run(
      `UPDATE session_plugin SET next_sequence = ?, desired_revision_id = ?, activation_state = 'pending', activation_failure = NULL, updated_at = ? WHERE session_id = ?`,
      [sequence + 1, revision.id, now, sessionId],
    );
    return { ...revision, sessionId, sequence };
  });
}

/**
 * Moves the desired revision `revisionId`'s activation to `state` (`active` also makes it the
 * active revision). A no-op when another revision became desired meanwhile; returns whether it applied.
 */
export function setActivation(context: Context, sessionId: string, revisionId: string, state: ActivationState, failure: string | null, now: number): Promise<boolean> {
  return write(context, async (tx) => {
    const { changes } = await tx.sql.run(
      `UPDATE session_plugin SET activation_state = ?1, activation_failure = ?2,
         active_revision_id = CASE WHEN ?1 = 'active' THEN ?3 ELSE active_revision_id END, updated_at = ?4
       WHERE session_id = ?5 AND desired_revision_id = ?3`,
      [state, failure, revisionId, now, sessionId],
    );
    return changes > 0;
  });
}

/** Clears the overlay: no desired or active revision (recorded revisions and the sequence stay). */
export function clearOverlay(context: Context, sessionId: string, now: number): Promise<void> {
  return write(context, async (tx) => {
    await tx.sql.run(
      `UPDATE session_plugin SET desired_revision_id = NULL, activation_state = NULL, activation_failure = NULL, active_revision_id = NULL, updated_at = ? WHERE session_id = ?`,
      [now, sessionId],
    );
  });
}

/** The artifact records of every Session's desired and active revisions (what the artifact cache must keep). */
export function referencedArtifacts(context: Context): Promise<string[]> {
  return read(context, async (sql) =>
    (
      await sql.all<{ artifact: string | null }>(
        `SELECT r.artifact AS artifact FROM session_plugin p JOIN session_plugin_revision r
           ON r.session_id = p.session_id AND (r.id = p.desired_revision_id OR r.id = p.active_revision_id)`,
      )
    )
      .map((row) => row.artifact)
      .filter((artifact): artifact is string => artifact !== null),
  );
}
