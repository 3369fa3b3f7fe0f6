// forkSession: the settled history (all, before a Turn, through a boundary, under a visibility
// filter) copied into a caller-chosen Session that inherits the source's setup and lineage,
// stays independent of it, replays exactly and refuses conflicts and bad boundaries.
// On the Node host and on the Worker host in workerd (tests/support/hosts.ts); a scenario that
// writes the store directly is Node-only.
import { randomUUID } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { sdk, type Session } from "../../clients/index.js";
import { sessions as sessionStore } from "../../services/storage/index.js";
import { failure, ok } from "../support/calls.js";
import { HOSTS, startModelHost, type ModelApi } from "../support/hosts.js";
import { startModelHarness, type ModelHarness } from "../support/model.js";
import { getSession, holdReplies, listTurns, queue, runToEnd, server } from "../turns/helpers.js";
import { appendEntry, forkCall } from "./helpers.js";

let h: ModelApi;
const numbered = (): void => h.model.reply((request) => ({ events: [{ type: "text", text: `answer ${h.model.requests.indexOf(request) + 1}` }] }));

// Each test that scripts its own answers gets the plain ones back after it.
afterEach(numbered);

function userTexts(body: unknown): string[] {
  const messages = (body as { messages: { role: string; content: unknown }[] }).messages;
  return messages
    .filter((message) => message.role === "user")
    .map((message) => (typeof message.content === "string" ? message.content : (message.content as { text?: string }[]).map((part) => part.text ?? "").join("")));
}

const fork = async (sessionId: string, body?: unknown, forkedSessionId: string = randomUUID()): Promise<Session> => (await ok(forkCall(h, sessionId, forkedSessionId, body))).session;

/** A Session with an entry and two completed Turns (history revisions 1, 2, 3). */
async function history() {
  const sessionId = await h.createSession({ defaultModel: "test/scripted", systemPrompt: "Be terse.", permissions: [{ action: "shell", resource: "*", effect: "ask" }] });
  const entry = await appendEntry(h, sessionId, "entry zero");
  const first = await queue(h, sessionId, "prompt one");
  await runToEnd(h, sessionId, first.turnId);
  const second = await queue(h, sessionId, "prompt two");
  await runToEnd(h, sessionId, second.turnId);
  return { sessionId, entry, first, second };
}

describe.each(HOSTS)("on the %s host", (kind) => {
  beforeAll(async () => {
    h = await startModelHost(kind);
    numbered();
  }, 60_000);
  afterAll(async () => {
    await h?.close();
  });

  describe("forkSession", () => {

    it("replays the same request to the same Session; another body, a taken id or a retired one is a 409 that changes nothing", async () => {
      const { sessionId, first } = await history();
      const forkedSessionId = randomUUID();
      const forked = await fork(sessionId, undefined, forkedSessionId);
      // An absent body, null and {} are one request.
      expect(await fork(sessionId, {}, forkedSessionId)).toEqual(forked);
      expect(await fork(sessionId, null, forkedSessionId)).toEqual(forked);
      expect(await failure(forkCall(h, sessionId, forkedSessionId, { turnId: first.turnId }))).toMatchObject({ status: 409, body: { _tag: "ConflictError" } });
      expect(await failure(forkCall(h, sessionId, sessionId))).toMatchObject({ status: 409 });
      await ok(sdk.deleteSession({ client: h.api.client, path: { server, sessionId: forkedSessionId } }));
      expect(await failure(forkCall(h, sessionId, forkedSessionId))).toMatchObject({ status: 409, body: { message: expect.stringContaining("retired") } });
      expect(await failure(forkCall(h, randomUUID(), randomUUID()))).toMatchObject({ status: 404, body: { resource: "session" } });
    });

    it("forks before a Turn, through a Turn message or through an entry, and under a visibility filter", async () => {
      const { sessionId, entry, first, second } = await history();
      const before = await fork(sessionId, { turnId: second.turnId });
      expect(before.forkedFrom).toEqual({ parentSessionId: sessionId, turnId: second.turnId });
      expect((await listTurns(h, before.id)).turns.map((state) => state.turn.sequence)).toEqual([1]);
      const through = await fork(sessionId, { through: { kind: "turnMessage", turnId: first.turnId, messageIndex: 1 } });
      expect((await listTurns(h, through.id)).turns).toHaveLength(1);
      expect(through.nextSequence).toBe(2);
      const onlyEntry = await fork(sessionId, { through: { kind: "conversationEntry", entryId: entry.entryId } });
      expect((await listTurns(h, onlyEntry.id)).turns).toHaveLength(0);
      const { turnId } = await queue(h, onlyEntry.id, "after the entry");
      await runToEnd(h, onlyEntry.id, turnId);
      expect(userTexts(h.model.requests.at(-1)!.body)).toEqual(["entry zero", "after the entry"]);
      const filtered = await fork(sessionId, { visibility: { excludedTurnIds: [first.turnId], excludedEntryIds: [entry.entryId] } });
      expect(filtered.forkedFrom?.visibility).toEqual({ excludedTurnIds: [first.turnId], excludedEntryIds: [entry.entryId] });
      const copied = await listTurns(h, filtered.id);
      expect(copied.turns).toHaveLength(1);
      const next = await queue(h, filtered.id, "what now");
      await runToEnd(h, filtered.id, next.turnId);
      expect(userTexts(h.model.requests.at(-1)!.body)).toEqual(["prompt two", "what now"]);
    });

    it("refuses unknown boundaries and ids (400 naming the field) and a turnId together with through", async () => {
      const { sessionId, first } = await history();
      const other = await history();
      const cases: [unknown, string][] = [
        [{ turnId: randomUUID() }, "/turnId"],
        [{ turnId: other.first.turnId }, "/turnId"],
        [{ through: { kind: "turnMessage", turnId: randomUUID(), messageIndex: 0 } }, "/through/turnId"],
        [{ through: { kind: "turnMessage", turnId: first.turnId, messageIndex: 9 } }, "/through/messageIndex"],
        [{ through: { kind: "conversationEntry", entryId: other.entry.entryId } }, "/through/entryId"],
        [{ turnId: first.turnId, through: { kind: "conversationEntry", entryId: other.entry.entryId } }, "/through"],
        [{ visibility: { excludedTurnIds: [other.first.turnId] } }, "/visibility/excludedTurnIds/0"],
      ];
      for (const [body, field] of cases) {
        const forkedSessionId = randomUUID();
        expect(await failure(forkCall(h, sessionId, forkedSessionId, body))).toMatchObject({ status: 400, body: { _tag: "ValidationError", message: expect.stringContaining(field) } });
        expect(await failure(sdk.getSession({ client: h.api.client, path: { server, sessionId: forkedSessionId } }))).toMatchObject({ status: 404 });
      }
    });

    it("a running later Turn does not block forking an earlier complete one, and stays behind", async () => {
      const sessionId = await h.createSession();
      const first = await queue(h, sessionId, "done one");
      await runToEnd(h, sessionId, first.turnId);
      const model = holdReplies(h, () => ({ events: [{ type: "text", text: "late" }] }));
      const running = await queue(h, sessionId, "still running");
      await model.held(1);
      const all = await fork(sessionId);
      expect((await listTurns(h, all.id)).turns.map((state) => state.turn.phase)).toEqual(["completed"]);
      const throughFirst = await fork(sessionId, { through: { kind: "turnMessage", turnId: first.turnId, messageIndex: 0 } });
      expect((await listTurns(h, throughFirst.id)).turns).toHaveLength(1);
      expect((await fork(sessionId, { turnId: running.turnId })).nextSequence).toBe(2);
      expect(await failure(forkCall(h, sessionId, randomUUID(), { through: { kind: "turnMessage", turnId: running.turnId, messageIndex: 0 } }))).toMatchObject({
        status: 409,
        body: { _tag: "ConflictError" },
      });
      model.release(1);
      expect((await runToEnd(h, sessionId, running.turnId)).turn.phase).toBe("completed");
      // The fork's copy never changes with the source's later work.
      expect((await listTurns(h, all.id)).turns).toHaveLength(1);
    });
  });
});

