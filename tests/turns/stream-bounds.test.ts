// An event stream's queue is bounded (core/events/channel.ts): a producer that can wait (a pump
// paging through storage) waits in room() while the reader is behind, and a live push past the
// limit cuts the stream with StreamConsumerBehind, so a reader that stopped reading never makes
// the host hold an unbounded backlog. Over a real harness: a Turn's watch that is not read while
// the model streams is cut, the Turn itself completes, and the reader resumes from its last id.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TurnStreamEvent } from "../../clients/index.js";
import { Channel, pumpedStream, StreamConsumerBehind, Wake } from "../../services/core/events/channel.js";
import { stringChars } from "../../services/contract/string-chars.js";
import { EventInbox, LiveOrder } from "../../services/core/events/stream-order.js";
import type { TurnEventRow } from "../../services/storage/index.js";
import { startModelHarness, type ModelHarness } from "../support/model.js";
import { openSse, queue, runToEnd, server, watchTurn } from "./helpers.js";

const bounds = { highWater: 4, limit: 10 };

/** The events a stalled watch still holds, read to its end, and the error it ended with (a cut). */
async function readToCut(stalled: Awaited<ReturnType<typeof watchTurn>>): Promise<{ rest: TurnStreamEvent[]; failure: unknown }> {
  const rest: TurnStreamEvent[] = [];
  try {
    for (;;) {
      const next = await stalled.next();
      if (next === undefined) return { rest, failure: undefined };
      rest.push(next.data);
    }
  } catch (failure) {
    return { rest, failure };
  }
}


