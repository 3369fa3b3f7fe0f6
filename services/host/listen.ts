// Binds a Fetch handler to a TCP listener. Loopback by default; any other address
// must be asked for explicitly and is refused without a bearer token.
//
// Node's HTTP parser answers requests it refuses (headers over its limit, malformed request
// lines) itself, with an empty body, or resets the connection while the client is still
// sending. So the parser gets a limit far above the API's own (NODE_MAX_HEADER_BYTES): requests
// up to it reach the Fetch handler, which enforces the real limits and answers with the
// contract's JSON error; whatever the parser still refuses is answered here, on the socket, in
// the same shape and with the same Ze-Harness-Version header.
//
// Which connections are kept is admission.ts's: bounds in all and per peer, a first request within
// 10 s, and for a tokenless server only its own user. Node's timeouts bound the rest: headers of
// a later request within HEADERS_TIMEOUT_MS, a whole request within REQUEST_TIMEOUT_MS, an idle
// keep-alive connection for KEEP_ALIVE_MS.
import { getRequestListener, RequestError, type Http2Bindings, type HttpBindings } from "@hono/node-server";
// Imported before any listener exists: made while the global Response is still Node's own, the
// adapter's marker for "this listener wrote the answer itself" is read as one (see the SSE path).
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { EncodedError } from "../contract/failure.js";
import { errorResponse, PROTOCOL_VERSION, VERSION_HEADER } from "../http/handler.js";
import { HEADER_BYTES, HEADERS_TOO_LARGE_MESSAGE } from "../http/request.js";
import { sseSourceOf, WRITES_SSE } from "../http/sse.js";
import { writeSse } from "./sse-writer.js";
import { release } from "./version.js";
import { ConnectionAdmission, type AdmissionOptions } from "./admission.js";

/** What Node's parser accepts (request line and headers); the handler's own limits are far lower. */
export const NODE_MAX_HEADER_BYTES = 1024 * 1024;
/** How long a refused connection may keep sending before it is dropped. */
const REFUSED_LINGER_MS = 5_000;
/** A request's headers must arrive this soon (Node's default is a minute). */
export const HEADERS_TIMEOUT_MS = 10_000;
/** A whole request (headers and body; not the response, so not an SSE stream) must arrive this soon. */
export const REQUEST_TIMEOUT_MS = 60_000;
/** An idle keep-alive connection is closed after this long. */
export const KEEP_ALIVE_MS = 5_000;
/** How often Node checks those timeouts (its default, 30 s, would let a stalled request live 40 s). */
const TIMEOUT_CHECK_MS = 1_000;

export interface ListenOptions {
  readonly port: number;
  readonly hostname: string;
  /** The `Ze-Harness-Version` value of answers written outside the handler; default: this build's. */
  readonly version?: string;
  /** Sees every admitted connection (the daemon's and serve's client.connect / client.disconnect lines). */
  readonly onConnection?: (socket: Socket) => void;
  /** Serve only this process's user (a tokenless loopback server): others get 403. */
  readonly ownUserOnly?: boolean;
  /** Connection bounds other than the defaults (tests), and where refused bursts are told. */
  readonly admission?: Omit<AdmissionOptions, "ownUserOnly">;
}

export interface Listener {
  /** e.g. http://127.0.0.1:4317 */
  readonly url: string;
  close(): Promise<void>;
}

export const FOREIGN_USER_MESSAGE = "This server runs without a token and serves only the local user who started it; start it with --token (or ZE_HARNESS_TOKEN) to share it";

export const isLoopbackAddress = (hostname: string): boolean =>
  hostname === "127.0.0.1" || hostname === "::1" || hostname === "localhost";

const REASONS: Readonly<Record<number, string>> = { 400: "Bad Request", 408: "Request Timeout", 431: "Request Header Fields Too Large" };

/** A complete HTTP/1.1 answer carrying the contract's error body, closing the connection. */
function rawAnswer(status: number, error: EncodedError, version: string): string {
  const body = JSON.stringify(error);
  return [
    `HTTP/1.1 ${status} ${REASONS[status] ?? "Error"}`,
    "Content-Type: application/json",
    `Content-Length: ${Buffer.byteLength(body)}`,
    `${VERSION_HEADER}: ${version}`,
    `Access-Control-Expose-Headers: ${VERSION_HEADER}`,
    "Connection: close",
    "",
    body,
  ].join("\r\n");
}

function parserRefusal(error: NodeJS.ErrnoException): { status: number; error: EncodedError } {
  if (error.code === "HPE_HEADER_OVERFLOW") return { status: 431, error: { _tag: "ValidationError", message: HEADERS_TOO_LARGE_MESSAGE } };
  if (error.code === "ERR_HTTP_REQUEST_TIMEOUT") {
    return { status: 408, error: { _tag: "ValidationError", message: "The request was not received in time" } };
  }
  return { status: 400, error: { _tag: "ValidationError", message: "The request is not valid HTTP/1.1" } };
}

