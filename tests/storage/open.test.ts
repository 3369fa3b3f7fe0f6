import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  openDatabase,
  resolveDatabaseLocation,
  serverMigrations,
  sessions,
  StorageBusy,
} from "../../services/storage/index.js";
import { fingerprint, newSession, rawClient, rows, tempStateDirectory } from "./helpers.js";
import { SPILLED_COLUMNS } from "../../services/storage/migrations/20261211100000-spilled-values.js";

describe("resolveDatabaseLocation", () => {
  const state = "/var/state/ze-harness";

  it("resolves memory, paths, file URLs and server URLs", () => {
    expect(resolveDatabaseLocation(":memory:", state)).toEqual({ kind: "memory", url: ":memory:" });
    expect(resolveDatabaseLocation("file::memory:", state).kind).toBe("memory");
    expect(resolveDatabaseLocation("ze-harness.db", state)).toEqual({
      kind: "file",
      path: "/var/state/ze-harness/ze-harness.db",
      url: "file:///var/state/ze-harness/ze-harness.db",
    });
    expect(resolveDatabaseLocation("nested/dir/x.db", state)).toMatchObject({ path: "/var/state/ze-harness/nested/dir/x.db" });
    expect(resolveDatabaseLocation("/abs/x.db", state)).toMatchObject({ kind: "file", path: "/abs/x.db" });
    expect(resolveDatabaseLocation("file:/abs/x.db", state)).toMatchObject({ path: "/abs/x.db" });
    expect(resolveDatabaseLocation("file:///abs/x%20y.db", state)).toMatchObject({
      path: "/abs/x y.db",
      url: "file:///abs/x%20y.db",
    });
    expect(resolveDatabaseLocation("file://localhost/abs/x.db", state)).toMatchObject({ path: "/abs/x.db" });
    expect(resolveDatabaseLocation("file:rel.db", state)).toMatchObject({ path: "/var/state/ze-harness/rel.db" });
    for (const url of ["libsql://db.example.com", "http://127.0.0.1:8080", "https://x.example", "ws://127.0.0.1:1", "wss://x"]) {
      expect(resolveDatabaseLocation(url, state)).toEqual({ kind: "remote", url });
    }
  });

  it("rejects what it cannot place", () => {
    expect(() => resolveDatabaseLocation("", state)).toThrow(TypeError);
    expect(() => resolveDatabaseLocation("file://elsewhere/x.db", state)).toThrow(TypeError);
    expect(() => resolveDatabaseLocation("file:/x.db?mode=ro", state)).toThrow(TypeError);
    expect(() => resolveDatabaseLocation("postgres://x/y", state)).toThrow(TypeError);
  });
});

