/**
 * Published history rows and their search index. Every settled Turn and every conversation entry
 * publishes its rows at the Session's next history event (its highest `source_sequence` + 1), in the
 * same transaction as the change itself: `changeTurn` when its events settle the Turn
 * (`turn.finished`), `appendConversationEntry`, and `insertFork` for what it copies. Rows are
 * immutable. `history_fts` (FTS5, trigram, contentless) indexes each row's fields as written and
 * simple-case-folded (`text-fold.ts`), keyed by the row id: the `history_row_indexed` trigger
 * indexes a row as it is inserted (folding with SQLite's ASCII-only `lower()`), and a row with
 * non-ASCII text is indexed again here with `foldCase`; the `history_row_unindexed` trigger
 * drops a row's index entry when the row goes (Session deletion cascades).
 *
 * The stored part JSON is the contract's Turn part shape; this room maps it without importing
 * the contract (the fields it reads are listed in `StoredPart`).
 */
import type { StorageTransaction } from "./database.js";
import type { SqlExecutor, SqlValue } from "./engine.js";
import { chunked, valueRows } from "./chunks.js";
import { recordSettlementDiagnostic } from "./diagnostics.js";
import { foldCase } from "./text-fold.js";
import { SPILL_BUDGET, SPILL_PIECE, pieces } from "./spill.js";

export type HistoryRole = "user" | "assistant" | "tool";
export type HistoryKind = "prompt" | "entry" | "steering" | "text" | "refusal" | "reasoning" | "tool";

export interface HistoryToolRecord {
  readonly toolId: string;
  readonly toolCallId: string;
  readonly state: string;
  readonly internal: boolean;
}

/** One row as written (before it has a position). */
export interface HistoryRowWrite {
  readonly role: HistoryRole;
  readonly kind: HistoryKind;
  readonly turnId: string | null;
  readonly entryId: string | null;
  readonly partId: string | null;
  readonly hidden: boolean;
  readonly body: string;
  readonly thinking: string | null;
  readonly toolInput: string | null;
  readonly tool: HistoryToolRecord | null;
  readonly createdAt: number;
}

/** One published row. */
export interface HistoryRowRecord extends HistoryRowWrite {
  readonly id: number;
  readonly sessionId: string;
  readonly sourceSequence: number;
  readonly itemIndex: number;
}

interface StoredTextPart {
  readonly type: string;
  readonly text?: string;
  readonly reference?: string;
  readonly value?: unknown;
}

interface StoredPart {
  readonly type: string;
  readonly id?: string;
  readonly text?: string;
  readonly toolId?: string;
  readonly toolCallId?: string;
  readonly state?: string;
  readonly input?: unknown;
  readonly output?: unknown;
  readonly origin?: { readonly kind?: string };
  readonly fault?: { readonly message?: string };
  readonly canonicalResult?: { readonly format?: string; readonly value?: unknown };
  readonly steers?: readonly { readonly prompt?: readonly StoredTextPart[] }[];
  readonly requestedAt?: number;
  readonly completedAt?: number;
  readonly promotedAt?: number;
}

const json = (value: unknown): string => (typeof value === "string" ? value : (JSON.stringify(value ?? null) ?? "null"));

/** Text parts joined by newlines; content references named as `[reference]`; images left out. */
function promptText(parts: readonly StoredTextPart[] | undefined): string {
  return (parts ?? [])
    .map((part) => (part.type === "text" ? (part.text ?? "") : part.type === "content-reference" ? `[${part.reference ?? ""}]` : undefined))
    .filter((text): text is string => text !== undefined)
    .join("\n");
}

function toolResultText(part: StoredPart): string {
  const result = part.canonicalResult;
  if (result?.format === "text" && typeof result.value === "string") return result.value;
  if (result?.format === "json") return json(result.value);
  if (result?.format === "content" && Array.isArray(result.value)) {
    return (result.value as StoredTextPart[])
      .map((item) => (item.type === "text" ? (item.text ?? "") : item.type === "json" ? json(item.value) : undefined))
      .filter((text): text is string => text !== undefined)
      .join("\n");
  }
  if (part.fault?.message !== undefined) return part.fault.message;
  if (part.output !== undefined) return json(part.output);
  return "";
}