// Node only: it seeds a saved permission by writing the store directly (h.harness.storage).
describe("forkSession (Node host)", () => {
  let node: ModelHarness;
  beforeAll(async () => {
    h = node = await startModelHarness();
    numbered();
  });
  afterAll(async () => {
    await node?.close();
  });

  describe("forkSession", () => {

    it("copies the whole settled history into an independent Session that inherits the source's setup and records its lineage", async () => {
      const { sessionId, first, second } = await history();
      await sessionStore.insertSavedPermission(node.harness.storage, { id: randomUUID(), sessionId, action: "read", resource: "*", createdAt: 1, sourcePermissionRequestId: randomUUID() });
      const source = await getSession(h, sessionId);
      const forked = await fork(sessionId);
      expect(forked).toMatchObject({
        workdir: source.workdir,
        projectId: source.projectId,
        defaultModel: "test/scripted",
        systemPrompt: "Be terse.",
        forkedFrom: { parentSessionId: sessionId },
        configuration: { revision: 1, permissions: source.configuration.permissions, approval: source.configuration.approval },
        nextSequence: 3,
      });
      expect(forked.title).toBeUndefined();
      // Saved grants stay behind.
      expect((await ok(sdk.listSavedPermissions({ client: h.api.client, path: { server, sessionId: forked.id } }))).permissions).toEqual([]);
      const copied = (await listTurns(h, forked.id)).turns.map((state) => state.turn);
      const originals = (await listTurns(h, sessionId)).turns.map((state) => state.turn);
      expect(copied.map((turn) => [turn.sequence, turn.phase, turn.sessionId])).toEqual([
        [1, "completed", forked.id],
        [2, "completed", forked.id],
      ]);
      expect(copied.map((turn) => turn.id)).not.toContain(first.turnId);
      expect(copied.map((turn) => turn.request.turnId)).toEqual(copied.map((turn) => turn.id));
      expect(copied.map((turn) => turn.outcome)).toEqual(originals.map((turn) => ({ ...turn.outcome, turnId: expect.any(String) })));
      expect(copied.map((turn) => turn.parts)).toEqual(originals.map((turn) => turn.parts));
      // The fork's Turns carry their copied history, and deleting the source does not touch it.
      await ok(sdk.deleteSession({ client: h.api.client, path: { server, sessionId } }));
      // A replay still answers the fork, even with its source gone.
      expect(await fork(sessionId, undefined, forked.id)).toEqual(forked);
      expect(await failure(forkCall(h, sessionId, randomUUID()))).toMatchObject({ status: 404, body: { resource: "session" } });
      const next = await queue(h, forked.id, "prompt three");
      await runToEnd(h, forked.id, next.turnId);
      expect(userTexts(h.model.requests.at(-1)!.body)).toEqual(["entry zero", "prompt one", "prompt two", "prompt three"]);
      expect((await listTurns(h, forked.id)).turns).toHaveLength(3);
      expect(second.sequence).toBe(2);
    });

  });
});
