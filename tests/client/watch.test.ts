// clients/watch.ts against a real in-process harness and the scripted model: typed events,
// reconciliation of the held Turn, and reconnects after cut bodies, 5xx, silence and drops.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  createZeClient,
  sdk,
  unwrap,
  watchServer,
  watchSession,
  watchTurn,
  ZeClientError,
  type Reconnecting,
  type ServerWatchEvent,
  type ServerWatchLifecycle,
  type SessionStreamEvent,
  type SessionWatchLifecycle,
  type Turn,
  type TurnWatchEvent,
  type ZeClient,
} from "../../clients/index.js";
import { startModelHarness, type ModelHarness } from "../support/model.js";

vi.setConfig({ testTimeout: 30_000 });

const server = "local";
let h: ModelHarness;
beforeEach(async () => {
  h = await startModelHarness();
});
afterEach(async () => {
  await h.close();
});

type Tamper = (request: Request, response: Response, index: number) => Response | Promise<Response>;

/**
 * A client over the harness whose SSE responses (`…/events`) pass through `tamper`, with every
 * events request recorded.
 */
function tamperedClient(tamper: Tamper): { client: ZeClient; requests: Request[] } {
  const requests: Request[] = [];
  const client = createZeClient({
    baseUrl: "http://localhost",
    fetch: async (request) => {
      if (!new URL(request.url).pathname.endsWith("/events")) return h.fetch(request);
      requests.push(request.clone());
      return tamper(request, await h.fetch(request), requests.length - 1);
    },
  });
  return { client, requests };
}

