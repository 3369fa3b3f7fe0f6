// Multi-row statements under SQLite's limits. One statement binds at most
// SQLITE_MAX_VARIABLE_NUMBER values: 32,766 in the libSQL build this project ships, 999 in SQLite
// before 3.32 and in builds that keep that default, and a libSQL server or another adapter may
// allow fewer. A statement that binds a value per row (a multi-row INSERT) or per id (an
// `IN (…)` list) is therefore cut into statements of at most MAX_BOUND_VALUES values (or the host's lower limit): every one
// goes through `chunked` (or `inChunks`), whatever the number of rows — a Turn with 10,000 tool
// calls writes its parts, events and history rows as a few dozen statements, not one that
// SQLite refuses. Full chunks reuse one prepared statement, so the statement cache stays small.
// A Durable Object's SQLite binds at most 100 values per statement: the Worker's storage adapter
// lowers the limit for its isolate (`limitBoundValues`) when it loads.

/** Values one statement binds at most: SQLite's historic floor (999), which every local build and libSQL server meets. */
export const MAX_BOUND_VALUES = 999;

/** Cloudflare's limit on the values one Durable Object SQL statement binds ("too many SQL variables" past it). */
export const DURABLE_OBJECT_MAX_BOUND_VALUES = 100;

let boundValues = MAX_BOUND_VALUES;

/** Lowers the values one statement binds for this process or isolate (never raises it): a host whose SQLite allows fewer calls it once. */
export function limitBoundValues(limit: number): void {
  boundValues = Math.min(boundValues, limit);
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
