// The database file itself: owner-only modes wherever it lives, a file that is not a database
// named as such, and an unreachable server named by its URL without secrets.
import { randomBytes } from "node:crypto";
import { existsSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, serverMigrations, sessions, StorageNotADatabase, StorageUnreachable } from "../../services/storage/index.js";
import { addNotes, newSession, rawClient, seedSession, tempStateDirectory } from "./helpers.js";

const modeOf = (path: string): number => statSync(path).mode & 0o777;

/** The database and whichever of its -wal / -shm files exist, with their modes. */
function companionModes(path: string): Record<string, number> {
  const modes: Record<string, number> = {};
  for (const file of [path, `${path}-wal`, `${path}-shm`]) if (existsSync(file)) modes[file] = modeOf(file);
  return modes;
}

// A usual umask (files 0644 unless asked otherwise), whatever the runner's is: forks, so it is ours.
let umask: number;
beforeAll(() => {
  umask = process.umask(0o022);
});
afterAll(() => {
  process.umask(umask);
});

describe("database file modes outside the state directory", () => {
  it("creates the database, its -wal and -shm owner-only (0600) and writes migration backups 0600", async () => {
    const state = await tempStateDirectory();
    const elsewhere = await tempStateDirectory();
    const path = join(elsewhere, "project.db");

    const old = await openDatabase({ url: path, stateDirectory: state, migrations: [serverMigrations[0]!] });
    try {
      await seedSession(old, "written");
      expect(existsSync(`${path}-wal`)).toBe(true);
      const modes = companionModes(path);
      expect(Object.keys(modes).length).toBeGreaterThanOrEqual(2);
      for (const [file, mode] of Object.entries(modes)) expect({ file, mode: mode.toString(8) }).toEqual({ file, mode: "600" });
    } finally {
      await old.close();
    }

    const upgraded = await openDatabase({ url: path, stateDirectory: state, migrations: [serverMigrations[0]!, addNotes] });
    try {
      const backupPath = upgraded.migration.backupPath;
      expect(backupPath).toBe(`${path}.pre-${addNotes.id}.bak`);
      expect(modeOf(backupPath!).toString(8)).toBe("600");
      await seedSession(upgraded, "after-upgrade");
      for (const [file, mode] of Object.entries(companionModes(path))) expect({ file, mode: mode.toString(8) }).toEqual({ file, mode: "600" });
    } finally {
      await upgraded.close();
    }
  });

  it("tightens an existing world-readable database and its -wal / -shm to 0600", async () => {
    const state = await tempStateDirectory();
    const elsewhere = await tempStateDirectory();
    const path = join(elsewhere, "shared.db");
    // Made outside the storage room, the way any SQLite tool would: 0644 under this umask.
    const raw = rawClient(path);
    await raw.execute("PRAGMA journal_mode = WAL");
    // A write that creates no table (which would need a reset): the open client keeps -wal and -shm.
    await raw.execute("PRAGMA user_version = 1");
    for (const file of [path, `${path}-wal`, `${path}-shm`]) expect(modeOf(file).toString(8)).toBe("644");

    const handle = await openDatabase({ url: path, stateDirectory: state });
    try {
      await sessions.insertSession(handle, newSession("s"));
      const modes = companionModes(path);
      expect(Object.keys(modes)).toEqual([path, `${path}-wal`, `${path}-shm`]);
      for (const [file, mode] of Object.entries(modes)) expect({ file, mode: mode.toString(8) }).toEqual({ file, mode: "600" });
    } finally {
      await handle.close();
      raw.close();
    }
  });
});

describe("a file that is not a database", () => {
  it("fails StorageNotADatabase naming the file, and creates nothing beside it", async () => {
    const state = await tempStateDirectory();
    const path = join(await tempStateDirectory(), "random.bin");
    writeFileSync(path, randomBytes(8192), { mode: 0o644 });
    const error = await openDatabase({ url: path, stateDirectory: state }).then(
      (handle) => handle.close().then(() => "opened"),
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(StorageNotADatabase);
    expect(error).toMatchObject({ _tag: "StorageNotADatabase", retryable: false, path });
    expect((error as Error).message).toContain(path);
    expect((error as Error).message).toMatch(/not a SQLite database/);
    expect((error as Error).message).toMatch(/Ze Harness database/);
    expect(existsSync(`${path}-wal`)).toBe(false);
  });

  it("names the file when SQLite itself rejects it (a SQLite header over garbage)", async () => {
    const state = await tempStateDirectory();
    const path = join(await tempStateDirectory(), "fake.db");
    writeFileSync(path, Buffer.concat([Buffer.from("SQLite format 3\0", "latin1"), Buffer.alloc(84, 0xff), randomBytes(4000)]));
    const error = await openDatabase({ url: `file:${path}`, stateDirectory: state }).then(
      (handle) => handle.close().then(() => "opened"),
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ _tag: "StorageNotADatabase", path });
    expect((error as Error).message).toContain(path);
  });
});

/** A loopback port that was free a moment ago and has nothing listening. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const port = (probe.address() as { port: number }).port;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

describe("a libSQL server that cannot be reached", () => {
  it("fails StorageUnreachable naming the URL without its auth token or query", async () => {
    const port = await closedPort();
    const state = await tempStateDirectory();
    const error = await openDatabase({
      url: `http://127.0.0.1:${port}/db?authToken=query-secret-123`,
      authToken: "option-secret-456",
      stateDirectory: state,
    }).then(
      (handle) => handle.close().then(() => "opened"),
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(StorageUnreachable);
    expect(error).toMatchObject({ _tag: "StorageUnreachable", retryable: true, url: `http://127.0.0.1:${port}/db`, code: "ECONNREFUSED" });
    const message = (error as Error).message;
    expect(message).toContain(`http://127.0.0.1:${port}/db`);
    for (const text of [message, JSON.stringify(error), String(error)]) {
      expect(text).not.toContain("query-secret-123");
      expect(text).not.toContain("option-secret-456");
      expect(text).not.toContain("authToken");
    }
  });

  it("drops user:password credentials from the URL it names", async () => {
    const port = await closedPort();
    const error = await openDatabase({ url: `http://ze:hunter2-pw@127.0.0.1:${port}`, stateDirectory: await tempStateDirectory() }).then(
      (handle) => handle.close().then(() => "opened"),
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ _tag: "StorageUnreachable", url: `http://127.0.0.1:${port}/` });
    expect((error as Error).message).toContain(`http://127.0.0.1:${port}/`);
    expect(`${(error as Error).message} ${JSON.stringify(error)}`).not.toMatch(/hunter2|ze:/);
  });
});
