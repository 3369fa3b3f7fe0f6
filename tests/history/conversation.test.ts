// Conversation entries and the history a Turn sees: appends commit under the Session's next
// history revision without waking the runner; work admitted before an append never sees it;
// replays and conflicts; a prompt recorded as an entry (`conversationEntry`); `visibility`.
// On the Node host and on the Worker host in workerd (tests/support/hosts.ts).
import { randomUUID } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { failure, ok } from "../support/calls.js";
import { HOSTS, startModelHost, type ModelApi } from "../support/hosts.js";
import { getSession, holdReplies, listTurns, queue, runToEnd, seen, submitCall, text } from "../turns/helpers.js";
import { appendEntry, entryCall } from "./helpers.js";

let h: ModelApi;
const numbered = (): void => h.model.reply((request) => ({ events: [{ type: "text", text: `answer ${h.model.requests.indexOf(request) + 1}` }] }));

// Each test that scripts its own answers gets the plain ones back after it.
afterEach(numbered);

/** The user texts a model request carried, in order. */
function userTexts(body: unknown): string[] {
  const messages = (body as { messages: { role: string; content: unknown }[] }).messages;
  return messages
    .filter((message) => message.role === "user")
    .map((message) => (typeof message.content === "string" ? message.content : (message.content as { text?: string }[]).map((part) => part.text ?? "").join("")));
}

