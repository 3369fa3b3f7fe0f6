import type { Migration } from "./types.js";

/**
 * Turns: the durable Turn rows (with their claim), their parts, steering input, and the
 * append-only event log every watch stream replays from. Additive: older builds ignore it.
 */
export const migration: Migration = {
  id: "20261130120000_turns",
  breaking: false,
  async up(tx) {
    await tx.executeMultiple(`
CREATE TABLE turn (
  id text PRIMARY KEY NOT NULL,
  session_id text NOT NULL REFERENCES session (id) ON DELETE CASCADE,
  sequence integer NOT NULL,
  phase text NOT NULL,
  revision integer NOT NULL,
  request text NOT NULL,
  attribution text,
  model text NOT NULL,
  model_lease_id text NOT NULL,
  request_options_id text NOT NULL,
  provider_options text,
  messages text DEFAULT '[]' NOT NULL,
  policy text NOT NULL,
  steering_gate text DEFAULT 'open' NOT NULL,
  promoted_batch_count integer DEFAULT 0 NOT NULL,
  usage text,
  context_use text,
  cancellation text,
  outcome text,
  accepted_at integer NOT NULL,
  started_at integer,
  completed_at integer,
  request_hash text NOT NULL,
  owner_process_id integer,
  owner_instance text,
  lease_expires_at integer,
  activity_cursor integer NOT NULL,
  server_cursor integer NOT NULL
);
CREATE UNIQUE INDEX turn_session_sequence_idx ON turn (session_id, sequence);
CREATE INDEX turn_phase_idx ON turn (phase, session_id);

CREATE TABLE turn_part (
  turn_id text NOT NULL REFERENCES turn (id) ON DELETE CASCADE,
  ordinal integer NOT NULL,
  data text NOT NULL,
  PRIMARY KEY (turn_id, ordinal)
);

CREATE TABLE turn_steer (
  steer_id text PRIMARY KEY NOT NULL,
  session_id text NOT NULL REFERENCES session (id) ON DELETE CASCADE,
  turn_id text NOT NULL REFERENCES turn (id) ON DELETE CASCADE,
  sequence integer NOT NULL,
  data text NOT NULL,
  request_hash text NOT NULL
);
CREATE INDEX turn_steer_turn_idx ON turn_steer (turn_id, sequence);

CREATE TABLE turn_event (
  id integer PRIMARY KEY AUTOINCREMENT NOT NULL,
  session_id text NOT NULL REFERENCES session (id) ON DELETE CASCADE,
  turn_id text NOT NULL REFERENCES turn (id) ON DELETE CASCADE,
  revision integer NOT NULL,
  activity_cursor integer NOT NULL,
  server_cursor integer NOT NULL,
  type text NOT NULL,
  data text
);
CREATE INDEX turn_event_turn_idx ON turn_event (turn_id, revision);
CREATE INDEX turn_event_session_idx ON turn_event (session_id, activity_cursor);
CREATE INDEX turn_event_server_idx ON turn_event (server_cursor);
`);
  },
};
