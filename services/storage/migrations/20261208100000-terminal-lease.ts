import type { Migration } from "./types.js";

/**
 * `terminal.lease_expires_at`: until when the host running a terminal's PTY vouches for it (it
 * renews the lease while the PTY runs). Hosts on a libSQL server may be on other machines or in
 * other PID namespaces, so a `running` row is judged orphaned by its lease, not by its owner pid.
 * Null for rows written before (the owner pid decides them). Additive: older builds ignore it.
 */
export const migration: Migration = {
  id: "20261208100000_terminal-lease",
  breaking: false,
  async up(tx) {
    await tx.execute("ALTER TABLE terminal ADD COLUMN lease_expires_at integer");
  },
};
