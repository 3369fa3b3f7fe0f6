// Who owns the other end of a loopback TCP connection, read from the kernel's socket tables
// (`/proc/net/tcp` and `/proc/net/tcp6`, as identd does): every local TCP socket is listed there
// with its two endpoints and the uid of the user who created it. For a connection between two
// local processes both ends are listed, so either side can learn the other's uid:
//
//   the daemon client   checks the server end (local = the daemon's address, remote = ours)
//                       before it writes a byte, so the daemon token never reaches a listener
//                       another user opened on a freed port;
//   a tokenless server  checks the client end (local = the client's address, remote = ours) and
//                       serves only its own user.
//
// Linux only: elsewhere (no /proc) `readSocketOwners` answers null and callers fall back to
// what they can prove without it (the daemon's HMAC challenge) or to what the reference does.
import { readFileSync } from "node:fs";
import { open, readFile, type FileHandle } from "node:fs/promises";
import { isIPv4 } from "node:net";

/** One end of a TCP connection as Node names it (`socket.localAddress`, `socket.remotePort`, …). */
export interface Endpoint {
  readonly address: string;
  readonly port: number;
}

/** The socket table: uid by `<local>-><remote>` key (see `connectionKey`). */
export type SocketOwners = ReadonlyMap<string, number>;

const TABLES = ["/proc/net/tcp", "/proc/net/tcp6"] as const;

/** Four bytes of an IPv4 address in /proc's order (each 32-bit word in host byte order, little-endian here). */
function ipv4Words(address: string): number[] {
  return address.split(".").map((part) => Number.parseInt(part, 10));
}

const HEX_GROUP = /^[0-9a-f]{1,4}$/;

/**
 * The 16 bytes of an IPv6 address (with `::` and an embedded IPv4 tail expanded), or undefined
 * for text that is not one. Checked here rather than with `net.isIPv6`: its expression costs
 * about 3 ms on first use and nearly 1 ms on each later one, and a daemon client asks for four
 * forms of one connection before it sends its first byte.
 */
