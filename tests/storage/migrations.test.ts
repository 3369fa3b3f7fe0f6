import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import {
  openDatabase,
  serverMigrations,
  sessions,
  validateRegistry,
  type Migration,
  type StorageMigrationProgress,
} from "../../services/storage/index.js";
import { addNotes, fingerprint, rawClient, rows, seedSession, tempStateDirectory } from "./helpers.js";

const foundation = serverMigrations[0]!;

/** Opens, closes, and folds the WAL into the main file so the file alone carries the state. */
async function settle(path: string): Promise<void> {
  const raw = rawClient(path);
  await raw.execute("PRAGMA wal_checkpoint(TRUNCATE)");
  raw.close();
}

async function expectRefusal(
  path: string,
  state: string,
  migrations: readonly Migration[],
  tag: string,
): Promise<unknown> {
  await settle(path);
  const before = fingerprint(path);
  const error = await openDatabase({ url: path, stateDirectory: state, migrations }).then(
    async (handle) => {
      await handle.close();
      throw new Error(`expected ${tag}, but the database opened`);
    },
    (e: unknown) => e,
  );
  expect(error).toMatchObject({ _tag: tag, retryable: false });
  expect(fingerprint(path)).toEqual(before);
  return error;
}

describe("the migration registry", () => {
  it("lists every module in migrations/ once, in order, with ids matching file names", () => {
    const directory = fileURLToPath(new URL("../../services/storage/migrations/", import.meta.url));
    const fromFiles = readdirSync(directory)
      .filter((name) => /^\d{14}-.+\.ts$/.test(name))
      .map((name) => name.replace(/\.ts$/, "").replace("-", "_"))
      .sort();
    expect(serverMigrations.map((m) => m.id)).toEqual(fromFiles);
    expect(() => validateRegistry(serverMigrations)).not.toThrow();
  });

  it("rejects malformed registries", () => {
    const bad = (id: string): Migration => ({ id, breaking: false, up: async () => undefined });
    expect(() => validateRegistry([bad("init")])).toThrow(TypeError);
    expect(() => validateRegistry([foundation, foundation])).toThrow(TypeError);
    expect(() => validateRegistry([bad("20300101000000_b"), bad("20200101000000_a")])).toThrow(TypeError);
  });
});