const base = { turnId: null, entryId: null, partId: null, hidden: false, thinking: null, toolInput: null, tool: null } as const;

/** The rows a settled Turn publishes: its prompt, then each part in order. */
export function turnRows(turn: { readonly id: string; readonly request: unknown; readonly acceptedAt: number; readonly completedAt: number | null }, parts: readonly unknown[]): HistoryRowWrite[] {
  const at = turn.completedAt ?? turn.acceptedAt;
  const request = turn.request as { prompt?: StoredTextPart[] } | null;
  const rows: HistoryRowWrite[] = [{ ...base, role: "user", kind: "prompt", turnId: turn.id, body: promptText(request?.prompt), createdAt: turn.acceptedAt }];
  for (const raw of parts) {
    const part = raw as StoredPart;
    const common = { ...base, turnId: turn.id, partId: part.id ?? null };
    switch (part.type) {
      case "text":
      case "refusal":
        rows.push({ ...common, role: "assistant", kind: part.type, body: part.text ?? "", createdAt: at });
        break;
      case "reasoning":
        rows.push({ ...common, role: "assistant", kind: "reasoning", body: "", thinking: part.text ?? "", createdAt: part.completedAt ?? at });
        break;
      case "tool":
        rows.push({
          ...common,
          role: "tool",
          kind: "tool",
          hidden: part.origin?.kind === "codemode",
          body: toolResultText(part),
          toolInput: json(part.input),
          tool: { toolId: part.toolId ?? "", toolCallId: part.toolCallId ?? "", state: part.state ?? "requested", internal: part.origin?.kind === "codemode" },
          createdAt: part.completedAt ?? part.requestedAt ?? at,
        });
        break;
      case "steering":
        rows.push({ ...common, role: "user", kind: "steering", body: (part.steers ?? []).map((steer) => promptText(steer.prompt)).join("\n"), createdAt: part.promotedAt ?? at });
        break;
      default:
        break;
    }
  }
  return rows;
}

/** The row a conversation entry publishes. */
export function entryRows(entry: { readonly id: string; readonly content: readonly unknown[]; readonly acceptedAt: number }): HistoryRowWrite[] {
  return [{ ...base, role: "user", kind: "entry", entryId: entry.id, body: promptText(entry.content as StoredTextPart[]), createdAt: entry.acceptedAt }];
}

const ROW_COLUMNS = "id, session_id, source_sequence, item_index, role, kind, turn_id, entry_id, part_id, hidden, body, thinking, tool_input, tool, created_at";

export function rowFromRaw(raw: Record<string, unknown>): HistoryRowRecord {
  return {
    id: raw["id"] as number,
    sessionId: raw["session_id"] as string,
    sourceSequence: raw["source_sequence"] as number,
    itemIndex: raw["item_index"] as number,
    role: raw["role"] as HistoryRole,
    kind: raw["kind"] as HistoryKind,
    turnId: (raw["turn_id"] as string | null) ?? null,
    entryId: (raw["entry_id"] as string | null) ?? null,
    partId: (raw["part_id"] as string | null) ?? null,
    hidden: Boolean(raw["hidden"]),
    body: raw["body"] as string,
    thinking: (raw["thinking"] as string | null) ?? null,
    toolInput: (raw["tool_input"] as string | null) ?? null,
    tool: raw["tool"] === null || raw["tool"] === undefined ? null : (JSON.parse(raw["tool"] as string) as HistoryToolRecord),
    createdAt: raw["created_at"] as number,
  };
}

/**
 * Publishes `rows` at the Session's next history event, in the caller's transaction: the rows
 * and their index entries are written in chunks (chunks.ts), so a Turn of any length publishes;
 * the first chunk's INSERT takes the sequence (the Session's highest + 1, from the position index).
 * Returns the sequence (undefined, writing nothing, when `rows` is empty).
 */
