// WAL checkpoints run in a worker thread (services/storage/checkpoint.ts), never inside a COMMIT on
// the event loop, once a handle has made a few dozen commits (a short-lived one starts no thread
// and SQLite checkpoints at close): the writer's automatic checkpoint is then off, the -wal file stays bounded while
// commits keep coming, nothing committed is lost (close, SIGKILL), the worker never keeps the
// process alive, and a checkpoint a reader blocks is tried again until it completes.
import { spawn } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";
import { describe, expect, it, vi } from "vitest";
import { checkpointWorkersStarted } from "../../services/storage/checkpoint.js";
import { CHECKPOINT_WORKER_AFTER_COMMITS } from "../../services/storage/database.js";
import { openDatabase, sessions, type StorageHandle } from "../../services/storage/index.js";
import { newSession, tempStateDirectory } from "./helpers.js";

const walWriter = fileURLToPath(new URL("./fixtures/wal-writer.ts", import.meta.url));
const repositoryRoot = fileURLToPath(new URL("../../", import.meta.url));
const PAGE = 4096 + 24;
const walBytes = (path: string): number => (existsSync(`${path}-wal`) ? statSync(`${path}-wal`).size : 0);
const padding = "p".repeat(6000);

interface NativeDatabase {
  exec(sql: string): void;
  prepare(sql: string): { raw(toggle: boolean): { get(args: unknown[]): unknown } };
  close(): void;
}
const NativeDatabase = createRequire(import.meta.url)("libsql") as new (path: string, options: { timeout: number }) => NativeDatabase;

/** Commits `count` Sessions (a few WAL pages each) one after another, calling `each` after every commit. */
async function writeSessions(handle: StorageHandle, prefix: string, count: number, each: () => void = () => {}): Promise<void> {
  for (let i = 0; i < count; i++) {
    await sessions.insertSession(handle, newSession(`${prefix}-${i}`, { workdir: `/${padding}/${i}` }));
    each();
  }
}

interface Child {
  readonly ids: string[];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
  /** Resolves once the child printed `count` committed ids. */
  committed(count: number): Promise<void>;
  kill(): void;
}

function runChild(state: string, url: string, count: number, ending: "close" | "open" = "close"): Child {
  const child = spawn(process.execPath, ["--import", "tsx", walWriter, state, url, String(count), ending], { cwd: repositoryRoot, stdio: ["ignore", "pipe", "pipe"] });
  const ids: string[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  let buffered = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    buffered += chunk.toString();
    const lines = buffered.split("\n");
    buffered = lines.pop()!;
    ids.push(...lines.filter((line) => line.startsWith("child-")));
    for (const waiter of waiters.filter((w) => ids.length >= w.count)) waiter.resolve();
  });
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) => child.on("close", (code, signal) => resolve({ code, signal, stderr })));
  return {
    ids,
    exited,
    committed: (target) => new Promise<void>((resolve, reject) => {
      if (ids.length >= target) return resolve();
      waiters.push({ count: target, resolve });
      void exited.then(({ code, stderr }) => reject(new Error(`the writer exited (${String(code)}) before ${target} commits: ${stderr}`)));
    }),
    kill: () => child.kill("SIGKILL"),
  };
}

/** How many Sessions the database file `file` in `state` holds, opened afresh. */
async function expectSessionCount(state: string, file: string, count: number): Promise<void> {
  const handle = await openDatabase({ url: join(state, file), stateDirectory: state });
  try {
    expect(await sessions.listSessions(handle, "local")).toHaveLength(count);
  } finally {
    await handle.close();
  }
}

/** The Sessions of the database file `file` in `state`, opened afresh, are exactly `ids`. */
async function expectSessions(state: string, file: string, ids: readonly string[]): Promise<void> {
  const handle = await openDatabase({ url: join(state, file), stateDirectory: state });
  try {
    expect((await sessions.listSessions(handle, "local")).map((s) => s.id).sort()).toEqual([...ids].sort());
  } finally {
    await handle.close();
  }
}

/** The write connection's `wal_autocheckpoint` (0: the worker checkpoints), read in a transaction (a commit). */
async function autocheckpointOf(handle: StorageHandle): Promise<unknown> {
  let autocheckpoint: unknown;
  await handle.transaction(async (tx) => {
    autocheckpoint = (await tx.sql.get<{ wal_autocheckpoint: number }>("PRAGMA wal_autocheckpoint"))?.wal_autocheckpoint;
  });
  return autocheckpoint;
}

