// Redirects of streamable HTTP MCP servers ("MCP Streamable HTTP ownership"), against real
// loopback servers in front of the real everything server: two ports are two origins. A same-origin
// redirect keeps the credential and session headers; once a redirect changes the origin, the
// Authorization, Cookie, Mcp-Session-Id and configured credential headers are not sent there;
// cycles (by canonical URL, also across origins) fail at once; `redirectHops` bounds the hops with
// a typed limit_reached.
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { afterEach, beforeAll, afterAll, describe, expect, it, vi } from "vitest";
import { everythingHttp, host, remote } from "./support.js";

vi.setConfig({ testTimeout: 30_000 });

interface Seen {
  readonly path: string;
  readonly method: string;
  readonly headers: IncomingHttpHeaders;
  /** The upstream's mcp-session-id answer, when it gave one. */
  session?: string;
}

let upstream: Awaited<ReturnType<typeof everythingHttp>>;
beforeAll(async () => {
  upstream = await everythingHttp();
});
afterAll(async () => {
  await upstream.close();
});

const aborts: AbortController[] = [];
const listening: Server[] = [];
afterEach(async () => {
  for (const controller of aborts.splice(0)) controller.abort();
  for (const server of listening.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** Forwards a request to the everything server and streams its answer back. */
async function proxy(request: IncomingMessage, response: ServerResponse, seen: Seen): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) if (typeof value === "string" && !["host", "connection", "content-length"].includes(name)) headers[name] = value;
  const controller = new AbortController();
  aborts.push(controller);
  const answer = await fetch(upstream.endpoint, { method: request.method!, headers, body: chunks.length > 0 ? Buffer.concat(chunks) : undefined, signal: controller.signal });
  seen.session = answer.headers.get("mcp-session-id") ?? undefined;
  response.writeHead(answer.status, Object.fromEntries([...answer.headers].filter(([name]) => name !== "content-length" && name !== "transfer-encoding")));
  response.flushHeaders();
  try {
    if (answer.body) for await (const chunk of answer.body) response.write(chunk);
  } catch {
    // aborted at the end of the test
  }
  response.end();
}

/** A loopback server: `routes` answer a path with a redirect target, anything else is proxied. */
async function origin(routes: (path: string) => { status: number; location: string } | undefined): Promise<{ readonly base: string; readonly seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((request, response) => {
    const entry: Seen = { path: request.url!, method: request.method!, headers: request.headers };
    seen.push(entry);
    const redirect = routes(request.url!);
    if (redirect) {
      response.writeHead(redirect.status, { location: redirect.location, "content-type": "text/plain" });
      response.end("moved: this body is released before the next hop");
      return;
    }
    proxy(request, response, entry).catch(() => response.destroy());
  });
  listening.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { base: `http://127.0.0.1:${(server.address() as { port: number }).port}`, seen };
}

const credentials = {
  authorization: { kind: "environment", reference: "MCP_AUTH" },
  cookie: { kind: "environment", reference: "MCP_COOKIE" },
  "x-api-key": { kind: "environment", reference: "MCP_KEY" },
} as const;
const env = { PATH: process.env["PATH"] ?? "", MCP_AUTH: "Bearer s3cret", MCP_COOKIE: "sid=c00kie", MCP_KEY: "k3y" };
const manual = { reconnect: { kind: "manual" } } as const;

const failedWith = (mcp: ReturnType<typeof host>) => mcp.servers()[0]!.status as { state: string; reason?: string; message?: string };

describe("streamable HTTP redirects", () => {
  it("keeps credential and session headers on a same-origin redirect", async () => {
    const front = await origin((path) => (path === "/same" ? { status: 307, location: "/real" } : undefined));
    const mcp = host({ env, servers: [remote("same", `${front.base}/same`, manual, { headers: credentials })] });
    await mcp.start();
    expect(mcp.servers()[0]!.status.state).toBe("connected");
    const real = front.seen.filter((entry) => entry.path === "/real");
    expect(real.length).toBeGreaterThanOrEqual(2);
    for (const entry of real) expect(entry.headers).toMatchObject({ authorization: "Bearer s3cret", cookie: "sid=c00kie", "x-api-key": "k3y" });
    const session = real[0]!.session;
    expect(session).toEqual(expect.any(String));
    expect(real[1]!.headers["mcp-session-id"]).toBe(session);
  });

  it("strips Authorization, Cookie, Mcp-Session-Id and configured credential headers once a redirect changes the origin", async () => {
    const other = await origin(() => undefined);
    const front = await origin((path) => (path === "/mcp" ? { status: 307, location: `${other.base}/mcp` } : undefined));
    const mcp = host({ env, servers: [remote("cross", `${front.base}/mcp`, manual, { headers: credentials })] });
    await mcp.start();
    // The endpoint's own origin received them.
    expect(front.seen[0]!.headers).toMatchObject({ authorization: "Bearer s3cret", cookie: "sid=c00kie", "x-api-key": "k3y" });
    // The other origin never did, not even the session the server handed out.
    expect(other.seen.length).toBeGreaterThanOrEqual(2);
    expect(other.seen[0]!.session).toEqual(expect.any(String));
    for (const entry of other.seen) {
      for (const name of ["authorization", "cookie", "x-api-key", "mcp-session-id"]) expect(entry.headers[name]).toBeUndefined();
    }
    // Without its session the server refuses the next request: the connection fails, typed.
    expect(failedWith(mcp)).toMatchObject({ state: "failed", reason: "connection_failed" });
  });

  it("fails a redirect cycle at once, by canonical URL, within and across origins", async () => {
    const front = await origin((path) => {
      if (path === "/loop") return { status: 302, location: "/hop" };
      if (path === "/hop") return { status: 307, location: "/x/../loop" };
      return undefined;
    });
    const mcp = host({ env, servers: [remote("loop", `${front.base}/loop`, manual)] });
    await mcp.start();
    expect(failedWith(mcp)).toMatchObject({ state: "failed", reason: "connection_failed", message: expect.stringContaining("redirect loop") });
    expect(front.seen.map((entry) => entry.path)).toEqual(["/loop", "/hop"]);

    let back = "";
    const other = await origin((path) => (path === "/pong" ? { status: 308, location: back } : undefined));
    const ping = await origin((path) => (path === "/ping" ? { status: 308, location: `${other.base}/pong` } : undefined));
    // The same URL spelled differently: scheme case and a dot segment.
    back = `${ping.base.replace("http://", "HTTP://")}/./ping`;
    const across = host({ env, servers: [remote("across", `${ping.base}/ping`, manual)] });
    await across.start();
    expect(failedWith(across)).toMatchObject({ state: "failed", reason: "connection_failed", message: expect.stringContaining("redirect loop") });
    expect(ping.seen).toHaveLength(1);
    expect(other.seen).toHaveLength(1);
  });

  it("honours redirectHops: exhaustion is limit_reached with the configured value", async () => {
    const chain: Record<string, string> = { "/a3": "/a2", "/a2": "/a1", "/a1": "/real" };
    const front = await origin((path) => (chain[path] ? { status: 307, location: chain[path]! } : undefined));
    const within = host({ env, redirectHops: 2, servers: [remote("within", `${front.base}/a2`, manual)] });
    await within.start();
    expect(within.servers()[0]!.status.state).toBe("connected");

    const beyond = host({ env, redirectHops: 2, servers: [remote("beyond", `${front.base}/a3`, manual)] });
    await beyond.start();
    expect(failedWith(beyond)).toMatchObject({ state: "failed", reason: "limit_reached", message: "the redirectHops limit of 2 redirects was reached" });
    // Unlimited by default: the same chain connects.
    const unlimited = host({ env, servers: [remote("unlimited", `${front.base}/a3`, manual)] });
    await unlimited.start();
    expect(unlimited.servers()[0]!.status.state).toBe("connected");
  });
});
