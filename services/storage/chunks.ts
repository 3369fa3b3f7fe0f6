// Multi-row statements under SQLite's limits. One statement binds at most
// SQLITE_MAX_VARIABLE_NUMBER values: 32,766 in the libSQL build this project ships, 999 in SQLite
// before 3.32 and in builds that keep that default, and a libSQL server or another adapter may
// allow fewer. A statement that binds a value per row (a multi-row INSERT) or per id (an
// `IN (…)` list) is therefore cut into statements of at most MAX_BOUND_VALUES values: every one
// goes through `chunked` (or `inChunks`), whatever the number of rows — a Turn with 10,000 tool
// calls writes its parts, events and history rows as a few dozen statements, not one that
// SQLite refuses. Full chunks reuse one prepared statement, so the statement cache stays small.

/** Values one statement binds at most: SQLite's historic floor (999), which every build and adapter meets. */
export const MAX_BOUND_VALUES = 999;

let boundValues = MAX_BOUND_VALUES;

/**
 * Lowers the values one statement binds, for an engine that allows fewer than 999: Durable
 * Object SQLite binds at most 100 ("too many SQL variables" past that), so the Worker host sets
 * 100 (worker/storage.ts) — one storage engine per process there.
 */
export function useBoundValueLimit(limit: number): void {
  if (!Number.isSafeInteger(limit) || limit < 20 || limit > MAX_BOUND_VALUES) throw new RangeError(`the bound-value limit must be an integer from 20 to ${MAX_BOUND_VALUES}`);
  boundValues = limit;
}

/**
 * `items` cut into runs that fit one statement each: a statement binding `fixed` values of its
 * own plus `perItem` per item. Empty for no items.
 */
export function chunked<T>(items: readonly T[], perItem: number, fixed = 0): T[][] {
  const size = Math.max(1, Math.floor((boundValues - fixed) / perItem));
  const out: T[][] = [];
  for (let start = 0; start < items.length; start += size) out.push(items.slice(start, start + size));
  return out;
}

/** `(?, ?, …), (?, ?, …)`: `rows` row tuples of `columns` placeholders each, for a multi-row VALUES. */
export function valueRows(rows: number, columns: number): string {
  const tuple = `(${Array.from({ length: columns }, () => "?").join(", ")})`;
  return Array.from({ length: rows }, () => tuple).join(", ");
}

/**
 * Runs `query` once per chunk of `ids` (each chunk bound beside `fixed` other values) and
 * concatenates the rows, chunk by chunk: for `… IN (…)` reads and writes of any number of ids.
 */
export async function inChunks<T, R>(ids: readonly T[], fixed: number, query: (chunk: T[]) => Promise<R[]>): Promise<R[]> {
  const out: R[] = [];
  for (const chunk of chunked(ids, 1, fixed)) out.push(...(await query(chunk)));
  return out;
}
