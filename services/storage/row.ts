// One row shape for every executor over SQLite (the local engine and the Durable Object adapter),
// so the repositories read rows the same way whatever runs the statement.
import type { Row } from "@libsql/client";

/** A row in @libsql/client's shape: values by index (not enumerable) and by column name. */
export function toRow(values: readonly unknown[], columns: readonly string[]): Row {
  const row = {} as Row;
  Object.defineProperty(row, "length", { value: values.length });
  for (let index = 0; index < values.length; index++) {
    const value = values[index];
    Object.defineProperty(row, index, { value });
    const column = columns[index]!;
    if (!Object.hasOwn(row, column)) Object.defineProperty(row, column, { value, enumerable: true, configurable: true, writable: true });
  }
  return row;
}