/** The response with its body cut (a transport error) once `events` SSE messages went through. */
function cutAfter(response: Response, events: number): Response {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let seen = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (seen >= events) {
        controller.error(new TypeError("terminated"));
        await reader.cancel();
        return;
      }
      const { done, value } = await reader.read();
      if (done) return controller.close();
      seen += decoder.decode(value, { stream: true }).split("\n\n").length - 1;
      controller.enqueue(value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return new Response(body, { status: response.status, headers: response.headers });
}

const textOf = (turn: Turn): string => turn.parts.map((part) => (part.type === "text" ? part.text : "")).join("");

/** A slow answer: the Turn is still streaming when a test cuts the connection. */
const slowAnswer = {
  events: [
    { type: "reasoning" as const, text: "Think first." },
    { type: "text" as const, text: "Hello there," },
    { type: "delay" as const, ms: 150 },
    { type: "text" as const, text: " general" },
    { type: "delay" as const, ms: 150 },
    { type: "text" as const, text: " Kenobi." },
  ],
};
const fullText = "Hello there, general Kenobi.";

describe("watchTurn", () => {
  it("follows a Turn to turn.finished: typed events, no heartbeats, text from deltas equals the final text", async () => {
    h.model.enqueue(slowAnswer);
    const sessionId = await h.createSession();
    const turnId = await h.submit(sessionId, "Greet me");
    const events: TurnWatchEvent[] = [];
    const streamed: string[] = [];
    const turn = await watchTurn(h.api, {
      server,
      sessionId,
      turnId,
      onEvent: (event, held) => {
        events.push(event);
        streamed.push(textOf(held));
      },
    });
    expect(turn).toMatchObject({ id: turnId, phase: "completed", outcome: { kind: "completed", text: fullText } });
    expect(textOf(turn)).toBe(fullText);
    expect(events[0]!.type).toBe("turn.snapshot");
    expect(events.at(-1)!.type).toBe("turn.finished");
    expect(events.some((event) => event.type === "turn.text.delta")).toBe(true);
    expect(events.some((event) => event.type === "turn.reasoning.delta")).toBe(true);
    expect(events.every((event) => (event.type as string) !== "turn.heartbeat")).toBe(true);
    // The held text only ever grows, and reached the whole answer before the end.
    for (let index = 1; index < streamed.length; index++) expect(streamed[index]!.startsWith(streamed[index - 1]!)).toBe(true);
    const reasoning = turn.parts.find((part) => part.type === "reasoning");
    expect(reasoning).toMatchObject({ text: "Think first." });
    // The resolved Turn is the authoritative one.
    expect(turn).toEqual((await h.finish(sessionId, turnId)).turn);
  });

  it("a body cut mid-stream resumes after the last revision (query + Last-Event-ID) and still completes the text", async () => {
    h.model.enqueue(slowAnswer);
    const sessionId = await h.createSession();
    const turnId = await h.submit(sessionId, "Greet me");
    const { client, requests } = tamperedClient((_request, response, index) => (index === 0 ? cutAfter(response, 4) : response));
    const reconnects: Reconnecting[] = [];
    const events: TurnWatchEvent[] = [];
    let held: Turn | undefined;
    const turn = await watchTurn(client, {
      server,
      sessionId,
      turnId,
      retryDelayMs: 10,
      onReconnecting: (info) => reconnects.push(info),
      onEvent: (event, current) => {
        events.push(event);
        held = current;
      },
    });
    expect(reconnects).toHaveLength(1);
    expect(reconnects[0]!.error).toBeInstanceOf(ZeClientError);
    expect(reconnects[0]!.error.body._tag).toBe("TransportError");
    expect(requests).toHaveLength(2);
    const resumed = requests[1]!;
    const afterRevision = new URL(resumed.url).searchParams.get("afterRevision");
    expect(afterRevision).toMatch(/^\d+$/);
    expect(resumed.headers.get("last-event-id")).toBe(afterRevision);
    // The cursor is the last durable revision seen before the cut.
    const beforeCut = events.slice(0, 4).filter((event) => !event.type.endsWith(".delta"));
    expect(Number(afterRevision)).toBe(Math.max(...beforeCut.map((event) => event.revision)));
    expect(turn.outcome).toEqual({ kind: "completed", turnId, text: fullText });
    expect(textOf(turn)).toBe(fullText);
    expect(textOf(held!)).toBe(fullText);
    expect(events.filter((event) => event.type === "turn.finished")).toHaveLength(1);
  });

  it("a 503 is retried with backoff; a 404 is final (ZeClientError with the encoded body)", async () => {
    h.model.enqueue({ events: [{ type: "text", text: "Fine." }] });
    const sessionId = await h.createSession();
    const turnId = await h.submit(sessionId, "Hi");
    const { client, requests } = tamperedClient(async (_request, response, index) => {
      if (index > 0) return response;
      await response.body?.cancel();
      return Response.json({ _tag: "ServiceUnavailable", message: "try later" }, { status: 503 });
    });
    const reconnects: Reconnecting[] = [];
    const turn = await watchTurn(client, { server, sessionId, turnId, retryDelayMs: 10, onReconnecting: (info) => reconnects.push(info) });
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "Fine." });
    expect(requests).toHaveLength(2);
    expect(reconnects.map((info) => [info.error.status, info.error.body._tag, info.delayMs, info.attempt])).toEqual([[503, "ServiceUnavailable", 10, 1]]);

    const missing = "00000000-0000-4000-8000-000000000000";
    const failure = await watchTurn(client, { server, sessionId, turnId: missing, retryDelayMs: 10 }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ZeClientError);
    expect((failure as ZeClientError).status).toBe(404);
    expect((failure as ZeClientError).body._tag).toBe("NotFoundError");
    expect(requests).toHaveLength(3); // not retried
  });

  it("a connection that stays silent past the idle timeout is treated as lost and reopened", async () => {
    h.model.enqueue({ events: [{ type: "text", text: "Eventually." }] });
    const sessionId = await h.createSession();
    const turnId = await h.submit(sessionId, "Hi");
    const { client, requests } = tamperedClient(async (request, response, index) => {
      if (index > 0) return response;
      await response.body?.cancel();
      // Headers, then nothing at all until the client gives up on it.
      const body = new ReadableStream<Uint8Array>({ start: (controller) => request.signal.addEventListener("abort", () => controller.close()) });
      return new Response(body, { headers: { "content-type": "text/event-stream" } });
    });
    const reconnects: Reconnecting[] = [];
    const turn = await watchTurn(client, { server, sessionId, turnId, idleTimeoutMs: 300, retryDelayMs: 10, onReconnecting: (info) => reconnects.push(info) });
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "Eventually." });
    expect(requests).toHaveLength(2);
    expect(reconnects[0]!.error.message).toMatch(/No event for 300 ms/);
  });

  it("an event that breaks the contract is a protocol failure, not retried", async () => {
    h.model.enqueue({ events: [{ type: "text", text: "ok" }] });
    const sessionId = await h.createSession();
    const turnId = await h.submit(sessionId, "Hi");
    const { client, requests } = tamperedClient(async (_request, response) => {
      await response.body?.cancel();
      return new Response('event: turn.snapshot\nid: 1\ndata: {"type":"turn.snapshot","revision":1}\n\n', { headers: { "content-type": "text/event-stream" } });
    });
    const failure = await watchTurn(client, { server, sessionId, turnId, retryDelayMs: 10 }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ZeClientError);
    expect((failure as ZeClientError).body._tag).toBe("InvalidResponse");
    expect(requests).toHaveLength(1);
    await h.finish(sessionId, turnId);
  });

  it("rejects with the abort reason when the signal aborts", async () => {
    h.model.enqueue({ hang: true });
    const sessionId = await h.createSession();
    const turnId = await h.submit(sessionId, "Hi");
    const controller = new AbortController();
    const watching = watchTurn(h.api, { server, sessionId, turnId, signal: controller.signal, onEvent: (event) => event.type === "turn.snapshot" && controller.abort() });
    await expect(watching).rejects.toMatchObject({ name: "AbortError" });
    // Settle the hanging Turn before the harness closes.
    await unwrap(sdk.cancelTurn({ client: h.api.client, path: { server, sessionId, turnId }, body: {} }));
    expect((await h.finish(sessionId, turnId)).turn.phase).toBe("cancelled");
  });
});