export async function publishRows(tx: StorageTransaction, sessionId: string, rows: readonly HistoryRowWrite[]): Promise<number | undefined> {
  if (rows.length === 0) return undefined;
  const indexed = rows.map((row, itemIndex) => ({ row, itemIndex }));
  const ids = new Map<number, number>();
  // The first chunk's INSERT takes the sequence itself (the Session's highest + 1, evaluated once
  // before it inserts); later chunks reuse the one it returned.
  let sequence: number | undefined;
  // Rows of a chunk whose text is too large for one statement have their largest fields spilled
  // (spill.ts): the insert trigger indexed their markers, so they are indexed again below.
  const spilled = new Set<number>();
  for (const chunk of chunked(indexed, 13, 1)) {
    const args: SqlValue[] = [];
    for (const { row, itemIndex } of chunk) {
      args.push(sessionId, itemIndex, row.role, row.kind, row.turnId, row.entryId, row.partId, row.hidden ? 1 : 0, row.body, row.thinking, row.toolInput, row.tool ? JSON.stringify(row.tool) : null, row.createdAt);
    }
    // The spilling executor's own rule: the statement's strings together over the budget.
    if (args.reduce<number>((sum, value) => sum + (typeof value === "string" ? value.length : 0), 0) > SPILL_BUDGET) {
      for (const { itemIndex } of chunk) spilled.add(itemIndex);
    }
    const next = sequence === undefined ? "(SELECT COALESCE(MAX(source_sequence), 0) + 1 FROM history_row WHERE session_id = ?)" : "?";
    const inserted = await tx.sql.all<{ id: number; item_index: number; source_sequence: number }>(
      `WITH next (sequence) AS MATERIALIZED (SELECT ${next})
       INSERT INTO history_row (session_id, source_sequence, item_index, role, kind, turn_id, entry_id, part_id, hidden, body, thinking, tool_input, tool, created_at)
       SELECT v.column1, next.sequence, v.column2, v.column3, v.column4, v.column5, v.column6, v.column7, v.column8, v.column9, v.column10, v.column11, v.column12, v.column13
       FROM (VALUES ${valueRows(chunk.length, 13)}) AS v CROSS JOIN next
       RETURNING id, item_index, source_sequence`,
      [sequence ?? sessionId, ...args],
    );
    for (const row of inserted) {
      ids.set(row.item_index, row.id);
      sequence = row.source_sequence;
    }
  }
  // The insert trigger indexed every row with SQLite's lower(), which folds ASCII only: rows with
  // other text are indexed again, folded by foldCase (one statement per chunk, none for ASCII).
  // A field is indexed up to its first SPILL_PIECE characters (one SQL value stays under a
  // Durable Object's 2 MB; this statement is never spilled).
  const unicode = indexed.filter(
    ({ row, itemIndex }) => spilled.has(itemIndex) || !isAscii(row.body) || (row.thinking !== null && !isAscii(row.thinking)) || (row.toolInput !== null && !isAscii(row.toolInput)),
  );
  const bounded = (text: string): string => (text.length > SPILL_PIECE ? pieces(text)[0]! : text);
  for (const chunk of chunked(unicode, 7)) {
    const args: SqlValue[] = [];
    for (const { row, itemIndex } of chunk) {
      const body = bounded(row.body);
      const thinking = row.thinking === null ? null : bounded(row.thinking);
      const toolInput = row.toolInput === null ? null : bounded(row.toolInput);
      args.push(ids.get(itemIndex)!, body, thinking, toolInput, foldCase(body), thinking === null ? null : foldCase(thinking), toolInput === null ? null : foldCase(toolInput));
    }
    await tx.sql.run(`INSERT OR REPLACE INTO history_fts (rowid, body, thinking, tool_input, body_folded, thinking_folded, tool_input_folded) VALUES ${valueRows(chunk.length, 7)}`, args);
  }
  return sequence!;
}

/** Whether `text` is ASCII only (SQLite's lower() folds it as foldCase does). */
const isAscii = (text: string): boolean => /^[\x01-\x7f]*$/.test(text);

/** What publishing a settled Turn reads of its row. */
export interface SettledTurnRead {
  readonly session_id: string;
  readonly request: string;
  readonly accepted_at: number;
  readonly completed_at: number | null;
  readonly outcome: string | null;
  readonly revision: number;
}

/** The columns of `SettledTurnRead`, over `turn` (a SELECT, or the RETURNING of the settling UPDATE). */
export const SETTLED_TURN_COLUMNS = "turn.session_id, turn.request, turn.accepted_at, turn.completed_at, turn.outcome, turn.revision";

