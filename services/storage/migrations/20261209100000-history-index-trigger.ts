import type { Migration } from "./types.js";

/**
 * `history_row_indexed`: a published history row indexes itself in `history_fts` as it is
 * inserted — its fields as written and folded by SQLite's `lower()`, which for ASCII text is the
 * simple case folding `text-fold.ts` applies — so publishing a Turn is one statement, not two.
 * A row with any non-ASCII field is indexed again by its writer (`publishRows`, INSERT OR REPLACE
 * with `foldCase`), since `lower()` folds ASCII only. Breaking: a build without the trigger would
 * index each new row a second time under the same rowid.
 */
export const migration: Migration = {
  id: "20261209100000_history-index-trigger",
  breaking: true,
  async up(tx) {
    await tx.execute(`CREATE TRIGGER history_row_indexed AFTER INSERT ON history_row BEGIN
  INSERT INTO history_fts (rowid, body, thinking, tool_input, body_folded, thinking_folded, tool_input_folded)
  VALUES (NEW.id, NEW.body, NEW.thinking, NEW.tool_input, lower(NEW.body), lower(NEW.thinking), lower(NEW.tool_input));
END`);
  },
};