describe.each(HOSTS)("on the %s host", (kind) => {
  beforeAll(async () => {
    h = await startModelHost(kind);
    numbered();
  }, 60_000);
  afterAll(async () => {
    await h?.close();
  });

  describe("appendConversation", () => {
    it("commits an entry under the next history revision, never a Turn or a model call; a replay returns the receipt, other content is a 409", async () => {
      const sessionId = await h.createSession();
      const before = h.model.requests.length;
      const entryId = randomUUID();
      const body = { entryId, content: [{ type: "text", text: "Alice: the deploy finished." }], authorId: "alice" };
      const receipt = (await ok(entryCall(h, sessionId, body))).receipt;
      expect(receipt).toEqual({ sessionId, entryId, historyRevision: 1, acceptedAt: expect.any(Number), attribution: { clientId: "test-client", authorId: "alice" } });
      // The same entry and content from another client replays the recorded receipt.
      expect((await ok(entryCall(h, sessionId, body, "another-client"))).receipt).toEqual(receipt);
      const changed = await failure(entryCall(h, sessionId, { ...body, content: [{ type: "text", text: "Bob: it failed." }] }));
      expect(changed).toMatchObject({ status: 409, body: { _tag: "ConflictError" } });
      // The same entry id in another Session is the same identity.
      const other = await h.createSession();
      expect(await failure(entryCall(h, other, body))).toMatchObject({ status: 409, body: { _tag: "ConflictError" } });
      // Neither the replay nor the conflicts took a revision; nothing ran.
      expect((await appendEntry(h, sessionId, "next")).historyRevision).toBe(2);
      expect((await appendEntry(h, other, "first there")).historyRevision).toBe(1);
      expect((await listTurns(h, sessionId)).turns).toEqual([]);
      expect((await getSession(h, sessionId)).nextSequence).toBe(1);
      expect(h.model.requests.length).toBe(before);
    });

    it("refuses a missing Session (404), empty content and blank text (400), changing nothing", async () => {
      const missing = await failure(entryCall(h, randomUUID(), { entryId: randomUUID(), content: [{ type: "text", text: "x" }] }));
      expect(missing).toMatchObject({ status: 404, body: { _tag: "NotFoundError", resource: "session" } });
      const sessionId = await h.createSession();
      expect(await failure(entryCall(h, sessionId, { entryId: randomUUID(), content: [] }))).toMatchObject({ status: 400, body: { _tag: "ValidationError", message: expect.stringContaining("/content") } });
      expect(await failure(entryCall(h, sessionId, { entryId: randomUUID(), content: [{ type: "text", text: "  " }] }))).toMatchObject({
        status: 400,
        body: { message: expect.stringContaining("/content/0/text") },
      });
      expect(await failure(entryCall(h, sessionId, { entryId: "not-a-uuid", content: [{ type: "text", text: "x" }] }))).toMatchObject({ status: 400 });
      expect((await appendEntry(h, sessionId, "first")).historyRevision).toBe(1);
    });

    it("is seen by work admitted after it, as a plain user message in revision order, and never by work admitted before", async () => {
      const model = holdReplies(h, (request) => ({ events: [{ type: "text", text: `reply to ${userTexts(request.body).at(-1)}` }] }));
      const sessionId = await h.createSession();
      await appendEntry(h, sessionId, "entry one");
      const first = await queue(h, sessionId, "prompt one");
      const second = await queue(h, sessionId, "prompt two");
      await model.held(1);
      // Appended while the first Turn runs and the second waits: both were admitted before it.
      await appendEntry(h, sessionId, "entry two");
      const third = await queue(h, sessionId, "prompt three");
      model.release(1);
      await model.held(2);
      model.release(2);
      await model.held(3);
      model.release(3);
      for (const receipt of [first, second, third]) expect((await runToEnd(h, sessionId, receipt.turnId)).turn.phase).toBe("completed");
      const requests = h.model.requests.slice(-3).map((request) => userTexts(request.body));
      expect(requests[0]).toEqual(["entry one", "prompt one"]);
      expect(requests[1]).toEqual(["entry one", "prompt one", "prompt two"]);
      expect(requests[2]).toEqual(["entry one", "prompt one", "prompt two", "entry two", "prompt three"]);
      expect(seen(h.model.requests.at(-1))).toContain("reply to prompt two");
    });
  });

  describe("a prompt recorded as a conversation entry", () => {
    it("stands for its entry: the Turn and later work see it once, where the Turn is", async () => {
      const sessionId = await h.createSession();
      await appendEntry(h, sessionId, "context first");
      const entry = await appendEntry(h, sessionId, "Please summarise the deploy.");
      const { turnId } = await queue(h, sessionId, "Please summarise the deploy.", { conversationEntry: { entryId: entry.entryId, historyRevision: entry.historyRevision } });
      await runToEnd(h, sessionId, turnId);
      expect(userTexts(h.model.requests.at(-1)!.body)).toEqual(["context first", "Please summarise the deploy."]);
      const later = await queue(h, sessionId, "And now?");
      await runToEnd(h, sessionId, later.turnId);
      expect(userTexts(h.model.requests.at(-1)!.body)).toEqual(["context first", "Please summarise the deploy.", "And now?"]);
    });

    it("must name an entry of the Session at its history revision (400 naming the field), admitting nothing", async () => {
      const sessionId = await h.createSession();
      const entry = await appendEntry(h, sessionId, "recorded");
      const prompt = (conversationEntry: unknown) => submitCall(h, sessionId, { delivery: "queue", turnId: randomUUID(), prompt: text("recorded"), conversationEntry });
      expect(await failure(prompt({ entryId: randomUUID(), historyRevision: 1 }))).toMatchObject({
        status: 400,
        body: { _tag: "ValidationError", message: expect.stringContaining("/conversationEntry/entryId") },
      });
      expect(await failure(prompt({ entryId: entry.entryId, historyRevision: 2 }))).toMatchObject({ status: 400, body: { message: expect.stringContaining("/conversationEntry/historyRevision") } });
      const elsewhere = await appendEntry(h, await h.createSession(), "other session");
      expect(await failure(prompt({ entryId: elsewhere.entryId, historyRevision: 1 }))).toMatchObject({ status: 400 });
      expect((await listTurns(h, sessionId)).turns).toEqual([]);
      expect((await getSession(h, sessionId)).nextSequence).toBe(1);
      expect((await appendEntry(h, sessionId, "next")).historyRevision).toBe(2);
    });
  });

  describe("visibility", () => {
    it("floorHistoryRevision, excludedTurnIds and excludedEntryIds hide history from one Turn only", async () => {
      const sessionId = await h.createSession();
      const entry = await appendEntry(h, sessionId, "secret entry"); // revision 1
      const t1 = await queue(h, sessionId, "turn one"); // revision 2
      await runToEnd(h, sessionId, t1.turnId);
      await appendEntry(h, sessionId, "later entry"); // revision 3
      const hidden = await queue(h, sessionId, "filtered", { visibility: { excludedTurnIds: [t1.turnId], excludedEntryIds: [entry.entryId] } });
      await runToEnd(h, sessionId, hidden.turnId);
      expect(userTexts(h.model.requests.at(-1)!.body)).toEqual(["later entry", "filtered"]);
      const floored = await queue(h, sessionId, "floored", { visibility: { floorHistoryRevision: 3 } });
      await runToEnd(h, sessionId, floored.turnId);
      // The filtered Turn (revision 4) is above the floor; what precedes revision 3 is not.
      expect(userTexts(h.model.requests.at(-1)!.body)).toEqual(["later entry", "filtered", "floored"]);
      // An unfiltered Turn afterwards sees everything again.
      const full = await queue(h, sessionId, "full");
      await runToEnd(h, sessionId, full.turnId);
      expect(userTexts(h.model.requests.at(-1)!.body)).toEqual(["secret entry", "turn one", "later entry", "filtered", "floored", "full"]);
    });

    it("refuses ids that are not the Session's and floors outside 0…the Turn's revision, naming the field", async () => {
      const sessionId = await h.createSession();
      await appendEntry(h, sessionId, "one");
      const foreign = await queue(h, await h.createSession(), "elsewhere");
      const prompt = (visibility: unknown) => submitCall(h, sessionId, { delivery: "queue", turnId: randomUUID(), prompt: text("x"), visibility });
      expect(await failure(prompt({ excludedTurnIds: [foreign.turnId] }))).toMatchObject({ status: 400, body: { message: expect.stringContaining("/visibility/excludedTurnIds/0") } });
      expect(await failure(prompt({ excludedEntryIds: [randomUUID()] }))).toMatchObject({ status: 400, body: { message: expect.stringContaining("/visibility/excludedEntryIds/0") } });
      expect(await failure(prompt({ floorHistoryRevision: 3 }))).toMatchObject({ status: 400, body: { message: expect.stringContaining("/visibility/floorHistoryRevision") } });
      expect(await failure(prompt({ floorHistoryRevision: -1 }))).toMatchObject({ status: 400, body: { message: expect.stringContaining("/visibility/floorHistoryRevision") } });
      expect((await listTurns(h, sessionId)).turns).toEqual([]);
      // The Turn's own revision is a valid floor: it then sees nothing earlier.
      const { turnId } = await queue(h, sessionId, "alone", { visibility: { floorHistoryRevision: 2 } });
      await runToEnd(h, sessionId, turnId);
      expect(userTexts(h.model.requests.at(-1)!.body)).toEqual(["alone"]);
    });
  });
});
