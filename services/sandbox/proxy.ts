// The filtering HTTP proxy of `network: [hosts]`: the host side of the only way out of a
// sandbox's empty network namespace. It listens on a Unix socket in the sandbox room's private
// directory (0700: no other local user reaches it), which each sandbox sees at
// PROXY_SOCKET_INSIDE; a bridge inside (bridge.ts) turns that into 127.0.0.1:3128 for
// HTTP_PROXY/HTTPS_PROXY. It serves `CONNECT host:port` (HTTPS and any other TCP) and
// absolute-form plain HTTP requests, to allowed names only: the name the client asked for is
// compared, before any lookup (`*.example.com` allows every name below example.com); anything else
// is answered 403 and never connected. DNS happens here, on the host, never inside.
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { connect, type Socket } from "node:net";
import type { Duplex } from "node:stream";
import { hostAllowed, normalizeHost } from "./policy.js";

/** Connections the proxy holds at once (tunnels included): a sandboxed command cannot exhaust the host's descriptors. */
export const MAX_PROXY_CONNECTIONS = 256;
/** How long a refused or failed connection may take to read its answer. */
const ANSWER_TIMEOUT_MS = 5_000;
/** Headers a proxy must not forward (hop-by-hop, RFC 9110 §7.6.1). */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "proxy-connection", "proxy-authorization", "proxy-authenticate", "te", "trailer", "transfer-encoding", "upgrade"]);

function refuse(socket: Duplex, status: string): void {
  socket.end(`HTTP/1.1 ${status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
  setTimeout(() => socket.destroy(), ANSWER_TIMEOUT_MS).unref();
}

/** `host:port` of a CONNECT target (IPv6 in brackets), or undefined. */
function connectTarget(authority: string | undefined): { host: string; port: number } | undefined {
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:\s\[\]]+):(\d{1,5})$/.exec(authority ?? "");
  if (!match) return undefined;
  const port = Number(match[2]);
  if (port < 1 || port > 65_535) return undefined;
  return { host: normalizeHost(match[1]!), port };
}

export class FilteringProxy {
  readonly #server: Server;
  readonly #sockets = new Set<Duplex>();

  private constructor(
    server: Server,
    readonly socketPath: string,
  ) {
    this.#server = server;
  }

  /** Listens on `socketPath` for requests to `allowed` names. */
  static async start(socketPath: string, allowed: readonly string[]): Promise<FilteringProxy> {
    const server = createServer();
    const proxy = new FilteringProxy(server, socketPath);
    server.maxConnections = MAX_PROXY_CONNECTIONS;
    server.on("connection", (socket: Socket) => proxy.#track(socket));
    server.on("connect", (request: IncomingMessage, client: Duplex, head: Buffer) => proxy.#tunnel(allowed, request, client, head));
    server.on("request", (request: IncomingMessage, response: ServerResponse) => proxy.#forward(allowed, request, response));
    server.on("clientError", (_error, socket: Duplex) => refuse(socket, "400 Bad Request"));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(socketPath, () => {
        server.off("error", reject);
        resolve();
      });
    });
    return proxy;
  }

  #track(socket: Duplex): void {
    this.#sockets.add(socket);
    socket.once("close", () => this.#sockets.delete(socket));
  }

  #tunnel(allowed: readonly string[], request: IncomingMessage, client: Duplex, head: Buffer): void {
    client.on("error", () => client.destroy());
    const target = connectTarget(request.url);
    if (!target) return refuse(client, "400 Bad Request");
    if (!hostAllowed(allowed, target.host)) return refuse(client, "403 Forbidden");
    const upstream = connect({ host: target.host, port: target.port });
    this.#track(upstream);
    let established = false;
    upstream.once("connect", () => {
      established = true;
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.once("error", () => {
      if (!established) refuse(client, "502 Bad Gateway");
      else client.destroy();
    });
    client.once("close", () => upstream.destroy());
    upstream.once("close", () => client.destroy());
  }

  #forward(allowed: readonly string[], request: IncomingMessage, response: ServerResponse): void {
    let url: URL;
    try {
      url = new URL(request.url ?? "");
    } catch {
      response.writeHead(400, { "content-length": "0", connection: "close" }).end();
      return;
    }
    if (url.protocol !== "http:") {
      response.writeHead(400, { "content-length": "0", connection: "close" }).end();
      return;
    }
    if (!hostAllowed(allowed, url.hostname)) {
      response.writeHead(403, { "content-length": "0", connection: "close" }).end();
      request.resume();
      return;
    }
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(request.headers)) if (value !== undefined && !HOP_BY_HOP.has(name)) headers[name] = value;
    const upstream = httpRequest({ host: normalizeHost(url.hostname), port: url.port === "" ? 80 : Number(url.port), method: request.method, path: `${url.pathname}${url.search}`, headers }, (answer) => {
      const forwarded: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(answer.headers)) if (value !== undefined && !HOP_BY_HOP.has(name)) forwarded[name] = value;
      response.writeHead(answer.statusCode ?? 502, forwarded);
      answer.pipe(response);
    });
    upstream.once("error", () => {
      if (!response.headersSent) response.writeHead(502, { "content-length": "0", connection: "close" }).end();
      else response.destroy();
    });
    request.pipe(upstream);
  }

  /** Stops listening and ends every connection (tunnels too). */
  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    for (const socket of this.#sockets) socket.destroy();
    await closed;
  }
}
