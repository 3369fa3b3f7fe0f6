// Migration 20261204100000 publishes the history an existing database already holds: settled
// Turns and conversation entries, in history-revision order, one event each, indexed for search.
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { historyRows, openDatabase, serverMigrations } from "../../services/storage/index.js";
import { seedSession, tempStateDirectory } from "../storage/helpers.js";

describe("the history rows migration", () => {
  it("backfills settled Turns and entries, skips unsettled work, and indexes them", async () => {
    const state = await tempStateDirectory();
    const path = join(state, "old.db");
    const before = serverMigrations.findIndex((migration) => migration.id === "20261204100000_history-rows");
    expect(before).toBeGreaterThan(0);
    const old = await openDatabase({ url: path, stateDirectory: state, migrations: serverMigrations.slice(0, before) });
    const sessionId = randomUUID();
    const [settled, running, entry] = [randomUUID(), randomUUID(), randomUUID()];
    try {
      await seedSession(old, sessionId);
      const turn = (id: string, sequence: number, revision: number, phase: string, prompt: string) =>
        old.client.execute({
          sql: `INSERT INTO turn (id, session_id, sequence, phase, revision, request, model, model_lease_id, request_options_id, policy, accepted_at, completed_at, request_hash, activity_cursor, server_cursor, history_revision)
                VALUES (?, ?, ?, ?, 1, ?, 'test/scripted', 'l', 'o', '{}', 10, 20, 'h', 1, 1, ?)`,
          args: [id, sessionId, sequence, phase, JSON.stringify({ sessionId, turnId: id, prompt: [{ type: "text", text: prompt }] }), revision],
        });
      await turn(settled, 1, 2, "completed", "Old prompt");
      await old.client.execute({ sql: "INSERT INTO turn_part (turn_id, ordinal, data) VALUES (?, 0, ?)", args: [settled, JSON.stringify({ type: "text", id: randomUUID(), assistantMessageIndex: 0, text: "Old Answer" })] });
      await turn(running, 2, 3, "running", "Still running");
      await old.client.execute({
        sql: "INSERT INTO conversation_entry (id, session_id, history_revision, content, accepted_at, request_hash) VALUES (?, ?, 1, ?, 5, 'h')",
        args: [entry, sessionId, JSON.stringify([{ type: "text", text: "Old entry" }])],
      });
    } finally {
      await old.close();
    }
    const migrated = await openDatabase({ url: path, stateDirectory: state });
    try {
      const sql = migrated.reader().sql;
      expect(await historyRows.latestSequence(sql, sessionId)).toBe(2);
      const rows = await historyRows.listRows(sql, sessionId, { after: [0, 0], inclusive: true, through: 2, limit: 10 });
      expect(rows.map((row) => [row.sourceSequence, row.itemIndex, row.kind, row.body])).toEqual([
        [1, 0, "entry", "Old entry"],
        [2, 0, "prompt", "Old prompt"],
        [2, 1, "text", "Old Answer"],
      ]);
      const found = await historyRows.sessionCandidates(sql, sessionId, { match: historyRows.matchExpression("old ANSWER", false), fromId: 0, limit: 10 });
      expect(found.map((row) => row.body)).toEqual(["Old Answer"]);
      // New publications continue the Session's sequence.
      await migrated.transaction((tx) =>
        historyRows.publishRows(tx, sessionId, [{ role: "user", kind: "entry", turnId: null, entryId: null, partId: null, hidden: false, body: "new", thinking: null, toolInput: null, tool: null, createdAt: 30 }]),
      );
      expect(await historyRows.latestSequence(sql, sessionId)).toBe(3);
    } finally {
      await migrated.close();
    }
  });
});
