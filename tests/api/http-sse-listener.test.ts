// Event streams over the real Node listener (services/host/listen.ts), which writes them to the
// socket itself (services/host/sse-writer.ts) instead of reading the handler's web stream: the
// order and ids of the events, the headers, the end of a stream with its last events (so the
// connection is kept), headers sent at once on a quiet stream, a client that goes away (the
// stream's iterator ends: its watcher is freed), a slow reader (no event is pulled faster than
// the socket takes them), and a stream failing after its 200 (cut short and reported). The
// handler called directly (the Worker's and the embedded client's path) still answers a plain
// web stream body.
import { randomUUID } from "node:crypto";
import { Agent, request as httpRequest, type ClientRequest, type IncomingMessage } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import type { SseMessage } from "../../generated/server/routes.js";
import { Channel } from "../../services/core/events/channel.js";
import { listen, type Listener } from "../../services/host/listen.js";
import { createFetchHandler, type RequestContext } from "../../services/http/handler.js";

type Source = (context: RequestContext) => AsyncIterable<SseMessage<unknown>>;

let source: Source = () => new Channel();
const unexpected: unknown[] = [];
const fetch = createFetchHandler({
  handlers: {
    watchTurn: async (_input: unknown, context: RequestContext) => ({ status: 200, stream: source(context) }),
  } as never,
  release: "0.0.0-test",
  servers: (name) => name === "local",
  openapi: () => "{}",
  onUnexpectedError: (error) => unexpected.push(error),
});

const eventsPath = `/v1/servers/local/sessions/${randomUUID()}/turns/${randomUUID()}/events`;
const message = (id: number, extra: Record<string, unknown> = {}): SseMessage<unknown> => ({ event: "turn.text.delta", id: String(id), data: { type: "turn.text.delta", revision: id, ...extra } });

let server: Listener | undefined;
const agents: Agent[] = [];
afterEach(async () => {
  for (const agent of agents.splice(0)) agent.destroy();
  await server?.close();
  server = undefined;
  unexpected.length = 0;
});

/** This test's listener's connections: opened, and closed since. */
let sockets = { opened: 0, closed: 0 };
async function start(): Promise<string> {
  const counts = { opened: 0, closed: 0 };
  sockets = counts;
  server = await listen(fetch, {
    port: 0,
    hostname: "127.0.0.1",
    onConnection: (socket) => {
      counts.opened += 1;
      socket.once("close", () => (counts.closed += 1));
    },
  });
  return server.url;
}

function get(url: string, headers: Record<string, string> = {}, agent?: Agent): { request: ClientRequest; response: Promise<IncomingMessage> } {
  const request = httpRequest(`${url}${eventsPath}`, { headers, ...(agent ? { agent } : {}) });
  const response = new Promise<IncomingMessage>((resolvePromise, reject) => {
    request.once("response", resolvePromise);
    request.once("error", reject);
  });
  request.end();
  return { request, response };
}

function readAll(response: IncomingMessage): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    let text = "";
    response.setEncoding("utf8");
    response.on("data", (chunk: string) => (text += chunk));
    response.once("end", () => resolvePromise(text));
    response.once("error", reject);
  });
}

/** The events of an SSE text: their ids and parsed data, in order. */
function parse(text: string): { id: string | undefined; event: string | undefined; data: Record<string, unknown> }[] {
  return text
    .split("\n\n")
    .filter((block) => block.trim() !== "")
    .map((block) => {
      const fields = new Map(block.split("\n").map((line) => [line.slice(0, line.indexOf(":")), line.slice(line.indexOf(":") + 2)] as const));
      return { id: fields.get("id"), event: fields.get("event"), data: JSON.parse(fields.get("data") ?? "null") as Record<string, unknown> };
    });
}

/** Reads the response until `count` events have arrived (more may follow). */
function readEvents(response: IncomingMessage, count: number): Promise<ReturnType<typeof parse>> {
  return new Promise((resolvePromise, reject) => {
    let text = "";
    let ends = 0;
    response.setEncoding("utf8");
    const onData = (chunk: string): void => {
      // Events end with a blank line; JSON data never holds a raw newline.
      for (let at = chunk.indexOf("\n\n"); at !== -1; at = chunk.indexOf("\n\n", at + 2)) ends += 1;
      if (chunk.startsWith("\n") && text.endsWith("\n")) ends += 1;
      text += chunk;
      if (ends >= count) {
        response.off("data", onData);
        response.pause();
        resolvePromise(parse(text.slice(0, text.lastIndexOf("\n\n") + 2)));
      }
    };
    response.on("data", onData);
    // A response paused by the test flows again once read.
    response.resume();
    response.once("error", reject);
    response.once("end", () => reject(new Error(`the stream ended after ${parse(text).length} events`)));
  });
}

