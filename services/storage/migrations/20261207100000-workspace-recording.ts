import type { Migration } from "./types.js";

/**
 * Turn recording in proportion to what a Turn changes (services/core/rewind/README.md):
 * - `workspace_blob.encoding`: a blob is stored `deflate`d when that saves space (`identity`
 *   otherwise); `size` stays the content's own size.
 * - `workspace_blob_ref`: who needs a blob — a Turn (`t:<turnId>`: its before-images and its
 *   patch's contents) or a Session's manifest (`m:<sessionId>`). A blob is deleted by the trigger
 *   `workspace_blob_gc` in the same statement that drops its last reference (a Session deleted,
 *   a rewind, a manifest replaced), so a concurrent recording of the same content (which adds its
 *   reference in the transaction that stores the blob) can never lose it.
 * - `workspace_manifest` is re-created: the Session's recorded state is now stat data for the
 *   recorded files (digests only where the content is stored), held as a blob named by
 *   `files_sha256`, so a Turn that changes nothing writes one small row.
 * - `turn_touch`: the before-image a file tool took at its first write of a path in a Turn.
 *
 * Existing patches keep references to what they name; every other stored blob (the old design's
 * copy of whole workdirs) is freed here.
 */
export const migration: Migration = {
  id: "20261207100000_workspace-recording",
  breaking: true,
  async up(tx) {
    await tx.executeMultiple(`
ALTER TABLE workspace_blob ADD COLUMN encoding text DEFAULT 'identity' NOT NULL;
DROP TABLE workspace_manifest;
CREATE TABLE workspace_manifest (
  session_id text PRIMARY KEY NOT NULL REFERENCES session(id) ON DELETE CASCADE,
  turn_id text,
  files_sha256 text NOT NULL,
  recorded_at integer NOT NULL
);
CREATE TABLE workspace_blob_ref (
  owner text NOT NULL,
  sha256 text NOT NULL,
  session_id text NOT NULL REFERENCES session(id) ON DELETE CASCADE,
  PRIMARY KEY (owner, sha256)
);
CREATE INDEX workspace_blob_ref_sha_idx ON workspace_blob_ref (sha256);
CREATE INDEX workspace_blob_ref_session_idx ON workspace_blob_ref (session_id);
CREATE TRIGGER workspace_blob_gc AFTER DELETE ON workspace_blob_ref
  WHEN NOT EXISTS (SELECT 1 FROM workspace_blob_ref WHERE sha256 = OLD.sha256)
BEGIN
  DELETE FROM workspace_blob WHERE sha256 = OLD.sha256;
END;
CREATE TABLE turn_touch (
  turn_id text NOT NULL REFERENCES turn(id) ON DELETE CASCADE,
  session_id text NOT NULL REFERENCES session(id) ON DELETE CASCADE,
  path text NOT NULL,
  before_sha256 text,
  before_mode integer,
  before_size integer,
  PRIMARY KEY (turn_id, path)
);
INSERT OR IGNORE INTO workspace_blob_ref (owner, sha256, session_id)
  SELECT 't:' || p.turn_id, json_extract(f.value, '$.beforeSha256'), p.session_id FROM turn_patch p, json_each(p.files) f
  WHERE p.rewound_at IS NULL AND json_extract(f.value, '$.beforeSha256') IS NOT NULL;
INSERT OR IGNORE INTO workspace_blob_ref (owner, sha256, session_id)
  SELECT 't:' || p.turn_id, json_extract(f.value, '$.afterSha256'), p.session_id FROM turn_patch p, json_each(p.files) f
  WHERE p.rewound_at IS NULL AND json_extract(f.value, '$.afterSha256') IS NOT NULL;
DELETE FROM workspace_blob WHERE sha256 NOT IN (SELECT sha256 FROM workspace_blob_ref);
`);
  },
};
