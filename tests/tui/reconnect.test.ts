// The Session view's reconnect rules beyond the long outage (navigation.test.ts): a brief
// disconnect mid-Turn resumes from the last update without a notice (no frame ever shows
// `Reconnecting`, the streamed text is whole, each word once), and a Session stream that cannot
// resume (a final refusal) is restarted with backoff and reloads the Session history.
import { describe, expect, it } from "vitest";
import { createZeClient, type ZeClient } from "../../clients/index.js";
import type { ModelHarness } from "../support/model.js";
import { tuiPerTest } from "./support.js";

const { harness, open } = tuiPerTest();

interface Network {
  readonly client: ZeClient;
  /** Every request's method and path, in order. */
  readonly requests: string[];
  /** Cuts every open event stream (as a dropped connection would); returns how many. */
  cut(): number;
  /** Resolves once an event stream whose path matches is open. */
  streaming(path: RegExp): Promise<void>;
  /** While set, a request whose path matches gets this answer instead of reaching the harness. */
  refuse: { readonly path: RegExp; readonly status: number; readonly body: unknown } | undefined;
}

/** The in-process harness behind a fetch whose event streams the test can cut or refuse. */
function network(h: ModelHarness): Network {
  const streams = new Map<ReadableStreamDefaultController<Uint8Array>, string>();
  const waiters = new Set<() => void>();
  const net: Network = {
    requests: [],
    refuse: undefined,
    cut: () => {
      const count = streams.size;
      for (const stream of [...streams.keys()]) stream.error(new TypeError("terminated"));
      streams.clear();
      return count;
    },
    streaming: (path) =>
      new Promise<void>((resolve) => {
        const check = (): void => {
          if ([...streams.values()].some((open) => path.test(open))) (waiters.delete(check), resolve());
        };
        waiters.add(check);
        check();
      }),
    client: createZeClient({
      baseUrl: "http://localhost",
      fetch: async (request: Request): Promise<Response> => {
        const path = new URL(request.url).pathname;
        net.requests.push(`${request.method} ${path}`);
        if (net.refuse && net.refuse.path.test(path)) return Response.json(net.refuse.body, { status: net.refuse.status });
        const response = await h.harness.fetch(request);
        if (!response.headers.get("content-type")?.includes("text/event-stream") || !response.body) return response;
        const reader = response.body.getReader();
        let own!: ReadableStreamDefaultController<Uint8Array>;
        const body = new ReadableStream<Uint8Array>({
          start: (controller) => {
            own = controller;
            streams.set(controller, path);
            for (const waiter of [...waiters]) waiter();
          },
          pull: async (controller) => {
            const { done, value } = await reader.read();
            if (done) (controller.close(), streams.delete(own));
            else controller.enqueue(value);
          },
          cancel: () => void (reader.cancel(), streams.delete(own)),
        });
        return new Response(body, { status: response.status, headers: response.headers });
      },
    }),
  };
  return net;
}

const SESSION_STREAM = /\/sessions\/[^/]+\/events$/;

const words = Array.from({ length: 60 }, (_, index) => `w${String(index + 1).padStart(2, "0")}`);

describe("reconnecting", () => {
  it("a brief disconnect mid-Turn resumes from the last update without a notice; the text is whole", async () => {
    const h = harness();
    h.model.enqueue({ events: words.flatMap((word) => [{ type: "text" as const, text: `${word} ` }, { type: "delay" as const, ms: 15 }]) });
    const net = network(h);
    const tui = await open({ client: net.client });
    let noticed = false;
    tui.controller.subscribe(() => void (noticed ||= tui.controller.view?.reconnecting !== undefined));
    await tui.submit("stream sixty words");
    const before = await tui.waitFor(/w10/);
    await net.streaming(SESSION_STREAM);
    expect(before).not.toContain("w60"); // the cut lands mid-Turn
    const turnStreams = (): number => net.requests.filter((line) => /\/turns\/[^/]+\/events$/.test(line)).length;
    const opened = turnStreams();
    expect(net.cut()).toBeGreaterThanOrEqual(2); // the Session stream and the Turn stream
    const done = await tui.waitFor(/w60[\s\S]*test\/scripted · \d/);
    expect(turnStreams()).toBeGreaterThan(opened); // the Turn stream reconnected
    const answer = done.slice(done.indexOf("› you stream sixty words") + "› you stream sixty words".length);
    expect(answer.match(/w\d\d/g)).toEqual(words); // every word once, in order
    expect(tui.frames().some((frame) => frame.includes("Reconnecting"))).toBe(false);
    expect(noticed).toBe(false);
  });

  it("a brief disconnect while the model pauses (no event for seconds after the reconnect) shows no notice either", async () => {
    const h = harness();
    h.model.enqueue({ events: [{ type: "text", text: "before the pause " }, { type: "delay", ms: 3_000 }, { type: "text", text: "after the pause" }] });
    const net = network(h);
    const tui = await open({ client: net.client });
    await tui.submit("pause in the middle");
    await tui.waitFor(/before the pause/);
    await net.streaming(SESSION_STREAM);
    const opened = net.requests.length;
    expect(net.cut()).toBeGreaterThanOrEqual(2);
    await tui.waitFor(/before the pause after the pause[\s\S]*test\/scripted · \d/);
    expect(net.requests.slice(opened).some((line) => /\/turns\/[^/]+\/events$/.test(line))).toBe(true);
    expect(tui.frames().some((frame) => frame.includes("Reconnecting"))).toBe(false);
  });

  it("a Session stream that cannot resume is restarted with backoff and reloads the Session history", async () => {
    const h = harness();
    const sessionId = await h.createSession();
    await h.finish(sessionId, await h.submit(sessionId, "@say Before the refusal."));
    const net = network(h);
    const tui = await open({ client: net.client, sessionId });
    await tui.waitFor(/Before the refusal\./);
    await net.streaming(SESSION_STREAM);
    // The Session stream is refused (a 4xx is final: the watch cannot resume), then cut.
    net.refuse = { path: SESSION_STREAM, status: 409, body: { _tag: "ConflictError", message: "the stream cannot resume here" } };
    const cutAt = net.requests.length;
    net.cut();
    // Another client's Turn, written while the Session stream is down, is seen only by a reload.
    await h.finish(sessionId, await h.submit(sessionId, "@say Written during the refusal."));
    await tui.waitFor(/Written during the refusal\./);
    const since = net.requests.slice(cutAt);
    const streamTries = since.filter((line) => SESSION_STREAM.test(line)).length;
    expect(streamTries).toBeGreaterThanOrEqual(1);
    expect(since.some((line) => /^GET \/v1\/servers\/local\/sessions\/[^/]+\/turns$/.test(line))).toBe(true); // the history reloaded
    // Restarted again (with backoff) until it works; then live updates flow as before.
    await tui.waitFor(/Reconnecting: .*cannot resume/);
    net.refuse = undefined;
    await h.finish(sessionId, await h.submit(sessionId, "@say After the refusal."));
    // The notice clears only on a Session stream event: the stream is back, not just reloads.
    await tui.waitFor(/After the refusal\.[\s\S]*test\/scripted · \d/);
    const back = await tui.waitFor(/^(?![\s\S]*Reconnecting)/);
    expect(back).toContain("After the refusal.");
  });
});