describe("watchSession", () => {
  it("resumes after a cut from the last activity cursor with reconnecting/resumed lifecycle events", async () => {
    const sessionId = await h.createSession();
    const { client, requests } = tamperedClient((_request, response, index) => (index === 0 ? cutAfter(response, 3) : response));
    const events: SessionStreamEvent[] = [];
    const lifecycle: SessionWatchLifecycle[] = [];
    const controller = new AbortController();
    h.model.enqueue(slowAnswer);
    const turnId = await h.submit(sessionId, "Greet me");
    let finished!: () => void;
    const done = new Promise<void>((resolve) => (finished = resolve));
    const watching = watchSession(client, {
      server,
      sessionId,
      afterActivityCursor: 0,
      signal: controller.signal,
      retryDelayMs: 10,
      onLifecycle: (event) => lifecycle.push(event),
      onEvent: (event) => {
        events.push(event);
        if (event.type === "session.turn.finished") finished();
      },
    });
    await done;
    controller.abort();
    await watching; // resolves on abort
    expect(lifecycle.map((event) => event.type)).toEqual(["session.reconnecting", "session.resumed"]);
    const resumed = requests[1]!;
    const after = new URL(resumed.url).searchParams.get("afterActivityCursor");
    expect(resumed.headers.get("last-event-id")).toBe(after);
    expect(Number(after)).toBeGreaterThan(0);
    // Durable events are never delivered twice across the resume.
    const durable = events.filter((event) => event.type !== "session.cursor" && !event.type.endsWith(".delta"));
    const keys = durable.map((event) => `${event.type}@${(event as { activityCursor: number }).activityCursor}`);
    expect(new Set(keys).size).toBe(keys.length);
    const finish = events.find((event) => event.type === "session.turn.finished");
    expect(finish).toMatchObject({ turnId, outcome: { kind: "completed", text: fullText } });
  });
});

describe("watchServer", () => {
  it("starts live with server.ready at the announced cursor, then resumes after its last cursor", async () => {
    const { client, requests } = tamperedClient((_request, response, index) => (index === 0 ? cutAfter(response, 2) : response));
    const events: ServerWatchEvent[] = [];
    const lifecycle: ServerWatchLifecycle[] = [];
    let beforeReconnect: ServerWatchEvent[] = [];
    const controller = new AbortController();
    const waiters: { test: () => boolean; resolve: () => void }[] = [];
    const check = (): void => {
      for (const waiter of waiters.filter((candidate) => candidate.test())) waiter.resolve();
    };
    const until = (test: () => boolean): Promise<void> => (test() ? Promise.resolve() : new Promise((resolve) => waiters.push({ test, resolve })));
    const seen = (test: (event: ServerWatchEvent) => boolean): Promise<void> => until(() => events.some(test));
    const watching = watchServer(client, {
      server,
      signal: controller.signal,
      retryDelayMs: 10,
      onLifecycle: (event) => {
        if (event.type === "server.reconnecting") beforeReconnect = [...events];
        lifecycle.push(event);
        check();
      },
      onEvent: (event) => {
        events.push(event);
        check();
      },
    });
    await seen((event) => event.type === "server.ready");
    expect(events[0]!.type).toBe("server.ready");
    expect(new URL(requests[0]!.url).searchParams.has("afterServerCursor")).toBe(false);
    const first = await h.createSession();
    await seen((event) => event.type === "session.created" && event.session.id === first);
    // The second message cut the first connection; the second Session arrives on the resumed one.
    await until(() => lifecycle.some((event) => event.type === "server.resumed"));
    const second = await h.createSession();
    await seen((event) => event.type === "session.created" && event.session.id === second);
    controller.abort();
    await watching;
    expect(lifecycle.map((event) => event.type)).toEqual(["server.reconnecting", "server.resumed"]);
    const last = beforeReconnect.at(-1) as { serverCursor: number };
    expect(beforeReconnect.some((event) => event.type === "session.created" && event.session.id === first)).toBe(true);
    const resumed = requests[1]!;
    expect(new URL(resumed.url).searchParams.get("afterServerCursor")).toBe(String(last.serverCursor));
    expect(resumed.headers.get("last-event-id")).toBe(String(last.serverCursor));
    expect(events.filter((event) => event.type === "server.ready")).toHaveLength(1);
  });
});