describe("a bounded channel", () => {
  it("keeps a waiting producer in room() until the reader takes the queue below the high-water mark", async () => {
    const channel = new Channel<number>(bounds);
    for (let item = 0; item < 4; item += 1) channel.push(item);
    let roomy = false;
    const waiting = channel.room().then(() => (roomy = true));
    await Promise.resolve();
    await Promise.resolve();
    expect(roomy).toBe(false);
    expect(await channel.next()).toEqual({ value: 0, done: false });
    await waiting;
    expect(roomy).toBe(true);
    // Under the mark, room() answers at once; drain() frees room as next() does.
    await channel.room();
    for (let item = 4; item < 8; item += 1) channel.push(item);
    let drained = false;
    const again = channel.room().then(() => (drained = true));
    expect(channel.drain()).toEqual([1, 2, 3, 4, 5, 6, 7]);
    await again;
    expect(drained).toBe(true);
  });

  it("fails with StreamConsumerBehind when a push finds `limit` items queued, and tells its onBehind listener", async () => {
    const channel = new Channel<number>(bounds);
    const heard: Error[] = [];
    channel.onBehind((error) => heard.push(error));
    for (let item = 0; item < 10; item += 1) channel.push(item);
    expect(channel.isClosed).toBe(false);
    expect(channel.queued).toBe(10);
    channel.push(10);
    expect(channel.isClosed).toBe(true);
    expect(channel.queued).toBe(0);
    expect(heard).toHaveLength(1);
    expect(heard[0]).toBeInstanceOf(StreamConsumerBehind);
    await expect(channel.next()).rejects.toBeInstanceOf(StreamConsumerBehind);
    // A producer waiting for room is released by the close (and sees isClosed).
    await channel.room();
  });

  it("fails with StreamConsumerBehind when live deltas queued behind the reader's next item would pass `byteLimit` characters, however few they are", async () => {
    const channel = new Channel<string>({ highWater: 4, limit: 1000, byteLimit: 100 });
    const heard: Error[] = [];
    channel.onBehind((error) => heard.push(error));
    // The first queued item is the reader's next: it does not count (one large item alone never cuts).
    channel.pushLive("a", 500);
    channel.pushLive("b", 60);
    channel.pushLive("c", 40);
    channel.push("durable");
    expect(channel.isClosed).toBe(false);
    // A reader that takes items frees their weight: b is next now, c's 40 count.
    expect(await channel.next()).toEqual({ value: "a", done: false });
    channel.pushLive("d", 60);
    expect(channel.isClosed).toBe(false);
    channel.pushLive("e", 1);
    expect(channel.isClosed).toBe(true);
    expect(channel.queued).toBe(0);
    expect(heard[0]).toBeInstanceOf(StreamConsumerBehind);
    expect(heard[0]!.message).toBe("the reader fell 100 characters of events behind; the stream was cut (resume from the last event id read)");
  });

  it("hands a live delta to a waiting reader whatever its weight", async () => {
    const channel = new Channel<string>({ highWater: 4, limit: 1000, byteLimit: 100 });
    const next = channel.next();
    channel.pushLive("huge", 10_000);
    expect(await next).toEqual({ value: "huge", done: false });
    expect(channel.isClosed).toBe(false);
  });

  it("never cuts for durable items' weight: their producer waits in room() while half of `byteLimit` is queued", async () => {
    const channel = new Channel<string>({ highWater: 100, limit: 1000, byteLimit: 100 });
    channel.push("snapshot 1", 400);
    channel.push("snapshot 2", 400);
    expect(channel.isClosed).toBe(false);
    let roomy = false;
    const waiting = channel.room().then(() => (roomy = true));
    await Promise.resolve();
    await Promise.resolve();
    expect(roomy).toBe(false);
    await channel.next();
    await Promise.resolve();
    expect(roomy).toBe(false);
    await channel.next();
    await waiting;
    expect(roomy).toBe(true);
  });

  it("counts deltas held back for their durable event against `byteLimit` (LiveOrder)", () => {
    const channel = new Channel<string>({ highWater: 4, limit: 1000, byteLimit: 100 });
    const live = new LiveOrder<string>(0);
    // Deltas after durable event 1, which the pump has not pushed yet: held, not queued.
    expect(live.push(channel, 1, "x", 50)).toBe(false);
    expect(live.push(channel, 1, "y", 50)).toBe(false);
    expect(channel.queued).toBe(0);
    expect(channel.isClosed).toBe(false);
    live.push(channel, 1, "z", 1);
    expect(channel.isClosed).toBe(true);
    expect(channel.queued).toBe(0);
  });

  it("weighs an event by the characters of its strings (stringChars)", () => {
    expect(stringChars({ type: "turn.snapshot", revision: 3, turn: { parts: [{ text: "abc" }, { text: "de", tool: { output: ["fgh"] } }] } })).toBe(13 + 3 + 2 + 3);
  });

  it("drops an inbox whose rows' data passes 16 Mi characters (the pump then reads the log), as it does past 2,048 rows", () => {
    const row = (revision: number, text: string) => ({ id: revision, sessionId: "s", turnId: "t", revision, activityCursor: revision, serverCursor: revision, type: "turn.tool.completed", data: { output: text } }) as unknown as TurnEventRow;
    const kept = new EventInbox();
    kept.add([row(1, "a".repeat(1024)), row(2, "b")]);
    expect(kept.take(0, (r) => r.revision)?.map((r) => r.revision)).toEqual([1, 2]);
    const dropped = new EventInbox();
    for (let revision = 1; revision <= 17; revision++) dropped.add([row(revision, "o".repeat(1024 * 1024))]);
    expect(dropped.take(0, (r) => r.revision)).toBeUndefined();
    // After the drop the inbox starts again from nothing.
    dropped.add([row(18, "c")]);
    expect(dropped.take(17, (r) => r.revision)?.map((r) => r.revision)).toEqual([18]);
  });

  it("lets drain() free the queued weight", () => {
    const channel = new Channel<string>({ highWater: 4, limit: 1000, byteLimit: 100 });
    channel.pushLive("a", 100);
    channel.pushLive("b", 100);
    expect(channel.drain()).toEqual(["a", "b"]);
    channel.pushLive("c", 100);
    channel.pushLive("d", 100);
    expect(channel.isClosed).toBe(false);
  });

  it("fails a reader already waiting when the stream fails (not a clean end)", async () => {
    const failure = new Error("the event log could not be read");
    let fail: () => void = () => undefined;
    const stream = pumpedStream<number>(
      (channel) =>
        new Promise<void>((_resolve, reject) => {
          channel.push(1);
          fail = () => reject(failure);
        }),
      () => [],
    );
    const iterator = stream[Symbol.asyncIterator]();
    expect(await iterator.next()).toEqual({ value: 1, done: false });
    const waiting = iterator.next();
    fail();
    await expect(waiting).rejects.toBe(failure);
  });

  it("lets a reader that keeps up take any number of items (a waiting reader takes each push directly)", async () => {
    const channel = new Channel<number>(bounds);
    const taken: number[] = [];
    const reading = (async () => {
      for await (const item of channel) taken.push(item);
    })();
    for (let item = 0; item < 1000; item += 1) {
      channel.push(item);
      await Promise.resolve();
    }
    channel.close();
    await reading;
    expect(taken).toHaveLength(1000);
  });

  it("holds a paging pump at the high-water mark while nobody reads", async () => {
    let pages = 0;
    const stream = pumpedStream<number>(
      async (channel) => {
        for (let page = 0; page < 100 && !channel.isClosed; page += 1) {
          await channel.room();
          if (channel.isClosed) return;
          pages += 1;
          for (let item = 0; item < 3; item += 1) channel.push(page * 3 + item);
        }
      },
      (_wake: Wake) => [],
      undefined,
      bounds,
    );
    for (let turn = 0; turn < 20; turn += 1) await new Promise((resolvePromise) => setImmediate(resolvePromise));
    // Two pages fill the queue past the mark (3, then 6 ≥ 4): the pump waits for the reader.
    expect(pages).toBe(2);
    const iterator = stream[Symbol.asyncIterator]();
    const first = [];
    for (let index = 0; index < 9; index += 1) first.push((await iterator.next()).value);
    expect(first).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    expect(pages).toBeGreaterThan(2);
    await iterator.return?.();
  });
});