describe("checkpoints off the event loop", () => {
  it("a short-lived handle starts no worker: SQLite checkpoints at close, and the -wal file is gone", async () => {
    const state = await tempStateDirectory();
    const path = join(state, "short.db");
    const workers = checkpointWorkersStarted();
    const handle = await openDatabase({ url: path, stateDirectory: state });
    try {
      await writeSessions(handle, "s", CHECKPOINT_WORKER_AFTER_COMMITS - 5);
      // SQLite's own automatic checkpoint, and no worker thread.
      expect(await autocheckpointOf(handle)).toBe(1000);
      expect(checkpointWorkersStarted()).toBe(workers);
      expect(walBytes(path)).toBeGreaterThan(0);
    } finally {
      await handle.close();
    }
    expect(walBytes(path)).toBe(0);
    await expectSessionCount(state, "short.db", CHECKPOINT_WORKER_AFTER_COMMITS - 5);
  });

  it("the writer's automatic checkpoint is off once the worker runs, and the -wal file stays bounded while commits never pause", async () => {
    const state = await tempStateDirectory();
    const path = join(state, "bounded.db");
    const workers = checkpointWorkersStarted();
    const handle = await openDatabase({ url: path, stateDirectory: state });
    try {
      await writeSessions(handle, "first", CHECKPOINT_WORKER_AFTER_COMMITS - 1);
      expect(checkpointWorkersStarted()).toBe(workers);
      await writeSessions(handle, "last", 1);
      expect(checkpointWorkersStarted()).toBe(workers + 1);
      expect(await autocheckpointOf(handle)).toBe(0);
      let largest = 0;
      // ~2 pages per Session: about 8,000 WAL pages in all, with no pause between commits.
      await writeSessions(handle, "s", 4000, () => {
        largest = Math.max(largest, walBytes(path));
      });
      // Checkpointed and restarted from its first frame along the way (measured: ~1,350 pages at
      // most, for a 1,000-page threshold), while without checkpoints it would hold every page written.
      expect(largest).toBeGreaterThan(0);
      expect(largest).toBeLessThan(3000 * PAGE);
      expect(await sessions.listSessions(handle, "local")).toHaveLength(4000 + CHECKPOINT_WORKER_AFTER_COMMITS);
    } finally {
      await handle.close();
    }
    // The final checkpoint emptied the WAL; everything reads back after reopening.
    expect(walBytes(path)).toBe(0);
    const reopened = await openDatabase({ url: path, stateDirectory: state });
    try {
      expect(await sessions.listSessions(reopened, "local")).toHaveLength(4000 + CHECKPOINT_WORKER_AFTER_COMMITS);
    } finally {
      await reopened.close();
    }
  }, 120_000);

  it("a checkpoint a reader blocks is tried again: the WAL grows while the reader holds its snapshot, and is emptied after", async () => {
    const state = await tempStateDirectory();
    const path = join(state, "pinned.db");
    const handle = await openDatabase({ url: path, stateDirectory: state });
    const reader = new NativeDatabase(path, { timeout: 0 });
    try {
      await writeSessions(handle, "before", 10);
      reader.exec("BEGIN");
      expect(reader.prepare("SELECT count(*) FROM session").raw(true).get([])).toEqual([10]);
      await writeSessions(handle, "pinned", 1500);
      // Nothing written after the reader's snapshot could be copied back: the WAL holds it all.
      expect(walBytes(path)).toBeGreaterThan(2000 * PAGE);
      expect(reader.prepare("SELECT count(*) FROM session").raw(true).get([])).toEqual([10]);
      reader.exec("COMMIT");
      // Once the host is quiet, the worker checkpoints and truncates the -wal file.
      await vi.waitFor(() => expect(walBytes(path)).toBe(0), { timeout: 15_000, interval: 50 });
      await writeSessions(handle, "after", 10);
      expect(await sessions.listSessions(handle, "local")).toHaveLength(1520);
    } finally {
      reader.close();
      await handle.close();
    }
  }, 120_000);

  it("a child that closes its handle ends by itself (the worker keeps nothing alive), its commits all there", async () => {
    const state = await tempStateDirectory();
    const child = runChild(state, "child.db", 600);
    const { code, signal, stderr } = await child.exited;
    expect({ code, signal, stderr }).toEqual({ code: 0, signal: null, stderr: "" });
    expect(child.ids).toHaveLength(600);
    expect(walBytes(join(state, "child.db"))).toBe(0);
    await expectSessions(state, "child.db", child.ids);
  }, 120_000);

  it("a child that never closes its handle still ends by itself (the worker keeps nothing alive), its commits all there", async () => {
    // Before the fix the worker's piped stdout and stderr, read to drop what it printed, held the
    // process open on the worker's message port however unref'd the worker was: the child never ended.
    const state = await tempStateDirectory();
    const child = runChild(state, "open.db", 50, "open");
    const { code, signal, stderr } = await child.exited;
    expect({ code, signal, stderr }).toEqual({ code: 0, signal: null, stderr: "" });
    expect(child.ids).toHaveLength(50);
    await expectSessions(state, "open.db", child.ids);
  }, 120_000);

  it("every commit a child acknowledged survives a SIGKILL in the middle of its writes and checkpoints", async () => {
    const state = await tempStateDirectory();
    const child = runChild(state, "killed.db", 0);
    // Well past the first checkpoints (about 2 pages per commit).
    await child.committed(1500);
    child.kill();
    const { signal } = await child.exited;
    expect(signal).toBe("SIGKILL");
    const acknowledged = [...child.ids];
    const handle = await openDatabase({ url: "killed.db", stateDirectory: state });
    try {
      const stored = new Set((await sessions.listSessions(handle, "local")).map((s) => s.id));
      expect(acknowledged.filter((id) => !stored.has(id))).toEqual([]);
      expect(stored.size).toBeGreaterThanOrEqual(acknowledged.length);
    } finally {
      await handle.close();
    }
  }, 120_000);
});