/** JSON that may be damaged: its value, or undefined when it does not parse. */
function parsedOrUndefined(text: string | null): unknown {
  if (text === null) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Publishes a settled Turn's rows (its row read back, or as `settled` gives it, and its parts, one
 * row each) in the caller's transaction; a Turn settled by this Session's own work (not a fork's
 * copy) also records its failure as a diagnostic. `parts`, when the caller holds every part as
 * stored, are published without reading them back. `promptOnly` publishes the prompt alone, reading
 * no part: the settlement of a Turn whose parts could not be published (see
 * `services/core/turns/settle.ts`).
 */
export async function publishSettledTurn(
  tx: StorageTransaction,
  turnId: string,
  options: { readonly diagnostics?: boolean; readonly settled?: SettledTurnRead; readonly promptOnly?: boolean; readonly parts?: readonly unknown[] } = {},
): Promise<number | undefined> {
  const turn = options.settled ?? (await tx.sql.get<SettledTurnRead>(`SELECT ${SETTLED_TURN_COLUMNS} FROM turn WHERE turn.id = ?`, [turnId]));
  if (!turn) return undefined;
  if (options.diagnostics) {
    await recordSettlementDiagnostic(tx, { sessionId: turn.session_id, turnId, outcome: turn.outcome === null ? null : JSON.parse(turn.outcome), revision: turn.revision, completedAt: turn.completed_at });
  }
  const parts = options.promptOnly
    ? []
    : options.parts ?? (await tx.sql.all<{ data: string }>("SELECT data FROM turn_part WHERE turn_id = ? ORDER BY ordinal", [turnId])).map((row) => JSON.parse(row.data) as unknown);
  const request = options.promptOnly ? parsedOrUndefined(turn.request) : JSON.parse(turn.request);
  return publishRows(tx, turn.session_id, turnRows({ id: turnId, request, acceptedAt: turn.accepted_at, completedAt: turn.completed_at }, parts));
}

// ---------------------------------------------------------------------------
// Reads (each one indexed statement)

/** The Session's latest history event (0 before any). */
export async function latestSequence(sql: SqlExecutor, sessionId: string): Promise<number> {
  const row = await sql.get<{ last: number | null }>("SELECT MAX(source_sequence) AS last FROM history_row WHERE session_id = ?", [sessionId]);
  return row?.last ?? 0;
}

/**
 * Up to `limit` rows after `after` (exclusive) through event `through`, in position order;
 * hidden rows only when `reveal` names them.
 */
export function listRows(
  sql: SqlExecutor,
  sessionId: string,
  options: { readonly after: readonly [number, number]; readonly through: number; readonly limit: number; readonly reveal?: readonly [number, number] | undefined; readonly inclusive?: boolean },
): Promise<HistoryRowRecord[]> {
  const reveal = options.reveal ?? [-1, -1];
  const op = options.inclusive ? ">=" : ">";
  return sql
    .all(
      `SELECT ${ROW_COLUMNS} FROM history_row WHERE session_id = ? AND (source_sequence, item_index) ${op} (?, ?) AND source_sequence <= ? AND (hidden = 0 OR (source_sequence = ? AND item_index = ?)) ORDER BY source_sequence, item_index LIMIT ?`,
      [sessionId, options.after[0], options.after[1], options.through, reveal[0], reveal[1], options.limit],
    )
    .then((rows) => rows.map(rowFromRaw));
}

export async function getRow(sql: SqlExecutor, sessionId: string, position: readonly [number, number]): Promise<HistoryRowRecord | undefined> {
  const raw = await sql.get(`SELECT ${ROW_COLUMNS} FROM history_row WHERE session_id = ? AND source_sequence = ? AND item_index = ?`, [sessionId, position[0], position[1]]);
  return raw ? rowFromRaw(raw) : undefined;
}

/** The id of the first row at or after `position` (Infinity-like when none). */
export async function rowIdAtOrAfter(sql: SqlExecutor, sessionId: string, position: readonly [number, number]): Promise<number | undefined> {
  const row = await sql.get<{ id: number }>(
    "SELECT id FROM history_row WHERE session_id = ? AND (source_sequence, item_index) >= (?, ?) ORDER BY source_sequence, item_index LIMIT 1",
    [sessionId, position[0], position[1]],
  );
  return row?.id;
}

