import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openDatabase, sessions } from "../../services/storage/index.js";
import { newSession, tempStateDirectory } from "./helpers.js";

describe("transaction durability", () => {
  it("a relaxed transaction commits like a full one and leaves the writer fully synced", async () => {
    const state = await tempStateDirectory();
    const path = join(state, "durability.db");
    const handle = await openDatabase({ url: path, stateDirectory: state });
    let synchronousInside: unknown;
    await handle.transaction(
      async (tx) => {
        await sessions.insertSession(tx, newSession("relaxed"));
        synchronousInside = (await tx.all<{ synchronous: number }>("PRAGMA synchronous"))[0]?.synchronous;
      },
      { durability: "relaxed" },
    );
    let synchronousAfter: unknown;
    await handle.transaction(async (tx) => {
      await sessions.insertSession(tx, newSession("full"));
      synchronousAfter = (await tx.all<{ synchronous: number }>("PRAGMA synchronous"))[0]?.synchronous;
    });
    await handle.close();
    // NORMAL = 1 while relaxed, FULL = 2 again for the next transaction.
    expect(synchronousInside).toBe(1);
    expect(synchronousAfter).toBe(2);
    const reopened = await openDatabase({ url: path, stateDirectory: state });
    expect((await sessions.listSessions(reopened, "local")).map((s) => s.id).sort()).toEqual(["full", "relaxed"]);
    await reopened.close();
  });
});