describe("a Turn's watch that is not read while the model streams (in-process host)", () => {
  let h: ModelHarness;
  beforeAll(async () => {
    h = await startModelHarness({ harness: { streamTiming: { heartbeatMs: 60_000, idleReadMs: 25, queue: { highWater: 4, limit: 16 } } } });
  });
  afterAll(async () => {
    await h.close();
  });

  it("is cut, the Turn completes, and the reader resumes from its last event id to turn.finished", async () => {
    const words = Array.from({ length: 200 }, (_, index) => ({ type: "text" as const, text: `w${index} ` }));
    h.model.enqueue({ events: words });
    const sessionId = await h.createSession();
    const { turnId } = await queue(h, sessionId, "Stream many words");
    const stalled = await watchTurn(h, sessionId, turnId, null);
    const snapshot = (await stalled.next())!.data;
    // Nothing more is read from `stalled` until the Turn is over.
    const { turn } = await runToEnd(h, sessionId, turnId);
    expect(turn.outcome).toMatchObject({ kind: "completed" });
    expect(turn.parts.map((part) => ("text" in part ? part.text : "")).join("")).toBe(words.map((word) => word.text).join(""));
    // The stalled stream fell 16 deltas behind and was cut: it ends (with an error) before turn.finished.
    const { rest, failure } = await readToCut(stalled);
    expect(rest.length).toBeLessThan(words.length);
    expect(rest.map((event) => event.type)).not.toContain("turn.finished");
    expect(String(failure ?? "")).toMatch(/behind|terminated|error/i);
    // The reader resumes after the last id it read: the durable events and turn.finished follow.
    const lastRevision = Math.max(snapshot.revision, ...rest.map((event) => ("revision" in event ? Number(event.revision) : 0)));
    const resumed = await watchTurn(h, sessionId, turnId, lastRevision);
    const events = await resumed.rest();
    expect(events.at(-1)?.type).toBe("turn.finished");
  });
});

