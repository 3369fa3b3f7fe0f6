// Durability: a file's writer commits with synchronous = NORMAL; a `full` transaction settles only
// after an fdatasync of the WAL (run off the main thread, shared by commits that land meanwhile),
// a `relaxed` one does not wait for any.
import { open } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openDatabase, sessions, type StorageHandle } from "../../services/storage/index.js";
import { newSession, tempStateDirectory } from "./helpers.js";

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
    // OFF (0): the commit writes the WAL; the sync follows, off the event loop (checkpoints, which
    // need their own syncs, run on the checkpoint worker's connection: checkpoint.ts).
    expect(synchronous).toBe(0);
    expect((await sessions.listSessions(handle, "local")).map((s) => s.id).sort()).toEqual(["full", "relaxed"]);
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
