import type { Migration } from "./types.js";

/** The Sessions foundation: the server cursor, Sessions, deletion markers and saved grants. */
export const migration: Migration = {
  id: "20261130114214_sessions-foundation",
  breaking: true,
  async up(tx) {
    await tx.executeMultiple(`
CREATE TABLE server_activity (
  id integer PRIMARY KEY NOT NULL,
  cursor integer DEFAULT 0 NOT NULL,
  CONSTRAINT server_activity_single_row CHECK (id = 1)
);
INSERT INTO server_activity (id, cursor) VALUES (1, 0);

CREATE TABLE session (
  id text PRIMARY KEY NOT NULL,
  server text NOT NULL,
  workdir text NOT NULL,
  project_id text NOT NULL,
  title text,
  default_model text,
  system_prompt text,
  agent text,
  forked_from text,
  spawned_from_session_id text REFERENCES session (id),
  configuration_revision integer DEFAULT 1 NOT NULL,
  permissions text NOT NULL,
  approval text NOT NULL,
  created_at integer NOT NULL,
  updated_at integer NOT NULL,
  next_sequence integer DEFAULT 1 NOT NULL,
  activity_cursor integer DEFAULT 0 NOT NULL,
  server_cursor integer NOT NULL,
  create_request_hash text,
  deleting integer DEFAULT 0 NOT NULL
);
CREATE INDEX session_server_created_at_idx ON session (server, created_at);
CREATE INDEX session_server_project_idx ON session (server, project_id);
CREATE INDEX session_spawned_from_idx ON session (spawned_from_session_id);

CREATE TABLE deleted_session (
  session_id text PRIMARY KEY NOT NULL,
  server text NOT NULL,
  deleted_at integer NOT NULL,
  server_cursor integer NOT NULL
);
CREATE INDEX deleted_session_server_cursor_idx ON deleted_session (server, server_cursor);

CREATE TABLE saved_permission (
  id text PRIMARY KEY NOT NULL,
  session_id text NOT NULL REFERENCES session (id) ON DELETE CASCADE,
  action text NOT NULL,
  resource text NOT NULL,
  created_at integer NOT NULL,
  source_permission_request_id text NOT NULL
);
CREATE INDEX saved_permission_session_idx ON saved_permission (session_id, created_at);
`);
  },
};