describe("a Turn's watch that is not read while the model streams large deltas (in-process host)", () => {
  let h: ModelHarness;
  beforeAll(async () => {
    // The event limit is out of reach: only the deltas' size cuts the stream.
    h = await startModelHarness({ harness: { streamTiming: { heartbeatMs: 60_000, idleReadMs: 25, queue: { highWater: 4, limit: 100_000, byteLimit: 64 * 1024 } } } });
  });
  afterAll(async () => {
    await h.close();
  });

  it("is cut once its queued deltas pass byteLimit characters, the Turn completes, and the reader resumes to turn.finished", async () => {
    const pieces = Array.from({ length: 12 }, (_, index) => ({ type: "text" as const, text: `${index}:${"q".repeat(16 * 1024)}` }));
    h.model.enqueue({ events: pieces });
    const sessionId = await h.createSession();
    const { turnId } = await queue(h, sessionId, "Stream big pieces");
    const stalled = await watchTurn(h, sessionId, turnId, null);
    const snapshot = (await stalled.next())!.data;
    const { turn } = await runToEnd(h, sessionId, turnId);
    expect(turn.outcome).toMatchObject({ kind: "completed" });
    const { rest, failure } = await readToCut(stalled);
    // 12 deltas (far under the event limit) were too many characters: the stream was cut before turn.finished.
    expect(rest.filter((event) => event.type === "turn.text.delta").length).toBeLessThan(pieces.length);
    expect(rest.map((event) => event.type)).not.toContain("turn.finished");
    expect(String(failure ?? "")).toMatch(/behind|terminated|error/i);
    const lastRevision = Math.max(snapshot.revision, ...rest.map((event) => ("revision" in event ? Number(event.revision) : 0)));
    const events = await (await watchTurn(h, sessionId, turnId, lastRevision)).rest();
    expect(events.at(-1)?.type).toBe("turn.finished");
  });
});

describe("a Turn's watch that is not read while content flushes commit snapshots (in-process host)", () => {
  let h: ModelHarness;
  beforeAll(async () => {
    // Every content flush commits a turn.snapshot holding all the Turn's parts; only their size cuts the stream.
    h = await startModelHarness({ config: { contentFlushMillis: 5 }, harness: { streamTiming: { heartbeatMs: 60_000, idleReadMs: 25, queue: { highWater: 512, limit: 100_000, byteLimit: 256 * 1024 } } } });
  });
  afterAll(async () => {
    await h.close();
  });

  it("holds back snapshot after snapshot (its pump waits past half of byteLimit) instead of queueing each, and is not cut", async () => {
    const trickle = Array.from({ length: 16 }, () => [{ type: "delay" as const, ms: 25 }, { type: "text" as const, text: "x" }]).flat();
    h.model.enqueue({ events: [{ type: "text", text: "B".repeat(60_000) }, ...trickle] });
    const sessionId = await h.createSession();
    const { turnId } = await queue(h, sessionId, "A large part, then a trickle");
    const stalled = await watchTurn(h, sessionId, turnId, null);
    await stalled.next();
    const { turn } = await runToEnd(h, sessionId, turnId);
    expect(turn.outcome).toMatchObject({ kind: "completed" });
    const rest = await stalled.rest();
    // Every event reaches the reader once it reads again, ending with turn.finished.
    expect(rest.at(-1)?.type).toBe("turn.finished");
    // But not a 60,000-character snapshot per content flush: the pump waited, then read the log once.
    const snapshots = rest.filter((event) => event.type === "turn.snapshot").length;
    expect(snapshots).toBeLessThan(8);
  });

  it("is never cut for one snapshot larger than byteLimit when the reader keeps up", async () => {
    h.model.enqueue({ events: [{ type: "text", text: "L".repeat(400_000) }] });
    const sessionId = await h.createSession();
    const { turnId } = await queue(h, sessionId, "One large part");
    await runToEnd(h, sessionId, turnId);
    // The first event of a new watch is the whole settled Turn (400,000 characters > byteLimit).
    const events = await (await watchTurn(h, sessionId, turnId, null)).rest();
    expect(events[0]?.type).toBe("turn.snapshot");
    expect(events.at(-1)?.type).toBe("turn.finished");
  });
});

