import type { Migration } from "./types.js";

/**
 * Session plugin overlays (issue 8).
 *
 * - `session_plugin_revision`: every recorded desired revision of a Session's plugin overlay, in
 *   `sequence` order: the client's source and resolution, the artifact the host pinned (`resolved`
 *   with the exact version and integrity; `artifact`, the snapshot a restart loads), the plugin's
 *   options and the revision's MCP servers and Skills. `request_hash` makes `PUT` idempotent.
 * - `session_plugin`: one row per Session that ever had an overlay: the desired revision, its
 *   activation state (`pending`, `started`, `active`, `failed` with the safe failure), the last
 *   revision that activated (`active_revision_id`) and the next revision sequence.
 *
 * Additive: older builds ignore the new tables.
 */
export const migration: Migration = {
  id: "20261203100000_session-plugins",
  breaking: false,
  async up(tx) {
    await tx.executeMultiple(`
CREATE TABLE session_plugin_revision (
  session_id text NOT NULL REFERENCES session (id) ON DELETE CASCADE,
  id text NOT NULL,
  sequence integer NOT NULL,
  source text NOT NULL,
  resolved text NOT NULL,
  options text NOT NULL,
  mcp_servers text NOT NULL,
  skills text NOT NULL,
  artifact text,
  request_hash text NOT NULL,
  created_at integer NOT NULL,
  PRIMARY KEY (session_id, id)
);
CREATE UNIQUE INDEX session_plugin_revision_sequence_idx ON session_plugin_revision (session_id, sequence);

CREATE TABLE session_plugin (
  session_id text PRIMARY KEY NOT NULL REFERENCES session (id) ON DELETE CASCADE,
  next_sequence integer DEFAULT 1 NOT NULL,
  desired_revision_id text,
  activation_state text,
  activation_failure text,
  active_revision_id text,
  updated_at integer NOT NULL
);
`);
  },
};