/** A channel holding `messages`, closed a few microtasks later, as an event stream's pump ends it. */
function endedChannel(messages: SseMessage<unknown>[]): Channel<SseMessage<unknown>> {
  const channel = new Channel<SseMessage<unknown>>();
  for (const item of messages) channel.push(item);
  void Promise.resolve().then(() => channel.close());
  return channel;
}

describe("event streams over the Node listener", () => {
  it("writes the events in order with their ids and headers, ends with the last, and keeps the connection", async () => {
    const url = await start();
    source = (context) => endedChannel([message(1, { lastEventId: context.lastEventId }), message(2), message(3, { delta: "é ☃ \u{1F600}" })]);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    agents.push(agent);
    const first = get(url, { "last-event-id": "7" }, agent);
    const response = await first.response;
    expect(response.statusCode).toBe(200);
    expect(response.headers["content-type"]).toBe("text/event-stream; charset=utf-8");
    expect(response.headers["cache-control"]).toBe("no-cache, no-transform");
    expect(response.headers["ze-harness-version"]).toMatch(/\/0\.0\.0-test$/);
    const events = parse(await readAll(response));
    expect(events.map((event) => [event.event, event.id, event.data["revision"]])).toEqual([
      ["turn.text.delta", "1", 1],
      ["turn.text.delta", "2", 2],
      ["turn.text.delta", "3", 3],
    ]);
    expect(events[0]?.data["lastEventId"]).toBe("7");
    expect(events[2]?.data["delta"]).toBe("é ☃ \u{1F600}");
    // The body was complete: the next request goes out on the same connection.
    source = () => endedChannel([message(4)]);
    const second = get(url, {}, agent);
    const again = await second.response;
    expect(parse(await readAll(again)).map((event) => event.id)).toEqual(["4"]);
    expect(second.request.reusedSocket).toBe(true);
  });

  it("keeps the connection of a client that stops reading at the last event: the end goes out with it", async () => {
    const url = await start();
    for (let round = 1; round <= 6; round++) {
      // A live Turn's stream: the first event at once, the last group a turn of the event loop
      // later, the stream closed a few microtasks after its last event (as a pump ends it).
      source = () => {
        const channel = new Channel<SseMessage<unknown>>();
        channel.push(message(1));
        setImmediate(() => {
          channel.push(message(2));
          channel.push(message(3, { last: true }));
          void Promise.resolve().then(() => channel.close());
        });
        return channel;
      };
      // As the generated client watches a Turn: read up to the terminal event, then abort.
      const controller = new AbortController();
      const response = await globalThis.fetch(`${url}${eventsPath}`, { signal: controller.signal });
      const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
      let text = "";
      while (!text.includes('"last":true')) {
        const { value, done } = await reader.read();
        if (done) break;
        text += value;
      }
      controller.abort();
      expect(parse(text).map((event) => event.id)).toEqual(["1", "2", "3"]);
    }
    // No connection was closed under an unfinished response: each was kept for the next round.
    expect(sockets.closed).toBe(0);
    expect(sockets.opened).toBeLessThan(6);
  });

  it("sends the headers at once while no event is ready, then each event as it comes", async () => {
    const url = await start();
    const channel = new Channel<SseMessage<unknown>>();
    source = () => channel;
    const { response } = get(url);
    const answer = await response;
    expect(answer.statusCode).toBe(200);
    const reading = readAll(answer);
    channel.push(message(1));
    channel.push(message(2));
    channel.close();
    expect(parse(await reading).map((event) => event.id)).toEqual(["1", "2"]);
  });

  it("ends the stream's iterator when the client goes away mid-stream", async () => {
    const url = await start();
    const channel = new Channel<SseMessage<unknown>>();
    const freed = new Promise<void>((resolvePromise) => channel.onClose(resolvePromise));
    source = () => channel;
    channel.push(message(1));
    const { request, response } = get(url);
    const events = await readEvents(await response, 1);
    expect(events[0]?.id).toBe("1");
    request.destroy();
    await freed;
    expect(channel.isClosed).toBe(true);
  });

  it("pulls no event faster than a slow reader takes them, and resumes when it reads", async () => {
    const url = await start();
    const LIMIT = 1024;
    const payload = "x".repeat(64 * 1024);
    let pulled = 0;
    let returned = false;
    source = () => ({
      [Symbol.asyncIterator]: () => ({
        next: async () => {
          pulled += 1;
          return { done: false, value: message(pulled, { payload }) };
        },
        return: async () => {
          returned = true;
          return { done: true, value: undefined };
        },
      }),
    });
    const { request, response } = get(url);
    const answer = await response;
    answer.pause();
    // Wait until the writer stops asking for events (the socket is full), or has asked far too often.
    let quietTurns = 0;
    let seen = pulled;
    while (quietTurns < 50 && pulled <= LIMIT) {
      await new Promise((resolvePromise) => setImmediate(resolvePromise));
      quietTurns = pulled === seen ? quietTurns + 1 : 0;
      seen = pulled;
    }
    expect(pulled).toBeLessThanOrEqual(LIMIT);
    const held = pulled;
    // Reading frees the socket: the stream goes on where it was, in order.
    const events = await readEvents(answer, held + 20);
    expect(events.map((event) => Number(event.id))).toEqual(Array.from({ length: events.length }, (_, index) => index + 1));
    expect(pulled).toBeGreaterThan(held);
    request.destroy();
    await new Promise<void>((resolvePromise) => {
      const check = (): void => (returned ? resolvePromise() : void setImmediate(check));
      check();
    });
  });

  it("drops the connection of a reader that stopped reading once the stream's queue reaches its bound, and reports no server fault", async () => {
    const url = await start();
    const payload = "x".repeat(64 * 1024);
    const bound = { highWater: 4, limit: 32 };
    let channel: Channel<SseMessage<unknown>> | undefined;
    source = () => (channel = new Channel<SseMessage<unknown>>(bound));
    const { response } = get(url);
    const answer = await response;
    answer.pause();
    answer.on("error", () => undefined);
    const closed = new Promise((resolvePromise) => answer.once("close", resolvePromise));
    // A live producer (as the model's deltas are): it pushes whether or not the reader reads, until
    // the channel gives up on the reader. Without the bound it would queue all 4,000 (250 MiB).
    let most = 0;
    for (let id = 1; !channel!.isClosed && id <= 4000; id += 1) {
      channel!.push(message(id, { payload }));
      most = Math.max(most, channel!.queued);
      await new Promise((resolvePromise) => setImmediate(resolvePromise));
    }
    expect(channel!.isClosed).toBe(true);
    expect(most).toBeLessThanOrEqual(bound.limit);
    // The listener dropped the connection at once (its buffered bytes would never be read): the
    // client, reading again, gets what its socket had received and then the cut.
    await new Promise<void>((resolvePromise) => {
      const check = (): void => (sockets.closed === 1 ? resolvePromise() : void setImmediate(check));
      check();
    });
    answer.resume();
    await closed;
    expect(answer.complete).toBe(false);
    expect(sockets.closed).toBe(1);
    expect(unexpected).toEqual([]);
  });

  it("cuts a stream that fails after its 200 and reports why, after the events before the failure", async () => {
    const url = await start();
    const failure = new Error("the event log could not be read");
    source = () => ({
      [Symbol.asyncIterator]: () => {
        let sent = false;
        return {
          next: async () => {
            if (sent) throw failure;
            sent = true;
            return { done: false, value: message(1) };
          },
        };
      },
    });
    const { response } = get(url);
    const answer = await response;
    let text = "";
    answer.setEncoding("utf8");
    answer.on("data", (chunk: string) => (text += chunk));
    answer.on("error", () => undefined);
    await new Promise((resolvePromise) => answer.once("close", resolvePromise));
    expect(answer.complete).toBe(false);
    expect(parse(text.slice(0, text.lastIndexOf("\n\n") + 2)).map((event) => event.id)).toEqual(["1"]);
    expect(unexpected).toEqual([failure]);
  });

  it("sends the 200's headers of a stream that fails before its first event, then cuts it and reports why", async () => {
    const url = await start();
    const failure = new Error("the Turn's snapshot could not be read");
    source = () => ({
      [Symbol.asyncIterator]: () => ({
        next: async () => {
          throw failure;
        },
      }),
    });
    // Before the fix the headers, only recorded by writeHead, never reached the socket: the client
    // saw the connection close with no response at all ("socket hang up").
    const { response } = get(url);
    const answer = await response;
    expect(answer.statusCode).toBe(200);
    expect(answer.headers["content-type"]).toBe("text/event-stream; charset=utf-8");
    answer.on("error", () => undefined);
    answer.resume();
    await new Promise((resolvePromise) => answer.once("close", resolvePromise));
    expect(answer.complete).toBe(false);
    expect(unexpected).toEqual([failure]);
  });

  it("still answers a web stream body to a caller that is not the Node listener", async () => {
    source = () => endedChannel([message(1), message(2)]);
    const response = await fetch(new Request(`http://127.0.0.1${eventsPath}`));
    expect(response.status).toBe(200);
    expect(response.body).not.toBeNull();
    expect(parse(await response.text()).map((event) => event.id)).toEqual(["1", "2"]);
  });
});
