// A Fetch function over node:http for the loopback daemon. The global fetch() costs a Node 20
// process ≈ 60 ms and ≈ 40 MiB on first use (undici's dispatcher), and even its Request and
// Response classes ≈ 40 ms and 12 MiB (light-http.ts stands in for them); node:http costs a fraction,
// and a local one-shot command makes only a couple of small requests. Streams (SSE) are passed
// through as they arrive; an aborted signal ends the request (and its body) with an AbortError;
// a request that gets no answer rejects like fetch (`TypeError: fetch failed` with the cause).
//
// Every connection is verified before a byte is written on it: where the kernel's socket table
// can be read (Linux), the listening end must belong to this user (socket-owner.ts); otherwise
// the connection fails with code `ZE_FOREIGN_LISTENER` and the token it would have carried stays
// here. So a listener another user opened on the daemon's freed port never sees a request, on
// the first connection or on any later one (the challenge in challenge.ts proves the daemon
// where the table cannot be read).
import { closeSync, openSync, readSync } from "node:fs";
import { Agent, request as httpRequest, type ClientRequestArgs, type IncomingMessage } from "node:http";
import { connect as netConnect, isIPv4, type Socket } from "node:net";
import type { Duplex } from "node:stream";
import { LightResponse, type HttpRequest, type NodeBody } from "../contract/light-http.js";
import { connectionKeys, IPV4_TABLE, ownUid, ownerOf, procEndpoint, readSocketOwnersAsync, type Endpoint, type SocketOwners } from "../contract/socket-owner.js";

/** How many event-loop turns a just-accepted peer socket may take to appear in the table. */
const LISTING_TRIES = 20;

/** A connection refused because another user owns its listening end. */
export const FOREIGN_LISTENER = "ZE_FOREIGN_LISTENER";

const foreign = (message: string): Error => Object.assign(new Error(message), { code: FOREIGN_LISTENER });

/** The uid of the listener's end of the connection `mine` → `peer` (the accepted socket, else the listening one). */
const listenerOwner = (owners: SocketOwners, peer: Endpoint, mine: Endpoint): number | undefined =>
  ownerOf(owners, peer, mine) ?? ownerOf(owners, peer, { address: peer.address.includes(":") ? "::" : "0.0.0.0", port: 0 });

/** The listener's end of `mine` → `peer` as socket-table keys: the accepted socket, or the listening one bound to exactly that address. */
const listenerKeys = (peer: Endpoint, mine: Endpoint): Set<string> =>
  new Set([...connectionKeys(peer, mine), ...connectionKeys(peer, { address: peer.address.includes(":") ? "::" : "0.0.0.0", port: 0 })]);

/**
 * The uid on the first line of socket table `table` that names one of `keys` (undefined: none
 * does, or the table cannot be read), read synchronously a page at a time and no further than
 * that line. The kernel lists the listening sockets first, so the daemon's listener is mostly on
 * the first page: the kernel need not produce the rest of a table that every recent connection's
 * TIME_WAIT end has made long (≈ 7 ms of CPU for 2,000 sockets), and no thread-pool round trip is
 * made. A listening socket and the connections it accepted have one owner (the kernel copies it to
 * each accepted socket), so either line answers for the listener's end. Lines are parsed as
 * socket-owner.ts parses them (columns: sl local remote st … uid …).
 */
