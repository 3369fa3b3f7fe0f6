// A client that leaves while the handler is still opening its event stream (a hostile client can
// do this at will): the socket's 'close' comes before the Node listener's writer
// (services/host/sse-writer.ts) listens for it, and the writer must still end the stream's
// iterator, not write into the gone socket and wait forever for a 'drain' with the stream's
// subscription held. Before the fix this test timed out with the watcher subscribed.
import { randomUUID } from "node:crypto";
import { request as httpRequest } from "node:http";
import { afterEach, expect, it } from "vitest";
import type { SseMessage } from "../../generated/server/routes.js";
import { listen, type Listener } from "../../services/host/listen.js";
import { createFetchHandler, type RequestContext } from "../../services/http/handler.js";

let opened!: () => void;
let openStream: Promise<void> = Promise.resolve();
let source: (context: RequestContext) => AsyncIterable<SseMessage<unknown>> = () => ({ [Symbol.asyncIterator]: () => ({ next: async () => ({ done: true, value: undefined }) }) });
const reached: { handler?: () => void } = {};
const fetch = createFetchHandler({
  handlers: {
    watchTurn: async (_input: unknown, context: RequestContext) => {
      reached.handler?.();
      await openStream;
      return { status: 200, stream: source(context) };
    },
  } as never,
  release: "0.0.0-test",
  servers: (name) => name === "local",
  openapi: () => "{}",
});
const eventsPath = `/v1/servers/local/sessions/${randomUUID()}/turns/${randomUUID()}/events`;

let server: Listener | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

it("ends the stream's iterator when the client left before the stream was opened", async () => {
  let closedSockets = 0;
  let socketClosed!: () => void;
  const socketGone = new Promise<void>((resolvePromise) => (socketClosed = resolvePromise));
  server = await listen(fetch, {
    port: 0,
    hostname: "127.0.0.1",
    onConnection: (socket) => socket.once("close", () => (closedSockets += 1, socketClosed())),
  });
  openStream = new Promise<void>((resolvePromise) => (opened = resolvePromise));
  const inHandler = new Promise<void>((resolvePromise) => (reached.handler = resolvePromise));
  // A stream shaped as the terminal output watcher's (services/host/terminal-handlers.ts): a first
  // event, then a loop that subscribes to its log, yields what is there and waits for more (or for
  // the request's abort) only when nothing is; its `finally` releases the subscription, and runs
  // only if the iterator is ended. Here the log always holds more output.
  let subscribed = 0;
  let ended!: () => void;
  const returned = new Promise<void>((resolvePromise) => (ended = resolvePromise));
  source = (context) => {
    const watcher = (async function* () {
      yield { event: "terminal.ready", id: "0", data: { type: "terminal.ready" } };
      for (let sequence = 1; ; sequence += 1) {
        subscribed += 1;
        try {
          yield { event: "terminal.output", id: String(sequence), data: { type: "terminal.output", sequence } };
          if (context.signal.aborted) return;
        } finally {
          subscribed -= 1;
        }
      }
    })();
    // The writer ends a stream through its iterator's return().
    return {
      [Symbol.asyncIterator]: () => ({
        next: () => watcher.next(),
        return: async () => {
          const result = await watcher.return(undefined);
          ended();
          return result;
        },
      }),
    };
  };
  const request = httpRequest(`${server.url}${eventsPath}`);
  request.on("error", () => undefined);
  request.end();
  await inHandler;
  request.destroy();
  await socketGone;
  expect(closedSockets).toBe(1);
  opened();
  await returned;
  expect(subscribed).toBe(0);
});
