// Which connections a listener keeps, so that it stays reachable for its own user whatever other
// local users or remote peers do (half-open sockets, floods, a tokenless server's neighbours):
//
//   - a bound on connections in all and per peer: on a loopback listener where the kernel's socket
//     table can be read (Linux) a peer is the uid that opened the connection, elsewhere its
//     address. Another user holding thousands of sockets exhausts its own share, never the
//     owner's; connections past a bound are closed at once, before a request is served. (A
//     loopback listener holding fewer than CLASSIFY_ABOVE connections does not ask whose they are.)
//   - a first request within FIRST_REQUEST_MS of connecting (a socket that sends nothing, or
//     headers a byte at a time, is dropped; Node's own timeouts bound later requests);
//   - `ownUserOnly` (a tokenless loopback server): only connections whose socket belongs to this
//     process's user are served, every other one is answered 403 ForbiddenError. The reference
//     serves its own user unauthenticated; this keeps everyone else out.
//
// Peer uids come from /proc/net/tcp{,6} (services/contract/socket-owner.ts), read once per turn of
// the event loop for every connection accepted meanwhile, and filtered to this listener's port
// before parsing, so a flood costs a few table reads, not one per socket.
import type { Socket } from "node:net";
import { connectionKeys, ownUid, ownerOf, procEndpoint, readSocketOwnersAsync, scanSocketOwnersAsync, socketTableReadable } from "../contract/socket-owner.js";

/** Connections a listener holds at most (far below the 20,000 file descriptors a process gets here). */
export const MAX_CONNECTIONS = 2_048;
/** Connections one peer (a uid on loopback, else an address) holds at most. */
export const MAX_PEER_CONNECTIONS = 256;
/** A connection must complete its first request's headers this soon, or it is closed. */
export const FIRST_REQUEST_MS = 10_000;
/** Below this many connections a loopback listener that serves every user does not ask whose they are. */
export const CLASSIFY_ABOVE = 32;
/** How many table reads a connection waits for its socket to be listed before it counts as unknown. */
const LOOKUP_TRIES = 3;
/** Batches of up to this many sockets, on a listener holding no more connections than this, stop reading the socket table once all are found (PeerUids). */
const EARLY_STOP_BATCH = 32;

export interface AdmissionOptions {
  /** Serve only this process's user (a tokenless loopback server on Linux). */
  readonly ownUserOnly: boolean;
  readonly maxConnections?: number;
  readonly maxPeerConnections?: number;
  readonly firstRequestMs?: number;
  readonly classifyAbove?: number;
  /** Told once per refused burst (never per socket: a flood must not become a log flood). */
  readonly onRefused?: (reason: "capacity" | "peer_capacity", count: number) => void;
}

/** How a connection was judged: `own` is the listener's user (or nobody could tell), `foreign` another. */
export type PeerVerdict = "own" | "foreign";

interface Pending {
  readonly socket: Socket;
  readonly resolve: (uid: number | undefined) => void;
  tries: number;
}

/**
 * Batches uid lookups of freshly accepted sockets: one table read at a time, off the event loop,
 * answering every socket accepted before it started; sockets accepted meanwhile wait for the next.
 */
class PeerUids {
  #waiting: Pending[] = [];
  #reading = false;

  /** `quiet()`: whether the listener holds few connections (no flood), so a read may stop early. */
  constructor(private readonly quiet: () => boolean) {}

  lookup(socket: Socket): Promise<number | undefined> {
    return new Promise((resolve) => {
      this.#waiting.push({ socket, resolve, tries: 0 });
      if (!this.#reading) void this.#read();
    });
  }

  async #read(): Promise<void> {
    this.#reading = true;
    try {
      while (this.#waiting.length > 0) {
        const batch = this.#waiting;
        this.#waiting = [];
        const ports = [...new Set(batch.map((entry) => procEndpoint({ address: entry.socket.localAddress ?? "", port: entry.socket.localPort ?? 0 })?.split(":")[1]))];
        const ends = batch.map(({ socket }) => ({
          client: { address: socket.remoteAddress ?? "", port: socket.remotePort ?? 0 },
          server: { address: socket.localAddress ?? "", port: socket.localPort ?? 0 },
        }));
        // A few sockets on a quiet listener: the read stops once each is found (usually well
        // before the table's end). Under a flood every batch is read whole, as one read answers
        // every socket accepted before it: a read that stopped early would only make the next batch
        // come sooner, smaller, and cost a read as long, and the flood would hold its slots longer.
        const keep = (line: string): boolean => ports.some((port) => port !== undefined && line.includes(`:${port} `));
        const owners = await (batch.length <= EARLY_STOP_BATCH && this.quiet()
          ? scanSocketOwnersAsync(keep, ends.map(({ client, server }) => connectionKeys(client, server)))
          : readSocketOwnersAsync(keep)
        ).catch(() => null);
        for (const [index, entry] of batch.entries()) {
          if (owners === null) {
            entry.resolve(undefined);
            continue;
          }
          const { socket } = entry;
          const { client, server } = ends[index]!;
          const uid = ownerOf(owners, client, server);
          if (uid !== undefined || ++entry.tries >= LOOKUP_TRIES || socket.destroyed) entry.resolve(uid);
          else this.#waiting.push(entry);
        }
      }
    } finally {
      this.#reading = false;
    }
  }
}