function ipv6Bytes(address: string): number[] | undefined {
  let text = address.toLowerCase();
  const zone = text.indexOf("%");
  if (zone !== -1) {
    if (zone === text.length - 1) return undefined;
    text = text.slice(0, zone);
  }
  let tail: number[] = [];
  const lastColon = text.lastIndexOf(":");
  if (lastColon === -1) return undefined;
  if (text.slice(lastColon + 1).includes(".")) {
    const v4 = text.slice(lastColon + 1);
    if (!isIPv4(v4)) return undefined;
    tail = ipv4Words(v4);
    text = `${text.slice(0, lastColon + 1)}0:0`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const [head, rest] = halves as [string, string | undefined];
  const groups = (part: string): string[] => (part === "" ? [] : part.split(":"));
  const left = groups(head);
  const right = rest === undefined ? [] : groups(rest);
  if (![...left, ...right].every((group) => HEX_GROUP.test(group))) return undefined;
  const missing = 8 - left.length - right.length;
  if (missing < 0 || (rest === undefined && missing !== 0) || (rest !== undefined && missing === 0)) return undefined;
  const all = [...left, ...Array<string>(missing).fill("0"), ...right];
  const bytes = all.flatMap((group) => {
    const value = Number.parseInt(group, 16);
    return [(value >> 8) & 0xff, value & 0xff];
  });
  if (tail.length === 4) bytes.splice(12, 4, ...tail);
  return bytes;
}

const hex2 = (byte: number): string => byte.toString(16).padStart(2, "0").toUpperCase();

/** The bytes as /proc prints them: every 32-bit word reversed (host order on little-endian Linux). */
function procAddress(bytes: readonly number[]): string {
  let out = "";
  for (let word = 0; word < bytes.length; word += 4) out += [bytes[word + 3]!, bytes[word + 2]!, bytes[word + 1]!, bytes[word]!].map(hex2).join("");
  return out;
}

/** `ADDR:PORT` of an endpoint as /proc prints it, or undefined for an address it could not be. */
export function procEndpoint(endpoint: Endpoint): string | undefined {
  const port = endpoint.port.toString(16).padStart(4, "0").toUpperCase();
  if (isIPv4(endpoint.address)) return `${procAddress(ipv4Words(endpoint.address))}:${port}`;
  const bytes = ipv6Bytes(endpoint.address);
  return bytes === undefined ? undefined : `${procAddress(bytes)}:${port}`;
}

/** The key of the socket whose own end is `local` and whose peer is `remote`. */
export function connectionKey(local: Endpoint, remote: Endpoint): string | undefined {
  const [l, r] = [procEndpoint(local), procEndpoint(remote)];
  if (l === undefined || r === undefined) return undefined;
  return `${l}->${r}`;
}

/**
 * An IPv4 peer of a dual-stack (IPv6) socket is named in its mapped form (`::ffff:127.0.0.1`)
 * while its own socket is listed in the IPv4 table, and the reverse: every form is asked.
 */
export function connectionKeys(local: Endpoint, remote: Endpoint): string[] {
  const forms = (endpoint: Endpoint): Endpoint[] => {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(endpoint.address);
    if (mapped) return [endpoint, { address: mapped[1]!, port: endpoint.port }];
    if (isIPv4(endpoint.address)) return [endpoint, { address: `::ffff:${endpoint.address}`, port: endpoint.port }];
    return [endpoint];
  };
  const keys: string[] = [];
  for (const l of forms(local)) for (const r of forms(remote)) {
    const key = connectionKey(l, r);
    if (key !== undefined && !keys.includes(key)) keys.push(key);
  }
  return keys;
}

/** Parses one table's text into `owners` (columns: sl local remote st … uid …), the lines `keep` keeps. */
function parseTable(text: string, owners: Map<string, number>, keep: ((line: string) => boolean) | undefined): void {
  const header = text.indexOf("\n");
  if (header !== -1) parseLines(text, header + 1, owners, keep);
}

/** Parses the whole lines of `text` from `start` on (a table's rows, its header line skipped) into `owners`. */
function parseLines(text: string, start: number, owners: Map<string, number>, keep: ((line: string) => boolean) | undefined, onKey?: (key: string) => void): void {
  while (start < text.length) {
    let end = text.indexOf("\n", start);
    if (end === -1) end = text.length;
    const line = text.slice(start, end);
    start = end + 1;
    if (keep !== undefined && !keep(line)) continue;
    const fields = line.trim().split(/\s+/);
    if (fields.length < 8) continue;
    const uid = Number.parseInt(fields[7]!, 10);
    if (!Number.isInteger(uid)) continue;
    const key = `${fields[1]}->${fields[2]}`;
    owners.set(key, uid);
    onKey?.(key);
  }
}

/**
 * Every local TCP socket's owner (of the lines `keep` keeps: a cheap substring test spares parsing
 * the rest of a big table), or null where the tables cannot be read (not Linux).
 */
export function readSocketOwners(keep?: (line: string) => boolean): SocketOwners | null {
  const owners = new Map<string, number>();
  let read = false;
  for (const table of TABLES) {
    try {
      parseTable(readFileSync(table, "latin1"), owners, keep);
      read = true;
    } catch {
      // tcp6 is absent without IPv6; both absent: not Linux.
    }
  }
  return read ? owners : null;
}

/** The IPv4 table alone: a caller that finds what it asks there spares reading (and the kernel producing) the IPv6 one. */
export const IPV4_TABLE: readonly string[] = [TABLES[0]];

/**
 * `readSocketOwners` off the event loop (of `tables`, by default both). With many sockets the tables are big (20,000 sockets:
 * 3 MB, ≈ 200 ms of kernel time to produce), so a server under a flood must not read them on
 * its main thread; callers batch their questions into one read at a time.
 */
export async function readSocketOwnersAsync(keep?: (line: string) => boolean, tables: readonly string[] = TABLES): Promise<SocketOwners | null> {
  const owners = new Map<string, number>();
  let read = false;
  for (const table of tables) {
    try {
      parseTable(await readFile(table, "latin1"), owners, keep);
      read = true;
    } catch {
      // as readSocketOwners
    }
  }
  return read ? owners : null;
}

/**
 * `readSocketOwnersAsync` that stops reading as soon as every socket of `wanted` is found (each
 * given as its `connectionKeys`, any one of which names it): the kernel makes a table a page at a
 * time as it is read (a few KiB per read, each walking on through its socket hash), so sockets
 * found early spare making and reading the rest — with a few hundred sockets listed (a browser's,
 * or the TIME_WAIT ends of a busy loopback) a whole table costs milliseconds of kernel time. Each
 * row costs one map lookup, however many sockets are wanted. A table that cannot be opened, or
 * read to where the scan stopped, counts as unread.
 */
export async function scanSocketOwnersAsync(
  keep: (line: string) => boolean,
  wanted: readonly (readonly string[])[],
  tables: readonly string[] = TABLES,
): Promise<SocketOwners | null> {
  const owners = new Map<string, number>();
  const socketsByKey = new Map<string, number[]>();
  for (const [index, keys] of wanted.entries()) for (const key of keys) socketsByKey.set(key, [...(socketsByKey.get(key) ?? []), index]);
  const found = new Set<number>();
  const onKey = (key: string): void => {
    for (const index of socketsByKey.get(key) ?? []) found.add(index);
  };
  const done = (): boolean => found.size === wanted.length;
  let read = false;
  const buffer = Buffer.allocUnsafe(64 * 1024);
  for (const table of tables) {
    let handle: FileHandle;
    try {
      handle = await open(table, "r");
    } catch {
      continue;
    }
    try {
      // `pending`: the text after the last whole line read so far; the first line read is the header.
      let headerRead = false;
      let pending = "";
      for (;;) {
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
        if (bytesRead === 0) break;
        pending += buffer.toString("latin1", 0, bytesRead);
        const last = pending.lastIndexOf("\n");
        if (last === -1) continue;
        const whole = pending.slice(0, last + 1);
        pending = pending.slice(last + 1);
        parseLines(whole, headerRead ? 0 : whole.indexOf("\n") + 1, owners, keep, onKey);
        headerRead = true;
        if (done()) return owners;
      }
      if (headerRead && pending !== "") parseLines(pending, 0, owners, keep, onKey);
      read = true;
    } catch {
      // as readSocketOwners
    } finally {
      await handle.close().catch(() => undefined);
    }
    if (done()) return owners;
  }
  return read ? owners : null;
}

let readable: boolean | undefined;
/** Whether this system has the socket tables at all (asked once). */
export const socketTableReadable = (): boolean => (readable ??= readSocketOwners(() => false) !== null);

/** The uid owning the socket `local -> remote` in `owners`, or undefined when it is not listed. */
export function ownerOf(owners: SocketOwners, local: Endpoint, remote: Endpoint): number | undefined {
  for (const key of connectionKeys(local, remote)) {
    const uid = owners.get(key);
    if (uid !== undefined) return uid;
  }
  return undefined;
}

/** This process's effective uid (undefined where there are no uids). */
export const ownUid = (): number | undefined => (typeof process.geteuid === "function" ? process.geteuid() : undefined);
