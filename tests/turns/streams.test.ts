// The three watch streams over real Turns: the Turn stream (snapshot first, live deltas with
// consistent offsets, one turn.finished, resume by afterRevision or Last-Event-ID), the Session
// stream (replay then session.cursor, live deltas) and the server stream (server.cursor, Session
// lifecycle, Turn events without deltas, replay by cursor) — on the Node host and on the Worker host
// in workerd (tests/support/hosts.ts); and, Node-only, heartbeats at test-tuned intervals and
// resuming a dropped connection to a real `serve` process without missing a durable event.
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { sdk, type ServerStreamEvent, type SessionStreamEvent, type TurnStreamEvent } from "../../clients/index.js";
import { startTestModel } from "../../tools/test-model/index.js";
import { ok } from "../support/calls.js";
import { assertBuilt } from "../support/cli.js";
import { tempHome } from "../support/harness.js";
import { HOSTS, startModelHost, type ModelHost } from "../support/hosts.js";
import { startModelHarness, type ModelHarness } from "../support/model.js";
import {
  cancel,
  createSession,
  holdReplies,
  openSse,
  queue,
  runToEnd,
  server,
  serveWithModel,
  turnPath,
  watchTurn,
  type SseReader,
} from "./helpers.js";

let h: ModelHost;
const open: SseReader<{ type: string }>[] = [];
function track<T extends { type: string }>(stream: SseReader<T>): SseReader<T> {
  open.push(stream as unknown as SseReader<{ type: string }>);
  return stream;
}

const DELTAS = new Set(["turn.text.delta", "turn.reasoning.delta", "turn.refusal.delta"]);
const durable = (events: TurnStreamEvent[]) => events.filter((event) => !DELTAS.has(event.type) && event.type !== "turn.heartbeat");

type Delta = Extract<TurnStreamEvent, { type: "turn.text.delta" }>;

/** Asserts each part's deltas are contiguous from offset 0 and returns the text they build, by part id. */
function assembleDeltas(deltas: readonly Pick<Delta, "partId" | "offset" | "delta">[]): Map<string, string> {
  const texts = new Map<string, string>();
  for (const delta of deltas) {
    const sofar = texts.get(delta.partId) ?? "";
    expect(delta.offset, `offset of a delta of part ${delta.partId}`).toBe(sofar.length);
    expect(delta.delta.length).toBeGreaterThan(0);
    texts.set(delta.partId, sofar + delta.delta);
  }
  return texts;
}

