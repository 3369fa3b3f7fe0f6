import type { Migration } from "./types.js";

/**
 * `session_diagnostic` (a Session's execution, model-step and automatic-title failures, numbered
 * per Session) and `session_context` (the Main requests it prepared, with estimates and the
 * provider-reported input usage). Additive: older builds ignore both.
 */
export const migration: Migration = {
  id: "20261204110000_diagnostics-and-context",
  breaking: false,
  async up(tx) {
    await tx.executeMultiple(`
CREATE TABLE session_diagnostic (
  id integer PRIMARY KEY AUTOINCREMENT NOT NULL,
  session_id text NOT NULL REFERENCES session(id) ON DELETE cascade,
  sequence integer NOT NULL,
  kind text NOT NULL,
  turn_id text,
  event_revision integer,
  attempt integer,
  code text NOT NULL,
  message text NOT NULL,
  provider_code text,
  limit_name text,
  recorded_at integer NOT NULL
);
CREATE UNIQUE INDEX session_diagnostic_sequence_idx ON session_diagnostic (session_id, sequence);
CREATE TABLE session_context (
  id integer PRIMARY KEY AUTOINCREMENT NOT NULL,
  session_id text NOT NULL REFERENCES session(id) ON DELETE cascade,
  sequence integer NOT NULL,
  turn_id text NOT NULL,
  model text NOT NULL,
  report text NOT NULL,
  reported_input_tokens integer,
  prepared_at integer NOT NULL
);
CREATE UNIQUE INDEX session_context_sequence_idx ON session_context (session_id, sequence);
`);
  },
};
