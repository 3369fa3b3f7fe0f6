// Manual context compactions: admission with replay and conflicts, the summary made by the
// model, the checkpoint later Turns start from, the work order shared with Turns, nothing to
// compact, cancellation, the compaction page, and robust parsing of the model's answer.
// On the Node host and on the Worker host in workerd (tests/support/hosts.ts); scenarios that
// reach into the runner or the store are Node-only.
import { randomUUID } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { sdk, type Compaction } from "../../clients/index.js";
import { resolvePolicy } from "../../services/core/turns/policy.js";
import { compactions as compactionStore } from "../../services/storage/index.js";
import { failure, ok } from "../support/calls.js";
import { HOSTS, startModelHost, type ModelApi } from "../support/hosts.js";
import { startModelHarness, type ModelHarness } from "../support/model.js";
import { getSession, getTurn, holdReplies, listTurns, queue, runToEnd, seen, server } from "../turns/helpers.js";
import { appendEntry, compactCall, getCompaction, isSummaryRequest, listCompactions, replyWithSummaries, summaryAnswer } from "./helpers.js";

let h: ModelApi;
const plain = (): void => replyWithSummaries(h.model, { overview: "We built the parser.", keyFacts: ["src/parser.ts holds it"], openTasks: ["write tests"] }, "fine");

afterEach(plain);

function userTexts(body: unknown): string[] {
  const messages = (body as { messages: { role: string; content: unknown }[] }).messages;
  return messages
    .filter((message) => message.role === "user")
    .map((message) => (typeof message.content === "string" ? message.content : (message.content as { text?: string }[]).map((part) => part.text ?? "").join("")));
}

/** Queues a Turn behind the Session's work and waits for it: everything admitted before it has settled. */
async function drain(sessionId: string): Promise<void> {
  const { turnId } = await queue(h, sessionId, "drain");
  await runToEnd(h, sessionId, turnId);
}

const completed = (compaction: Compaction) => {
  expect(compaction.outcome?.kind).toBe("completed");
  return (compaction.outcome as Extract<Compaction["outcome"], { kind: "completed" }>).checkpoint;
};

