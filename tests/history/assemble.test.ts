// The history model itself (services/core/history/assemble.ts): reads start after the
// applicable checkpoint, a checkpoint applies only to work of the same visibility, and the
// runner's cache gives exactly what a fresh read gives while reading only what was added.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HistoryCache, assembleHistory, readHistory, type HistoryTarget } from "../../services/core/history/assemble.js";
import { ok } from "../support/calls.js";
import { startModelHarness, type ModelHarness } from "../support/model.js";
import { getSession, queue, runToEnd } from "../turns/helpers.js";
import { appendEntry, compactCall, getCompaction, replyWithSummaries } from "./helpers.js";

let h: ModelHarness;
beforeAll(async () => {
  h = await startModelHarness();
  replyWithSummaries(h.model, { overview: "checkpoint summary" }, "answer");
});
afterAll(async () => {
  await h.close();
});

async function turn(sessionId: string, prompt: string, extra: Record<string, unknown> = {}): Promise<void> {
  await runToEnd(h, sessionId, (await queue(h, sessionId, prompt, extra)).turnId);
}

const next = async (sessionId: string, extra: Partial<HistoryTarget> = {}): Promise<HistoryTarget> => ({
  sessionId,
  revision: (await getSession(h, sessionId)).nextSequence + 100,
  ...extra,
});

describe("the history model", () => {
  it("reads only what follows the latest checkpoint, which opens the view", async () => {
    const sessionId = await h.createSession();
    await appendEntry(h, sessionId, "before");
    await turn(sessionId, "one");
    const { compactionId } = (await ok(compactCall(h, sessionId))).receipt; // revision 3
    await turn(sessionId, "two"); // revision 4, runs after the compaction
    expect((await getCompaction(h, sessionId, compactionId)).phase).toBe("completed");
    await appendEntry(h, sessionId, "after"); // revision 5
    const view = await readHistory(h.harness.storage, { sessionId, revision: 6 });
    expect(view.compactionId).toBe(compactionId);
    expect(view.checkpoint?.throughHistoryRevision).toBe(2);
    expect(view.items.map((item) => [item.kind, item.revision])).toEqual([
      ["turn", 4],
      ["entry", 5],
    ]);
    // Work admitted before the compaction (revision 3 or lower) is not affected by it.
    const older = await readHistory(h.harness.storage, { sessionId, revision: 2 });
    expect(older.checkpoint).toBeUndefined();
    expect(older.items.map((item) => item.revision)).toEqual([1]);
  });

  it("applies a checkpoint only to work under the same visibility", async () => {
    const sessionId = await h.createSession();
    await appendEntry(h, sessionId, "zero");
    await turn(sessionId, "one");
    const visibility = { floorHistoryRevision: 2 };
    const filtered = (await ok(compactCall(h, sessionId, { visibility }))).receipt.compactionId;
    await turn(sessionId, "two");
    expect((await getCompaction(h, sessionId, filtered)).request.visibility).toEqual(visibility);
    const plain = await readHistory(h.harness.storage, await next(sessionId));
    expect(plain.checkpoint).toBeUndefined();
    expect(plain.items.map((item) => item.revision)).toEqual([1, 2, 4]);
    const same = await readHistory(h.harness.storage, await next(sessionId, { visibility }));
    expect(same.compactionId).toBe(filtered);
    expect(same.items.map((item) => item.revision)).toEqual([4]);
  });

  it("the cache answers what a fresh read answers, across new Turns, entries and a new checkpoint", async () => {
    const sessionId = await h.createSession();
    const cache = new HistoryCache();
    const compare = async (revision: number): Promise<void> => {
      const target = { sessionId, revision };
      expect(await cache.messages(h.harness.storage, target)).toEqual(await assembleHistory(h.harness.storage, target));
    };
    await turn(sessionId, "one");
    await compare(2);
    await appendEntry(h, sessionId, "entry");
    await turn(sessionId, "two");
    await compare(4);
    await ok(compactCall(h, sessionId));
    await turn(sessionId, "three");
    await compare(7);
    const messages = await cache.messages(h.harness.storage, { sessionId, revision: 7 });
    expect(JSON.stringify(messages[0])).toContain("checkpoint summary");
    expect(JSON.stringify(messages)).not.toContain('"one"');
  });

  it("the cache repeats a compacted Session's history as the same message objects, its summary first", async () => {
    // The per-history caches of the request's JSON and of the context check rely on it.
    const sessionId = await h.createSession();
    const cache = new HistoryCache();
    await turn(sessionId, "one");
    await ok(compactCall(h, sessionId));
    await turn(sessionId, "two");
    const upTo = async (text: string) => ({ sessionId, revision: (await appendEntry(h, sessionId, text)).historyRevision + 1 });
    const first = await upTo("first entry");
    const before = await cache.messages(h.harness.storage, first);
    expect(before).toEqual(await assembleHistory(h.harness.storage, first));
    expect(JSON.stringify(before[0])).toContain("checkpoint summary");
    await turn(sessionId, "three");
    const second = await upTo("second entry");
    const after = await cache.messages(h.harness.storage, second);
    expect(after).toEqual(await assembleHistory(h.harness.storage, second));
    expect(after.length).toBeGreaterThan(before.length);
    before.forEach((message, index) => expect(after[index]).toBe(message));
  });
});
