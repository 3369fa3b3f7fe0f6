import type { Migration } from "./types.js";

/**
 * `terminal.origin`: who opened a terminal when not a client — JSON `{ kind: "tool", turnId,
 * toolCallId }` for the PTY a `shell` call with `tty: true` runs in; null for client-opened ones.
 * Additive: older builds ignore it.
 */
export const migration: Migration = {
  id: "20261206100000_terminal-origin",
  breaking: false,
  async up(tx) {
    await tx.execute("ALTER TABLE terminal ADD COLUMN origin text");
  },
};