/** The newest row id of the database (0 when none): a server search's fence. */
export async function latestRowId(sql: SqlExecutor): Promise<number> {
  const row = await sql.get<{ id: number | null }>("SELECT MAX(id) AS id FROM history_row");
  return row?.id ?? 0;
}

/** FTS5 phrase over the raw or folded columns; the caller verifies every candidate. */
export function matchExpression(query: string, caseSensitive: boolean): string {
  const phrase = `"${(caseSensitive ? query : foldCase(query)).replaceAll('"', '""')}"`;
  return caseSensitive ? `{body thinking tool_input} : ${phrase}` : `{body_folded thinking_folded tool_input_folded} : ${phrase}`;
}

/** The trigram index answers phrases of at least three code points; shorter ones are scanned. */
export const indexable = (query: string): boolean => [...query].length >= 3;

/**
 * Candidate rows of one Session, in position (= id) order, at most `limit`: index matches of
 * `match` from row id `fromId` on, or (no `match`) every row from `fromPosition` on (inclusive).
 */
export function sessionCandidates(
  sql: SqlExecutor,
  sessionId: string,
  options: { readonly match: string | undefined; readonly fromId: number; readonly fromPosition?: readonly [number, number]; readonly limit: number },
): Promise<HistoryRowRecord[]> {
  const columns = ROW_COLUMNS.split(", ").map((column) => `r.${column}`).join(", ");
  // Without a match the scan walks the position index (ids grow with positions within a Session).
  const from = options.fromPosition ?? [0, 0];
  const query =
    options.match === undefined
      ? sql.all(`SELECT ${columns} FROM history_row r WHERE r.session_id = ? AND (r.source_sequence, r.item_index) >= (?, ?) ORDER BY r.source_sequence, r.item_index LIMIT ?`, [
          sessionId,
          from[0],
          from[1],
          options.limit,
        ])
      : sql.all(`SELECT ${columns} FROM history_fts f CROSS JOIN history_row r ON r.id = f.rowid WHERE history_fts MATCH ? AND f.rowid >= ? AND r.session_id = ? ORDER BY f.rowid LIMIT ?`, [
          options.match,
          options.fromId,
          sessionId,
          options.limit,
        ]);
  return query.then((rows) => rows.map(rowFromRaw));
}

/** Candidate rows of a server's Sessions from row id `toId` down (inclusive), newest first. */
export function serverCandidates(sql: SqlExecutor, server: string, options: { readonly match: string | undefined; readonly toId: number; readonly limit: number }): Promise<HistoryRowRecord[]> {
  const columns = ROW_COLUMNS.split(", ").map((column) => `r.${column}`).join(", ");
  const query =
    options.match === undefined
      ? sql.all(`SELECT ${columns} FROM history_row r CROSS JOIN session s ON s.id = r.session_id WHERE r.id <= ? AND s.server = ? ORDER BY r.id DESC LIMIT ?`, [options.toId, server, options.limit])
      : sql.all(
          `SELECT ${columns} FROM history_fts f CROSS JOIN history_row r ON r.id = f.rowid CROSS JOIN session s ON s.id = r.session_id WHERE history_fts MATCH ? AND f.rowid <= ? AND s.server = ? ORDER BY f.rowid DESC LIMIT ?`,
          [options.match, options.toId, server, options.limit],
        );
  return query.then((rows) => rows.map(rowFromRaw));
}

/**
 * The Tool part (and its Turn) of the Session whose permission request or question batch has id
 * `requestId`, in any phase. A scan of the Session's Tool parts.
 */
export async function findRequestPart(sql: SqlExecutor, sessionId: string, requestId: string): Promise<{ turnId: string; ordinal: number; data: unknown } | undefined> {
  const row = await sql.get<{ turn_id: string; ordinal: number; data: string }>(
    `SELECT p.turn_id, p.ordinal, p.data FROM turn t CROSS JOIN turn_part p ON p.turn_id = t.id
     WHERE t.session_id = ?2 AND json_extract(p.data, '$.type') = 'tool'
       AND (json_extract(p.data, '$.approval.request.id') = ?1 OR json_extract(p.data, '$.question.request.id') = ?1)
     LIMIT 1`,
    [requestId, sessionId],
  );
  return row ? { turnId: row.turn_id, ordinal: row.ordinal, data: JSON.parse(row.data) } : undefined;
}
