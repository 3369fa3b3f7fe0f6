// The HTTP edge over a real listener (services/host/listen.ts on loopback): requests too large
// for the handler's limits or for Node's parser, malformed requests, and HEAD. Raw sockets send
// what fetch cannot (oversized or broken requests); every answer must be a complete response
// with the contract's JSON error body and the version header, never an empty body or a reset.
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { connect } from "node:net";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { listen, NODE_MAX_HEADER_BYTES, type Listener } from "../../services/host/listen.js";
import { MAX_REQUEST_HEADER_BYTES, MAX_REQUEST_TARGET_BYTES } from "../../services/http/request.js";
import { HARNESS_PROTOCOL_VERSION } from "../../services/contract/protocol.js";
import { repoRoot, startHarness, type TestHarness } from "../support/harness.js";

const packageVersion = (JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { version: string }).version;
const version = `${HARNESS_PROTOCOL_VERSION}/${packageVersion}`;
const sessionsPath = "/v1/servers/local/sessions";

let t: TestHarness;
let server: Listener;
beforeEach(async () => {
  t = await startHarness();
  server = await listen(t.harness.fetch, { port: 0, hostname: "127.0.0.1" });
});
afterEach(async () => {
  await server.close();
  await t.close();
});

interface RawAnswer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** Writes `text` on a fresh connection and parses everything the server sends until it closes. */
function raw(text: string): Promise<RawAnswer> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolvePromise, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", reject);
    // "close" too: a connection dropped without a FIN must fail the test, not hang it.
    socket.on("close", () => {
      const answer = Buffer.concat(chunks).toString("latin1");
      const split = answer.indexOf("\r\n\r\n");
      if (split === -1) return reject(new Error(`no complete response head: ${JSON.stringify(answer.slice(0, 200))}`));
      if (!/\r\ncontent-length: /i.test(answer.slice(0, split + 2))) return reject(new Error(`no Content-Length: ${JSON.stringify(answer.slice(0, 200))}`));
      const [statusLine, ...lines] = answer.slice(0, split).split("\r\n");
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(":");
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      const body = answer.slice(split + 4);
      if (body.length !== Number(headers["content-length"])) return reject(new Error(`a truncated body: ${JSON.stringify(body.slice(0, 200))}`));
      resolvePromise({ status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(statusLine ?? "")?.[1]), headers, body });
    });
    socket.end(text);
  });
}

const host = (): string => new URL(server.url).host;
/** A GET with `extra` header lines; Connection: close makes the server end the socket after answering. */
const get = (target: string, extra: readonly string[] = []): string =>
  [`GET ${target} HTTP/1.1`, `Host: ${host()}`, "Connection: close", ...extra, "", ""].join("\r\n");
/** Header lines of filler adding up to `bytes` of header section (each line counted with its CRLF). */
const filler = (bytes: number): string[] => {
  const lines: string[] = [];
  for (let index = 0; bytes > 0; index++) {
    const name = `X-Filler-${index}: `;
    const size = Math.min(bytes, 4096);
    lines.push(name + "a".repeat(Math.max(0, size - name.length - 2)));
    bytes -= size;
  }
  return lines;
};

function expectJsonError(answer: RawAnswer, status: number, message: RegExp): void {
  expect({ status: answer.status, type: answer.headers["content-type"] }).toEqual({ status, type: expect.stringMatching(/^application\/json/) });
  expect(JSON.parse(answer.body)).toEqual({ _tag: "ValidationError", message: expect.stringMatching(message) });
  expect(answer.headers["ze-harness-version"]).toBe(version);
}

