import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  nextServerCursor,
  nextSessionActivityCursor,
  openDatabase,
  readServerCursor,
  sessions,
  type StorageHandle,
} from "../../services/storage/index.js";
import { newSession, tempStateDirectory } from "./helpers.js";

let handle: StorageHandle;

beforeEach(async () => {
  handle = await openDatabase({ url: "sessions.db", stateDirectory: await tempStateDirectory() });
});
afterEach(async () => {
  await handle.close();
});

describe("cursors", () => {
  it("the server cursor starts at 0 and only grows, one step per stamped change", async () => {
    expect(await readServerCursor(handle)).toBe(0);
    const seen: number[] = [];
    for (let i = 0; i < 5; i++) seen.push(await handle.transaction((tx) => nextServerCursor(tx)));
    expect(seen).toEqual([1, 2, 3, 4, 5]);
    expect(await readServerCursor(handle)).toBe(5);
    expect(await readServerCursor(handle.db)).toBe(5);
  });

  it("stamps in the same transaction as the change: a rolled-back change leaves no cursor behind", async () => {
    await sessions.insertSession(handle, newSession("a"));
    const error = await handle
      .transaction(async (tx) => {
        await sessions.insertSession(tx, newSession("b"));
        expect(await readServerCursor(tx)).toBe(2);
        throw new Error("abandon");
      })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ message: "abandon" });
    expect(await readServerCursor(handle)).toBe(1);
    expect(await sessions.getSession(handle, "local", "b")).toBeUndefined();
    // The next change reuses the rolled-back value: cursors stay gap-free and monotonic.
    const c = await sessions.insertSession(handle, newSession("c"));
    expect(c.serverCursor).toBe(2);
  });

  it("the per-Session activity cursor counts that Session's changes", async () => {
    const created = await sessions.insertSession(handle, newSession("a"));
    expect(created.activityCursor).toBe(1);
    expect(await handle.transaction((tx) => nextSessionActivityCursor(tx, "a"))).toBe(2);
    expect(await handle.transaction((tx) => nextSessionActivityCursor(tx, "a"))).toBe(3);
    expect(await handle.transaction((tx) => nextSessionActivityCursor(tx, "missing"))).toBeUndefined();
    const updated = await sessions.updateSession(handle, "local", "a", { title: "t" });
    expect(updated?.activityCursor).toBe(4);
  });
});