describe("a stream whose pump waits for room while the model streams (in-process host)", () => {
  let h: ModelHarness;
  beforeAll(async () => {
    // The pump waits at 2 queued events; the limit is out of reach, so nothing is cut.
    h = await startModelHarness({ harness: { streamTiming: { heartbeatMs: 60_000, idleReadMs: 25, queue: { highWater: 2, limit: 100_000 } } } });
  });
  afterAll(async () => {
    await h.close();
  });

  it("sends each live delta after the durable event it builds on (a reader cut after it resumes past nothing)", async () => {
    const words = Array.from({ length: 20 }, (_, index) => ({ type: "text" as const, text: `w${index} ` }));
    h.model.enqueue({ events: [...words, { type: "tool_call", id: "call_1", name: "read", arguments: "{}" } as never] });
    h.model.enqueue({ events: words });
    const sessionId = await h.createSession();
    const { turnId } = await queue(h, sessionId, "Stream, call a tool, stream again");
    const turnStream = await watchTurn(h, sessionId, turnId, null);
    const sessionStream = await openSse<{ type: string; activityCursor: number }>(h.fetch, h.api.baseUrl, `/v1/servers/${server}/sessions/${sessionId}/events?afterActivityCursor=0`);
    // Neither stream is read until the Turn is over: both pumps wait for room meanwhile.
    await runToEnd(h, sessionId, turnId);
    const ahead: string[] = [];
    let revision = 0;
    for (let next = await turnStream.next(); next; next = await turnStream.next()) {
      const event = next.data as { type: string; revision: number };
      if (!event.type.endsWith(".delta")) revision = Math.max(revision, event.revision);
      else if (event.revision > revision) ahead.push(`${event.type} on revision ${event.revision} before it`);
      if (event.type === "turn.finished") break;
    }
    let cursor = 0;
    for (let next = await sessionStream.next(); next; next = await sessionStream.next()) {
      const event = next.data;
      if (!event.type.endsWith(".delta")) cursor = Math.max(cursor, event.activityCursor);
      else if (event.activityCursor > cursor) ahead.push(`${event.type} on activity ${event.activityCursor} before it`);
      if (event.type === "session.turn.finished") break;
    }
    turnStream.close();
    sessionStream.close();
    expect(ahead).toEqual([]);
  });
});

describe("a Turn stream's replay of a long Turn", () => {
  let long: ModelHarness;
  beforeAll(async () => {
    long = await startModelHarness();
  });
  afterAll(async () => {
    await long.close();
  });

  it("sends every durable event after afterRevision, not only the first page", async () => {
    // 600 tool calls in one step: more durable events than a page (500) and than the 1,000 the
    // replay used to stop at.
    const calls = Array.from({ length: 600 }, (_, index) => ({ type: "tool_call" as const, name: "read", arguments: { filePath: `missing-${index}.txt` } }));
    long.model.enqueue({ events: calls }, { events: [{ type: "text", text: "Read them all." }] });
    const sessionId = await long.createSession();
    const { turnId } = await queue(long, sessionId, "Read every file");
    const { events: live, turn } = await runToEnd(long, sessionId, turnId);
    expect(turn.outcome).toMatchObject({ kind: "completed" });
    const durable = (events: TurnStreamEvent[]) => events.filter((event) => event.type !== "turn.snapshot" && !event.type.endsWith(".delta") && event.type !== "turn.heartbeat");
    const recorded = durable(live);
    expect(recorded.length).toBeGreaterThan(1200);
    // From the start again: the same durable events, in order, then turn.finished once.
    const replayed = durable(await (await watchTurn(long, sessionId, turnId, 0)).rest());
    expect(replayed.map((event) => `${event.type}@${"revision" in event ? event.revision : ""}`)).toEqual(recorded.map((event) => `${event.type}@${"revision" in event ? event.revision : ""}`));
    expect(replayed.filter((event) => event.type === "turn.finished")).toHaveLength(1);
  }, 120_000);
});