export function firstListedOwner(table: string, keys: ReadonlySet<string>, port: string): number | undefined {
  let fd: number;
  try {
    fd = openSync(table, "r");
  } catch {
    return undefined;
  }
  try {
    const buffer = Buffer.allocUnsafe(64 * 1024);
    const needle = `:${port} `;
    let rest = "";
    let header = true;
    for (;;) {
      const length = readSync(fd, buffer, 0, buffer.length, null);
      if (length === 0) return undefined;
      const text = rest + buffer.toString("latin1", 0, length);
      let start = 0;
      for (let end = text.indexOf("\n"); end !== -1; end = text.indexOf("\n", start)) {
        const line = text.slice(start, end);
        start = end + 1;
        if (header) {
          header = false;
          continue;
        }
        if (!line.includes(needle)) continue;
        const fields = line.trim().split(/\s+/);
        if (fields.length < 8 || !keys.has(`${fields[1]}->${fields[2]}`)) continue;
        const uid = Number.parseInt(fields[7]!, 10);
        if (Number.isInteger(uid)) return uid;
      }
      rest = text.slice(start);
    }
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** Resolves once `socket`'s peer is known to be this user's (or cannot be known here); rejects otherwise. */
export async function verifyPeerOwner(socket: Socket): Promise<void> {
  const uid = ownUid();
  if (uid === undefined) return;
  const mine = { address: socket.localAddress ?? "", port: socket.localPort ?? 0 };
  const peer = { address: socket.remoteAddress ?? "", port: socket.remotePort ?? 0 };
  const port = procEndpoint(peer)?.split(":")[1];
  const keep = port === undefined ? undefined : (line: string): boolean => line.includes(`:${port} `);
  // First the table of the peer's own family, up to the first line naming the listener's end;
  // the full reads below when it names neither (a dual-stack listener reached over IPv4, a
  // just-accepted socket not listed yet, another network namespace's view).
  const listed = port === undefined ? undefined : firstListedOwner(isIPv4(peer.address) ? IPV4_TABLE[0]! : "/proc/net/tcp6", listenerKeys(peer, mine), port);
  if (listed !== undefined) {
    if (listed === uid) return;
    throw foreign(`the listener at ${peer.address}:${peer.port} belongs to another user (uid ${listed})`);
  }
  for (let attempt = 0; attempt < LISTING_TRIES; attempt++) {
    // An IPv4 listener's end is in the IPv4 table (a dual-stack one's in the IPv6 table): that
    // one alone first, both when it does not list the listener's end.
    const first = attempt === 0 && isIPv4(peer.address) ? await readSocketOwnersAsync(keep, IPV4_TABLE) : undefined;
    const found = first === undefined || first === null ? undefined : listenerOwner(first, peer, mine);
    const owners = found === undefined ? await readSocketOwnersAsync(keep) : first!;
    if (owners === null) return; // no socket table on this system
    const owner = found ?? listenerOwner(owners, peer, mine);
    if (owner !== undefined) {
      if (owner === uid) return;
      throw foreign(`the listener at ${peer.address}:${peer.port} belongs to another user (uid ${owner})`);
    }
    // Our own end unlisted too: this table does not show the connection (another network namespace view).
    if (ownerOf(owners, mine, peer) === undefined) return;
    await new Promise((resolvePromise) => setImmediate(resolvePromise));
  }
  throw foreign(`the listener at ${peer.address}:${peer.port} is not in the socket table`);
}

/** A keep-alive agent whose every new connection is verified (verifyPeerOwner) before the request goes out on it. */
class VerifiedAgent extends Agent {
  override createConnection(options: ClientRequestArgs, callback?: (error: Error | null, socket: Duplex) => void): Duplex {
    const socket = netConnect(options as Parameters<typeof netConnect>[0]);
    const fail = (error: Error): void => {
      socket.destroy();
      callback?.(error, socket);
    };
    socket.once("error", fail);
    socket.once("connect", () => {
      socket.off("error", fail);
      verifyPeerOwner(socket).then(
        () => callback?.(null, socket),
        (error: Error) => fail(error),
      );
    });
    // Node's agent waits for the callback when nothing is returned: the request is not written before it.
    return undefined as unknown as Duplex;
  }
}

const agent = new VerifiedAgent({ keepAlive: true, maxSockets: 16 });

function abortError(signal: AbortSignal): Error {
  const reason = signal.reason as unknown;
  return reason instanceof Error ? reason : new DOMException("This operation was aborted", "AbortError");
}

function bodyOf(response: IncomingMessage, signal: AbortSignal): ReadableStream<Uint8Array> {
  let settled = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      // Once the stream is closed, errored or cancelled, a late 'data', 'end' or 'error' event
      // (the response is destroyed asynchronously) must not touch the controller: it would throw.
      const settle = (finish: () => void): void => {
        if (settled) return;
        settled = true;
        finish();
      };
      response.on("data", (chunk: Buffer) => {
        if (settled) return;
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        if ((controller.desiredSize ?? 1) <= 0) response.pause();
      });
      response.once("end", () => settle(() => controller.close()));
      response.once("error", (error) => settle(() => controller.error(signal.aborted ? abortError(signal) : error)));
      response.once("aborted", () => settle(() => controller.error(signal.aborted ? abortError(signal) : new TypeError("terminated"))));
    },
    pull() {
      response.resume();
    },
    cancel() {
      settled = true;
      response.destroy();
    },
  });
}

/** The response's chunks as they come, ended or failed as bodyOf's stream would be. */
async function* chunksOf(response: IncomingMessage, signal: AbortSignal): AsyncGenerator<Uint8Array> {
  try {
    for await (const chunk of response as AsyncIterable<Buffer>) yield new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  } catch (error) {
    throw signal.aborted ? abortError(signal) : response.complete ? error : new TypeError("terminated");
  }
  if (!response.complete) throw signal.aborted ? abortError(signal) : new TypeError("terminated");
}

/** The body read straight from node:http; a web stream (bodyOf) only when one is asked for. */
function nodeBodyOf(response: IncomingMessage, signal: AbortSignal): NodeBody {
  // A body abandoned unread fails with nobody reading: the reader's to see (chunksOf), never an uncaught 'error' event.
  response.on("error", () => {});
  return { chunks: () => chunksOf(response, signal), toWeb: () => bodyOf(response, signal), cancel: () => void response.destroy() };
}

/**
 * Sends `input` and answers a LightResponse (services/contract/light-http.ts: no undici); the
 * callers that hand it on to code expecting undici's classes convert it (toWebResponse).
 */
export async function verifiedFetch(input: HttpRequest): Promise<LightResponse> {
  const url = new URL(input.url);
  const signal = input.signal;
  if (signal.aborted) throw abortError(signal);
  const body = input.body ?? undefined;
  const headers: Record<string, string> = { ...input.headers };
  if (body !== undefined) headers["content-length"] = String(body.byteLength);
  return new Promise<LightResponse>((resolvePromise, reject) => {
    const outgoing = httpRequest({ agent, hostname: url.hostname.replace(/^\[|\]$/g, ""), port: url.port, path: `${url.pathname}${url.search}`, method: input.method, headers });
    // Once answered, an abort ends the response (its reader sees the AbortError): destroying the
    // request then could fail a socket the agent was just given back by a body read to its end.
    let answered: IncomingMessage | undefined;
    const onAbort = (): void => void (answered === undefined ? outgoing.destroy(abortError(signal)) : answered.destroy());
    signal.addEventListener("abort", onAbort, { once: true });
    outgoing.once("error", (error) => {
      signal.removeEventListener("abort", onAbort);
      reject(signal.aborted ? abortError(signal) : new TypeError("fetch failed", { cause: error }));
    });
    outgoing.once("response", (response) => {
      answered = response;
      const status = response.statusCode ?? 502;
      const empty = input.method === "HEAD" || status === 204 || status === 304;
      if (empty) response.resume();
      response.once("close", () => signal.removeEventListener("abort", onAbort));
      resolvePromise(new LightResponse(empty ? null : nodeBodyOf(response, signal), { status, statusText: response.statusMessage ?? "", headers: response.headers }));
    });
    outgoing.end(body);
  });
}