export async function listen(fetch: (request: Request) => Promise<Response>, options: ListenOptions): Promise<Listener> {
  const version = options.version ?? `${PROTOCOL_VERSION}/${release()}`;
  // Event streams the handler leaves to this listener (services/http/sse.ts) are written to the
  // socket by writeSse; every other answer is the adapter's to write.
  // (This server is HTTP/1.1 only: the adapter's `outgoing` is a ServerResponse.)
  const answer = async (request: Request, env: HttpBindings | Http2Bindings): Promise<Response> => {
    const marked = request as Request & { [WRITES_SSE]?: boolean; [HEADER_BYTES]?: number };
    marked[WRITES_SSE] = true;
    // The header section's size as parsed, so the handler's limit is checked without a Headers object.
    const raw = (env.incoming as IncomingMessage).rawHeaders;
    let headerBytes = 0;
    for (let index = 0; index + 1 < raw.length; index += 2) headerBytes += raw[index]!.length + raw[index + 1]!.length + 4;
    marked[HEADER_BYTES] = headerBytes;
    const response = await fetch(request);
    const source = sseSourceOf(response);
    if (source === undefined) return response;
    void writeSse(env.outgoing as ServerResponse, source);
    return RESPONSE_ALREADY_SENT;
  };
  const listener = getRequestListener(answer, {
    hostname: options.hostname,
    // A request Node parsed but the adapter cannot turn into a Request (a bad Host header or target).
    errorHandler: (error: unknown): Response => {
      const response =
        error instanceof RequestError
          ? errorResponse({ _tag: "ValidationError", message: `The request target or Host header is not valid: ${error.message}` })
          : errorResponse({ _tag: "InternalServerError", message: "The server failed to handle the request" });
      response.headers.set(VERSION_HEADER, version);
      response.headers.set("Access-Control-Expose-Headers", VERSION_HEADER);
      return response;
    },
  });
  const admission = new ConnectionAdmission({ ...options.admission, ownUserOnly: options.ownUserOnly === true });
  const loopback = isLoopbackAddress(options.hostname);
  const serve = (incoming: IncomingMessage, outgoing: ServerResponse): void => {
    void admission.verdict(incoming.socket).then((verdict) => {
      if (verdict === "own") return listener(incoming, outgoing);
      outgoing.writeHead(403, { "content-type": "application/json", connection: "close", [VERSION_HEADER]: version, "access-control-expose-headers": VERSION_HEADER });
      outgoing.end(JSON.stringify({ _tag: "ForbiddenError", message: FOREIGN_USER_MESSAGE } satisfies EncodedError));
    });
  };
  const server: Server = createServer(
    { maxHeaderSize: NODE_MAX_HEADER_BYTES, headersTimeout: HEADERS_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS, keepAliveTimeout: KEEP_ALIVE_MS, connectionsCheckingInterval: TIMEOUT_CHECK_MS },
    serve,
  );
  server.on("connection", (socket: Socket) => {
    admission.admit(socket, loopback);
    if (options.onConnection && !socket.destroyed) {
      const log = options.onConnection;
      // Told once the connection is kept: sockets closed at a bound never become log lines.
      void admission.verdict(socket, { keepTimer: true }).then(() => {
        if (!socket.destroyed) log(socket);
      });
    }
  });

  // The parser reports every further chunk of a refused request again; answer once.
  const refused = new WeakSet<Socket>();
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Socket) => {
    if (refused.has(socket)) return;
    refused.add(socket);
    // Nothing can be written to a gone client, nor after part of a response was sent on this socket.
    const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (error.code === "ECONNRESET" || !socket.writable || inFlight?.headersSent === true) {
      socket.destroy();
      return;
    }
    const { status, error: body } = parserRefusal(error);
    // end(), not destroy(): the client may still be sending, and closing on unread data would
    // reset the connection before it read the answer. It is dropped once it stops or lingers.
    socket.end(rawAnswer(status, body, version));
    const linger = setTimeout(() => socket.destroy(), REFUSED_LINGER_MS);
    linger.unref();
    socket.once("close", () => clearTimeout(linger));
  });

  await new Promise<void>((resolvePromise, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.hostname, () => {
      server.off("error", reject);
      resolvePromise();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    close: () =>
      new Promise<void>((resolvePromise) => {
        // Open SSE streams would keep close() waiting forever.
        server.closeAllConnections();
        server.close(() => resolvePromise());
      }),
  };
}
