// One row shape for every executor over SQLite (the local engine and the Durable Object adapter),
// so the repositories read rows the same way whatever runs the statement.
import type { ResultSet, Row } from "@libsql/client";

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

/** A statement's result in @libsql/client's shape. */
export function resultSet(columns: string[], columnTypes: string[], rows: Row[], rowsAffected: number, lastInsertRowid: bigint | undefined): ResultSet {
  return { columns, columnTypes, rows, rowsAffected, lastInsertRowid, toJSON: () => ({ columns, columnTypes, rows, rowsAffected }) };
}