/** A listener's admission: `admit` every accepted socket; `verdict` before serving a request on it. */
export class ConnectionAdmission {
  readonly #options: Required<Omit<AdmissionOptions, "onRefused">> & Pick<AdmissionOptions, "onRefused">;
  readonly #uids = new PeerUids(() => this.#total <= EARLY_STOP_BATCH);
  readonly #verdicts = new WeakMap<Socket, Promise<PeerVerdict>>();
  readonly #firstRequest = new WeakMap<Socket, NodeJS.Timeout>();
  readonly #perPeer = new Map<string, number>();
  readonly #own = ownUid();
  #total = 0;
  #refused = { capacity: 0, peer_capacity: 0 };
  #refusedReport: NodeJS.Timeout | undefined;

  constructor(options: AdmissionOptions) {
    this.#options = {
      maxConnections: MAX_CONNECTIONS,
      maxPeerConnections: MAX_PEER_CONNECTIONS,
      firstRequestMs: FIRST_REQUEST_MS,
      classifyAbove: CLASSIFY_ABOVE,
      ...options,
    };
  }

  /** Connections held now (for tests and status). */
  get connections(): number {
    return this.#total;
  }

  admit(socket: Socket, loopback: boolean): void {
    if (this.#total >= this.#options.maxConnections) return this.#refuse(socket, "capacity");
    this.#total += 1;
    let peer: string | undefined;
    const release = (): void => {
      this.#total -= 1;
      if (peer !== undefined) {
        const left = (this.#perPeer.get(peer) ?? 1) - 1;
        if (left <= 0) this.#perPeer.delete(peer);
        else this.#perPeer.set(peer, left);
      }
    };
    socket.once("close", release);
    const firstRequest = setTimeout(() => socket.destroy(), this.#options.firstRequestMs);
    firstRequest.unref();
    socket.once("close", () => clearTimeout(firstRequest));
    this.#firstRequest.set(socket, firstRequest);

    // A few loopback connections need no table read: per-peer shares matter only once there are many.
    if (loopback && !this.#options.ownUserOnly && this.#total <= this.#options.classifyAbove) {
      this.#verdicts.set(socket, Promise.resolve("own"));
      return;
    }
    const uid = loopback ? this.#uids.lookup(socket) : Promise.resolve(undefined);
    const verdict = uid.then((owner): PeerVerdict => {
      peer = owner !== undefined ? `uid:${owner}` : `addr:${socket.remoteAddress ?? "?"}`;
      const held = (this.#perPeer.get(peer) ?? 0) + 1;
      this.#perPeer.set(peer, held);
      if (held > this.#options.maxPeerConnections && !socket.destroyed) this.#refuse(socket, "peer_capacity");
      if (!this.#options.ownUserOnly || this.#own === undefined) return "own";
      // On Linux an unlisted socket is not proven ours: refused. Without a table nothing can be told.
      if (owner === undefined) return socketTableReadable() ? "foreign" : "own";
      return owner === this.#own ? "own" : "foreign";
    });
    this.#verdicts.set(socket, verdict);
  }

  /** The socket's verdict (a socket never admitted — closed at the bound — is foreign). A request clears its first-request timer. */
  verdict(socket: Socket, options: { readonly keepTimer?: boolean } = {}): Promise<PeerVerdict> {
    if (options.keepTimer !== true) clearTimeout(this.#firstRequest.get(socket));
    return this.#verdicts.get(socket) ?? Promise.resolve("foreign");
  }

  #refuse(socket: Socket, reason: "capacity" | "peer_capacity"): void {
    socket.destroy();
    this.#refused[reason] += 1;
    if (this.#options.onRefused === undefined || this.#refusedReport !== undefined) return;
    this.#refusedReport = setTimeout(() => {
      this.#refusedReport = undefined;
      for (const key of ["capacity", "peer_capacity"] as const) {
        if (this.#refused[key] > 0) this.#options.onRefused?.(key, this.#refused[key]);
        this.#refused[key] = 0;
      }
    }, 1_000);
    this.#refusedReport.unref();
  }
}
