import type { Migration } from "./types.js";

/**
 * `session.plugin_overlay`: whether the Session has a plugin overlay row, kept by triggers on
 * `session_plugin`, so a Turn's launch (which already holds the Session row) knows whether it must
 * load the plugin room without another statement. Additive: older builds ignore it.
 */
export const migration: Migration = {
  id: "20261203110000_session-plugin-flag",
  breaking: false,
  async up(tx) {
    await tx.executeMultiple(`
ALTER TABLE session ADD COLUMN plugin_overlay integer DEFAULT 0 NOT NULL;
UPDATE session SET plugin_overlay = 1 WHERE id IN (SELECT session_id FROM session_plugin);
CREATE TRIGGER session_plugin_overlay_set AFTER INSERT ON session_plugin BEGIN
  UPDATE session SET plugin_overlay = 1 WHERE id = NEW.session_id;
END;
CREATE TRIGGER session_plugin_overlay_cleared AFTER DELETE ON session_plugin BEGIN
  UPDATE session SET plugin_overlay = 0 WHERE id = OLD.session_id;
END;
`);
  },
};
