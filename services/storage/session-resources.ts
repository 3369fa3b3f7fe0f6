/**
 * Reads behind a Session's own resources (services/core/turns/session-resources.ts): the prompts
 * that can carry attachments, and the archived tool results its tool parts recorded. Both are
 * scoped to one Session in SQL, so an address of another Session's resource finds nothing.
 */
import { isStorageHandle, type StorageHandle, type StorageTransaction } from "./database.js";
import type { SqlExecutor } from "./engine.js";
import { mapBusy } from "./errors.js";
import { resolveParsed } from "./spill.js";

type Context = StorageHandle | StorageTransaction;

function read<T>(context: Context, fn: (sql: SqlExecutor) => Promise<T>): Promise<T> {
  return isStorageHandle(context) ? mapBusy(() => fn(context.reader().sql)) : fn(context.sql);
}

/** A Turn whose request or steering input holds inline (base64) content. */
export interface PromptSourceRow {
  readonly turnId: string;
  readonly historyRevision: number;
  readonly sequence: number;
  readonly startedAt: number | null;
  /** The recorded request (the contract's TurnRequest JSON). */
  readonly request: unknown;
  /** Its steering input, in sequence order (the contract's Steer JSON). */
  readonly steers: readonly unknown[];
}

/**
 * The Turns of `sessionId` admitted at history revision `throughRevision` or before whose
 * request or steers mention base64 content, in history order. (A text prefilter: the caller
 * decides from the decoded JSON.)
 */
export function listPromptSources(context: Context, sessionId: string, throughRevision: number): Promise<PromptSourceRow[]> {
  return read(context, async (sql) => {
    const rows = await sql.all(
      `SELECT t.id, t.history_revision, t.sequence, t.started_at, t.request,
         (SELECT json_group_array(json(s.data)) FROM (SELECT data FROM turn_steer WHERE turn_id = t.id ORDER BY sequence) s) AS steers_json
       FROM turn t
       WHERE t.session_id = ? AND t.history_revision <= ?
         AND (instr(t.request, '"base64"') > 0 OR substr(t.request, 1, 10) = '"\\u0001zc:'
           OR EXISTS (SELECT 1 FROM turn_steer x WHERE x.turn_id = t.id AND (instr(x.data, '"base64"') > 0 OR substr(x.data, 1, 10) = '"\\u0001zc:')))
       ORDER BY t.history_revision, t.sequence`,
      [sessionId, throughRevision],
    );
    const steers = rows.map((raw) => (JSON.parse(raw["steers_json"] as string) as unknown[]).map((data) => ({ data })));
    // A spilled request is read back whole by the executor; a spilled steer is its marker in the aggregate (spill.ts).
    await resolveParsed(sql, steers.flat(), "data");
    return rows.map((raw, index) => ({
      turnId: raw["id"] as string,
      historyRevision: Number(raw["history_revision"]),
      sequence: Number(raw["sequence"]),
      startedAt: raw["started_at"] === null ? null : Number(raw["started_at"]),
      request: JSON.parse(raw["request"] as string),
      steers: steers[index]!.map((steer) => steer.data),
    }));
  });
}

/**
 * The recorded artifact (`{ id, path, observedBytes, state }`) of a tool part of `sessionId`
 * whose artifact id is `artifactId`, or whose artifact path is `path`; undefined when none.
 */
export function findArchivedToolResult(context: Context, sessionId: string, match: { readonly artifactId?: string; readonly path?: string }): Promise<unknown> {
  return read(context, async (sql) => {
    const raw = await sql.get(
      `SELECT json_extract(p.data, '$.artifact') AS artifact FROM turn_part p JOIN turn t ON t.id = p.turn_id
       WHERE t.session_id = ? AND json_extract(p.data, '$.type') = 'tool'
         AND (json_extract(p.data, '$.artifact.id') = ? OR json_extract(p.data, '$.artifact.path') = ?)
       ORDER BY t.sequence, p.ordinal LIMIT 1`,
      [sessionId, match.artifactId ?? null, match.path ?? null],
    );
    return raw?.["artifact"] ? JSON.parse(raw["artifact"] as string) : undefined;
  });
}