describe("upgrading an existing database", () => {
  it("backs up (0600, with the data), applies the new migration and records both in the ledger", async () => {
    const state = await tempStateDirectory();
    const path = join(state, "ze-harness.db");

    const old = await openDatabase({ url: path, stateDirectory: state, migrations: [foundation] });
    await seedSession(old, "kept");
    await old.close();

    const progress: StorageMigrationProgress[] = [];
    const upgraded = await openDatabase({
      url: path,
      stateDirectory: state,
      migrations: [foundation, addNotes],
      onMigrationProgress: (p) => progress.push(p),
    });
    const backupPath = `${path}.pre-${addNotes.id}.bak`;
    try {
      expect(upgraded.migration).toEqual({ applied: [addNotes.id], backupPath });
      expect(progress.map((p) => p.kind)).toEqual([
        "backup-started",
        "backup-finished",
        "migration-started",
        "migrations-committed",
      ]);

      const ledger = await rows(upgraded.client, "SELECT id, ordinal, breaking, compatible_floor FROM harness_migration ORDER BY ordinal");
      expect(ledger).toEqual([
        { id: foundation.id, ordinal: 1, breaking: 1, compatible_floor: foundation.id },
        { id: addNotes.id, ordinal: 2, breaking: 0, compatible_floor: foundation.id },
      ]);
      // The migration ran (backfill included) and its objects are recorded, with the altered table's new definition.
      expect(await rows(upgraded.client, "SELECT id, session_id, body FROM test_note")).toEqual([
        { id: "note-kept", session_id: "kept", body: "backfilled" },
      ]);
      const recorded = await rows(upgraded.client, "SELECT type, name, sql FROM harness_schema_object WHERE name IN ('test_note', 'test_note_session_idx', 'session')");
      expect(recorded.map((r) => r["name"]).sort()).toEqual(["session", "test_note", "test_note_session_idx"]);
      expect(String(recorded.find((r) => r["name"] === "session")!["sql"])).toMatch(/note_count/);
    } finally {
      await upgraded.close();
    }

    expect(statSync(backupPath).mode & 0o777).toBe(0o600);
    const backup = rawClient(backupPath);
    expect(await rows(backup, "SELECT id FROM session")).toEqual([{ id: "kept" }]);
    expect(await rows(backup, "SELECT id FROM harness_migration")).toEqual([{ id: foundation.id }]);
    expect(await rows(backup, "SELECT name FROM sqlite_master WHERE name = 'test_note'")).toEqual([]);
    backup.close();
    expect(readdirSync(state).filter((name) => name.includes(".tmp-"))).toEqual([]);

    // Reopening with the same registry applies nothing and backs up nothing.
    const again = await openDatabase({ url: path, stateDirectory: state, migrations: [foundation, addNotes] });
    expect(again.migration).toEqual({ applied: [], backupPath: null });
    await again.close();
  });

  it("replaces an older backup of the same name with the newest copy", async () => {
    const state = await tempStateDirectory();
    const path = join(state, "db.sqlite");
    const old = await openDatabase({ url: path, stateDirectory: state, migrations: [foundation] });
    await seedSession(old, "s");
    await old.close();
    const backupPath = `${path}.pre-${addNotes.id}.bak`;
    writeFileSync(backupPath, "stale", { mode: 0o644 });

    const handle = await openDatabase({ url: path, stateDirectory: state, migrations: [foundation, addNotes] });
    await handle.close();
    expect(statSync(backupPath).mode & 0o777).toBe(0o600);
    const backup = rawClient(backupPath);
    expect(await rows(backup, "SELECT id FROM session")).toEqual([{ id: "s" }]);
    backup.close();
  });

  it("does not back up a fresh database", async () => {
    const state = await tempStateDirectory();
    const handle = await openDatabase({ url: "fresh.db", stateDirectory: state, migrations: [foundation, addNotes] });
    expect(handle.migration).toEqual({ applied: [foundation.id, addNotes.id], backupPath: null });
    await handle.close();
    expect(readdirSync(state).filter((name) => name.endsWith(".bak"))).toEqual([]);
  });

  it("fails StorageMigrationFailed and migrates nothing when the backup cannot be written", async () => {
    const state = await tempStateDirectory();
    const path = join(state, "db.sqlite");
    const old = await openDatabase({ url: path, stateDirectory: state, migrations: [foundation] });
    await seedSession(old, "s");
    await old.close();
    // A directory where the backup must go: the copy cannot be renamed into place.
    mkdirSync(`${path}.pre-${addNotes.id}.bak`);
    mkdirSync(join(`${path}.pre-${addNotes.id}.bak`, "occupied"));

    const error = await expectRefusal(path, state, [foundation, addNotes], "StorageMigrationFailed");
    expect(error).toMatchObject({ migrationId: addNotes.id });
    expect(readdirSync(state).filter((name) => name.includes(".tmp-"))).toEqual([]);
    const raw = rawClient(path);
    expect(await rows(raw, "SELECT id FROM harness_migration")).toEqual([{ id: foundation.id }]);
    raw.close();
  });

  it("rolls the whole batch back when a migration throws", async () => {
    const state = await tempStateDirectory();
    const path = join(state, "db.sqlite");
    const broken: Migration = {
      id: "29990102000000_test-broken",
      breaking: false,
      async up(tx) {
        await tx.execute("CREATE TABLE half_done (x integer)");
        throw new Error("boom");
      },
    };
    const old = await openDatabase({ url: path, stateDirectory: state, migrations: [foundation] });
    await old.close();
    const error = await openDatabase({ url: path, stateDirectory: state, migrations: [foundation, addNotes, broken] }).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ _tag: "StorageMigrationFailed", migrationId: broken.id });
    expect((error as Error).message).toMatch(/boom/);
    const raw = rawClient(path);
    expect(await rows(raw, "SELECT id FROM harness_migration")).toEqual([{ id: foundation.id }]);
    expect(await rows(raw, "SELECT name FROM sqlite_master WHERE name IN ('half_done', 'test_note')")).toEqual([]);
    raw.close();
  });

  it("fails StorageMigrationFailed when migrations leave foreign key violations", async () => {
    const state = await tempStateDirectory();
    const orphaning: Migration = {
      id: "29990103000000_test-orphan",
      breaking: false,
      async up(tx) {
        await tx.execute(
          "INSERT INTO saved_permission (id, session_id, action, resource, created_at, source_permission_request_id) VALUES ('p', 'missing', 'a', 'r', 1, 'q')",
        );
      },
    };
    await expect(
      openDatabase({ url: "db.sqlite", stateDirectory: state, migrations: [foundation, orphaning] }),
    ).rejects.toMatchObject({ _tag: "StorageMigrationFailed", message: expect.stringMatching(/foreign key/i) });
    const raw = rawClient(join(state, "db.sqlite"));
    expect(await rows(raw, "SELECT name FROM sqlite_master WHERE name = 'harness_migration'")).toEqual([]);
    raw.close();
  });

  it("runs migrations with foreign keys off, so a table rebuild does not cascade", async () => {
    const state = await tempStateDirectory();
    const path = join(state, "db.sqlite");
    const old = await openDatabase({ url: path, stateDirectory: state, migrations: [foundation] });
    await seedSession(old, "parent");
    await sessions.insertSavedPermission(old, {
      id: "grant",
      sessionId: "parent",
      action: "read",
      resource: "*",
      createdAt: 1,
      sourcePermissionRequestId: "req",
    });
    await old.close();

    const rebuild: Migration = {
      id: "29990104000000_test-rebuild-session",
      breaking: true,
      async up(tx) {
        const table = await tx.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'session'");
        const createSql = String(table.rows[0]!["sql"]).replace(/^CREATE TABLE session/, "CREATE TABLE session_new");
        await tx.executeMultiple(`
          ${createSql};
          INSERT INTO session_new SELECT * FROM session;
          DROP TABLE session;
          ALTER TABLE session_new RENAME TO session;
          CREATE INDEX session_server_created_at_idx ON session (server, created_at);
          CREATE INDEX session_server_project_idx ON session (server, project_id);
          CREATE INDEX session_spawned_from_idx ON session (spawned_from_session_id);
        `);
      },
    };
    const handle = await openDatabase({ url: path, stateDirectory: state, migrations: [foundation, rebuild] });
    try {
      expect(handle.migration.applied).toEqual([rebuild.id]);
      expect(await sessions.listSavedPermissions(handle, "parent")).toHaveLength(1);
      // Foreign keys are back on for ordinary work.
      await expect(
        sessions.insertSavedPermission(handle, { id: "x", sessionId: "nobody", action: "a", resource: "r", createdAt: 1, sourcePermissionRequestId: "q" }),
      ).rejects.toMatchObject({ cause: { code: "SQLITE_CONSTRAINT" } });
    } finally {
      await handle.close();
    }
  });
});

