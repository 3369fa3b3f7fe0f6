// The generated client over real network fetch, against MSW request handlers (msw/node):
// createZeClient({ baseUrl }) + the SDK + unwrap, without a Ze Harness server.
import { randomUUID } from "node:crypto";
import { http, HttpResponse } from "msw";
import { setupServer } from "msw/node";
import { ZodError } from "zod";
import { afterAll, afterEach, beforeAll, describe, expect, expectTypeOf, it } from "vitest";
import { createZeClient, sdk, unwrap, ZeClientError, type PromptReceipt, type Session } from "../../clients/index.js";

const baseUrl = "http://ze-harness.test";
const server = setupServer();

beforeAll(() => server.listen({ onUnhandledRequest: "error" }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

const sessionId = randomUUID();
const sessionUrl = `${baseUrl}/v1/servers/local/sessions/${sessionId}`;

const session: Session = {
  id: sessionId,
  workdir: "/work/project",
  projectId: "global",
  configuration: { revision: 1, permissions: [], approval: {} },
  createdAt: 1_700_000_000_000,
  updatedAt: 1_700_000_000_000,
  nextSequence: 1,
  title: "From MSW",
};

/** Every request a handler saw, for header assertions. */
function record(): Request[] {
  const seen: Request[] = [];
  server.events.on("request:start", ({ request }) => void seen.push(request.clone()));
  return seen;
}

afterEach(() => server.events.removeAllListeners());

describe("generated client over fetch (MSW)", () => {
  it("a 200 body is returned, typed", async () => {
    server.use(http.get(sessionUrl, () => HttpResponse.json({ session })));
    const client = createZeClient({ baseUrl });
    const data = await unwrap(sdk.getSession({ client: client.client, path: { server: "local", sessionId } }));
    expectTypeOf(data.session).toEqualTypeOf<Session>();
    expect(data.session).toEqual(session);
  });

  it("a 404 NotFoundError body throws ZeClientError with the status and _tag", async () => {
    const body = { _tag: "NotFoundError", message: `Session ${sessionId} does not exist`, resource: "session" };
    server.use(http.get(sessionUrl, () => HttpResponse.json(body, { status: 404 })));
    const client = createZeClient({ baseUrl });
    const failure = await unwrap(sdk.getSession({ client: client.client, path: { server: "local", sessionId } })).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ZeClientError);
    const error = failure as ZeClientError;
    expect(error.status).toBe(404);
    expect(error.body).toEqual(body);
    expect(error.body._tag).toBe("NotFoundError");
    expect(error.name).toBe("NotFoundError");
    expect(error.message).toBe(body.message);
  });

  it("an error status without an encoded error body is an UnexpectedResponse with that status", async () => {
    server.use(http.get(sessionUrl, () => new HttpResponse("upstream exploded", { status: 502 })));
    const client = createZeClient({ baseUrl });
    const failure = await unwrap(sdk.getSession({ client: client.client, path: { server: "local", sessionId } })).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ZeClientError);
    expect((failure as ZeClientError).status).toBe(502);
    expect((failure as ZeClientError).body._tag).toBe("UnexpectedResponse");
  });

  describe("a 200 whose body violates the schema is rejected by the SDK's zod response validator", () => {
    const invalid = { session: { ...session, workdir: undefined, nextSequence: "one" } };

    it("the SDK call itself rejects with the ZodError", async () => {
      server.use(http.get(sessionUrl, () => HttpResponse.json(invalid)));
      const client = createZeClient({ baseUrl });
      const failure = await sdk.getSession({ client: client.client, path: { server: "local", sessionId } }).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(ZodError);
      const paths = (failure as ZodError).issues.map((issue) => issue.path.join("."));
      expect(paths).toEqual(expect.arrayContaining(["session.workdir", "session.nextSequence"]));
    });

    it("unwrap turns it into a ZeClientError, never data", async () => {
      server.use(http.get(sessionUrl, () => HttpResponse.json(invalid)));
      const client = createZeClient({ baseUrl });
      const failure = await unwrap(sdk.getSession({ client: client.client, path: { server: "local", sessionId } })).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(ZeClientError);
      expect((failure as ZeClientError).message).toContain("workdir");
    });

    it("validateResponses: false (a same-release local daemon) returns the body as sent, unchecked", async () => {
      server.use(http.get(sessionUrl, () => HttpResponse.json(invalid)));
      const client = createZeClient({ baseUrl, validateResponses: false });
      const data = await unwrap(sdk.getSession({ client: client.client, path: { server: "local", sessionId } }));
      expect(data).toEqual(JSON.parse(JSON.stringify(invalid)));
    });

    it("validateResponses: true is the default, and keeps the check", async () => {
      server.use(http.get(sessionUrl, () => HttpResponse.json(invalid)));
      const client = createZeClient({ baseUrl, validateResponses: true });
      const failure = await sdk.getSession({ client: client.client, path: { server: "local", sessionId } }).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(ZodError);
    });

    it("an SSE event that breaks the contract: an error with validation, passed through without", async () => {
      const turnId = randomUUID();
      const event = { type: "turn.snapshot", revision: 1 };
      server.use(http.get(`${sessionUrl}/turns/${turnId}/events`, () => new HttpResponse(`event: turn.snapshot\nid: 1\ndata: ${JSON.stringify(event)}\n\n`, { headers: { "content-type": "text/event-stream" } })));
      const read = async (validateResponses: boolean): Promise<{ events: unknown[]; errors: unknown[] }> => {
        const client = createZeClient({ baseUrl, validateResponses });
        const errors: unknown[] = [];
        const events: unknown[] = [];
        const { stream } = await sdk.watchTurn({ client: client.client, path: { server: "local", sessionId, turnId }, sseMaxRetryAttempts: 1, onSseError: (error) => errors.push(error) });
        for await (const item of stream) events.push(item);
        return { events, errors };
      };
      const checked = await read(true);
      expect(checked.events).toEqual([]);
      expect(checked.errors[0]).toBeInstanceOf(ZodError);
      const unchecked = await read(false);
      expect(unchecked.events).toEqual([event]);
      expect(unchecked.errors).toEqual([]);
    });
  });

  it("the bearer token is sent as `Authorization: Bearer …`; without a token, no Authorization header", async () => {
    server.use(http.get(sessionUrl, () => HttpResponse.json({ session })));
    const seen = record();
    await unwrap(sdk.getSession({ client: createZeClient({ baseUrl, token: "s3cret-token" }).client, path: { server: "local", sessionId } }));
    await unwrap(sdk.getSession({ client: createZeClient({ baseUrl }).client, path: { server: "local", sessionId } }));
    expect(seen.map((request) => request.headers.get("authorization"))).toEqual(["Bearer s3cret-token", null]);
  });

  it("x-ze-harness-client-id is sent where the operation declares it (submitPrompt), with the JSON body", async () => {
    const turnId = randomUUID();
    const receipt: PromptReceipt = {
      delivery: "queue",
      sessionId,
      turnId,
      modelLeaseId: "lease-1",
      requestOptionsId: randomUUID(),
      sequence: 1,
      acceptedAt: 1_700_000_000_001,
    };
    server.use(http.post(`${sessionUrl}/prompts`, () => HttpResponse.json({ receipt }, { status: 202 })));
    const seen = record();
    const client = createZeClient({ baseUrl, token: "t", clientId: "msw-test-client" });
    const data = await unwrap(
      sdk.submitPrompt({
        client: client.client,
        path: { server: "local", sessionId },
        headers: { "x-ze-harness-client-id": client.clientId },
        body: { delivery: "queue", turnId, prompt: [{ type: "text", text: "hello" }] },
      }),
    );
    expect(data.receipt).toEqual(receipt);
    expect(seen).toHaveLength(1);
    const request = seen[0]!;
    expect(request.method).toBe("POST");
    expect(request.headers.get("x-ze-harness-client-id")).toBe("msw-test-client");
    expect(request.headers.get("authorization")).toBe("Bearer t");
    expect(request.headers.get("content-type")).toBe("application/json");
    expect(await request.json()).toEqual({ delivery: "queue", turnId, prompt: [{ type: "text", text: "hello" }] });
  });

  it("operations that do not declare x-ze-harness-client-id do not send it", async () => {
    server.use(http.get(sessionUrl, () => HttpResponse.json({ session })));
    const seen = record();
    await unwrap(sdk.getSession({ client: createZeClient({ baseUrl, clientId: "msw-test-client" }).client, path: { server: "local", sessionId } }));
    expect(seen[0]!.headers.has("x-ze-harness-client-id")).toBe(false);
  });

  it("the default client id names the CLI and the process", () => {
    expect(createZeClient({ baseUrl }).clientId).toBe(`ze-harness-cli/${process.pid}`);
  });

  it("a network failure throws ZeClientError with status 0", async () => {
    server.use(http.get(sessionUrl, () => HttpResponse.error()));
    const failure = await unwrap(sdk.getSession({ client: createZeClient({ baseUrl }).client, path: { server: "local", sessionId } })).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ZeClientError);
    expect((failure as ZeClientError).status).toBe(0);
  });
});
