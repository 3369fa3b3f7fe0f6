import type { Migration } from "./types.js";

/**
 * `turn.empty_patch_at`: when a Turn that changed nothing recorded settled, its empty patch is
 * this column, set by its settling UPDATE (no `turn_patch` row, one statement fewer per Turn).
 * Readers (workspace.ts) answer such a Turn's patch as the empty one captured at this time; a
 * rewind of it writes the row then, to keep its `rewound_at`. Breaking: a build without it would
 * find no patch for such a Turn and refuse its rewind.
 */
export const migration: Migration = {
  id: "20261210100000_turn-empty-patch",
  breaking: true,
  async up(tx) {
    await tx.execute("ALTER TABLE turn ADD COLUMN empty_patch_at integer");
  },
};
