import type { Migration } from "./types.js";

/**
 * Turn events stamp the cursors they carry: the trigger advances the server cursor and the
 * Session's activity cursor to an inserted event's stamps, so a change writes its events in one
 * statement instead of two counter updates per event. Sessions gain a runner lease: the host
 * process that runs a Session's Turns while it holds it (an embedded command runs only the
 * Sessions it operates on; a server runs the rest). Additive: older builds ignore both.
 */
export const migration: Migration = {
  id: "20261201100000_turn-stamps-and-runners",
  breaking: false,
  async up(tx) {
    await tx.executeMultiple(`
ALTER TABLE session ADD COLUMN runner_instance text;
ALTER TABLE session ADD COLUMN runner_process_id integer;
ALTER TABLE session ADD COLUMN runner_lease_expires_at integer;
CREATE TRIGGER turn_event_stamps AFTER INSERT ON turn_event BEGIN
  UPDATE server_activity SET cursor = NEW.server_cursor WHERE id = 1 AND cursor < NEW.server_cursor;
  UPDATE session SET activity_cursor = NEW.activity_cursor WHERE id = NEW.session_id AND activity_cursor < NEW.activity_cursor;
END;
`);
  },
};
