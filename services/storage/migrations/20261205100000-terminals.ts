import type { Migration } from "./types.js";

/**
 * `terminal`: PTYs opened in a Session's workdir. The row is the terminal's identity and last
 * known state; `display` holds the settled styled display (JSON) once the byte source closed, so
 * it stays readable across host restarts. `owner_pid`/`owner_instance` name the host that runs it
 * (output lives only in that host's memory). Additive: older builds ignore it.
 */
export const migration: Migration = {
  id: "20261205100000_terminals",
  breaking: false,
  async up(tx) {
    await tx.executeMultiple(`
CREATE TABLE terminal (
  id text PRIMARY KEY NOT NULL,
  session_id text NOT NULL REFERENCES session(id) ON DELETE cascade,
  command text NOT NULL,
  request_hash text NOT NULL,
  initial_cols integer NOT NULL,
  initial_rows integer NOT NULL,
  cols integer NOT NULL,
  rows integer NOT NULL,
  status text NOT NULL,
  exit_code integer,
  signal text,
  created_at integer NOT NULL,
  exited_at integer,
  owner_pid integer NOT NULL,
  owner_instance text NOT NULL,
  display text
);
CREATE INDEX terminal_session_idx ON terminal (session_id, created_at);
`);
  },
};