describe.each(HOSTS)("on the %s host", (kind) => {
  beforeAll(async () => {
    h = await startModelHost(kind);
  }, 60_000);
  afterAll(async () => {
    await h?.close();
  });
  afterEach(() => {
    for (const stream of open.splice(0)) stream.close();
    h.model.reply(() => ({ events: [{ type: "text", text: "unscripted" }] }));
  });

  describe("watchTurn", () => {
    it("starts with turn.snapshot, carries live deltas in order, and ends after exactly one turn.finished", async () => {
      const model = holdReplies(h, (_request, index) =>
        index === 1
          ? {
              events: [
                { type: "reasoning", text: "Thinking about the alphabet in Greek." },
                { type: "text", text: "alpha beta gamma delta epsilon zeta" },
                { type: "tool_call", name: "write", arguments: { filePath: "greek.txt", content: "alpha" } },
              ],
            }
          : { events: [{ type: "text", text: "eta theta iota kappa" }] },
      );
      const sessionId = await h.createSession();
      const { turnId } = await queue(h, sessionId, "Stream something");
      const stream = track(await watchTurn(h, sessionId, turnId, null));
      const first = await stream.next();
      expect(first?.data.type).toBe("turn.snapshot");
      model.release(1);
      model.release(2);
      const events = [first!.data, ...(await stream.rest())];
      expect(stream.done).toBe(true);
      expect(events.filter((event) => event.type === "turn.finished")).toHaveLength(1);
      expect(events.at(-1)!.type).toBe("turn.finished");
      // Every SSE id is the event's revision; durable revisions only grow.
      for (const message of stream.messages) expect(message.id).toBe(String((message.data as { revision: number }).revision));
      const revisions = durable(events).map((event) => event.revision);
      expect(revisions).toEqual([...revisions].sort((a, b) => a - b));
      expect(new Set(revisions).size).toBe(revisions.length);

      const turn = (await ok(sdk.getTurn({ client: h.api.client, path: { server, sessionId, turnId } }))).turn;
      const textDeltas = events.filter((event): event is Delta => event.type === "turn.text.delta");
      const reasoningDeltas = events.filter((event) => event.type === "turn.reasoning.delta") as unknown as Delta[];
      expect(textDeltas.length).toBeGreaterThan(2);
      const built = new Map([...assembleDeltas(textDeltas), ...assembleDeltas(reasoningDeltas)]);
      const streamed = turn.parts.filter((part) => part.type === "text" || part.type === "reasoning") as { id: string; text: string; type: string }[];
      expect(streamed.map((part) => part.type)).toEqual(["reasoning", "text", "text"]);
      for (const part of streamed) expect(built.get(part.id)).toBe(part.text);
      // Deltas name the part's assistant message.
      expect(new Set(textDeltas.map((delta) => delta.assistantMessageIndex))).toEqual(new Set([0, 1]));
      // Every snapshot's text is a prefix of the final text.
      for (const snapshot of events.filter((event): event is Extract<TurnStreamEvent, { type: "turn.snapshot" }> => event.type === "turn.snapshot")) {
        for (const part of snapshot.turn.parts) {
          if (part.type === "text") expect(built.get(part.id)!.startsWith(part.text)).toBe(true);
        }
      }
    });

    it("resumes with afterRevision or Last-Event-ID: snapshot, then exactly the durable events after it", async () => {
      h.model.enqueue(
        { events: [{ type: "text", text: "Writing." }, { type: "tool_call", name: "write", arguments: { filePath: "r.txt", content: "r" } }], usage: { promptTokens: 5, completionTokens: 5 } },
        { events: [{ type: "text", text: "Written." }], usage: { promptTokens: 6, completionTokens: 6 } },
      );
      const sessionId = await h.createSession();
      const { turnId } = await queue(h, sessionId, "Write r.txt");
      const full = await runToEnd(h, sessionId, turnId);
      // Every durable event (the stream coalesces snapshots, so compare the others).
      const all = durable(full.events).filter((event) => event.type !== "turn.snapshot");
      expect(all.map((event) => event.type)).toEqual(expect.arrayContaining(["turn.started", "turn.tool.requested", "turn.tool.completed", "turn.usage", "turn.finished"]));
      const middle = all.find((event) => event.type === "turn.tool.requested")!.revision;

      const byQuery = await track(await watchTurn(h, sessionId, turnId, middle)).rest();
      expect(byQuery[0]).toMatchObject({ type: "turn.snapshot", revision: full.turn.revision });
      expect(byQuery.slice(1).filter((event) => event.type !== "turn.snapshot")).toEqual(all.filter((event) => event.revision > middle));

      // Last-Event-ID supersedes the query cursor.
      const byHeader = await track(await watchTurn(h, sessionId, turnId, 0, { "last-event-id": String(middle) })).rest();
      expect(byHeader).toEqual(byQuery);

      // Past the end: the snapshot and the finish.
      const caughtUp = await track(await watchTurn(h, sessionId, turnId, full.turn.revision)).rest();
      expect(caughtUp.map((event) => event.type)).toEqual(["turn.snapshot", "turn.finished"]);

      const bad = await h.fetch(new Request(new URL(`${turnPath(sessionId, turnId)}`, h.api.baseUrl), { headers: { "last-event-id": "abc" } }));
      expect(bad.status).toBe(400);
      const unknown = await h.fetch(new Request(new URL(turnPath(sessionId, crypto.randomUUID()), h.api.baseUrl)));
      expect(unknown.status).toBe(404);
      expect(await unknown.json()).toMatchObject({ _tag: "NotFoundError", resource: "turn" });
    });
  });

  describe("a deleted Session's Turn stream", () => {
    it("ends, and a reconnect answers 404", async () => {
      h.model.enqueue({ hang: true });
      const expected = h.model.requests.length + 1;
      const sessionId = await h.createSession();
      const { turnId } = await queue(h, sessionId, "Hang on");
      await h.model.waitForRequest(expected);
      const stream = track(await watchTurn(h, sessionId, turnId, null));
      expect((await stream.next())?.data.type).toBe("turn.snapshot");
      await ok(sdk.deleteSession({ client: h.api.client, path: { server, sessionId }, body: {} }));
      const rest = await stream.rest();
      expect(rest.filter((event) => event.type !== "turn.heartbeat")).toEqual([]);
      const again = await h.fetch(new Request(new URL(turnPath(sessionId, turnId), h.api.baseUrl)));
      expect(again.status).toBe(404);
    });
  });

  describe("watchSession", () => {
    it("replays session.turn.* after cursor 0, announces session.cursor, then follows live with deltas", async () => {
      h.model.enqueue({ events: [{ type: "text", text: "one" }] }, { events: [{ type: "text", text: "two" }] });
      const sessionId = await h.createSession();
      const a = await queue(h, sessionId, "first");
      await runToEnd(h, sessionId, a.turnId);
      const b = await queue(h, sessionId, "second");
      await runToEnd(h, sessionId, b.turnId);

      const path = `/v1/servers/${server}/sessions/${sessionId}/events?afterActivityCursor=0`;
      const stream = track(await openSse<SessionStreamEvent>(h.fetch, h.api.baseUrl, path));
      const cursor = (await stream.until((event) => event.type === "session.cursor", "session.cursor")) as Extract<SessionStreamEvent, { type: "session.cursor" }>;
      const replayed = stream.messages.slice(0, -1).map((message) => message.data as Exclude<SessionStreamEvent, { type: "session.cursor" }>);
      for (const turnId of [a.turnId, b.turnId]) {
        const types = replayed.filter((event) => event.turnId === turnId).map((event) => event.type);
        // A replayed page renders each Turn's snapshot once, with its current state.
        expect(types.filter((type) => type !== "session.turn.snapshot")[0]).toBe("session.turn.started");
        expect(types.at(-1)).toBe("session.turn.finished");
        expect(types.filter((type) => type === "session.turn.snapshot").length).toBeLessThanOrEqual(1);
      }
      expect(replayed.every((event) => event.sessionId === sessionId)).toBe(true);
      const cursors = replayed.map((event) => event.activityCursor);
      expect(cursors).toEqual([...cursors].sort((x, y) => x - y));
      for (const message of stream.messages) expect(message.id).toBe(String((message.data as { activityCursor: number }).activityCursor));
      expect(cursor.activityCursor).toBeGreaterThanOrEqual(cursors.at(-1)!);
      // The first Turn's events come before the second's.
      expect(replayed.findIndex((event) => event.turnId === b.turnId)).toBeGreaterThan(replayed.findLastIndex((event) => event.turnId === a.turnId));

      // Live: a new Turn's events and its text deltas arrive on the open stream.
      const model = holdReplies(h, () => ({ events: [{ type: "text", text: "live words on the session stream" }] }));
      const c = await queue(h, sessionId, "third");
      await stream.until((event) => event.type === "session.turn.started" && event.turnId === c.turnId, "the live Turn's start");
      model.release(1);
      await stream.until((event) => event.type === "session.turn.finished" && event.turnId === c.turnId, "the live Turn's finish");
      const live = stream.messages.map((message) => message.data).filter((event) => event.type === "session.turn.text.delta") as Extract<
        SessionStreamEvent,
        { type: "session.turn.text.delta" }
      >[];
      expect(live.every((event) => event.turnId === c.turnId && event.sessionId === sessionId)).toBe(true);
      const built = assembleDeltas(live);
      expect([...built.values()]).toEqual(["live words on the session stream"]);
    });

    it("resumes after a cursor without repeating what came before it", async () => {
      h.model.enqueue({ events: [{ type: "text", text: "one" }] }, { events: [{ type: "text", text: "two" }] });
      const sessionId = await h.createSession();
      const a = await queue(h, sessionId, "first");
      await runToEnd(h, sessionId, a.turnId);
      const base = `/v1/servers/${server}/sessions/${sessionId}/events`;
      const firstRead = track(await openSse<SessionStreamEvent>(h.fetch, h.api.baseUrl, `${base}?afterActivityCursor=0`));
      const mark = (await firstRead.until((event) => event.type === "session.cursor")) as Extract<SessionStreamEvent, { type: "session.cursor" }>;
      firstRead.close();
      const b = await queue(h, sessionId, "second");
      await runToEnd(h, sessionId, b.turnId);
      const resumed = track(await openSse<SessionStreamEvent>(h.fetch, h.api.baseUrl, `${base}?afterActivityCursor=0`, { "last-event-id": String(mark.activityCursor) }));
      await resumed.until((event) => event.type === "session.cursor");
      const turnIds = new Set(resumed.messages.map((message) => (message.data as { turnId?: string }).turnId).filter(Boolean));
      expect(turnIds).toEqual(new Set([b.turnId]));
    });
  });

  describe("watchServer", () => {
    it("starts with server.cursor, shows session.created and Turn events without deltas, replays by cursor, and shows session.deleted", async () => {
      const path = `/v1/servers/${server}/events`;
      const live = track(await openSse<ServerStreamEvent>(h.fetch, h.api.baseUrl, path));
      const announced = (await live.next())!.data as Extract<ServerStreamEvent, { type: "server.cursor" }>;
      expect(announced.type).toBe("server.cursor");

      h.model.enqueue({ events: [{ type: "text", text: "several words that stream as deltas" }] });
      const sessionId = await h.createSession();
      const { turnId } = await queue(h, sessionId, "Hello server stream");
      await live.until((event) => event.type === "session.turn.finished" && event.turnId === turnId, "the Turn's finish");
      const seenLive = live.messages.map((message) => message.data);
      const created = seenLive.findIndex((event) => event.type === "session.created" && event.session.id === sessionId);
      expect(created).toBeGreaterThan(0);
      const turnEvents = seenLive.filter((event): event is Extract<ServerStreamEvent, { turnId: string }> => "turnId" in event && event.turnId === turnId);
      expect(seenLive.findIndex((event) => "turnId" in event && event.turnId === turnId)).toBeGreaterThan(created);
      expect(turnEvents.map((event) => event.type)).toEqual(expect.arrayContaining(["session.turn.started", "session.turn.finished"]));
      expect(seenLive.some((event) => event.type.endsWith(".delta"))).toBe(false);
      // Without deltas, the streamed text still reaches this observer in a snapshot before the finish.
      const snapshots = turnEvents.filter((event): event is Extract<ServerStreamEvent, { type: "session.turn.snapshot" }> => event.type === "session.turn.snapshot");
      expect(snapshots.at(-1)?.turn.parts).toEqual([expect.objectContaining({ type: "text", text: "several words that stream as deltas" })]);
      expect(turnEvents.indexOf(snapshots.at(-1)!)).toBeLessThan(turnEvents.findIndex((event) => event.type === "session.turn.finished"));
      for (const message of live.messages) expect(message.id).toBe(String(message.data.serverCursor));
      const serverCursors = seenLive.map((event) => event.serverCursor);
      expect(serverCursors).toEqual([...serverCursors].sort((x, y) => x - y));

      // A stream started after the announced cursor replays the same Session and Turn events.
      const replay = track(await openSse<ServerStreamEvent>(h.fetch, h.api.baseUrl, `${path}?afterServerCursor=${announced.serverCursor}`));
      await replay.until((event) => event.type === "session.turn.finished" && event.turnId === turnId, "the replayed finish");
      const interesting = (events: ServerStreamEvent[]) =>
        events
          .filter((event) => (event.type === "session.created" ? event.session.id === sessionId : "turnId" in event && event.turnId === turnId))
          .filter((event) => event.type !== "session.turn.snapshot") // coalesced differently live and in a replay
          .map((event) => event.type);
      expect(interesting(replay.messages.map((message) => message.data))).toEqual(interesting(seenLive));
      expect(replay.messages[0]!.data.type).not.toBe("server.cursor");

      // Deleting the Session is announced on both.
      await ok(sdk.deleteSession({ client: h.api.client, path: { server, sessionId }, body: {} }));
      for (const stream of [live, replay]) {
        const deleted = await stream.until((event) => event.type === "session.deleted" && event.sessionId === sessionId, "session.deleted");
        expect(deleted).toMatchObject({ type: "session.deleted", sessionId, deletedAt: expect.any(Number) });
      }
    });
  });
});