describe.each(HOSTS)("on the %s host", (kind) => {
  beforeAll(async () => {
    h = await startModelHost(kind);
    plain();
  }, 60_000);
  afterAll(async () => {
    await h?.close();
  });

  describe("submitContextCompaction", () => {
    it("summarises the history admitted before it; the next Turn starts from the summary, the full history stays readable", async () => {
      const sessionId = await h.createSession();
      await appendEntry(h, sessionId, "entry zero");
      for (const prompt of ["prompt one", "prompt two"]) await runToEnd(h, sessionId, (await queue(h, sessionId, prompt)).turnId);
      const body = { compactionId: randomUUID(), authorId: "ada" };
      const receipt = (await ok(compactCall(h, sessionId, body))).receipt;
      expect(receipt).toEqual({
        delivery: "compaction",
        sessionId,
        compactionId: body.compactionId,
        modelLeaseId: expect.any(String),
        requestOptionsId: expect.any(String),
        sequence: 3,
        acceptedAt: expect.any(Number),
        attribution: { clientId: "test-client", authorId: "ada" },
      });
      const after = await queue(h, sessionId, "prompt three");
      await runToEnd(h, sessionId, after.turnId);
      const summaryRequest = h.model.requests.at(-2)!;
      expect(isSummaryRequest(summaryRequest)).toBe(true);
      for (const text of ["entry zero", "prompt one", "prompt two", "fine"]) expect(seen(summaryRequest)).toContain(text);
      expect(seen(summaryRequest)).not.toContain('"tools"');
      const turnTexts = userTexts(h.model.requests.at(-1)!.body);
      expect(turnTexts).toHaveLength(2);
      expect(turnTexts[0]).toContain("We built the parser.");
      expect(turnTexts[0]).toContain("src/parser.ts holds it");
      expect(turnTexts[1]).toBe("prompt three");
      expect(seen(h.model.requests.at(-1))).not.toContain("prompt one");

      const compaction = await getCompaction(h, sessionId, body.compactionId);
      expect(compaction).toMatchObject({
        id: body.compactionId,
        sessionId,
        sequence: 3,
        request: { sessionId, compactionId: body.compactionId },
        attribution: { clientId: "test-client", authorId: "ada" },
        trigger: { kind: "manual" },
        model: "test/scripted",
        phase: "completed",
        startedAt: expect.any(Number),
        completedAt: expect.any(Number),
        usage: { promptTokens: expect.any(Number), completionTokens: expect.any(Number) },
      });
      expect(completed(compaction)).toMatchObject({
        compactionId: body.compactionId,
        sessionId,
        throughHistoryRevision: 3,
        sourceMessageCount: 5,
        summary: { version: 1, overview: "We built the parser.", keyFacts: ["src/parser.ts holds it"], decisions: [], openTasks: ["write tests"] },
        chronology: [],
        estimate: { estimator: "utf16-chars/4", contextUnits: 200000, fits: true },
      });
      // The replay answers the same receipt; another body under the id is a conflict.
      expect((await ok(compactCall(h, sessionId, body))).receipt).toEqual(receipt);
      expect(await failure(compactCall(h, sessionId, { ...body, authorId: "bob" }))).toMatchObject({ status: 409, body: { _tag: "ConflictError" } });
      expect(await failure(compactCall(h, await h.createSession(), body))).toMatchObject({ status: 409 });
      // The Turns keep their full history.
      expect((await listTurns(h, sessionId)).turns.map((state) => state.turn.request.prompt)).toHaveLength(3);
      // Later work builds on the checkpoint: a second compaction folds the first summary in.
      const second = (await ok(compactCall(h, sessionId))).receipt;
      await drain(sessionId);
      expect(seen(h.model.requests.at(-2))).toContain("The earlier summary");
      expect(completed(await getCompaction(h, sessionId, second.compactionId))).toMatchObject({ throughHistoryRevision: 5, sourceMessageCount: 3 });
    });

    it("runs in the Session's work order: after the running Turn, before the Turns admitted after it", async () => {
      const model = holdReplies(h, (request) => (isSummaryRequest(request) ? summaryAnswer({ overview: "ordered" }) : { events: [{ type: "text", text: "turn answer" }] }));
      const sessionId = await h.createSession();
      const first = await queue(h, sessionId, "first");
      await model.held(1);
      const { compactionId } = (await ok(compactCall(h, sessionId))).receipt;
      const second = await queue(h, sessionId, "second");
      expect((await getCompaction(h, sessionId, compactionId)).phase).toBe("pending");
      model.release(1);
      expect(isSummaryRequest(await model.held(2))).toBe(true);
      expect((await getCompaction(h, sessionId, compactionId)).phase).toBe("running");
      expect((await getTurn(h, sessionId, second.turnId)).phase).toBe("pending");
      model.release(2);
      const request = await model.held(3);
      expect(userTexts(request.body)[0]).toContain("ordered");
      model.release(3);
      expect((await runToEnd(h, sessionId, second.turnId)).turn.phase).toBe("completed");
      expect((await getCompaction(h, sessionId, compactionId)).phase).toBe("completed");
      expect((await runToEnd(h, sessionId, first.turnId)).turn.phase).toBe("completed");
    });

    it("ends as no_compressible_history without a model call when there is nothing to compact", async () => {
      const sessionId = await h.createSession();
      const before = h.model.requests.length;
      const { compactionId } = (await ok(compactCall(h, sessionId))).receipt;
      await drain(sessionId);
      expect(await getCompaction(h, sessionId, compactionId)).toMatchObject({ phase: "completed", outcome: { kind: "no_compressible_history" } });
      expect(h.model.requests.slice(before).filter(isSummaryRequest)).toEqual([]);
    });

    it("refuses bad requests with the contract's errors and admits nothing", async () => {
      const sessionId = await h.createSession();
      expect(await failure(compactCall(h, randomUUID()))).toMatchObject({ status: 404, body: { resource: "session" } });
      expect(await failure(compactCall(h, sessionId, { model: "no-slash" }))).toMatchObject({ status: 400, body: { message: expect.stringContaining("/model") } });
      expect(await failure(compactCall(h, sessionId, { model: "test/unknown" }))).toMatchObject({ status: 503, body: { reason: "model_unavailable" } });
      expect(await failure(compactCall(h, sessionId, { visibility: { excludedTurnIds: [randomUUID()] } }))).toMatchObject({
        status: 400,
        body: { message: expect.stringContaining("/visibility/excludedTurnIds/0") },
      });
      expect(await failure(compactCall(h, sessionId, { compactionId: "nope" }))).toMatchObject({ status: 400 });
      expect((await listCompactions(h, sessionId)).compactions).toEqual([]);
      expect((await getSession(h, sessionId)).nextSequence).toBe(1);
      const missing = randomUUID();
      expect(await failure(sdk.getContextCompaction({ client: h.api.client, path: { server, sessionId, compactionId: missing } }))).toMatchObject({
        status: 404,
        body: { _tag: "NotFoundError", resource: "context_compaction" },
      });
      expect(await failure(sdk.cancelContextCompaction({ client: h.api.client, path: { server, sessionId, compactionId: missing }, body: {} }))).toMatchObject({ status: 404 });
    });
  });

  describe("history revisions and recovery", () => {
    it("compacts only what was admitted before it: an entry appended while it waits follows the summary", async () => {
      const model = holdReplies(h, (request) => (isSummaryRequest(request) ? summaryAnswer({ overview: "pinned summary" }) : { events: [{ type: "text", text: "answer" }] }));
      const sessionId = await h.createSession();
      const first = await queue(h, sessionId, "first");
      await model.held(1);
      const { compactionId } = (await ok(compactCall(h, sessionId))).receipt;
      await appendEntry(h, sessionId, "late entry");
      const second = await queue(h, sessionId, "second");
      model.release(1);
      const summaryRequest = await model.held(2);
      expect(seen(summaryRequest)).toContain("first");
      expect(seen(summaryRequest)).not.toContain("late entry");
      model.release(2);
      const turnRequest = await model.held(3);
      model.release(3);
      await runToEnd(h, sessionId, second.turnId);
      const texts = userTexts(turnRequest.body);
      expect(texts[0]).toContain("pinned summary");
      expect(texts.slice(1)).toEqual(["late entry", "second"]);
      expect(completed(await getCompaction(h, sessionId, compactionId)).throughHistoryRevision).toBe(1);
      await runToEnd(h, sessionId, first.turnId);
    });

  });

  describe("cancelContextCompaction", () => {
    it("settles a pending compaction as cancelled at once; it never reaches the model", async () => {
      const model = holdReplies(h, () => ({ events: [{ type: "text", text: "answer" }] }));
      const sessionId = await h.createSession();
      const first = await queue(h, sessionId, "first");
      await model.held(1);
      const { compactionId } = (await ok(compactCall(h, sessionId))).receipt;
      const cancelled = (await ok(sdk.cancelContextCompaction({ client: h.api.client, path: { server, sessionId, compactionId }, body: { reason: "not now" } }))).compaction;
      expect(cancelled).toMatchObject({ phase: "cancelled", cancellation: { reason: "not now" }, outcome: { kind: "cancelled", reason: "not now" } });
      expect(cancelled.startedAt).toBeUndefined();
      // Cancelling again returns it unchanged.
      expect((await ok(sdk.cancelContextCompaction({ client: h.api.client, path: { server, sessionId, compactionId }, body: {} }))).compaction).toEqual(cancelled);
      const second = await queue(h, sessionId, "second");
      model.release(1);
      expect(isSummaryRequest(await model.held(2))).toBe(false);
      model.release(2);
      await runToEnd(h, sessionId, first.turnId);
      await runToEnd(h, sessionId, second.turnId);
    });

  });

  describe("listSessionCompactions", () => {
    it("pages by (sequence, ordinal) under a fixed boundary", async () => {
      const sessionId = await h.createSession();
      const ids = [];
      for (let index = 0; index < 3; index++) ids.push((await ok(compactCall(h, sessionId))).receipt.compactionId);
      await drain(sessionId);
      const first = await listCompactions(h, sessionId, { limit: "2" });
      expect(first.boundary).toEqual({ throughSequence: 3, throughOrdinal: 1, activityCursor: expect.any(Number) });
      expect(first.compactions.map((state) => [state.sequence, state.ordinal, state.compaction.id])).toEqual([
        [1, 1, ids[0]],
        [2, 1, ids[1]],
      ]);
      expect(first.next).toEqual({ sequence: 2, ordinal: 1 });
      // New work after the boundary stays out of the pages read under it.
      await ok(compactCall(h, sessionId));
      const rest = await listCompactions(h, sessionId, { limit: "2", afterSequence: "2", afterOrdinal: "1", throughSequence: "3", throughOrdinal: "1" });
      expect(rest.compactions.map((state) => state.compaction.id)).toEqual([ids[2]]);
      expect(rest.next).toBeUndefined();
      expect((await listCompactions(h, sessionId, { throughSequence: "2" })).compactions).toHaveLength(2);
      expect(await failure(sdk.listSessionCompactions({ client: h.api.client, path: { server, sessionId }, query: { afterOrdinal: "1" } }))).toMatchObject({
        status: 400,
        body: { message: expect.stringContaining("query.afterSequence") },
      });
      expect(await failure(sdk.listSessionCompactions({ client: h.api.client, path: { server, sessionId }, query: { limit: "-1" } }))).toMatchObject({ status: 400 });
    });
  });

  describe("the summary answer", () => {
    it("is parsed from a fenced JSON object among prose, or kept as the overview when it is not JSON", async () => {
      const sessionId = await h.createSession();
      await runToEnd(h, sessionId, (await queue(h, sessionId, "hello")).turnId);
      const fenced = `Here is the summary:\n\`\`\`json\n${JSON.stringify({ overview: "Fenced.", keyFacts: ["k", 7], decisions: "one decision" })}\n\`\`\`\nDone.`;
      h.model.enqueue({ events: [{ type: "text", text: fenced }] });
      const a = (await ok(compactCall(h, sessionId))).receipt.compactionId;
      await drain(sessionId);
      expect(completed(await getCompaction(h, sessionId, a)).summary).toEqual({ version: 1, overview: "Fenced.", keyFacts: ["k", "7"], decisions: ["one decision"], openTasks: [] });
      h.model.enqueue({ events: [{ type: "text", text: "Just prose: the user said hello." }] });
      const b = (await ok(compactCall(h, sessionId))).receipt.compactionId;
      await drain(sessionId);
      expect(completed(await getCompaction(h, sessionId, b)).summary).toEqual({ version: 1, overview: "Just prose: the user said hello.", keyFacts: [], decisions: [], openTasks: [] });
      h.model.enqueue({ events: [] });
      const c = (await ok(compactCall(h, sessionId))).receipt.compactionId;
      await drain(sessionId);
      expect(await getCompaction(h, sessionId, c)).toMatchObject({ phase: "failed", outcome: { kind: "failed", fault: { code: "compaction_empty_summary" } } });
    });
  });
});

