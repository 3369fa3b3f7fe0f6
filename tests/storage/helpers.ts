import { createHash } from "node:crypto";
import { existsSync, readFileSync, statSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient, type Client } from "@libsql/client";
import { afterEach } from "vitest";
import type { Migration } from "../../services/storage/index.js";
import type { NewSession } from "../../services/storage/sessions.js";

const directories: string[] = [];

/** A fresh temporary state directory, removed after the test. */
export async function tempStateDirectory(): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), "ze-storage-"));
  directories.push(directory);
  return directory;
}

afterEach(async () => {
  for (const directory of directories.splice(0)) await rm(directory, { recursive: true, force: true });
});

/** sha256 and mtime of the main database file, and the size of its WAL (0 when absent). */
export function fingerprint(path: string): { digest: string; mtimeMs: number; walBytes: number } {
  return {
    digest: createHash("sha256").update(readFileSync(path)).digest("hex"),
    mtimeMs: statSync(path).mtimeMs,
    walBytes: existsSync(`${path}-wal`) ? statSync(`${path}-wal`).size : 0,
  };
}

/** A plain libSQL client outside the storage room (to set up or inspect states by hand). */
export function rawClient(path: string): Client {
  return createClient({ url: `file:${path}`, timeout: 5000 });
}

export async function rows(client: Client, sql: string): Promise<Record<string, unknown>[]> {
  const result = await client.execute(sql);
  return result.rows.map((row) => ({ ...row }));
}

export function newSession(id: string, overrides: Partial<NewSession> = {}): NewSession {
  return {
    id,
    server: "local",
    workdir: "/work",
    projectId: "project-1",
    permissions: [{ action: "read", resource: "*", effect: "allow" }],
    approval: { timeoutMs: { kind: "unlimited" } },
    createdAt: 1_000,
    updatedAt: 1_000,
    ...overrides,
  };
}

/** A test-only second migration: an additive table plus a column on `session`. */
export const addNotes: Migration = {
  id: "29990101000000_test-add-notes",
  breaking: false,
  async up(tx) {
    await tx.executeMultiple(`
      CREATE TABLE test_note (id text PRIMARY KEY NOT NULL, session_id text NOT NULL REFERENCES session (id) ON DELETE CASCADE, body text NOT NULL);
      CREATE INDEX test_note_session_idx ON test_note (session_id);
      ALTER TABLE session ADD COLUMN note_count integer DEFAULT 0 NOT NULL;
    `);
    const sessions = await tx.execute("SELECT id FROM session");
    for (const row of sessions.rows) {
      await tx.execute({ sql: "INSERT INTO test_note (id, session_id, body) VALUES (?, ?, 'backfilled')", args: [`note-${String(row["id"])}`, String(row["id"])] });
    }
  },
};

/**
 * Writes a Session as an older build would: only the foundation migration's columns, by hand,
 * stamped like `insertSession` (for databases opened with a partial registry, which the current
 * repository — written for the current schema — cannot write to).
 */
export async function seedSession(handle: { readonly client: Client | { execute: Client["execute"] } }, id: string, overrides: Partial<NewSession> = {}): Promise<void> {
  const row = newSession(id, overrides);
  await handle.client.execute("UPDATE server_activity SET cursor = cursor + 1 WHERE id = 1");
  await handle.client.execute({
    sql: `INSERT INTO session (id, server, workdir, project_id, permissions, approval, created_at, updated_at, activity_cursor, server_cursor)
          VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, (SELECT cursor FROM server_activity WHERE id = 1))`,
    args: [row.id, row.server, row.workdir, row.projectId, JSON.stringify(row.permissions), JSON.stringify(row.approval), row.createdAt, row.updatedAt],
  });
}
