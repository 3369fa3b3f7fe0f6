// Conversation entries, compaction and forks over HTTP against a real `serve` process (the built
// binary), the test model in this process. Run `npm run build` first.
import { afterEach, describe, expect, it, vi } from "vitest";
import { startTestModel } from "../../tools/test-model/index.js";
import { assertBuilt } from "../support/cli.js";
import { ok } from "../support/calls.js";
import { tempHome } from "../support/harness.js";
import { createSession, getSession, listTurns, queue, runToEnd, seen, serveWithModel } from "../turns/helpers.js";
import { appendEntry, compactCall, forkCall, getCompaction, isSummaryRequest, listCompactions, replyWithSummaries } from "./helpers.js";

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("history over a real serve", () => {
  it("appends an entry, compacts, continues from the summary and forks the result into an independent Session", async () => {
    assertBuilt();
    const home = tempHome("ze-history-serve-");
    cleanups.push(() => home.cleanup());
    const model = await startTestModel();
    cleanups.push(() => model.close());
    replyWithSummaries(model, { overview: "Served summary.", decisions: ["use serve"] }, "served answer");
    const served = await serveWithModel(home, model, `${home.dir}/serve.db`);
    cleanups.push(() => served.process.stop("SIGKILL"));

    const sessionId = await createSession(served, { systemPrompt: "Served." });
    const entry = await appendEntry(served, sessionId, "served entry");
    expect(entry.historyRevision).toBe(1);
    const first = await queue(served, sessionId, "served prompt");
    await runToEnd(served, sessionId, first.turnId);
    expect(seen(model.requests.at(-1))).toContain("served entry");

    const { compactionId, sequence } = (await ok(compactCall(served, sessionId))).receipt;
    expect(sequence).toBe(2);
    const second = await queue(served, sessionId, "after compaction");
    await runToEnd(served, sessionId, second.turnId);
    expect(isSummaryRequest(model.requests.at(-2))).toBe(true);
    expect(seen(model.requests.at(-1))).toContain("Served summary.");
    expect(seen(model.requests.at(-1))).not.toContain("served prompt");
    expect(await getCompaction(served, sessionId, compactionId)).toMatchObject({ phase: "completed", outcome: { kind: "completed", checkpoint: { throughHistoryRevision: 2 } } });
    expect((await listCompactions(served, sessionId)).compactions).toHaveLength(1);

    // The fork copies the settled Turns and the entry (not the checkpoint) and runs on its own.
    const forkedSessionId = crypto.randomUUID();
    const forked = (await ok(forkCall(served, sessionId, forkedSessionId, { through: { kind: "turnMessage", turnId: first.turnId, messageIndex: 0 } }))).session;
    expect(forked).toMatchObject({ id: forkedSessionId, systemPrompt: "Served.", forkedFrom: { parentSessionId: sessionId, through: { kind: "turnMessage", turnId: first.turnId } } });
    expect(await ok(forkCall(served, sessionId, forkedSessionId, { through: { kind: "turnMessage", turnId: first.turnId, messageIndex: 0 } }))).toEqual({ session: forked });
    expect((await listTurns(served, forkedSessionId)).turns.map((state) => state.turn.phase)).toEqual(["completed"]);
    const inFork = await queue(served, forkedSessionId, "in the fork");
    await runToEnd(served, forkedSessionId, inFork.turnId);
    expect(seen(model.requests.at(-1))).toContain("served entry");
    expect(seen(model.requests.at(-1))).toContain("served prompt");
    expect(seen(model.requests.at(-1))).not.toContain("after compaction");
    expect((await getSession(served, forkedSessionId)).contextUse).toEqual({ model: "test/scripted", usedUnits: expect.any(Number), contextUnits: 200000 });
  });
});
