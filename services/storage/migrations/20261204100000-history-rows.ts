import type { InValue } from "@libsql/client";
import { entryRows, turnRows, type HistoryRowWrite } from "../history-rows.js";
import { foldCase } from "../text-fold.js";
import type { Migration, MigrationTransaction } from "./types.js";

/**
 * Published history rows (`history_row`; a Session's history event counter is its highest
 * `source_sequence`) and the search index (`history_fts`: FTS5, trigram, contentless, fields as
 * written and simple-case-folded), dropped with its row by `history_row_unindexed`. Existing
 * settled Turns and conversation entries are published in history-revision order, one event
 * each, as new ones will be. Additive: older builds ignore the tables (and publish nothing).
 */
export const migration: Migration = {
  id: "20261204100000_history-rows",
  breaking: false,
  async up(tx) {
    await tx.executeMultiple(`
CREATE TABLE history_row (
  id integer PRIMARY KEY AUTOINCREMENT NOT NULL,
  session_id text NOT NULL REFERENCES session(id) ON DELETE cascade,
  source_sequence integer NOT NULL,
  item_index integer NOT NULL,
  role text NOT NULL,
  kind text NOT NULL,
  turn_id text,
  entry_id text,
  part_id text,
  hidden integer DEFAULT 0 NOT NULL,
  body text NOT NULL,
  thinking text,
  tool_input text,
  tool text,
  created_at integer NOT NULL
);
CREATE UNIQUE INDEX history_row_position_idx ON history_row (session_id, source_sequence, item_index);
CREATE VIRTUAL TABLE history_fts USING fts5(body, thinking, tool_input, body_folded, thinking_folded, tool_input_folded, content='', contentless_delete=1, tokenize='trigram case_sensitive 1');
CREATE TRIGGER history_row_unindexed AFTER DELETE ON history_row BEGIN
  DELETE FROM history_fts WHERE rowid = OLD.id;
END;
`);
    await backfill(tx);
  },
};

async function publish(tx: MigrationTransaction, sessionId: string, sequence: number, rows: readonly HistoryRowWrite[]): Promise<void> {
  for (const [index, row] of rows.entries()) {
    const inserted = await tx.execute({
      sql: "INSERT INTO history_row (session_id, source_sequence, item_index, role, kind, turn_id, entry_id, part_id, hidden, body, thinking, tool_input, tool, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
      args: [sessionId, sequence, index, row.role, row.kind, row.turnId, row.entryId, row.partId, row.hidden ? 1 : 0, row.body, row.thinking, row.toolInput, row.tool ? JSON.stringify(row.tool) : null, row.createdAt] as InValue[],
    });
    await tx.execute({
      sql: "INSERT INTO history_fts (rowid, body, thinking, tool_input, body_folded, thinking_folded, tool_input_folded) VALUES (?, ?, ?, ?, ?, ?, ?)",
      args: [inserted.rows[0]!["id"] as number, row.body, row.thinking, row.toolInput, foldCase(row.body), row.thinking === null ? null : foldCase(row.thinking), row.toolInput === null ? null : foldCase(row.toolInput)],
    });
  }
}

async function backfill(tx: MigrationTransaction): Promise<void> {
  const items = await tx.execute(`
SELECT 'turn' AS kind, id, session_id, history_revision AS revision, request AS data, accepted_at, completed_at FROM turn WHERE phase IN ('completed', 'cancelled', 'failed')
UNION ALL
SELECT 'entry' AS kind, id, session_id, history_revision AS revision, content AS data, accepted_at, NULL FROM conversation_entry
ORDER BY session_id, revision`);
  const sequences = new Map<string, number>();
  for (const item of items.rows) {
    const sessionId = item["session_id"] as string;
    const id = item["id"] as string;
    let rows: HistoryRowWrite[];
    if (item["kind"] === "turn") {
      const parts = await tx.execute({ sql: "SELECT data FROM turn_part WHERE turn_id = ? ORDER BY ordinal", args: [id] });
      rows = turnRows(
        { id, request: JSON.parse(item["data"] as string), acceptedAt: item["accepted_at"] as number, completedAt: (item["completed_at"] as number | null) ?? null },
        parts.rows.map((part) => JSON.parse(part["data"] as string)),
      );
    } else {
      rows = entryRows({ id, content: JSON.parse(item["data"] as string), acceptedAt: item["accepted_at"] as number });
    }
    const sequence = (sequences.get(sessionId) ?? 0) + 1;
    sequences.set(sessionId, sequence);
    await publish(tx, sessionId, sequence, rows);
  }
}