describe("sessions repository", () => {
  it("inserts, reads and stamps a Session with its JSON columns", async () => {
    const row = await sessions.insertSession(
      handle,
      newSession("s1", {
        title: "hello",
        defaultModel: "openai/gpt",
        systemPrompt: "be brief",
        forkedFrom: { parentSessionId: "p", through: { kind: "conversationEntry", entryId: "e" } },
        createRequestHash: "sha256:abc",
      }),
    );
    expect(row).toMatchObject({
      id: "s1",
      server: "local",
      title: "hello",
      configurationRevision: 1,
      nextSequence: 1,
      activityCursor: 1,
      serverCursor: 1,
      deleting: false,
      permissions: [{ action: "read", resource: "*", effect: "allow" }],
      approval: { timeoutMs: { kind: "unlimited" } },
      forkedFrom: { parentSessionId: "p", through: { kind: "conversationEntry", entryId: "e" } },
    });
    expect(await sessions.getSession(handle, "local", "s1")).toEqual(row);
    expect(await sessions.getSession(handle, "other-server", "s1")).toBeUndefined();
    await expect(sessions.insertSession(handle, newSession("s1"))).rejects.toMatchObject({
      cause: { code: "SQLITE_CONSTRAINT" },
    });
  });

  it("lists a server's Sessions oldest first, same-millisecond ties in insertion order, optionally by project", async () => {
    await sessions.insertSession(handle, newSession("c", { createdAt: 5 }));
    await sessions.insertSession(handle, newSession("b", { createdAt: 5, projectId: "other" }));
    await sessions.insertSession(handle, newSession("a", { createdAt: 9 }));
    await sessions.insertSession(handle, newSession("z", { createdAt: 1, server: "elsewhere" }));
    expect((await sessions.listSessions(handle, "local")).map((s) => s.id)).toEqual(["c", "b", "a"]);
    expect((await sessions.listSessions(handle, "local", "project-1")).map((s) => s.id)).toEqual(["c", "a"]);
    expect((await sessions.listSessions(handle, "elsewhere")).map((s) => s.id)).toEqual(["z"]);
    expect((await sessions.listSessionsStampedAfter(handle, "local", 1)).map((s) => s.id)).toEqual(["b", "a"]);
  });

  it("updates a Session, stamping both cursors; a missing Session writes nothing", async () => {
    await sessions.insertSession(handle, newSession("s"));
    const updated = await sessions.updateSession(handle, "local", "s", {
      title: "renamed",
      updatedAt: 2_000,
      configurationRevision: 2,
      permissions: [],
    });
    expect(updated).toMatchObject({ title: "renamed", updatedAt: 2_000, configurationRevision: 2, permissions: [], serverCursor: 2, activityCursor: 2 });
    expect(await sessions.updateSession(handle, "local", "missing", { title: "x" })).toBeUndefined();
    // Compare-and-set on the configuration revision.
    expect(
      await sessions.updateSession(handle, "local", "s", { configurationRevision: 3 }, { expectedConfigurationRevision: 1 }),
    ).toBeUndefined();
    expect(
      await sessions.updateSession(handle, "local", "s", { configurationRevision: 3 }, { expectedConfigurationRevision: 2 }),
    ).toMatchObject({ configurationRevision: 3, serverCursor: 3 });
    expect(await sessions.updateSession(handle, "other", "s", { title: "x" })).toBeUndefined();
    expect(await readServerCursor(handle)).toBe(3);
  });

  it("lists spawned children", async () => {
    await sessions.insertSession(handle, newSession("parent"));
    await sessions.insertSession(handle, newSession("child-2", { spawnedFromSessionId: "parent", createdAt: 3, agent: "explore" }));
    await sessions.insertSession(handle, newSession("child-1", { spawnedFromSessionId: "parent", createdAt: 2 }));
    expect((await sessions.listChildren(handle, "local", "parent")).map((s) => s.id)).toEqual(["child-1", "child-2"]);
    expect(await sessions.listChildren(handle, "other", "parent")).toEqual([]);
    await expect(
      sessions.insertSession(handle, newSession("orphan", { spawnedFromSessionId: "nobody" })),
    ).rejects.toMatchObject({ cause: { code: "SQLITE_CONSTRAINT" } });
  });

  it("deletes a Session with its grants and spawned descendants, retiring every identity", async () => {
    await sessions.insertSession(handle, newSession("root"));
    await sessions.insertSession(handle, newSession("child", { spawnedFromSessionId: "root" }));
    await sessions.insertSession(handle, newSession("grandchild", { spawnedFromSessionId: "child" }));
    await sessions.insertSession(handle, newSession("fork", { forkedFrom: { parentSessionId: "root" } }));
    await sessions.insertSavedPermission(handle, { id: "g1", sessionId: "root", action: "read", resource: "*", createdAt: 1, sourcePermissionRequestId: "r1" });
    await sessions.insertSavedPermission(handle, { id: "g2", sessionId: "child", action: "edit", resource: "*", createdAt: 1, sourcePermissionRequestId: "r2" });
    const cursorBefore = await readServerCursor(handle);

    expect(await sessions.deleteSession(handle, "other-server", "root", 10)).toEqual([]);
    const deleted = await sessions.deleteSession(handle, "local", "root", 10_000);
    expect(deleted).toEqual(["grandchild", "child", "root"]);

    expect((await sessions.listSessions(handle, "local")).map((s) => s.id)).toEqual(["fork"]);
    expect(await sessions.listSavedPermissions(handle, "root")).toEqual([]);
    expect(await sessions.listSavedPermissions(handle, "child")).toEqual([]);
    for (const id of deleted) expect(await sessions.isRetired(handle, "local", id)).toBe(true);
    expect(await sessions.isRetired(handle, "local", "fork")).toBe(false);
    expect(await sessions.isRetired(handle, "other-server", "root")).toBe(false);

    const markers = await sessions.listDeletedSessions(handle, "local", cursorBefore);
    expect(markers.map((m) => [m.sessionId, m.serverCursor, m.deletedAt])).toEqual([
      ["grandchild", cursorBefore + 1, 10_000],
      ["child", cursorBefore + 2, 10_000],
      ["root", cursorBefore + 3, 10_000],
    ]);
    expect(await readServerCursor(handle)).toBe(cursorBefore + 3);
    expect(await sessions.deleteSession(handle, "local", "root", 20_000)).toEqual([]);
  });

  it("deletes a whole server (or one project of it) in one transaction", async () => {
    await sessions.insertSession(handle, newSession("a", { createdAt: 1 }));
    await sessions.insertSession(handle, newSession("a-child", { createdAt: 2, spawnedFromSessionId: "a" }));
    await sessions.insertSession(handle, newSession("b", { createdAt: 3, projectId: "p2" }));
    await sessions.insertSession(handle, newSession("keep", { server: "other" }));

    expect(await sessions.deleteServer(handle, "local", 5, "p2")).toEqual(["b"]);
    expect(new Set(await sessions.deleteServer(handle, "local", 6))).toEqual(new Set(["a", "a-child"]));
    expect(await sessions.listSessions(handle, "local")).toEqual([]);
    expect((await sessions.listSessions(handle, "other")).map((s) => s.id)).toEqual(["keep"]);
    expect((await sessions.listDeletedSessions(handle, "local")).map((m) => m.sessionId).sort()).toEqual(["a", "a-child", "b"]);
  });

  it("composes repository calls atomically inside one transaction", async () => {
    await expect(
      handle.transaction(async (tx) => {
        await sessions.insertSession(tx, newSession("x"));
        await sessions.insertSavedPermission(tx, { id: "g", sessionId: "x", action: "a", resource: "r", createdAt: 1, sourcePermissionRequestId: "q" });
        await sessions.insertSavedPermission(tx, { id: "g", sessionId: "x", action: "a", resource: "r", createdAt: 1, sourcePermissionRequestId: "q" });
      }),
    ).rejects.toBeDefined();
    expect(await sessions.getSession(handle, "local", "x")).toBeUndefined();
    expect(await readServerCursor(handle)).toBe(0);
  });

  it("lists, inserts and removes saved permissions", async () => {
    await sessions.insertSession(handle, newSession("s"));
    const g2 = await sessions.insertSavedPermission(handle, { id: "g2", sessionId: "s", action: "edit", resource: "src/**", createdAt: 2, sourcePermissionRequestId: "r2" });
    await sessions.insertSavedPermission(handle, { id: "g1", sessionId: "s", action: "read", resource: "*", createdAt: 1, sourcePermissionRequestId: "r1" });
    expect(g2).toEqual({ id: "g2", sessionId: "s", action: "edit", resource: "src/**", createdAt: 2, sourcePermissionRequestId: "r2" });
    expect((await sessions.listSavedPermissions(handle, "s")).map((p) => p.id)).toEqual(["g1", "g2"]);
    expect(await sessions.removeSavedPermission(handle, "other-session", "g1")).toBeUndefined();
    expect(await sessions.removeSavedPermission(handle, "s", "g1")).toMatchObject({ id: "g1" });
    expect(await sessions.removeSavedPermission(handle, "s", "g1")).toBeUndefined();
    expect((await sessions.listSavedPermissions(handle, "s")).map((p) => p.id)).toEqual(["g2"]);
  });
});
