// The Fetch handler is total: whatever throws — a document loader, a handler on HEAD, an event
// stream after its 200 — becomes the contract's 500 (or a cut stream) AND reaches
// onUnexpectedError with the operation, so a 500 always has its ERROR line; on the daemon that
// line is a logfmt entry GET /v1/logs can read. Also: the router serves a path only as written
// (`//v1//health` is not `/v1/health`).
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Handlers, RouteDefinition, SseMessage } from "../../generated/server/routes.js";
import { openDaemonLog } from "../../services/daemon/log.js";
import { createFetchHandler, type RequestContext } from "../../services/http/handler.js";
import { startHarness, tempHome, type TestHarness } from "../support/harness.js";

const base = "http://localhost";

interface Reported {
  readonly error: unknown;
  readonly operationId: string | undefined;
}

function handlerWith(handlers: Partial<Handlers<RequestContext>>, openapi: () => string = () => "{}") {
  const reported: Reported[] = [];
  const fetch = createFetchHandler({
    handlers: handlers as Handlers<RequestContext>,
    release: "9.9.9",
    servers: () => true,
    openapi,
    onUnexpectedError: (error: unknown, route: RouteDefinition | undefined) => reported.push({ error, operationId: route?.operationId }),
  });
  return { fetch, reported };
}

async function expect500(response: Response): Promise<void> {
  expect(response.status).toBe(500);
  expect(response.headers.get("ze-harness-version")).toBe("2/9.9.9");
  expect(await response.json()).toEqual({ _tag: "InternalServerError", message: "The server failed to handle the request" });
}

describe("every unexpected error is a reported 500", () => {
  it("a failure outside any operation (the OpenAPI loader) is a 500, not a rejected fetch", async () => {
    const { fetch, reported } = handlerWith({}, () => {
      throw new Error("document unreadable");
    });
    await expect500(await fetch(new Request(`${base}/openapi.json`)));
    expect(reported.map((entry) => [entry.operationId, String(entry.error)])).toEqual([[undefined, "Error: document unreadable"]]);
  });

  it("a handler failing on HEAD answers the GET's 500 without a body and names the operation", async () => {
    const { fetch, reported } = handlerWith({
      health: async () => {
        throw new RangeError("Maximum call stack size exceeded");
      },
    });
    const response = await fetch(new Request(`${base}/v1/health`, { method: "HEAD" }));
    expect(response.status).toBe(500);
    expect(response.body).toBeNull();
    expect(reported.map((entry) => entry.operationId)).toEqual(["health"]);
  });

  it("a callback that throws itself still lets the 500 out", async () => {
    const fetch = createFetchHandler({
      handlers: { health: async () => Promise.reject(new Error("x")) } as unknown as Handlers<RequestContext>,
      release: "9.9.9",
      servers: () => true,
      openapi: () => "{}",
      onUnexpectedError: () => {
        throw new Error("the logger failed");
      },
    });
    await expect500(await fetch(new Request(`${base}/v1/health`)));
  });

  it("an event stream failing after its 200 is reported with its operation; the stream is cut", async () => {
    const stream: AsyncIterable<SseMessage<unknown>> = {
      async *[Symbol.asyncIterator]() {
        yield { event: "server.ready", data: { type: "server.ready" } };
        throw new Error("cursor table gone");
      },
    };
    const { fetch, reported } = handlerWith({ watchServer: async () => ({ status: 200, stream }) } as unknown as Partial<Handlers<RequestContext>>);
    const response = await fetch(new Request(`${base}/v1/servers/local/events`));
    expect(response.status).toBe(200);
    await expect(response.text()).rejects.toThrow();
    expect(reported.map((entry) => [entry.operationId, String(entry.error)])).toEqual([["watchServer", "Error: cursor table gone"]]);
  });
});

describe("a stream cancelled by its client", () => {
  it("is not an error when the awaited message arrives (or the iterator ends) after the cancel", async () => {
    let release: ((result: IteratorResult<SseMessage<unknown>>) => void) | undefined;
    let pulled!: () => void;
    const pulling = new Promise<void>((resolvePulling) => (pulled = resolvePulling));
    const stream: AsyncIterable<SseMessage<unknown>> = {
      [Symbol.asyncIterator]: () => ({
        next: () =>
          new Promise<IteratorResult<SseMessage<unknown>>>((resolveNext) => {
            release = resolveNext;
            pulled();
          }),
        // Like the pumped streams: return() settles the pending next() as done.
        return: async () => {
          release?.({ done: true, value: undefined });
          return { done: true, value: undefined };
        },
      }),
    };
    const { fetch, reported } = handlerWith({ watchServer: async () => ({ status: 200, stream }) } as unknown as Partial<Handlers<RequestContext>>);
    const response = await fetch(new Request(`${base}/v1/servers/local/events`));
    const reader = response.body!.getReader();
    const read = reader.read();
    await pulling;
    await reader.cancel();
    expect(await read).toEqual({ done: true, value: undefined });
    expect(reported).toEqual([]);
  });
});

describe("the daemon's ERROR line", () => {
  let harness: TestHarness | undefined;
  afterEach(async () => {
    await harness?.close().catch(() => undefined);
    harness = undefined;
  });

  it("a 500 on a host with a daemon log is a request.failed entry GET /v1/logs reads, with the operation", async () => {
    const home = tempHome();
    const log = openDaemonLog(join(home.dir, "daemon.log"));
    harness = await startHarness({ daemonLog: log }, home);
    // A store closed under the host: every read after it is an unexpected failure.
    await harness.harness.storage.close();
    const response = await harness.harness.fetch(new Request(`${base}/v1/servers/local/sessions`));
    expect(response.status).toBe(500);
    const errors = log.read({ level: "error" }).entries;
    expect(errors.map((entry) => [entry.event, entry.fields["operation"]])).toEqual([["request.failed", "listSessions"]]);
    expect(errors[0]!.fields["error"]).not.toBe("");
    log.close();
  });
});

describe("paths are served only as written", () => {
  it.each(["//v1//health", "//v1/health", "/v1//health", "/v1/health/", "/v1/servers/local/sessions/"])("%s is 404 endpoint, not /v1/health's answer", async (path) => {
    const { fetch } = handlerWith({ health: async () => ({ status: 200, body: { status: "ok" } }), listSessions: async () => ({ status: 200, body: { sessions: [] } }) } as unknown as Partial<Handlers<RequestContext>>);
    const response = await fetch(new Request(`${base}${path}`));
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ _tag: "NotFoundError", resource: "endpoint" });
  });
});