// On both hosts: on the Worker its row (parts and outcome, each 1.5 MB) is over Durable Object
// SQLite's 2 MB limit, so its largest values are split across rows (services/storage/spill.ts).
describe.each(HOSTS)("a Turn bigger than a megabyte (%s host)", (kind) => {
  beforeAll(async () => {
    h = await startModelHost(kind);
  }, 60_000);
  afterAll(async () => {
    await h?.close();
  });
  afterEach(() => {
    for (const stream of open.splice(0)) stream.close();
  });

  it("is watched whole: its snapshot (over 1 MiB) opens every stream, a reconnect's too", async () => {
    const answer = `${"w".repeat(999)} `.repeat(1_500).trim();
    h.model.enqueue({ events: [{ type: "text", text: answer }] });
    const sessionId = await h.createSession();
    const { turnId } = await queue(h, sessionId, "Say a lot");
    const { turn } = await runToEnd(h, sessionId, turnId);
    expect(turn.outcome, JSON.stringify(turn.outcome).slice(0, 400)).toMatchObject({ kind: "completed" });
    const again = await track(await watchTurn(h, sessionId, turnId, turn.revision)).rest();
    expect(again.map((event) => event.type)).toEqual(["turn.snapshot", "turn.finished"]);
    const snapshot = again[0] as Extract<TurnStreamEvent, { type: "turn.snapshot" }>;
    expect(JSON.stringify(snapshot).length).toBeGreaterThan(1024 * 1024);
    expect(JSON.stringify(snapshot)).toContain(answer);
  });
});

