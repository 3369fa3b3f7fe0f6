// listPluginJournal over entries written through the storage function plugins will use: record
// order across Turns, one Turn's entries, pages that continue from `next`, query validation.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sdk } from "../../clients/index.js";
import { journal } from "../../services/storage/index.js";
import { failure, ok } from "../support/calls.js";
import { startModelHarness, type ModelHarness } from "../support/model.js";
import { queue, runToEnd, server } from "../turns/helpers.js";

let h: ModelHarness;
beforeAll(async () => {
  h = await startModelHarness();
  h.model.reply(() => ({ events: [{ type: "text", text: "ok" }] }));
});
afterAll(async () => {
  await h.close();
});

const list = (sessionId: string, query: Record<string, string> = {}) => sdk.listPluginJournal({ client: h.api.client, path: { server, sessionId }, query });

async function record(turnId: string, kind: string, extra: Partial<Parameters<typeof journal.appendJournalEntry>[1]> = {}) {
  return journal.appendJournalEntry(h.harness.storage, {
    turnId,
    pluginId: "acme",
    kind,
    summary: `${kind} happened`,
    data: { kind },
    logicalCallOrdinal: null,
    toolCallId: null,
    recordedAt: Date.now(),
    ...extra,
  });
}

describe("listPluginJournal", () => {
  it("reads entries in (Turn sequence, sequence) order, for one Turn or all, in pages that continue from next", async () => {
    const sessionId = await h.createSession();
    const first = await queue(h, sessionId, "one");
    const second = await queue(h, sessionId, "two");
    await runToEnd(h, sessionId, second.turnId);
    // Recorded out of Turn order: the read is by the Turns' sequence.
    await record(second.turnId, "b1");
    await record(first.turnId, "a1", { logicalCallOrdinal: 2, toolCallId: "call_1" });
    await record(first.turnId, "a2", { data: null });
    await record(second.turnId, "b2");
    const all = await ok(list(sessionId));
    expect(all.entries.map((entry) => [entry.kind, entry.sequence])).toEqual([
      ["a1", 1],
      ["a2", 2],
      ["b1", 1],
      ["b2", 2],
    ]);
    expect(all.entries[0]).toEqual({
      sessionId,
      turnId: first.turnId,
      sequence: 1,
      pluginId: "acme",
      kind: "a1",
      summary: "a1 happened",
      data: { kind: "a1" },
      logicalCallOrdinal: 2,
      toolCallId: "call_1",
      recordedAt: expect.any(Number),
    });
    expect(all.entries[1]!.data).toBeNull();
    expect(all.next).toBeUndefined();
    const page = await ok(list(sessionId, { limit: "3" }));
    expect(page.entries.map((entry) => entry.kind)).toEqual(["a1", "a2", "b1"]);
    expect(page.next).toEqual({ turnSequence: 2, sequence: 1 });
    const rest = await ok(list(sessionId, { limit: "3", afterTurnSequence: "2", afterSequence: "1" }));
    expect(rest.entries.map((entry) => entry.kind)).toEqual(["b2"]);
    expect(rest.next).toBeUndefined();
    expect((await ok(list(sessionId, { afterTurnSequence: "1" }))).entries.map((entry) => entry.kind)).toEqual(["b1", "b2"]);
    expect((await ok(list(sessionId, { turnId: second.turnId }))).entries.map((entry) => entry.kind)).toEqual(["b1", "b2"]);
    // A Turn that does not exist has no journal to write to.
    expect(await journal.appendJournalEntry(h.harness.storage, { turnId: randomUUID(), pluginId: "p", kind: "k", summary: "s", data: 1, logicalCallOrdinal: null, toolCallId: null, recordedAt: 1 })).toBeUndefined();
  });

  it("validates the query and names what is missing", async () => {
    const sessionId = await h.createSession();
    const { turnId } = await queue(h, sessionId, "x");
    expect(await failure(list(sessionId, { limit: "0" }))).toMatchObject({ status: 400, body: { message: expect.stringContaining("query.limit") } });
    expect(await failure(list(sessionId, { limit: "many" }))).toMatchObject({ status: 400 });
    expect(await failure(list(sessionId, { afterSequence: "1" }))).toMatchObject({ status: 400, body: { message: expect.stringContaining("query.afterTurnSequence") } });
    expect(await failure(list(sessionId, { turnId: randomUUID() }))).toMatchObject({ status: 404, body: { resource: "turn" } });
    const other = await h.createSession();
    expect(await failure(list(other, { turnId }))).toMatchObject({ status: 404, body: { resource: "turn" } });
    expect(await failure(list(randomUUID()))).toMatchObject({ status: 404, body: { resource: "session" } });
    expect((await ok(list(sessionId, { limit: "1000" }))).entries).toEqual([]);
  });
});
