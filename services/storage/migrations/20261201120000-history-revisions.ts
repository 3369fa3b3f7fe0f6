import type { Migration } from "./types.js";

/**
 * Session history revisions and conversation entries. Every admitted Turn and every appended
 * conversation entry takes the Session's next history revision (`session.history_revision` is
 * the last one handed out), so work pins the history it may see to its own admission revision.
 * A Turn keeps the workspace instructions (AGENTS.md) read at its admission. Existing Turns are
 * backfilled in sequence order. Additive: older builds ignore the new columns and table.
 */
export const migration: Migration = {
  id: "20261201120000_history-revisions",
  breaking: false,
  async up(tx) {
    await tx.executeMultiple(`
ALTER TABLE session ADD COLUMN history_revision integer DEFAULT 0 NOT NULL;
ALTER TABLE turn ADD COLUMN history_revision integer DEFAULT 0 NOT NULL;
ALTER TABLE turn ADD COLUMN instructions text;
UPDATE turn SET history_revision = sequence;
UPDATE session SET history_revision = next_sequence - 1;
CREATE INDEX turn_session_history_idx ON turn (session_id, history_revision);

CREATE TABLE conversation_entry (
  id text PRIMARY KEY NOT NULL,
  session_id text NOT NULL REFERENCES session (id) ON DELETE CASCADE,
  history_revision integer NOT NULL,
  content text NOT NULL,
  attribution text,
  accepted_at integer NOT NULL,
  request_hash text NOT NULL
);
CREATE UNIQUE INDEX conversation_entry_session_revision_idx ON conversation_entry (session_id, history_revision);
`);
  },
};
