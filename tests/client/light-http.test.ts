// services/contract/light-http.ts: the Headers/Request/Response the CLI bundle gives the generated
// client on the warm-daemon path (no undici), and their conversions to undici's classes. The
// generated client is run over them here as the bundle runs it (the globals stubbed with the
// light classes), against a real node:http server through a fetch that takes light requests.
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { randomUUID } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createZeClient, sdk, unwrap, ZeClientError } from "../../clients/index.js";
import { LightHeaders, LightRequest, LightResponse, textReaderOf, toHttpRequest, toWebRequest, toWebResponse, type NodeBody } from "../../services/contract/light-http.js";

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

describe("bodies read straight from node:http (no web streams until `body` is asked for)", () => {
  /** A NodeBody over fixed chunks; toWeb fails the test (the light path must not need it). */
  const nodeBody = (chunks: Uint8Array[], onCancel = () => {}): NodeBody & { webAsked: boolean } => {
    const body = {
      webAsked: false,
      chunks: () => (async function* () {
        for (const chunk of chunks) yield chunk;
      })(),
      toWeb: () => {
        body.webAsked = true;
        return new ReadableStream<Uint8Array>({ start: (c) => (chunks.forEach((chunk) => c.enqueue(chunk)), c.close()) });
      },
      cancel: onCancel,
    };
    return body;
  };
  const bytes = (text: string) => new TextEncoder().encode(text);

  it("text/json and the SSE reader take the chunks as they are; a character split across chunks is decoded whole", async () => {
    const euro = bytes("€");
    const json = nodeBody([bytes('{"v":"'), euro.slice(0, 1), euro.slice(1), bytes('"}')]);
    expect(await new LightResponse(json, { status: 200 }).json()).toEqual({ v: "€" });
    expect(json.webAsked).toBe(false);
    const sse = nodeBody([bytes("data: 1\n\n"), euro.slice(0, 2), euro.slice(2), bytes("\n\n")]);
    const response = new LightResponse(sse, { status: 200 });
    const reader = textReaderOf(response);
    const texts: string[] = [];
    for (let next = await reader.read(); !next.done; next = await reader.read()) texts.push(next.value);
    expect(texts.join("")).toBe("data: 1\n\n€\n\n");
    expect(texts).not.toContain("\uFFFD");
    expect(sse.webAsked).toBe(false);
    expect(response.bodyUsed).toBe(true);
    await expect(response.text()).rejects.toThrow(TypeError);
  });

  it("`body` turns the node body into a web stream once; a response without a body fails the SSE reader as the generated loop did", async () => {
    const source = nodeBody([bytes("x")]);
    const response = new LightResponse(source, { status: 200 });
    const body = response.body;
    expect(body).toBeInstanceOf(ReadableStream);
    expect(response.body).toBe(body);
    expect(source.webAsked).toBe(true);
    expect(await response.text()).toBe("x");
    expect(() => textReaderOf(new LightResponse(null, { status: 200 }))).toThrow("No body in SSE response");
  });

  it("cancel() ends a pending read as done and closes the body", async () => {
    let cancelled = 0;
    let release!: () => void;
    const pending = new Promise<void>((resolve) => (release = resolve));
    const source: NodeBody = {
      chunks: () => (async function* () {
        await pending;
        throw new Error("the connection was closed");
      })(),
      toWeb: () => {
        throw new Error("not expected");
      },
      cancel: () => {
        cancelled += 1;
        release();
      },
    };
    const reader = textReaderOf(new LightResponse(source, { status: 200 }));
    const read = reader.read();
    await reader.cancel();
    expect(await read).toEqual({ done: true });
    expect(await reader.read()).toEqual({ done: true });
    expect(cancelled).toBe(1);
  });

  it("over verifiedFetch: a whole body reads, an abort mid-body is an AbortError, a connection cut mid-body is `terminated`", async () => {
    const { verifiedFetch } = await import("../../services/daemon/transport.js");
    const server = createServer((request, response) => {
      response.writeHead(200, { "content-type": "text/plain" });
      if (request.url === "/whole") return void response.end("whole body");
      response.write("part");
      if (request.url === "/cut") setImmediate(() => response.socket?.destroy());
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const send = (path: string, signal = new AbortController().signal) => verifiedFetch({ url: `${base}${path}`, method: "GET", headers: {}, body: null, signal });
    try {
      expect(await (await send("/whole")).text()).toBe("whole body");
      const controller = new AbortController();
      const open = await send("/open", controller.signal);
      const reader = textReaderOf(open);
      expect(await reader.read()).toEqual({ done: false, value: "part" });
      const next = reader.read();
      controller.abort();
      await expect(next).rejects.toMatchObject({ name: "AbortError" });
      const cut = textReaderOf(await send("/cut"));
      expect(await cut.read()).toEqual({ done: false, value: "part" });
      await expect(cut.read()).rejects.toThrow("terminated");
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