describe("request headers and target over the limits", () => {
  it("exports the limits it enforces", () => {
    expect(MAX_REQUEST_HEADER_BYTES).toBe(16384);
    expect(MAX_REQUEST_TARGET_BYTES).toBe(8192);
    expect(NODE_MAX_HEADER_BYTES).toBeGreaterThan(128 * 1024);
  });

  it("64 KiB of headers is 431 ValidationError naming the 16384-byte limit", async () => {
    const answer = await raw(get("/v1/health", filler(64 * 1024)));
    expectJsonError(answer, 431, /^Request headers exceed the 16384-byte limit$/);
  });

  it("headers just over 16 KiB are 431; just under are served", async () => {
    expectJsonError(await raw(get("/v1/health", filler(MAX_REQUEST_HEADER_BYTES + 64))), 431, /16384-byte limit/);
    const under = await raw(get("/v1/health", filler(MAX_REQUEST_HEADER_BYTES - 1024)));
    expect({ status: under.status, body: JSON.parse(under.body) }).toEqual({ status: 200, body: { status: "ok" } });
  });

  it("a 100 KiB path is 414 ValidationError naming the 8192-byte limit", async () => {
    const answer = await raw(get(`/v1/${"p".repeat(100 * 1024)}`));
    expectJsonError(answer, 414, /^The request path and query exceed the 8192-byte limit$/);
  });

  it("a query pushing the target just past 8 KiB is 414 too", async () => {
    const target = `${sessionsPath}?q=${"q".repeat(MAX_REQUEST_TARGET_BYTES)}`;
    expectJsonError(await raw(get(target)), 414, /8192-byte limit/);
  });

  it("headers beyond what Node's parser takes are 431 JSON with Connection: close, not a reset", async () => {
    const answer = await raw(get("/v1/health", filler(NODE_MAX_HEADER_BYTES + 512 * 1024)));
    expectJsonError(answer, 431, /^Request headers exceed the 16384-byte limit$/);
    expect(answer.headers["connection"]).toBe("close");
    // The listener keeps serving afterwards.
    expect((await raw(get("/v1/health"))).status).toBe(200);
  });

  it("the same refusal reaches a node:http client as a readable answer", async () => {
    const { hostname, port } = new URL(server.url);
    const answer = await new Promise<{ status: number; version: unknown; body: string }>((resolvePromise, reject) => {
      const outgoing = httpRequest({ hostname, port, path: "/v1/health", headers: { "x-big": "b".repeat(NODE_MAX_HEADER_BYTES * 2) } }, (response) => {
        let body = "";
        response.on("data", (chunk: Buffer) => (body += chunk.toString()));
        response.on("end", () => resolvePromise({ status: response.statusCode ?? 0, version: response.headers["ze-harness-version"], body }));
      });
      outgoing.on("error", reject);
      outgoing.end();
    });
    expect(answer).toEqual({ status: 431, version, body: JSON.stringify({ _tag: "ValidationError", message: "Request headers exceed the 16384-byte limit" }) });
  });

  it("a request that is not HTTP is 400 JSON", async () => {
    expectJsonError(await raw("NOT HTTP AT ALL\r\n\r\n"), 400, /not valid HTTP\/1\.1/);
  });

  it("a Host header no URL can be built from is 400 JSON", async () => {
    const answer = await raw(["GET /v1/health HTTP/1.1", "Host: exa mple", "Connection: close", "", ""].join("\r\n"));
    expectJsonError(answer, 400, /Host header is not valid/);
  });
});

describe("HEAD", () => {
  /** Headers that differ between any two responses, or by transfer framing only. */
  const comparable = (response: Response): Record<string, string> =>
    Object.fromEntries([...response.headers].filter(([name]) => !["date", "connection", "keep-alive", "transfer-encoding"].includes(name)));

  it.each([
    ["/v1/health"],
    [sessionsPath],
    [`${sessionsPath}/${randomUUID()}`],
    ["/openapi.json"],
    ["/v1/nowhere"],
  ])("HEAD %s answers the GET's status and headers with no body", async (path) => {
    const got = await fetch(`${server.url}${path}`);
    const body = await got.arrayBuffer();
    const head = await fetch(`${server.url}${path}`, { method: "HEAD" });
    expect(head.status).toBe(got.status);
    expect(comparable(head)).toEqual(comparable(got));
    expect(head.headers.get("content-length")).toBe(String(body.byteLength));
    expect(head.headers.get("ze-harness-version")).toBe(version);
    expect((await head.arrayBuffer()).byteLength).toBe(0);
  });

  it("HEAD on an unknown path is the JSON 404 of the GET", async () => {
    const head = await fetch(`${server.url}/v1/nowhere`, { method: "HEAD" });
    expect(head.status).toBe(404);
    expect(head.headers.get("content-type")).toMatch(/^application\/json/);
  });

  it("HEAD on an SSE route answers the stream's headers and ends", async () => {
    const controller = new AbortController();
    const got = await fetch(`${server.url}/v1/servers/local/events`, { signal: controller.signal });
    controller.abort();
    await got.body?.cancel().catch(() => undefined);
    const head = await fetch(`${server.url}/v1/servers/local/events`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(comparable(head)).toEqual(comparable(got));
    expect(head.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(await head.text()).toBe("");
  });

  it("OPTIONS is unchanged: a 204 preflight", async () => {
    const response = await fetch(`${server.url}/v1/health`, { method: "OPTIONS" });
    expect(response.status).toBe(204);
    expect(response.headers.get("access-control-allow-methods")).toContain("GET");
  });
});
