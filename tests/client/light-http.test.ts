// services/contract/light-http.ts: the Headers/Request/Response the CLI bundle gives the generated
// client on the warm-daemon path (no undici), and their conversions to undici's classes. The
// generated client is run over them here as the bundle runs it (the globals stubbed with the
// light classes), against a real node:http server through a fetch that takes light requests.
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { randomUUID } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createZeClient, sdk, unwrap, ZeClientError } from "../../clients/index.js";
import { LightHeaders, LightRequest, LightResponse, toHttpRequest, toWebRequest, toWebResponse } from "../../services/contract/light-http.js";

describe("light classes", () => {
  it("LightHeaders: case-insensitive, appended values joined, sorted iteration, Headers-shaped objects count as instances", () => {
    const headers = new LightHeaders({ "Content-Type": "application/json", Accept: ["a", "b"] });
    headers.append("accept", "c");
    headers.set("X-Id", " 7 ");
    expect(headers.get("content-type")).toBe("application/json");
    expect(headers.get("ACCEPT")).toBe("a, b, c");
    expect(headers.get("x-id")).toBe("7");
    headers.delete("Content-Type");
    expect(headers.has("content-type")).toBe(false);
    expect([...headers]).toEqual([["accept", "a, b, c"], ["x-id", "7"]]);
    expect(new Headers() instanceof LightHeaders).toBe(true);
    expect({} instanceof LightHeaders).toBe(false);
    expect(new LightHeaders(new Headers([["a", "1"]])).get("a")).toBe("1");
  });

  it("LightRequest → HttpRequest and → undici's Request keep url, method, headers, body and signal", async () => {
    const controller = new AbortController();
    const request = new LightRequest("http://127.0.0.1:9/v1/x?y=1", { method: "post", headers: { "content-type": "application/json" }, body: '{"a":1}', signal: controller.signal });
    const plain = await toHttpRequest(request);
    expect(plain).toMatchObject({ url: "http://127.0.0.1:9/v1/x?y=1", method: "POST", headers: { "content-type": "application/json" }, signal: controller.signal });
    expect(Buffer.from(plain.body!).toString()).toBe('{"a":1}');
    const web = toWebRequest(request);
    expect(web).toBeInstanceOf(Request);
    expect([web.url, web.method, web.headers.get("content-type"), await web.text()]).toEqual(["http://127.0.0.1:9/v1/x?y=1", "POST", "application/json", '{"a":1}']);
    const real = new Request("http://h/", { method: "PUT", body: "b" });
    expect(toWebRequest(real)).toBe(real);
    expect(Buffer.from((await toHttpRequest(real)).body!).toString()).toBe("b");
  });

  it("LightResponse: ok, text/json once, clone reads the same body, toWebResponse is undici's", async () => {
    const body = (text: string) => new ReadableStream<Uint8Array>({ start: (c) => (c.enqueue(new TextEncoder().encode(text)), c.close()) });
    const response = new LightResponse(body('{"v":1}'), { status: 201, headers: { "content-type": ["application/json"] } });
    expect([response.ok, response.status, response.headers.get("Content-Type")]).toEqual([true, 201, "application/json"]);
    const copy = response.clone();
    expect(await response.json()).toEqual({ v: 1 });
    expect(await copy.text()).toBe('{"v":1}');
    await expect(response.text()).rejects.toThrow(TypeError);
    expect(new LightResponse(null, { status: 404 }).ok).toBe(false);
    const web = toWebResponse(new LightResponse(body("x"), { status: 418, statusText: "teapot", headers: { a: "1" } }));
    expect(web).toBeInstanceOf(Response);
    expect([web.status, web.statusText, web.headers.get("a"), await web.text()]).toEqual([418, "teapot", "1", "x"]);
  });
});

describe("the generated client over the light classes (as in the CLI bundle)", () => {
  let server: Server;
  let baseUrl: string;
  const seen: { method: string; url: string; headers: IncomingMessage["headers"]; body: string }[] = [];
  const sessionId = randomUUID();

  beforeAll(async () => {
    server = createServer((request, response) => {
      let body = "";
      request.setEncoding("utf8").on("data", (chunk) => (body += chunk));
      request.on("end", () => {
        seen.push({ method: request.method!, url: request.url!, headers: request.headers, body });
        if (request.url!.endsWith("/events")) {
          response.writeHead(200, { "content-type": "text/event-stream" });
          response.end(`event: turn.heartbeat\ndata: ${JSON.stringify({ type: "turn.heartbeat", revision: 3 })}\n\n`);
        } else if (request.method === "DELETE") {
          response.writeHead(404, { "content-type": "application/json" });
          response.end(JSON.stringify({ _tag: "NotFoundError", message: "no such Session", resource: "session" }));
        } else {
          response.writeHead(200, { "content-type": "application/json" });
          response.end(JSON.stringify({ sessions: [], echo: body }));
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  afterEach(() => {
    vi.unstubAllGlobals();
    seen.length = 0;
  });

  /** A fetch taking light requests: node:http, answering light responses, recording what it was given. */
  const given: unknown[] = [];
  const lightFetch = async (request: Request): Promise<Response> => {
    given.push(request);
    const plain = await toHttpRequest(request);
    const { verifiedFetch } = await import("../../services/daemon/transport.js");
    return (await verifiedFetch(plain)) as unknown as Response;
  };

  it("requests, SSE and refusals go through light requests and responses; the caller sees the same data and errors", async () => {
    vi.stubGlobal("Headers", LightHeaders);
    vi.stubGlobal("Request", LightRequest);
    const client = createZeClient({ baseUrl, fetch: lightFetch, lightRequests: true, validateResponses: false });
    const listed = await unwrap(sdk.listSessions({ client: client.client, path: { server: "local" } }));
    expect(listed).toMatchObject({ sessions: [] });
    const refused = await unwrap(sdk.deleteSession({ client: client.client, path: { server: "local", sessionId }, body: { reason: "test" } })).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ZeClientError);
    expect((refused as ZeClientError).status).toBe(404);
    expect((refused as ZeClientError).body._tag).toBe("NotFoundError");
    const { stream } = await sdk.watchTurn({ client: client.client, path: { server: "local", sessionId, turnId: randomUUID() }, sseMaxRetryAttempts: 1 });
    const events: unknown[] = [];
    for await (const event of stream) events.push(event);
    expect(events).toEqual([{ type: "turn.heartbeat", revision: 3 }]);
    expect(given.length).toBe(3);
    expect(given.every((request) => request instanceof LightRequest)).toBe(true);
    expect(seen.map((request) => request.method)).toEqual(["GET", "DELETE", "GET"]);
    expect(JSON.parse(seen[1]!.body)).toEqual({ reason: "test" });
    expect(seen[1]!.headers["content-type"]).toBe("application/json");
  });

  it("a fetch that does not take light requests gets undici's Request rebuilt from the light one", async () => {
    const received: unknown[] = [];
    const client = createZeClient({
      baseUrl,
      fetch: async (request) => {
        received.push(request);
        return new Response("{}", { headers: { "content-type": "application/json" } });
      },
    });
    const wrapper = client.client.getConfig().fetch!;
    await wrapper(new LightRequest(`${baseUrl}/v1/x`, { method: "POST", headers: { "x-a": "1" }, body: "hi" }) as unknown as Request);
    expect(received[0]).toBeInstanceOf(Request);
    const request = received[0] as Request;
    expect([request.url, request.method, request.headers.get("x-a"), await request.text()]).toEqual([`${baseUrl}/v1/x`, "POST", "1", "hi"]);
  });
});