// Node only: the heartbeat and idle re-read intervals are a harness option (the Worker's are fixed at 15 s).
describe("quiet streams (Node host)", () => {
  let quick: ModelHarness;
  beforeAll(async () => {
    quick = await startModelHarness({ harness: { streamTiming: { heartbeatMs: 100, idleReadMs: 25 } } });
  });
  afterAll(async () => {
    await quick.close();
  });

  it("repeat turn.heartbeat, session.cursor and server.cursor while nothing happens", async () => {
    quick.model.enqueue({ hang: true });
    const sessionId = await quick.createSession();
    const { turnId } = await queue(quick, sessionId, "Hang");
    await quick.model.waitForRequest(1);
    const turnStream = track(await watchTurn(quick, sessionId, turnId, null));
    const snapshot = (await turnStream.next())!.data;
    const beats = [
      await turnStream.until((event) => event.type === "turn.heartbeat"),
      await turnStream.until((event) => event.type === "turn.heartbeat"),
    ];
    // A heartbeat names the last durable revision: everything through it was sent.
    const sent = Math.max(snapshot.revision, ...durable(turnStream.messages.map((message) => message.data)).map((event) => event.revision));
    for (const beat of beats) expect(beat.revision).toBe(sent);

    const sessionStream = track(await openSse<SessionStreamEvent>(quick.fetch, quick.api.baseUrl, `/v1/servers/${server}/sessions/${sessionId}/events?afterActivityCursor=0`));
    const cursors = [];
    for (let index = 0; index < 3; index++) cursors.push(await sessionStream.until((event) => event.type === "session.cursor"));
    expect(new Set(cursors.map((event) => (event as { activityCursor: number }).activityCursor)).size).toBe(1);

    const serverStream = track(await openSse<ServerStreamEvent>(quick.fetch, quick.api.baseUrl, `/v1/servers/${server}/events`));
    const announced = [];
    for (let index = 0; index < 3; index++) announced.push(await serverStream.until((event) => event.type === "server.cursor"));
    expect(new Set(announced.map((event) => (event as { serverCursor: number }).serverCursor)).size).toBe(1);
    await cancel(quick, sessionId, turnId);
  });
});