describe("openDatabase", () => {
  it("creates the directory, the schema, the ledger, WAL mode and foreign keys on a fresh file", async () => {
    const state = await tempStateDirectory();
    const handle = await openDatabase({ url: "nested/ze-harness.db", stateDirectory: state });
    const path = join(state, "nested", "ze-harness.db");
    try {
      expect(handle.location).toMatchObject({ kind: "file", path });
      expect(handle.processId).toBe(process.pid);
      expect(handle.migration).toEqual({ applied: serverMigrations.map((m) => m.id), backupPath: null });

      const tables = await rows(
        handle.client,
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
      );
      expect(tables.map((t) => t["name"])).toEqual([
        "compaction",
        "conversation_entry",
        "deleted_session",
        "harness_migration",
        "harness_schema_object",
        "history_fts",
        "history_fts_config",
        "history_fts_data",
        "history_fts_docsize",
        "history_fts_idx",
        "history_row",
          "plugin_journal",
        "saved_permission",
        "server_activity",
        "session",
        "session_context",
        "session_diagnostic",
        "session_plugin",
        "session_plugin_revision",
        "session_rewind",
        "spilled_value",
        "terminal",
        "turn",
        "turn_event",
        "turn_part",
        "turn_patch",
        "turn_steer",
        "turn_touch",
        "workspace_blob",
        "workspace_blob_ref",
        "workspace_manifest",
      ]);
      const ledger = await rows(handle.client, "SELECT id, ordinal, breaking, compatible_floor FROM harness_migration");
      expect(ledger).toEqual([
        { id: serverMigrations[0]!.id, ordinal: 1, breaking: 1, compatible_floor: serverMigrations[0]!.id },
        { id: serverMigrations[1]!.id, ordinal: 2, breaking: 0, compatible_floor: serverMigrations[0]!.id },
        { id: serverMigrations[2]!.id, ordinal: 3, breaking: 0, compatible_floor: serverMigrations[0]!.id },
        { id: serverMigrations[3]!.id, ordinal: 4, breaking: 0, compatible_floor: serverMigrations[0]!.id },
        { id: serverMigrations[4]!.id, ordinal: 5, breaking: 0, compatible_floor: serverMigrations[0]!.id },
        { id: serverMigrations[5]!.id, ordinal: 6, breaking: 0, compatible_floor: serverMigrations[0]!.id },
        { id: serverMigrations[6]!.id, ordinal: 7, breaking: 0, compatible_floor: serverMigrations[0]!.id },
        { id: serverMigrations[7]!.id, ordinal: 8, breaking: 0, compatible_floor: serverMigrations[0]!.id },
        { id: serverMigrations[8]!.id, ordinal: 9, breaking: 0, compatible_floor: serverMigrations[0]!.id },
        { id: serverMigrations[9]!.id, ordinal: 10, breaking: 0, compatible_floor: serverMigrations[0]!.id },
        { id: serverMigrations[10]!.id, ordinal: 11, breaking: 0, compatible_floor: serverMigrations[0]!.id },
        { id: serverMigrations[11]!.id, ordinal: 12, breaking: 0, compatible_floor: serverMigrations[0]!.id },
        { id: serverMigrations[12]!.id, ordinal: 13, breaking: 1, compatible_floor: serverMigrations[12]!.id },
        { id: serverMigrations[13]!.id, ordinal: 14, breaking: 0, compatible_floor: serverMigrations[12]!.id },
        { id: serverMigrations[14]!.id, ordinal: 15, breaking: 1, compatible_floor: serverMigrations[14]!.id },
        { id: serverMigrations[15]!.id, ordinal: 16, breaking: 1, compatible_floor: serverMigrations[15]!.id },
        { id: serverMigrations[16]!.id, ordinal: 17, breaking: 0, compatible_floor: serverMigrations[15]!.id },
        { id: serverMigrations[17]!.id, ordinal: 18, breaking: 1, compatible_floor: serverMigrations[17]!.id },
      ]);
      const recorded = await rows(handle.client, "SELECT type, name FROM harness_schema_object ORDER BY type, name");
      // The spilled values' triggers: one pair per table that can hold a large value.
      const spillTriggers = Object.keys(SPILLED_COLUMNS).flatMap((table) => [`trigger:${table}_spill_deleted`, `trigger:${table}_spill_replaced`]);
      expect(spillTriggers).toHaveLength(22);
      expect(recorded.map((r) => `${String(r["type"])}:${String(r["name"])}`)).toEqual([
        "index:compaction_checkpoint_idx",
        "index:compaction_phase_idx",
        "index:compaction_session_position_idx",
        "index:compaction_turn_idx",
        "index:conversation_entry_session_revision_idx",
        "index:deleted_session_server_cursor_idx",
        "index:history_row_position_idx",
        "index:plugin_journal_session_idx",
        "index:saved_permission_session_idx",
        "index:session_context_sequence_idx",
        "index:session_diagnostic_sequence_idx",
        "index:session_plugin_revision_sequence_idx",
        "index:session_server_created_at_idx",
        "index:session_server_project_idx",
        "index:session_spawned_from_idx",
        "index:terminal_session_idx",
        "index:turn_event_server_idx",
        "index:turn_event_session_idx",
        "index:turn_event_turn_idx",
        "index:turn_patch_session_idx",
        "index:turn_phase_idx",
        "index:turn_session_history_idx",
        "index:turn_session_sequence_idx",
        "index:turn_steer_turn_idx",
        "index:workspace_blob_ref_session_idx",
        "index:workspace_blob_ref_sha_idx",
        "table:compaction",
        "table:conversation_entry",
        "table:deleted_session",
        "table:history_fts",
        "table:history_fts_config",
        "table:history_fts_data",
        "table:history_fts_docsize",
        "table:history_fts_idx",
        "table:history_row",
        "table:plugin_journal",
        "table:saved_permission",
        "table:server_activity",
        "table:session",
        "table:session_context",
        "table:session_diagnostic",
        "table:session_plugin",
        "table:session_plugin_revision",
        "table:session_rewind",
        "table:spilled_value",
        "table:terminal",
        "table:turn",
        "table:turn_event",
        "table:turn_part",
        "table:turn_patch",
        "table:turn_steer",
        "table:turn_touch",
        "table:workspace_blob",
        "table:workspace_blob_ref",
        "table:workspace_manifest",
        "trigger:history_row_indexed",
        "trigger:history_row_unindexed",
        "trigger:session_plugin_overlay_cleared",
        "trigger:session_plugin_overlay_set",
        "trigger:turn_context_use",
        "trigger:turn_event_stamps",
        "trigger:turn_prepared_request_recorded",
        "trigger:workspace_blob_gc",
        ...spillTriggers,
      ].sort());
      expect(await rows(handle.client, "SELECT id, cursor FROM server_activity")).toEqual([{ id: 1, cursor: 0 }]);
      expect(await rows(handle.client, "PRAGMA journal_mode")).toEqual([{ journal_mode: "wal" }]);

      // Foreign keys are enforced on every pooled connection, not just the first one.
      await Promise.all(
        Array.from({ length: 4 }, async (_, i) => {
          await expect(
            sessions.insertSavedPermission(handle, {
              id: `orphan-${i}`,
              sessionId: "no-such-session",
              action: "read",
              resource: "*",
              createdAt: 1,
              sourcePermissionRequestId: "r",
            }),
          ).rejects.toMatchObject({ cause: { code: "SQLITE_CONSTRAINT", message: expect.stringMatching(/FOREIGN KEY/) } });
        }),
      );
    } finally {
      await handle.close();
    }
  });

  it("reopening an up-to-date database writes nothing", async () => {
    const state = await tempStateDirectory();
    const path = join(state, "ze-harness.db");
    const first = await openDatabase({ url: path, stateDirectory: state });
    await sessions.insertSession(first, newSession("s1"));
    await first.close();

    // Fold the WAL into the main file so the main file alone carries the state.
    const raw = rawClient(path);
    await raw.execute("PRAGMA wal_checkpoint(TRUNCATE)");
    const ledgerBefore = await rows(raw, "SELECT * FROM harness_migration");
    raw.close();
    const before = fingerprint(path);
    await new Promise((resolve) => setTimeout(resolve, 20));

    const again = await openDatabase({ url: `file:${path}`, stateDirectory: state });
    expect(again.migration).toEqual({ applied: [], backupPath: null });
    expect(await sessions.getSession(again, "local", "s1")).toMatchObject({ id: "s1" });
    await again.close();

    expect(fingerprint(path)).toEqual(before);
    expect(existsSync(`${path}-wal`) ? statSync(`${path}-wal`).size : 0).toBe(0);
    const check = rawClient(path);
    expect(await rows(check, "SELECT * FROM harness_migration")).toEqual(ledgerBefore);
    check.close();
  });

  it("works in memory on its single connection, including concurrent transactions", async () => {
    const handle = await openDatabase({ url: ":memory:", stateDirectory: "/nonexistent-state-dir" });
    try {
      expect(handle.location.kind).toBe("memory");
      expect(handle.migration.applied).toHaveLength(serverMigrations.length);
      await Promise.all(
        Array.from({ length: 20 }, (_, i) => sessions.insertSession(handle, newSession(`m${i}`, { createdAt: i }))),
      );
      const listed = await sessions.listSessions(handle, "local");
      expect(listed.map((s) => s.id)).toEqual(Array.from({ length: 20 }, (_, i) => `m${i}`));
      expect(new Set(listed.map((s) => s.serverCursor)).size).toBe(20);
      expect(await rows(handle.client, "PRAGMA foreign_keys")).toEqual([{ foreign_keys: 1 }]);
    } finally {
      await handle.close();
    }
    // A second memory handle is a separate, empty database.
    const other = await openDatabase({ url: ":memory:", stateDirectory: "/nonexistent-state-dir" });
    expect(await sessions.listSessions(other, "local")).toEqual([]);
    await other.close();
  });

  it("queues concurrent write transactions of one file handle instead of deadlocking", async () => {
    const state = await tempStateDirectory();
    const handle = await openDatabase({ url: "db.sqlite", stateDirectory: state });
    try {
      await Promise.all(
        Array.from({ length: 50 }, (_, i) => sessions.insertSession(handle, newSession(`c${i}`, { createdAt: i }))),
      );
      expect(await sessions.listSessions(handle, "local")).toHaveLength(50);
    } finally {
      await handle.close();
    }
  });

  it("nests handle.transaction inside a transaction as a savepoint", async () => {
    const handle = await openDatabase({ url: ":memory:", stateDirectory: "/x" });
    try {
      await handle.transaction(async () => {
        await sessions.insertSession(handle, newSession("outer"));
        await expect(
          handle.transaction(async (inner) => {
            await sessions.insertSession(inner, newSession("inner"));
            throw new Error("roll back the savepoint only");
          }),
        ).rejects.toThrow("roll back the savepoint only");
      });
      expect((await sessions.listSessions(handle, "local")).map((s) => s.id)).toEqual(["outer"]);
    } finally {
      await handle.close();
    }
  });

  it("maps a database locked by another writer to StorageBusy", async () => {
    const state = await tempStateDirectory();
    const path = join(state, "busy.db");
    const handle = await openDatabase({ url: path, stateDirectory: state, busyTimeoutMs: 100 });
    const other = rawClient(path);
    const lock = await other.transaction("write");
    try {
      const error = await handle.transaction(async () => "never").catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StorageBusy);
      expect(error).toMatchObject({ _tag: "StorageBusy", retryable: true });
      expect((error as StorageBusy).message).toMatch(/busy/i);

      await expect(sessions.insertSession(handle, newSession("x"))).rejects.toMatchObject({ _tag: "StorageBusy" });
      // Reads are not blocked by a writer in WAL mode.
      expect(await sessions.listSessions(handle, "local")).toEqual([]);
    } finally {
      await lock.rollback();
      other.close();
    }
    // Once the lock is gone the same call succeeds, and so does every later transaction: the
    // connection whose BEGIN failed busy is not reused (libsql leaves that statement in progress,
    // which would fail each later COMMIT with "SQL statements in progress").
    await sessions.insertSession(handle, newSession("x"));
    for (let i = 0; i < 3; i++) await sessions.updateSession(handle, "local", "x", { title: `t${i}` });
    expect(await sessions.getSession(handle, "local", "x")).toMatchObject({ title: "t2", serverCursor: 4 });
    await handle.close();
  });

  it("maps a migration that cannot take the write lock to StorageBusy", async () => {
    const state = await tempStateDirectory();
    const path = join(state, "locked-fresh.db");
    const other = rawClient(path);
    await other.execute("PRAGMA journal_mode = WAL");
    const lock = await other.transaction("write");
    try {
      await expect(openDatabase({ url: path, stateDirectory: state, busyTimeoutMs: 100 })).rejects.toMatchObject({
        _tag: "StorageBusy",
        retryable: true,
      });
    } finally {
      await lock.rollback();
      other.close();
    }
    const handle = await openDatabase({ url: path, stateDirectory: state });
    expect(handle.migration.applied).toHaveLength(serverMigrations.length);
    await handle.close();
  });

  it("two handles opening one fresh file at once migrate it exactly once", async () => {
    const state = await tempStateDirectory();
    const [a, b] = await Promise.all([
      openDatabase({ url: "race.db", stateDirectory: state }),
      openDatabase({ url: "race.db", stateDirectory: state }),
    ]);
    expect([a.migration.applied.length, b.migration.applied.length].sort()).toEqual([0, serverMigrations.length]);
    expect(await rows(a.client, "SELECT count(*) AS n FROM harness_migration")).toEqual([
      { n: serverMigrations.length },
    ]);
    await a.close();
    await b.close();
  });
});