describe("refusals write nothing", () => {
  it("StorageResetRequired: tables but no ledger", async () => {
    const state = await tempStateDirectory();
    const path = join(state, "legacy.db");
    const raw = rawClient(path);
    await raw.execute("CREATE TABLE sessions (id text primary key)");
    await raw.execute("INSERT INTO sessions VALUES ('old')");
    raw.close();
    const error = await expectRefusal(path, state, serverMigrations, "StorageResetRequired");
    expect(error).toMatchObject({ tables: ["sessions"] });
    expect(existsSync(`${path}-wal`)).toBe(false);
  });

  it("a Durable Object's own tables (_cf_*) are not the harness's: a database holding only them is migrated, not refused", async () => {
    const state = await tempStateDirectory();
    const path = join(state, "object.db");
    const raw = rawClient(path);
    // What a Durable Object's key-value API leaves before the harness first opens its database.
    await raw.execute("CREATE TABLE _cf_KV (key TEXT PRIMARY KEY, value BLOB)");
    await raw.execute("INSERT INTO _cf_KV VALUES ('harness:server', 'local')");
    raw.close();
    const handle = await openDatabase({ url: path, stateDirectory: state, migrations: [foundation] });
    try {
      expect(handle.migration.applied).toEqual([foundation.id]);
    } finally {
      await handle.close();
    }
    const reopened = await openDatabase({ url: path, stateDirectory: state, migrations: [foundation] });
    try {
      expect(reopened.migration.applied).toEqual([]);
    } finally {
      await reopened.close();
    }
  });

  it("StorageNewerThanBinary: a newer build applied a breaking migration this build does not know", async () => {
    const state = await tempStateDirectory();
    const path = join(state, "db.sqlite");
    const newer: Migration = { ...addNotes, id: "29990105000000_test-newer-breaking", breaking: true };
    const handle = await openDatabase({ url: path, stateDirectory: state, migrations: [foundation, newer] });
    await handle.close();
    const error = await expectRefusal(path, state, [foundation], "StorageNewerThanBinary");
    expect(error).toMatchObject({ unknownMigrations: [newer.id], compatibleFloor: newer.id });
  });

  it("a newer database whose compatible floor this build knows opens without writing", async () => {
    const state = await tempStateDirectory();
    const path = join(state, "db.sqlite");
    const handle = await openDatabase({ url: path, stateDirectory: state, migrations: [foundation, addNotes] });
    await handle.close();
    await settle(path);
    const before = fingerprint(path);
    const older = await openDatabase({ url: path, stateDirectory: state, migrations: [foundation] });
    expect(older.migration).toEqual({ applied: [], backupPath: null });
    await seedSession(older, "from-older-build");
    await older.close();
    await settle(path);
    // Only the Session insert changed the file.
    const raw = rawClient(path);
    expect(await rows(raw, "SELECT count(*) AS n FROM harness_migration")).toEqual([{ n: 2 }]);
    raw.close();
    expect(fingerprint(path).digest).not.toBe(before.digest);
  });

  it("StorageMigrationDiverged: the ledger order differs from the registry", async () => {
    const state = await tempStateDirectory();
    const path = join(state, "db.sqlite");
    const branchA: Migration = { ...addNotes, id: "29990106000000_test-branch-a" };
    const branchB: Migration = { ...addNotes, id: "29990106000001_test-branch-b" };
    const handle = await openDatabase({ url: path, stateDirectory: state, migrations: [foundation, branchA] });
    await handle.close();
    const error = await expectRefusal(path, state, [foundation, branchB], "StorageMigrationDiverged");
    expect(error).toMatchObject({ ordinal: 2, expected: branchB.id, found: branchA.id });
  });

  it("StorageSchemaDrifted: a recorded index was dropped", async () => {
    const state = await tempStateDirectory();
    const path = join(state, "db.sqlite");
    const handle = await openDatabase({ url: path, stateDirectory: state });
    await handle.close();
    const raw = rawClient(path);
    await raw.execute("DROP INDEX session_spawned_from_idx");
    raw.close();
    const error = await expectRefusal(path, state, serverMigrations, "StorageSchemaDrifted");
    expect(error).toMatchObject({ drift: [{ type: "index", name: "session_spawned_from_idx", reason: "missing" }] });
  });

  it("StorageSchemaDrifted: a recorded table was redefined", async () => {
    const state = await tempStateDirectory();
    const path = join(state, "db.sqlite");
    const handle = await openDatabase({ url: path, stateDirectory: state });
    await handle.close();
    const raw = rawClient(path);
    await raw.execute("ALTER TABLE deleted_session ADD COLUMN reason text");
    raw.close();
    const error = await expectRefusal(path, state, serverMigrations, "StorageSchemaDrifted");
    expect(error).toMatchObject({ drift: [{ type: "table", name: "deleted_session", reason: "redefined" }] });
  });
});