// Node only: it kills and restarts a `serve` process (the Worker's restart is tests/worker/turns.test.ts).
describe("a dropped connection to a real serve process", () => {
  beforeAll(() => {
    assertBuilt();
  });

  it("resumes with Last-Event-ID and misses no durable event", async () => {
    const home = tempHome("ze-turn-sse-");
    const model = await startTestModel();
    const served = await serveWithModel(home, model, join(home.dir, "serve.db"));
    try {
      model.enqueue({ events: [{ type: "text", text: "Step one." }, { type: "tool_call", name: "write", arguments: { filePath: "a.txt", content: "a" } }] });
      const held = holdReplies({ model }, (_request, index) =>
        index === 1
          ? { events: [{ type: "text", text: "Step two." }, { type: "tool_call", name: "write", arguments: { filePath: "b.txt", content: "b" } }] }
          : { events: [{ type: "text", text: "All steps done." }] },
      );
      const sessionId = await createSession(served);
      const { turnId } = await queue(served, sessionId, "Do the steps");

      // First connection (from the start): read until the first tool settles, then drop it.
      const first = track(await watchTurn(served, sessionId, turnId, 0));
      await first.until((event) => event.type === "turn.tool.completed", "the first tool's completion");
      const lastId = Number(first.messages.at(-1)!.id);
      const firstEvents = first.messages.map((message) => message.data);
      first.close();

      // While disconnected: the second model request runs its tool.
      held.release(1);
      await held.held(2);

      // Reconnect with the last id seen; then let the Turn finish.
      const second = track(await watchTurn(served, sessionId, turnId, null, { "last-event-id": String(lastId) }));
      const head = (await second.next())!.data;
      expect(head).toMatchObject({ type: "turn.snapshot" });
      expect(head.revision).toBeGreaterThan(lastId);
      held.release(2);
      const secondEvents = [head, ...(await second.rest())];
      expect(secondEvents.filter((event) => event.type === "turn.finished")).toHaveLength(1);

      // The oracle: every durable event of the Turn, replayed from revision 0.
      const oracle = durable(await track(await watchTurn(served, sessionId, turnId, 0)).rest()).slice(1);
      const key = (event: TurnStreamEvent) => `${event.revision}:${event.type}`;
      const afterDrop = new Set(durable(secondEvents).map(key));
      const missing = oracle.filter((event) => event.revision > lastId && !afterDrop.has(key(event)));
      expect(missing).toEqual([]);
      // Events before the drop were all seen on the first connection.
      const beforeDrop = new Set(durable(firstEvents).map(key));
      expect(oracle.filter((event) => event.revision <= lastId && !beforeDrop.has(key(event)))).toEqual([]);
      // The disconnected stretch really had durable events in it.
      expect(oracle.filter((event) => event.revision > lastId && event.type === "turn.tool.completed")).toHaveLength(1);
      expect(model.requests).toHaveLength(3);
    } finally {
      await served.process.stop("SIGKILL");
      await model.close();
      home.cleanup();
    }
  });
});
