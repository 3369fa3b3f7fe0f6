// Large values split across rows: a Durable Object's SQLite refuses any string, blob or row over
// 2 MB (SQLITE_TOOBIG), and a Turn whose model output is a few MB must still complete there. One
// design on both hosts (libSQL has no such limit, but the same schema and code serve both):
//
// - Writes: before a statement runs, if the strings it binds are too large together (over
//   SPILL_BUDGET UTF-16 units: at most 1.5 MB of UTF-8), the largest are moved, one after the
//   other until the rest fit, into `spilled_value` rows of at most SPILL_PIECE units each (keyed
//   by a fresh random id and an ordinal), written just before it in the same transaction; the
//   statement binds a marker instead: the JSON string `"\u0001zc:<id>"` (valid JSON, so `json()`
//   and the JSON columns keep working; json_extract over it finds nothing). A bound string that
//   already starts like a marker is always spilled, so every stored marker is a real one.
// - Reads: every result value that is a marker is replaced by the value it stands for (one more
//   statement per read that meets any: `SELECT … FROM spilled_value WHERE id IN (…)`). Reads that
//   aggregate JSON in SQL (a Turn's parts) get the marker as a parsed string: `resolveParsed`.
// - Freeing: the triggers of migration `20261211100000_spilled-values` delete a value's pieces when
//   the row holding its marker is deleted (also by a cascade: a Session, a server) or the column
//   is updated to another value.
//
// Small statements pay nothing: no statement is added unless a value is spilled or read back.
// The executor is put around every transaction's and the handle's raw executor (handle.ts).
// Reads and the statements that write the search index (`history_fts`, contentless: nothing of
// it is read back) are never spilled: publishRows bounds what it indexes instead.
import { chunked, inChunks, valueRows } from "./chunks.js";
import type { SqlExecutor, SqlValue } from "./engine.js";

/** The strings one statement binds together at most, in UTF-16 units (≤ 3 bytes of UTF-8 each: 1.5 MB). */
export const SPILL_BUDGET = 512 * 1024;
/** One `spilled_value` piece at most, in UTF-16 units (≤ 768 KB of UTF-8). */
export const SPILL_PIECE = 256 * 1024;

/** How a stored marker starts: the JSON text of a string starting with U+0001 and `zc:`. */
export const MARKER_HEAD = '"\\u0001zc:';
/** How a marker starts once parsed as JSON (inside an aggregate read). */
const PARSED_HEAD = "\u0001zc:";
const ID_LENGTH = 36;
const MARKER_LENGTH = MARKER_HEAD.length + ID_LENGTH + 1;

const marker = (id: string): string => `${MARKER_HEAD}${id}"`;
const storedId = (value: unknown): string | undefined =>
  typeof value === "string" && value.length === MARKER_LENGTH && value.startsWith(MARKER_HEAD) && value.endsWith('"') ? value.slice(MARKER_HEAD.length, -1) : undefined;
const parsedId = (value: unknown): string | undefined =>
  typeof value === "string" && value.length === PARSED_HEAD.length + ID_LENGTH && value.startsWith(PARSED_HEAD) ? value.slice(PARSED_HEAD.length) : undefined;

/** `text` cut into pieces of at most SPILL_PIECE units, never between the two halves of a surrogate pair. */
export function pieces(text: string): string[] {
  const out: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + SPILL_PIECE);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end -= 1;
    out.push(text.slice(start, end));
    start = end;
  }
  return out;
}

/** The arguments a statement binds after spilling, and the ids of the values it spilled. */
interface Spilled {
  readonly args: readonly SqlValue[] | undefined;
  readonly ids: readonly string[];
}

/**
 * Statements the spill never touches: reads (what they bind is compared, not stored: a search
 * text shaped like a marker stays itself) and the contentless search index.
 */
const unspilled = (sql: string): boolean => /^\s*SELECT\b/i.test(sql) || sql.includes("history_fts");

/** Whether a statement binds nothing to spill: its strings fit the budget and none looks like a marker (checked without a promise: the common case). */
function fits(sql: string, args: readonly SqlValue[] | undefined, budget: number): boolean {
  if (args === undefined || args.length === 0) return true;
  let total = 0;
  let forced = false;
  for (const value of args) {
    if (typeof value !== "string") continue;
    total += value.length;
    if (value.startsWith(MARKER_HEAD)) forced = true;
  }
  return (total <= budget && !forced) || unspilled(sql);
}

/** Whether any value of `rows` is a stored marker. */
function hasMarker(rows: readonly unknown[]): boolean {
  for (const row of rows) {
    for (const value of Object.values(row as Record<string, unknown>)) if (storedId(value) !== undefined) return true;
  }
  return false;
}

/** The arguments with the largest strings replaced by markers (their pieces written first), or the same array when they fit. */
async function spillArgs(inner: SqlExecutor, sql: string, args: readonly SqlValue[] | undefined, budget: number): Promise<Spilled> {
  if (args === undefined || fits(sql, args, budget)) return { args, ids: [] };
  let total = 0;
  for (const value of args) if (typeof value === "string") total += value.length;
  const out = [...args];
  const order = out
    .map((value, index) => ({ index, length: typeof value === "string" ? value.length : -1 }))
    .filter((entry) => entry.length >= 0)
    .sort((a, b) => b.length - a.length);
  const rows: SqlValue[][] = [];
  const ids: string[] = [];
  for (const { index, length } of order) {
    const value = out[index] as string;
    if (total <= budget && !value.startsWith(MARKER_HEAD)) continue;
    const id = crypto.randomUUID();
    ids.push(id);
    pieces(value).forEach((piece, ordinal) => rows.push([id, ordinal, piece]));
    out[index] = marker(id);
    total -= length - MARKER_LENGTH;
  }
  for (const chunk of chunked(rows, 3)) {
    await inner.run(`INSERT INTO spilled_value (id, ordinal, data) VALUES ${valueRows(chunk.length, 3)}`, chunk.flat());
  }
  return { args: out, ids };
}

