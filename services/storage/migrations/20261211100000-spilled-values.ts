import type { Migration } from "./types.js";

/**
 * `spilled_value`: large values split across rows (services/storage/spill.ts). A statement whose
 * bound strings are too large together for a Durable Object's 2 MB row limit stores its largest
 * in pieces here, keyed by a fresh id and an ordinal, and binds the marker `"\u0001zc:<id>"`
 * instead. The triggers free a value's pieces when the row holding its marker is deleted (a
 * Session's or server's cascade too) or the column is set to another value; one pair per table
 * that can hold a large value, firing only when a marker is there. Breaking: a build without it
 * would read markers as the values they stand for.
 */
export const SPILLED_COLUMNS: Readonly<Record<string, readonly string[]>> = {
  turn: ["request", "attribution", "provider_options", "messages", "policy", "usage", "context_use", "cancellation", "outcome", "instructions", "prepared_request"],
  turn_part: ["data"],
  turn_steer: ["data"],
  turn_event: ["data"],
  conversation_entry: ["content", "attribution"],
  compaction: ["trigger", "request", "attribution", "provider_options", "policy", "cancellation", "usage", "outcome"],
  history_row: ["body", "thinking", "tool_input"],
  session_context: ["report"],
  session_diagnostic: ["message"],
  plugin_journal: ["summary", "data"],
  turn_patch: ["files", "patch"],
};

const isMarker = (ref: string): string => `substr(${ref}, 1, 10) = '"\\u0001zc:'`;
const idOf = (ref: string, when: string): string => `CASE WHEN ${when} THEN substr(${ref}, 11, 36) END`;

function triggers(table: string, columns: readonly string[]): string[] {
  const deleted = columns.map((column) => isMarker(`OLD.${column}`));
  const replaced = columns.map((column) => `(${isMarker(`OLD.${column}`)} AND OLD.${column} IS NOT NEW.${column})`);
  return [
    `CREATE TRIGGER ${table}_spill_deleted AFTER DELETE ON ${table} WHEN ${deleted.join(" OR ")} BEGIN
  DELETE FROM spilled_value WHERE id IN (${columns.map((column, index) => idOf(`OLD.${column}`, deleted[index]!)).join(", ")});
END`,
    `CREATE TRIGGER ${table}_spill_replaced AFTER UPDATE OF ${columns.join(", ")} ON ${table} WHEN ${replaced.join(" OR ")} BEGIN
  DELETE FROM spilled_value WHERE id IN (${columns.map((column, index) => idOf(`OLD.${column}`, replaced[index]!)).join(", ")});
END`,
  ];
}

export const migration: Migration = {
  id: "20261211100000_spilled-values",
  breaking: true,
  async up(tx) {
    await tx.execute(`CREATE TABLE spilled_value (
  id text NOT NULL,
  ordinal integer NOT NULL,
  data text NOT NULL,
  PRIMARY KEY (id, ordinal)
)`);
    for (const [table, columns] of Object.entries(SPILLED_COLUMNS)) for (const statement of triggers(table, columns)) await tx.execute(statement);
  },
};
