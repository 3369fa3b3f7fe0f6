import type { Migration } from "./types.js";

/**
 * Turn patches and rewind (services/core/rewind): `workspace_blob` is a content-addressed store
 * of file contents (SHA-256); `workspace_manifest` holds each Session's last recorded workdir
 * state (the state before its running Turn, or after its last settled one); `turn_patch` is the
 * immutable record of one settled Turn's changes (files with both sides' digests and modes, and
 * the complete patch text); `session_rewind` records rewinds, whose Turns later work no longer
 * sees. Additive: older builds ignore the tables.
 */
export const migration: Migration = {
  id: "20261204120000_workspace-patches",
  breaking: false,
  async up(tx) {
    await tx.executeMultiple(`
CREATE TABLE workspace_blob (
  sha256 text PRIMARY KEY NOT NULL,
  size integer NOT NULL,
  bytes blob NOT NULL
);
CREATE TABLE workspace_manifest (
  session_id text PRIMARY KEY NOT NULL REFERENCES session(id) ON DELETE CASCADE,
  turn_id text,
  files text NOT NULL,
  recorded_at integer NOT NULL
);
CREATE TABLE turn_patch (
  turn_id text PRIMARY KEY NOT NULL REFERENCES turn(id) ON DELETE CASCADE,
  session_id text NOT NULL REFERENCES session(id) ON DELETE CASCADE,
  turn_sequence integer NOT NULL,
  files text NOT NULL,
  patch text NOT NULL,
  size integer NOT NULL,
  sha256 text NOT NULL,
  captured_at integer NOT NULL,
  rewound_at integer
);
CREATE INDEX turn_patch_session_idx ON turn_patch (session_id, turn_sequence);
CREATE TABLE session_rewind (
  session_id text NOT NULL REFERENCES session(id) ON DELETE CASCADE,
  turn_id text NOT NULL,
  turn_ids text NOT NULL,
  restored text NOT NULL,
  files_only integer NOT NULL,
  rewound_at integer NOT NULL,
  PRIMARY KEY (session_id, rewound_at, turn_id)
);
`);
  },
};
