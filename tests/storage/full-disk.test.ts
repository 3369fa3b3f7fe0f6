// A full disk, made portable with `PRAGMA max_page_count` on the host's write connection
// (`StorageHandle.limitPages`, kept across the writer's reconnects): while idle and during a
// running Turn the host stays up, answers every write with 503 UnavailableError `storage_full`,
// serves reads, and once space returns a Turn that waited meanwhile completes with everything it
// produced, the Turn queued behind it runs, and new work is accepted again. No accepted Turn is
// lost; nothing is an unhandled rejection (vitest fails the run on one). As root, the same runs on
// a small tmpfs filled to ENOSPC, so the kernel's own full disk is covered too.
import { execFileSync, spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { sdk } from "../../clients/index.js";
import type { StorageHandle } from "../../services/storage/index.js";
import { failure, ok } from "../support/calls.js";
import { startModelHarness, type ModelHarness } from "../support/model.js";
import { getTurn, holdReplies, listTurns, queue, runToEnd, server, submitCall, text } from "../turns/helpers.js";

let h: ModelHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** Caps the database at the pages it has now: any write that needs another page fails as on a full disk. */
async function fillDisk(storage: StorageHandle): Promise<void> {
  const row = await storage.reader().sql.get<{ page_count: number }>("PRAGMA page_count");
  await storage.limitPages(row!.page_count);
}

/** A body no page has room for: its value needs overflow pages of its own. */
const BIG = "x".repeat(32 * 1024);

const createSession = (h: ModelHarness, body: Record<string, unknown> = {}) =>
  sdk.createSession({ client: h.api.client, path: { server, sessionId: randomUUID() }, body });

const storageFull = { status: 503, body: { _tag: "UnavailableError", reason: "storage_full", message: expect.stringContaining("full") } };

/** Resolves with the next write transaction of `storage` that fails because the disk is full. */
function nextFullWrite(storage: StorageHandle): Promise<void> {
  const original = storage.transaction.bind(storage);
  return new Promise((resolve) => {
    (storage as { transaction: StorageHandle["transaction"] }).transaction = ((fn, options) => {
      const running = original(fn, options);
      running.catch((error: unknown) => {
        if ((error as { _tag?: unknown })._tag === "StorageFull") {
          (storage as { transaction: StorageHandle["transaction"] }).transaction = original;
          resolve();
        }
      });
      return running;
    }) as StorageHandle["transaction"];
  });
}

describe("a full disk", () => {
  it("while idle: writes answer 503 storage_full, reads go on, and everything works once space returns", async () => {
    h = await startModelHarness();
    const sessionId = await h.createSession();
    h.model.enqueue({ events: [{ type: "text", text: "before the disk filled" }] });
    const first = await runToEnd(h, sessionId, (await queue(h, sessionId, "first")).turnId);
    expect(first.turn.phase).toBe("completed");

    await fillDisk(h.harness.storage);
    expect(await failure(createSession(h, { systemPrompt: BIG }))).toMatchObject(storageFull);
    expect(await failure(submitCall(h, sessionId, { delivery: "queue", turnId: randomUUID(), prompt: text(BIG) }))).toMatchObject(storageFull);

    // Reads need no space.
    expect((await getTurn(h, sessionId, first.turn.id)).outcome).toMatchObject({ kind: "completed", text: "before the disk filled" });
    expect((await listTurns(h, sessionId)).turns.map((state) => state.turn.id)).toEqual([first.turn.id]);
    const page = await ok(sdk.history_({ client: h.api.client, path: { server, sessionId } }));
    expect(page.rows.map((row) => row.body.text)).toEqual(["first", "before the disk filled"]);

    await h.harness.storage.limitPages(undefined);
    await ok(createSession(h, { systemPrompt: BIG }));
    h.model.enqueue({ events: [{ type: "text", text: "after space returned" }] });
    const second = await runToEnd(h, sessionId, (await queue(h, sessionId, BIG)).turnId);
    expect(second.turn.outcome).toMatchObject({ kind: "completed", text: "after space returned" });
    // The refused prompt left nothing behind; both accepted Turns completed.
    expect((await listTurns(h, sessionId)).turns.map((state) => [state.turn.id, state.turn.phase])).toEqual([
      [first.turn.id, "completed"],
      [second.turn.id, "completed"],
    ]);
  });

  it("during a running Turn: the Turn waits for space and completes with all it produced; the Turn queued behind it runs", async () => {
    h = await startModelHarness();
    const storage = h.harness.storage;
    await duringARunningTurn(h, () => fillDisk(storage), () => storage.limitPages(undefined));
  });

  it.skipIf(process.getuid?.() !== 0)("on a real file system that fills up (a small tmpfs, as root): the same, with ENOSPC from the kernel", async () => {
    const mountPoint = mkdtempSync(join(tmpdir(), "ze-full-disk-"));
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=8m,mode=0700", "tmpfs", mountPoint]);
    const filler = join(mountPoint, "filler");
    try {
      h = await startModelHarness({ harness: { database: join(mountPoint, "ze-harness.db") } });
      const fill = async (): Promise<void> => {
        // Writes until the kernel answers ENOSPC (dd then exits non-zero).
        spawnSync("dd", ["if=/dev/zero", `of=${filler}`, "bs=64k"], { stdio: "ignore" });
      };
      await duringARunningTurn(h, fill, async () => rmSync(filler));
    } finally {
      await h?.close();
      h = undefined;
      execFileSync("umount", ["-l", mountPoint]);
      rmSync(mountPoint, { recursive: true, force: true });
    }
  });
});

/** A Turn runs while the disk fills (`fill`) and space returns (`free`); see the file's header. */
async function duringARunningTurn(h: ModelHarness, fill: () => Promise<void>, free: () => Promise<void>): Promise<void> {
  const answer = `${"the answer streamed while the disk was full ".repeat(1500)}end`;
  const held = holdReplies(h, (_request, index) => ({ events: [{ type: "text", text: index === 1 ? answer : "the queued Turn ran" }] }));
  const sessionId = await h.createSession();
  const running = await queue(h, sessionId, "answer at length");
  const queued = await queue(h, sessionId, "then this");
  await held.held(1);

  await fill();
  expect(await failure(createSession(h, { systemPrompt: BIG }))).toMatchObject(storageFull);
  const blocked = nextFullWrite(h.harness.storage);
  held.release(1);
  // The Turn's record of the answer needs space it does not have: it waits.
  await blocked;

  expect(await getTurn(h, sessionId, running.turnId)).toMatchObject({ phase: "running" });
  expect(await getTurn(h, sessionId, queued.turnId)).toMatchObject({ phase: "pending" });
  expect(await failure(createSession(h, { systemPrompt: BIG }))).toMatchObject(storageFull);
  expect(await failure(submitCall(h, sessionId, { delivery: "queue", turnId: randomUUID(), prompt: text(BIG) }))).toMatchObject(storageFull);

  await free();
  const { turn } = await runToEnd(h, sessionId, running.turnId);
  expect(turn.outcome).toEqual({ kind: "completed", turnId: running.turnId, text: answer });
  expect(turn.parts).toEqual([expect.objectContaining({ type: "text", text: answer })]);
  await held.held(2);
  held.release(2);
  expect((await runToEnd(h, sessionId, queued.turnId)).turn.outcome).toMatchObject({ kind: "completed", text: "the queued Turn ran" });
  await ok(createSession(h, { systemPrompt: BIG }));
}
