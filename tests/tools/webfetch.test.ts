import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_WEB_FETCH_RESPONSE_BYTES, ToolFailure, validateToolInput, webfetchTool, type ToolFailureCode } from "../../services/tools/index.js";
import { call, context, text } from "./helpers.js";

let server: Server;
let base: string;
/** Resolvers waiting for a request to a path to arrive. */
const arrivals = new Map<string, () => void>();
const arrived = (path: string) => new Promise<void>((resolve) => arrivals.set(path, resolve));

function route(req: IncomingMessage, res: ServerResponse): void {
  const path = new URL(req.url ?? "/", "http://x").pathname;
  arrivals.get(path)?.();
  switch (path) {
    case "/text":
      res.writeHead(200, { "content-type": "text/plain; charset=utf-8" }).end("hello, world");
      return;
    case "/accept":
      res.writeHead(200, { "content-type": "text/plain" }).end(req.headers.accept ?? "");
      return;
    case "/markdown":
      res.writeHead(200, { "content-type": "text/markdown" }).end("# Title\n\n*body*");
      return;
    case "/html":
      res.writeHead(200, { "content-type": "text/html" }).end("<h1>Title</h1>");
      return;
    case "/json":
      res.writeHead(200, { "content-type": "application/vnd.api+json" }).end('{"a":1}');
      return;
    case "/untyped":
      res.end("no type");
      return;
    case "/missing":
      res.writeHead(404, { "content-type": "text/plain" }).end("not here");
      return;
    case "/redirect":
      res.writeHead(302, { location: "/text" }).end();
      return;
    case "/image":
      res.writeHead(200, { "content-type": "image/png" }).end(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
      return;
    case "/bad-utf8":
      res.writeHead(200, { "content-type": "text/plain" }).end(Buffer.from([0x61, 0xff, 0xfe]));
      return;
    case "/declared-too-large":
      // Declares more than the cap and sends only a little: the client must give up on the header alone.
      res.writeHead(200, { "content-type": "text/plain", "content-length": String(MAX_WEB_FETCH_RESPONSE_BYTES + 1) });
      res.write("x");
      return;
    case "/streamed-too-large": {
      res.writeHead(200, { "content-type": "text/plain" }); // chunked, no length
      const chunk = Buffer.alloc(64 * 1024, 0x61);
      let sent = 0;
      const pump = () => {
        while (sent <= MAX_WEB_FETCH_RESPONSE_BYTES + chunk.length) {
          sent += chunk.length;
          if (!res.write(chunk)) {
            res.once("drain", pump);
            return;
          }
        }
        res.end();
      };
      res.on("error", () => undefined);
      pump();
      return;
    }
    case "/exactly-the-cap":
      res.writeHead(200, { "content-type": "text/plain" }).end(Buffer.alloc(MAX_WEB_FETCH_RESPONSE_BYTES, 0x62));
      return;
    case "/hang":
      return; // never answers
    case "/slow-body":
      res.writeHead(200, { "content-type": "text/plain" });
      res.write("partial");
      return; // never finishes
    case "/challenge":
      if ((req.headers["user-agent"] ?? "").includes("Mozilla")) {
        res.writeHead(403, { "cf-mitigated": "challenge", "content-type": "text/html" }).end("challenge");
      } else {
        res.writeHead(200, { "content-type": "text/plain" }).end(`passed as ${req.headers["user-agent"]}`);
      }
      return;
    default:
      res.writeHead(500).end();
  }
}

beforeAll(async () => {
  server = createServer(route);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

async function expectCode(promise: Promise<unknown>, code: ToolFailureCode): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ToolFailure);
  expect((error as ToolFailure).code).toBe(code);
}

const fetchText = async (input: Record<string, unknown>) => text(await call(webfetchTool, input, context("/")));

describe("webfetch: success", () => {
  it("returns a text body as received", async () => {
    expect(await fetchText({ url: `${base}/text` })).toBe("hello, world");
    expect(await fetchText({ url: `${base}/markdown` })).toBe("# Title\n\n*body*");
    expect(await fetchText({ url: `${base}/html`, format: "html" })).toBe("<h1>Title</h1>");
    expect(await fetchText({ url: `${base}/json` })).toBe('{"a":1}');
    expect(await fetchText({ url: `${base}/untyped` })).toBe("no type");
  });

  it("sends the format preference as Accept", async () => {
    expect((await fetchText({ url: `${base}/accept` })).startsWith("text/markdown")).toBe(true);
    expect((await fetchText({ url: `${base}/accept`, format: "markdown" })).startsWith("text/markdown")).toBe(true);
    expect((await fetchText({ url: `${base}/accept`, format: "text" })).startsWith("text/plain")).toBe(true);
    expect((await fetchText({ url: `${base}/accept`, format: "html" })).startsWith("text/html")).toBe(true);
  });

  it("follows redirects", async () => {
    expect(await fetchText({ url: `${base}/redirect` })).toBe("hello, world");
  });

  it("retries a Cloudflare challenge once with a plain User-Agent", async () => {
    expect(await fetchText({ url: `${base}/challenge` })).toBe("passed as ze-harness");
  });

  it("accepts a body of exactly 5 MiB", async () => {
    expect((await fetchText({ url: `${base}/exactly-the-cap` })).length).toBe(MAX_WEB_FETCH_RESPONSE_BYTES);
  });
});

describe("webfetch: failures", () => {
  const run = (input: Record<string, unknown>) => call(webfetchTool, input, context("/"));

  it("rejects non-http(s) schemes, credentials and malformed URLs, at projection and execution", async () => {
    for (const url of ["file:///etc/passwd", "ftp://127.0.0.1/x", "javascript:alert(1)", "data:text/plain,hi", "not a url", `http://user:pw@127.0.0.1/`, "/relative"]) {
      expect(() => webfetchTool.permissions({ url }, context("/"))).toThrow(ToolFailure);
      await expectCode(webfetchTool.execute({ url }, context("/")), "invalid_url");
    }
  });

  it("fails on a non-2xx status", async () => {
    await expectCode(run({ url: `${base}/missing` }), "http_status");
  });

  it("fails on a declared body over 5 MiB", async () => {
    await expectCode(run({ url: `${base}/declared-too-large` }), "too_large");
  });

  it("fails on an actual body over 5 MiB", async () => {
    await expectCode(run({ url: `${base}/streamed-too-large` }), "too_large");
  });

  it("fails on non-text content and invalid UTF-8", async () => {
    await expectCode(run({ url: `${base}/image` }), "unsupported_content_type");
    await expectCode(run({ url: `${base}/bad-utf8` }), "invalid_utf8");
  });

  it("times out waiting for headers and while reading the body", async () => {
    await expectCode(run({ url: `${base}/hang`, timeoutMs: 200 }), "timed_out");
    await expectCode(run({ url: `${base}/slow-body`, timeoutMs: 200 }), "timed_out");
  });

  it("fails with request_failed when nothing listens", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await expectCode(run({ url: `http://127.0.0.1:${port}/` }), "request_failed");
  });

  it("an abort rejects with interrupted", async () => {
    const ctx = context("/");
    const request = arrived("/hang");
    const running = call(webfetchTool, { url: `${base}/hang` }, ctx);
    await request;
    ctx.controller.abort();
    await expectCode(running, "interrupted");
  });

  it("validates timeoutMs bounds and the format", () => {
    expect(validateToolInput(webfetchTool, { url: "http://x/", timeoutMs: 120_001 }).ok).toBe(false);
    expect(validateToolInput(webfetchTool, { url: "http://x/", timeoutMs: 0 }).ok).toBe(false);
    expect(validateToolInput(webfetchTool, { url: "http://x/", format: "pdf" }).ok).toBe(false);
    expect(validateToolInput(webfetchTool, { url: "http://x/", format: "text", timeoutMs: 120_000 }).ok).toBe(true);
  });
});

describe("webfetch: permissions", () => {
  it("projects the normalized URL and saves its origin", () => {
    expect(webfetchTool.permissions({ url: "HTTPS://Example.COM:443/a/../b?q=1#frag" }, context("/"))).toEqual([
      { action: "webfetch", resources: ["https://example.com/b?q=1"], save: ["https://example.com/*"] },
    ]);
  });
});
