// Automatic compaction in a Turn: a request that would not fit the context window compacts the
// history first (`preflight` before the first model call, `overflow` when a later step grew past
// it) and continues from the summary; when nothing is compressible the Turn still fails with
// `model_context`. Context use is recorded on the Turn and on the Session.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Compaction, TurnStreamEvent } from "../../clients/index.js";
import type { RecordedRequest, ScriptedResponse } from "../../tools/test-model/index.js";
import { startModelHarness, testProviderConfig, type ModelHarness } from "../support/model.js";
import { getSession, queue, runToEnd, seen } from "../turns/helpers.js";
import { isSummaryRequest, listCompactions, summaryAnswer } from "./helpers.js";

// A window where the tools (~1,550 units) and a short exchange fit, and ~6,000 units of history do not.
const CONTEXT = 8000;
const harnesses: ModelHarness[] = [];
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.close();
});

async function small(): Promise<ModelHarness> {
  const h = await startModelHarness({ config: (model) => ({ providers: testProviderConfig(model, "chat", { contextUnits: CONTEXT, outputUnits: 1000 }), context: { safetyReserveUnits: 0 } }) });
  harnesses.push(h);
  return h;
}

const lastUser = (request: RecordedRequest): string => {
  const messages = (request.body as { messages: { role: string; content: unknown }[] }).messages.filter((message) => message.role === "user");
  return JSON.stringify(messages.at(-1)?.content ?? "");
};

/** Answers summary requests with a short summary, and Turn requests by their last prompt. */
function script(h: ModelHarness, answers: Record<string, () => ScriptedResponse>): void {
  h.model.reply((request) => {
    if (isSummaryRequest(request)) return summaryAnswer({ overview: "The user asked for a long essay and got it.", keyFacts: ["the essay is about parsers"] });
    const key = Object.keys(answers).find((word) => lastUser(request).includes(word));
    return key ? answers[key]!() : { events: [{ type: "text", text: "ok" }] };
  });
}

const essay = (chars: number): string => "Parsers turn text into trees. ".repeat(Math.ceil(chars / 30)).slice(0, chars);

describe("automatic compaction", () => {
  it("preflight: compacts the history before the Turn's first model call and continues from the summary", async () => {
    const h = await small();
    script(h, { essay: () => ({ events: [{ type: "text", text: essay(24_000) }] }), followup: () => ({ events: [{ type: "text", text: "short answer" }] }) });
    const sessionId = await h.createSession();
    const first = await queue(h, sessionId, "write an essay");
    expect((await runToEnd(h, sessionId, first.turnId)).turn.phase).toBe("completed");
    const second = await queue(h, sessionId, "followup question");
    const { turn, events } = await runToEnd(h, sessionId, second.turnId);
    expect(turn.phase).toBe("completed");
    const [summaryRequest, turnRequest] = h.model.requests.slice(-2);
    expect(isSummaryRequest(summaryRequest)).toBe(true);
    expect(seen(summaryRequest)).toContain("Parsers turn text into trees.");
    expect(seen(turnRequest)).toContain("The user asked for a long essay and got it.");
    expect(seen(turnRequest)).not.toContain("Parsers turn text into trees.");
    const page = await listCompactions(h, sessionId);
    expect(page.compactions).toHaveLength(1);
    const state = page.compactions[0]!;
    expect(state).toMatchObject({ sequence: turn.sequence, ordinal: 1 });
    expect(state.compaction).toMatchObject({ trigger: { kind: "preflight", turnId: second.turnId }, model: "test/scripted", phase: "completed", modelLeaseId: turn.modelLeaseId });
    const checkpoint = (state.compaction.outcome as Extract<Compaction["outcome"], { kind: "completed" }>).checkpoint;
    expect(checkpoint).toMatchObject({ throughHistoryRevision: 1, estimate: { contextUnits: CONTEXT, availableInputUnits: CONTEXT - 1000, fits: true } });
    // The compaction request's usage counts on the Turn (one turn.usage without context use), then the Turn's own.
    const usages = events.filter((event): event is Extract<TurnStreamEvent, { type: "turn.usage" }> => event.type === "turn.usage");
    expect(usages).toHaveLength(2);
    expect(usages[0]!.contextUse).toBeUndefined();
    expect(usages[1]!.contextUse).toEqual({ model: "test/scripted", usedUnits: expect.any(Number), contextUnits: CONTEXT });
    expect(turn.contextUse).toEqual(usages[1]!.contextUse);
    expect((await getSession(h, sessionId)).contextUse).toEqual(turn.contextUse);
    expect(turn.contextUse!.usedUnits).toBeLessThan(CONTEXT);
    // The next Turn starts from the checkpoint without compacting again.
    const third = await queue(h, sessionId, "followup two");
    await runToEnd(h, sessionId, third.turnId);
    expect(isSummaryRequest(h.model.requests.at(-2))).toBe(false);
    expect(seen(h.model.requests.at(-1))).toContain("The user asked for a long essay");
    expect(seen(h.model.requests.at(-1))).toContain("short answer");
  });

  it("overflow: a step that grows past the window mid-Turn compacts the earlier history and goes on", async () => {
    const h = await small();
    // Large enough to overflow the window with the earlier essay, small enough to fit once it is
    // compacted beside the tool schemas offered with every request.
    writeFileSync(join(h.home.root, "big.txt"), `${essay(13_000).replace(/\. /g, ".\n")}\n`);
    let readDone = false;
    script(h, {
      essay: () => ({ events: [{ type: "text", text: essay(12_000) }] }),
      "read the file": () => {
        if (readDone) return { events: [{ type: "text", text: "done" }] };
        readDone = true;
        return { events: [{ type: "tool_call", name: "read", arguments: { filePath: "big.txt" } }] };
      },
    });
    const sessionId = await h.createSession();
    await runToEnd(h, sessionId, (await queue(h, sessionId, "write an essay")).turnId);
    const second = await queue(h, sessionId, "now read the file");
    const { turn } = await runToEnd(h, sessionId, second.turnId);
    expect(turn.phase).toBe("completed");
    const requests = h.model.requests.slice(1);
    expect(requests.map(isSummaryRequest)).toEqual([false, true, false]);
    expect(seen(requests[2])).toContain("The user asked for a long essay");
    expect(seen(requests[2])).toContain("big.txt");
    const [state] = (await listCompactions(h, sessionId)).compactions;
    expect(state!.compaction.trigger).toEqual({ kind: "overflow", turnId: second.turnId });
  });

  it("still fails with model_context, after recording why, when nothing can be compacted", async () => {
    const h = await small();
    script(h, {});
    const sessionId = await h.createSession();
    const { turnId } = await queue(h, sessionId, essay(40_000));
    const { turn } = await runToEnd(h, sessionId, turnId);
    expect(turn.outcome).toMatchObject({ kind: "limit_reached", limit: { name: "model_context", value: CONTEXT }, diagnostic: { message: expect.stringContaining("no_compressible_history") } });
    expect(h.model.requests).toHaveLength(0);
    const [state] = (await listCompactions(h, sessionId)).compactions;
    expect(state!.compaction).toMatchObject({ trigger: { kind: "preflight", turnId }, phase: "completed", outcome: { kind: "no_compressible_history" } });
  });
});