/** A statement that wrote no row (a guard that did not match, an insert that did nothing) leaves no pieces behind. */
async function unlessWritten(inner: SqlExecutor, spilled: Spilled, wrote: boolean): Promise<void> {
  if (wrote || spilled.ids.length === 0) return;
  await inChunks(spilled.ids, 0, async (chunk) => (await inner.run(`DELETE FROM spilled_value WHERE id IN (${chunk.map(() => "?").join(", ")})`, chunk), []));
}

/** The read of pieces: never resolved again (a piece is text, whatever it looks like). */
const PIECES_SELECT = "SELECT id, data FROM spilled_value WHERE id IN";

/** The joined values of `ids`, by id; an id without pieces is absent. */
async function readSpilled(inner: SqlExecutor, ids: ReadonlySet<string>): Promise<Map<string, string>> {
  const found = await inChunks([...ids], 0, (chunk) => inner.all<{ id: string; data: string }>(`${PIECES_SELECT} (${chunk.map(() => "?").join(", ")}) ORDER BY id, ordinal`, chunk));
  const joined = new Map<string, string[]>();
  for (const row of found) {
    const list = joined.get(row.id) ?? [];
    list.push(row.data);
    joined.set(row.id, list);
  }
  return new Map([...joined].map(([id, list]) => [id, list.join("")]));
}

/** The rows with every marker replaced; undefined when a value's pieces are gone (a write replaced it between the two reads). */
async function resolveRows<T>(inner: SqlExecutor, rows: T[]): Promise<T[] | undefined> {
  const ids = new Set<string>();
  for (const row of rows) {
    for (const value of Object.values(row as Record<string, unknown>)) {
      const id = storedId(value);
      if (id !== undefined) ids.add(id);
    }
  }
  if (ids.size === 0) return rows;
  const values = await readSpilled(inner, ids);
  if (values.size < ids.size) return undefined;
  for (const row of rows) {
    const record = row as Record<string, unknown>;
    for (const [key, value] of Object.entries(record)) {
      const id = storedId(value);
      if (id !== undefined) record[key] = values.get(id);
    }
  }
  return rows;
}

const atMostOne = <T>(row: T | undefined): T[] => (row === undefined ? [] : [row]);

/** A read that meets a marker whose pieces are gone is run again this many times before it fails. */
const READ_ATTEMPTS = 3;

/** `inner` with large bound strings spilled and markers in results resolved. */
export function spilling(inner: SqlExecutor, budget: number = SPILL_BUDGET): SqlExecutor {
  // `one`: the statement runs as the inner executor's `get` (its first row only), as it did before
  // the spill: reading every row of a `get` whose query has no LIMIT would cost what the caller avoided.
  async function read<T>(sql: string, args: readonly SqlValue[] | undefined, one: boolean): Promise<T[]> {
    if (sql.startsWith(PIECES_SELECT)) return inner.all<T>(sql, args);
    // Nothing to spill and no marker read (every statement on Node but a rare one): no promise besides the statement's own.
    const spilled = fits(sql, args, budget) ? { args, ids: [] } : await spillArgs(inner, sql, args, budget);
    for (let attempt = 1; ; attempt++) {
      const rows = one ? atMostOne(await inner.get<T>(sql, spilled.args)) : await inner.all<T>(sql, spilled.args);
      if (spilled.ids.length > 0) await unlessWritten(inner, spilled, rows.length > 0);
      if (!hasMarker(rows)) return rows;
      const resolved = await resolveRows(inner, rows);
      if (resolved !== undefined) return resolved;
      if (attempt >= READ_ATTEMPTS || /^\s*(INSERT|UPDATE|DELETE|WITH)/i.test(sql)) throw new Error("A spilled value's pieces are missing");
    }
  }
  return {
    all: <T>(sql: string, args?: readonly SqlValue[]) => read<T>(sql, args, false),
    get: async <T>(sql: string, args?: readonly SqlValue[]) => (await read<T>(sql, args, true))[0],
    run: async (sql, args) => {
      if (fits(sql, args, budget)) return inner.run(sql, args);
      const spilled = await spillArgs(inner, sql, args, budget);
      const result = await inner.run(sql, spilled.args);
      await unlessWritten(inner, spilled, result.changes > 0);
      return result;
    },
  };
}

/**
 * Replaces the markers in values parsed from JSON that SQL aggregated (`json(data)` of a spilled
 * column is its marker, a JSON string): each becomes the value it stands for, parsed. The
 * values are `holders[i][key]`; one statement reads every marker's pieces.
 */
export async function resolveParsed(sql: SqlExecutor, holders: readonly Record<string, unknown>[], key: string): Promise<void> {
  const ids = new Set<string>();
  for (const holder of holders) {
    const id = parsedId(holder[key]);
    if (id !== undefined) ids.add(id);
  }
  if (ids.size === 0) return;
  const values = await readSpilled(sql, ids);
  for (const holder of holders) {
    const id = parsedId(holder[key]);
    if (id === undefined) continue;
    const value = values.get(id);
    if (value === undefined) throw new Error("A spilled value's pieces are missing");
    holder[key] = JSON.parse(value);
  }
}

/** Whether `error` is SQLite refusing a string, blob or row over its length limit (a Durable Object's 2 MB). */
export const isTooBig = (error: unknown): boolean => error instanceof Error && /SQLITE_TOOBIG|string or blob too big/i.test(`${error.message} ${(error as { code?: unknown }).code ?? ""}`);
