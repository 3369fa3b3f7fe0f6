import type { Migration } from "./types.js";

/**
 * Context compactions, the plugin journal and the Session's context use.
 *
 * - `compaction`: a manual compaction takes its own work sequence (shared with Turns, ordinal 1)
 *   and history revision; an automatic one rides its Turn's sequence (ordinals 1, 2, …) and
 *   revision. A completed one is a checkpoint for later work of the same visibility
 *   (`visibility_key`), found by `compaction_checkpoint_idx` without reading the Session.
 * - `plugin_journal`: plugin-reported facts, ordered by (the Turn's sequence, the entry's
 *   sequence within the Turn).
 * - `session.context_use`: the context use of the Session's latest model request, kept equal to
 *   the Turn's by the `turn_context_use` trigger in the same statement that records it.
 *
 * Additive: older builds ignore the new column, tables and trigger.
 */
export const migration: Migration = {
  id: "20261202100000_compactions-and-journal",
  breaking: false,
  async up(tx) {
    await tx.executeMultiple(`
ALTER TABLE session ADD COLUMN context_use text;

CREATE TABLE compaction (
  id text PRIMARY KEY NOT NULL,
  session_id text NOT NULL REFERENCES session (id) ON DELETE CASCADE,
  sequence integer NOT NULL,
  ordinal integer NOT NULL,
  history_revision integer NOT NULL,
  turn_id text REFERENCES turn (id) ON DELETE CASCADE,
  "trigger" text NOT NULL,
  request text NOT NULL,
  attribution text,
  model text NOT NULL,
  model_lease_id text NOT NULL,
  request_options_id text NOT NULL,
  provider_options text,
  policy text NOT NULL,
  phase text NOT NULL,
  revision integer NOT NULL,
  visibility_key text DEFAULT '' NOT NULL,
  through_history_revision integer,
  cancellation text,
  usage text,
  outcome text,
  accepted_at integer NOT NULL,
  started_at integer,
  completed_at integer,
  request_hash text NOT NULL,
  owner_process_id integer,
  owner_instance text,
  lease_expires_at integer
);
CREATE UNIQUE INDEX compaction_session_position_idx ON compaction (session_id, sequence, ordinal);
CREATE INDEX compaction_phase_idx ON compaction (phase, session_id);
CREATE INDEX compaction_checkpoint_idx ON compaction (session_id, visibility_key, through_history_revision);
CREATE INDEX compaction_turn_idx ON compaction (turn_id);

CREATE TABLE plugin_journal (
  session_id text NOT NULL REFERENCES session (id) ON DELETE CASCADE,
  turn_id text NOT NULL REFERENCES turn (id) ON DELETE CASCADE,
  turn_sequence integer NOT NULL,
  sequence integer NOT NULL,
  plugin_id text NOT NULL,
  kind text NOT NULL,
  summary text NOT NULL,
  data text NOT NULL,
  logical_call_ordinal integer,
  tool_call_id text,
  recorded_at integer NOT NULL,
  PRIMARY KEY (turn_id, sequence)
);
CREATE INDEX plugin_journal_session_idx ON plugin_journal (session_id, turn_sequence, sequence);

CREATE TRIGGER turn_context_use AFTER UPDATE OF context_use ON turn WHEN NEW.context_use IS NOT NULL BEGIN
  UPDATE session SET context_use = NEW.context_use WHERE id = NEW.session_id;
END;
`);
  },
};
