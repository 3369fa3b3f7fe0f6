// Group commit on a real file database: transactions that queue up while one commits share the
// next COMMIT, each in its own savepoint; a failing one rolls back alone; nothing is announced or
// acknowledged before its COMMIT.
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LocalConnection } from "../../services/storage/engine.js";
import { openDatabase, sessions, type StorageHandle } from "../../services/storage/index.js";
import { newSession, tempStateDirectory } from "./helpers.js";

let commits = 0;
const original = LocalConnection.prototype.runSync;
let handle: StorageHandle;

beforeEach(async () => {
  LocalConnection.prototype.runSync = function counted(this: LocalConnection, sql, args) {
    if (sql === "COMMIT") commits += 1;
    return original.call(this, sql, args);
  };
  const state = await tempStateDirectory();
  handle = await openDatabase({ url: join(state, "group.db"), stateDirectory: state });
  commits = 0;
});
afterEach(async () => {
  await handle.close();
  LocalConnection.prototype.runSync = original;
});

describe("group commit", () => {
  it("commits twenty concurrent transactions in far fewer COMMITs, every one of them durable", async () => {
    const ids = Array.from({ length: 20 }, (_, index) => `s${index}`);
    await Promise.all(ids.map((id) => sessions.insertSession(handle, newSession(id))));
    expect(commits).toBeLessThan(ids.length);
    expect(commits).toBeGreaterThanOrEqual(1);
    const listed = await sessions.listSessions(handle, "local");
    expect(listed.map((row) => row.id).sort()).toEqual([...ids].sort());
    // Each took its own stamp, in submission order.
    expect(new Set(listed.map((row) => row.serverCursor)).size).toBe(ids.length);
  });

  it("rolls back only the transaction that failed; the others of its batch commit", async () => {
    await sessions.insertSession(handle, newSession("existing"));
    const outcomes = await Promise.allSettled([
      sessions.insertSession(handle, newSession("a")),
      sessions.insertSession(handle, newSession("b")),
      handle.transaction(async (tx) => {
        await sessions.insertSession(tx, newSession("doomed"));
        throw new Error("refused by its caller");
      }),
      sessions.insertSession(handle, newSession("existing")), // a primary-key conflict
      sessions.insertSession(handle, newSession("c")),
    ]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(["fulfilled", "fulfilled", "rejected", "rejected", "fulfilled"]);
    expect((outcomes[2] as PromiseRejectedResult).reason).toMatchObject({ message: "refused by its caller" });
    const ids = (await sessions.listSessions(handle, "local")).map((row) => row.id).sort();
    expect(ids).toEqual(["a", "b", "c", "existing"]);
  });

  it("runs a transaction's after-commit callbacks once it committed, and never for one that rolled back", async () => {
    const seen: string[] = [];
    const committed = handle.transaction(async (tx) => {
      await sessions.insertSession(tx, newSession("kept"));
      handle.afterCommit(() => seen.push("kept"));
      expect(seen).toEqual([]);
    });
    const rolledBack = handle.transaction(async (tx) => {
      await sessions.insertSession(tx, newSession("dropped"));
      handle.afterCommit(() => seen.push("dropped"));
      throw new Error("no");
    });
    await committed;
    await expect(rolledBack).rejects.toThrow("no");
    expect(seen).toEqual(["kept"]);
    expect(await sessions.getSession(handle, "local", "dropped")).toBeUndefined();
  });

  it("a read through the handle inside a transaction sees its writes; another connection sees them only once committed", async () => {
    const other = await openDatabase({ url: handle.location.kind === "file" ? handle.location.path : ":memory:", stateDirectory: "/unused" });
    try {
      let inside: unknown;
      let elsewhere: unknown;
      await handle.transaction(async (tx) => {
        await sessions.insertSession(tx, newSession("fresh"));
        inside = await sessions.getSession(handle, "local", "fresh");
        elsewhere = await sessions.getSession(other, "local", "fresh");
      });
      expect(inside).toMatchObject({ id: "fresh" });
      expect(elsewhere).toBeUndefined();
      expect(await sessions.getSession(other, "local", "fresh")).toMatchObject({ id: "fresh" });
    } finally {
      await other.close();
    }
  });

  it("an after-commit callback that throws never turns the commit into an unhandled rejection: the work resolves and the other callbacks run", async () => {
    const heard: string[] = [];
    const results = await Promise.all(
      ["first", "second"].map((id) =>
        handle.transaction(async (tx) => {
          await sessions.insertSession(tx, newSession(id));
          handle.afterCommit(() => {
            throw new Error(`${id}'s callback failed`);
          });
          handle.afterCommit(() => heard.push(id));
          return id;
        }),
      ),
    );
    expect(results).toEqual(["first", "second"]);
    expect(heard.sort()).toEqual(["first", "second"]);
  });
});