// Node only: these reach into the store and the runner (h.harness) to fake a lost owner and to wait for a settlement.
describe("compaction internals (Node host)", () => {
  let node: ModelHarness;
  beforeAll(async () => {
    h = node = await startModelHarness();
    plain();
  });
  afterAll(async () => {
    await node?.close();
  });

  describe("history revisions and recovery", () => {

    it("settles a compaction whose owner is gone as failed process_lost, and the work behind it runs", async () => {
      const sessionId = await h.createSession();
      const compactionId = randomUUID();
      await node.harness.storage.transaction(async (tx) => {
        await compactionStore.admitCompaction(tx, { server, sessionId }, async (session) => ({
          id: compactionId,
          sessionId,
          turnId: null,
          trigger: { kind: "manual" },
          request: { sessionId, compactionId },
          attribution: { clientId: "gone" },
          model: "test/scripted",
          modelLeaseId: "lease_gone",
          requestOptionsId: randomUUID(),
          providerOptions: null,
          policy: resolvePolicy(node.harness.config, { configuration: { revision: 1, permissions: [], approval: {} } } as never),
          phase: "pending",
          visibilityKey: "",
          throughHistoryRevision: null,
          cancellation: null,
          usage: null,
          outcome: null,
          acceptedAt: session.createdAt,
          startedAt: null,
          completedAt: null,
          requestHash: "gone",
          ownerProcessId: null,
          ownerInstance: null,
          leaseExpiresAt: null,
        }));
        // Claimed by a host instance that no longer exists, its lease long expired.
        await compactionStore.changeCompaction(tx, compactionId, { patch: { phase: "running", startedAt: 1, ownerProcessId: process.pid, ownerInstance: randomUUID(), leaseExpiresAt: 1 } });
      });
      const behind = await queue(h, sessionId, "behind it");
      expect((await getTurn(h, sessionId, behind.turnId)).phase).toBe("pending");
      await node.harness.runner!.recover();
      expect(await getCompaction(h, sessionId, compactionId)).toMatchObject({ phase: "failed", outcome: { kind: "failed", fault: { code: "process_lost" } } });
      expect((await runToEnd(h, sessionId, behind.turnId)).turn.phase).toBe("completed");
    });
  });

  describe("cancelContextCompaction", () => {

    it("stops a running compaction's model request and records the reason", async () => {
      const model = holdReplies(h, (request) => (isSummaryRequest(request) ? summaryAnswer({ overview: "too late" }) : { events: [{ type: "text", text: "answer" }] }));
      const sessionId = await h.createSession();
      const first = await queue(h, sessionId, "first");
      model.release(1);
      await runToEnd(h, sessionId, first.turnId);
      const { compactionId } = (await ok(compactCall(h, sessionId))).receipt;
      expect(isSummaryRequest(await model.held(2))).toBe(true);
      const requested = (await ok(sdk.cancelContextCompaction({ client: h.api.client, path: { server, sessionId, compactionId }, body: { reason: "changed my mind" } }))).compaction;
      expect(requested.cancellation).toEqual({ reason: "changed my mind", requestedAt: expect.any(Number) });
      await node.harness.runner!.compactionSettled(compactionId);
      model.release(2);
      const settled = await getCompaction(h, sessionId, compactionId);
      expect(settled).toMatchObject({ phase: "cancelled", outcome: { kind: "cancelled", reason: "changed my mind" } });
      // No checkpoint: the next Turn still sees the full history.
      const next = await queue(h, sessionId, "next");
      model.release(3);
      await runToEnd(h, sessionId, next.turnId);
      expect(userTexts(h.model.requests.at(-1)!.body)).toEqual(["first", "next"]);
    });
  });
});
