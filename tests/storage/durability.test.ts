// Durability: a file's writer commits with synchronous = NORMAL (never OFF: a restarted WAL's header
// must be synced before old frames are overwritten); a `full` transaction settles only
// after an fdatasync of the WAL (run off the main thread, shared by commits that land meanwhile),
// a `relaxed` one does not wait for any.
import { readFileSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openDatabase, sessions, type StorageHandle } from "../../services/storage/index.js";
import { newSession, tempStateDirectory } from "./helpers.js";

interface NativeDatabase {
  exec(sql: string): void;
  prepare(sql: string): { raw(toggle: boolean): { all(args: unknown[]): unknown[] } };
  close(): void;
}
const NativeDatabase = createRequire(import.meta.url)("libsql") as new (path: string, options: { timeout: number }) => NativeDatabase;

let handle: StorageHandle;
let path: string;
const synced: string[] = [];
let restore: () => void;

beforeEach(async () => {
  const state = await tempStateDirectory();
  path = join(state, "durability.db");
  handle = await openDatabase({ url: path, stateDirectory: state });
  // Every FileHandle shares one prototype: record each datasync (and what it synced) as it completes.
  const probe = await open(path, "r");
  const prototype = Object.getPrototypeOf(probe) as { datasync: () => Promise<void> };
  await probe.close();
  const original = prototype.datasync;
  prototype.datasync = async function recorded(this: { fd: number }) {
    await original.call(this);
    synced.push("datasync");
  };
  restore = () => (prototype.datasync = original);
  synced.length = 0;
});
afterEach(async () => {
  restore();
  await handle.close();
});

describe("transaction durability", () => {
  it("a full transaction settles only after the WAL is synced; a relaxed one waits for none", async () => {
    await handle.transaction(async (tx) => void (await sessions.insertSession(tx, newSession("relaxed"))), { durability: "relaxed" });
    expect(synced).toEqual([]);
    await handle.transaction(async (tx) => void (await sessions.insertSession(tx, newSession("full"))));
    expect(synced).toEqual(["datasync"]);
    let synchronous: unknown;
    await handle.transaction(async (tx) => {
      synchronous = (await tx.all<{ synchronous: number }>("PRAGMA synchronous"))[0]?.synchronous;
    });
    // NORMAL (1), never OFF (0): the commit writes the WAL unsynced and the sync follows, off the
    // event loop (checkpoints, with their own syncs, run on the checkpoint worker's connection:
    // checkpoint.ts), but a restarted WAL's header is synced before old frames are overwritten
    // (see the next case). Before the fix this was 0.
    expect(synchronous).toBe(1);
    expect((await sessions.listSessions(handle, "local")).map((s) => s.id).sort()).toEqual(["full", "relaxed"]);
  });

  it("why the writer syncs a restarted WAL's header: without it, power loss after an out-of-order write rolls back checkpointed commits", () => {
    // The files a power loss can leave when the write connection runs synchronous = OFF: the WAL
    // was checkpointed and restarts, the next commit's new header and first frame never reached
    // the disk but its second frame did. The old header and old first frame still form a valid
    // prefix, and recovery replays it over the database that already holds later commits.
    const state = join(path, "..");
    const live = join(state, "restart.db");
    const writer = new NativeDatabase(live, { timeout: 0 });
    const checkpointer = new NativeDatabase(live, { timeout: 0 });
    try {
      writer.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = OFF; PRAGMA wal_autocheckpoint = 0");
      writer.exec("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT); INSERT INTO t VALUES (1, 'first')");
      checkpointer.exec("PRAGMA wal_checkpoint(RESTART)");
      // One WAL generation: three commits, one frame each, all of them acknowledged and then checkpointed.
      writer.exec("UPDATE t SET v = 'second' WHERE k = 1");
      writer.exec("UPDATE t SET v = 'third' WHERE k = 1");
      writer.exec("INSERT INTO t VALUES (2, 'other')");
      checkpointer.exec("PRAGMA wal_checkpoint(RESTART)");
      const database = readFileSync(live);
      const oldWal = readFileSync(`${live}-wal`);
      // The next generation, written from the WAL's start.
      writer.exec(`INSERT INTO t VALUES (3, '${"n".repeat(5000)}')`);
      const newWal = readFileSync(`${live}-wal`);
      const FRAME = 4096 + 24;
      expect(newWal.length).toBeGreaterThanOrEqual(32 + 2 * FRAME);
      const crashed = Buffer.from(oldWal);
      newWal.copy(crashed, 32 + FRAME, 32 + FRAME, 32 + 2 * FRAME);
      const after = join(state, "after-power-loss.db");
      writeFileSync(after, database);
      writeFileSync(`${after}-wal`, crashed);
      const reopened = new NativeDatabase(after, { timeout: 0 });
      try {
        // 'third' and row 2 were committed before the restart and are gone: recovery replayed the stale first frame.
        expect(reopened.prepare("SELECT k, v FROM t ORDER BY k").raw(true).all([])).toEqual([[1, "second"]]);
      } finally {
        reopened.close();
      }
    } finally {
      writer.close();
      checkpointer.close();
    }
  });

  it("full transactions committed while a sync runs share the next one", async () => {
    await Promise.all(Array.from({ length: 12 }, (_, index) => sessions.insertSession(handle, newSession(`s${index}`))));
    expect(synced.length).toBeGreaterThanOrEqual(1);
    expect(synced.length).toBeLessThan(12);
    expect(await sessions.listSessions(handle, "local")).toHaveLength(12);
  });

  it("whenCommitted runs at COMMIT, before the sync, with a promise that resolves once it is durable; never for a rolled-back transaction", async () => {
    const seen: string[] = [];
    let durable: Promise<void> | undefined;
    const committed = handle.transaction(async (tx) => {
      await sessions.insertSession(tx, newSession("early"));
      handle.whenCommitted((promise) => {
        // Committed: another connection reads it already; not synced yet.
        seen.push(`committed, ${synced.length} syncs`);
        durable = promise.then(() => void seen.push(`durable, ${synced.length} syncs`));
      });
      handle.afterCommit(() => seen.push("after commit"));
      expect(seen).toEqual([]);
    });
    const rolledBack = handle.transaction(async (tx) => {
      await sessions.insertSession(tx, newSession("dropped"));
      handle.whenCommitted(() => seen.push("dropped"));
      throw new Error("no");
    });
    await committed;
    await expect(rolledBack).rejects.toThrow("no");
    await durable;
    expect(seen).toEqual(["committed, 0 syncs", "durable, 1 syncs", "after commit"]);
    // Outside a transaction it runs at once, with a settled promise.
    let outside: Promise<void> | undefined;
    handle.whenCommitted((promise) => (outside = promise));
    await expect(outside).resolves.toBeUndefined();
  });

  it("what a full transaction wrote survives reopening", async () => {
    await sessions.insertSession(handle, newSession("kept"));
    await handle.close();
    handle = await openDatabase({ url: path, stateDirectory: join(path, "..") });
    expect(await sessions.getSession(handle, "local", "kept")).toMatchObject({ id: "kept" });
  });
});
