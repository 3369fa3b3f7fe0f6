// Reads outside a transaction run on the write connection while no transaction holds it (its page
// cache survives its own commits), else on the read connection: either way they see exactly what
// is committed, and a read that fails there leaves later transactions unharmed.
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openDatabase, sessions, type StorageHandle } from "../../services/storage/index.js";
import { newSession, tempStateDirectory } from "./helpers.js";

let handle: StorageHandle;
beforeEach(async () => {
  const state = await tempStateDirectory();
  handle = await openDatabase({ url: join(state, "reads.db"), stateDirectory: state });
});
afterEach(async () => {
  await handle.close();
});

/** Which connection a read ran on: the write connection runs synchronous = NORMAL (1), the read connection FULL (2). */
const connection = async (): Promise<string> => ((await handle.reader().sql.get<{ synchronous: number }>("PRAGMA synchronous"))?.synchronous === 1 ? "writer" : "reader");
const count = async (): Promise<unknown> => (await handle.reader().sql.get<{ n: number }>("SELECT count(*) AS n FROM session"))?.n;

describe("reads outside a transaction", () => {
  it("see what is committed, never a transaction still open, before and after it commits", async () => {
    await sessions.insertSession(handle, newSession("first"));
    expect(await count()).toBe(1);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let inserted!: () => void;
    const insertedSignal = new Promise<void>((resolve) => (inserted = resolve));
    const open = handle.transaction(async (tx) => {
      await sessions.insertSession(tx, newSession("second"));
      inserted();
      await held;
    });
    await insertedSignal;
    // The write connection holds the open transaction: the read goes elsewhere and sees only the committed row.
    expect(await count()).toBe(1);
    expect(await connection()).toBe("reader");
    release();
    await open;
    expect(await count()).toBe(2);
    // Read right after each commit, on the warm write connection.
    for (let index = 0; index < 20; index++) {
      await sessions.insertSession(handle, newSession(`more-${index}`));
      expect(await count()).toBe(3 + index);
      expect(await connection()).toBe("writer");
    }
  });

  it("a read that fails rejects with its error, and the next transactions commit", async () => {
    await sessions.insertSession(handle, newSession("before"));
    await expect(handle.reader().sql.get("SELECT json_extract('not json', '$.a') AS a")).rejects.toThrow(/malformed JSON/i);
    await sessions.insertSession(handle, newSession("after"));
    await sessions.updateSession(handle, "local", "after", { title: "still writable" });
    expect((await sessions.getSession(handle, "local", "after"))?.title).toBe("still writable");
    expect(await count()).toBe(2);
  });

  it("never run on a write connection that SQLite says is inside a transaction, though no transaction of ours holds it", async () => {
    // As a failed ROLLBACK would leave it: a BEGIN run outside any transaction of the handle (it
    // lands on the idle write connection), then an uncommitted row there.
    await sessions.insertSession(handle, newSession("committed"));
    expect(await connection()).toBe("writer");
    await handle.reader().sql.run("BEGIN");
    expect(await connection()).toBe("reader");
    expect(await count()).toBe(1);
  });
});
