// The daemon transport's listener check (services/daemon/transport.ts verifyPeerOwner) on this
// user's own listeners: an IPv4 one (found in the IPv4 socket table alone), a dual-stack one
// reached over IPv4 (its accepted end is listed in the IPv6 table in mapped form) and an IPv6
// one all pass; another user's listener is refused in tests/trust/daemon-impostor.test.ts.
// Its first read stops at the first line naming the listener's end (firstListedOwner, below).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, connect, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { connectionKeys, readSocketOwners } from "../../services/contract/socket-owner.js";
import { firstListedOwner, verifyPeerOwner } from "../../services/daemon/transport.js";

const servers: Server[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await Promise.all(servers.splice(0).map((server) => new Promise((resolvePromise) => server.close(resolvePromise))));
});

/** A listener on `host` (null: it could not bind there) and a connection to it at `address`. */
async function connected(host: string, address: string): Promise<Socket | null> {
  const server = createServer((socket) => socket.on("error", () => {}));
  const bound = await new Promise<boolean>((resolvePromise) => {
    server.once("error", () => resolvePromise(false));
    server.listen(0, host, () => resolvePromise(true));
  });
  if (!bound) return null;
  servers.push(server);
  const port = (server.address() as { port: number }).port;
  const socket = connect({ host: address, port });
  sockets.push(socket);
  await new Promise<void>((resolvePromise, reject) => socket.once("connect", resolvePromise).once("error", reject));
  return socket;
}

it.runIf(readSocketOwners(() => false) !== null)("passes this user's IPv4, dual-stack and IPv6 listeners", async () => {
  const ipv4 = await connected("127.0.0.1", "127.0.0.1");
  expect(ipv4).not.toBeNull();
  await expect(verifyPeerOwner(ipv4!)).resolves.toBeUndefined();
  const dualStack = await connected("::", "127.0.0.1");
  if (dualStack !== null) await expect(verifyPeerOwner(dualStack)).resolves.toBeUndefined();
  const ipv6 = await connected("::1", "::1");
  if (ipv6 !== null) await expect(verifyPeerOwner(ipv6)).resolves.toBeUndefined();
});

// The first read (firstListedOwner): a socket table read a page at a time up to the first line
// naming the listener's end. Fixture tables in /proc's format, so the lines are known.
describe("firstListedOwner", () => {
  const dir = mkdtempSync(join(tmpdir(), "ze-socket-table-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const header = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode";
  const line = (index: number, local: string, remote: string, state: string, uid: number): string =>
    `${String(index).padStart(4)}: ${local} ${remote} ${state} 00000000:00000000 00:00000000 00000000 ${String(uid).padStart(5)}        0 ${1000 + index} 1 0000000000000000 100 0 0 10 0`;
  const table = (name: string, lines: readonly string[]): string => {
    const file = join(dir, name);
    writeFileSync(file, `${[header, ...lines].join("\n")}\n`);
    return file;
  };
  // The daemon at 127.0.0.1:4096 (0100007F:1000); this client at 127.0.0.1:50000 (0100007F:C350).
  const peer = { address: "127.0.0.1", port: 4096 };
  const mine = { address: "127.0.0.1", port: 50000 };
  const keys = new Set([...connectionKeys(peer, mine), ...connectionKeys(peer, { address: "0.0.0.0", port: 0 })]);

  it("answers the owner of the first line naming the listening socket or the accepted one, and stops there", () => {
    const listening = line(0, "0100007F:1000", "00000000:0000", "0A", 1234);
    const accepted = line(1, "0100007F:1000", "0100007F:C350", "01", 1234);
    expect(firstListedOwner(table("listening.txt", [line(0, "0100007F:1F90", "00000000:0000", "0A", 7), listening, accepted]), keys, "1000")).toBe(1234);
    expect(firstListedOwner(table("accepted.txt", [line(0, "0100007F:1F90", "00000000:0000", "0A", 7), accepted]), keys, "1000")).toBe(1234);
    // Our own end (local = ours, remote = the daemon) and a wildcard listener on the port are not the listener's end.
    const ours = line(0, "0100007F:C350", "0100007F:1000", "01", 99);
    const wildcard = line(1, "00000000:1000", "00000000:0000", "0A", 98);
    expect(firstListedOwner(table("neither.txt", [ours, wildcard]), keys, "1000")).toBeUndefined();
    // The first naming line decides; what follows it is not read (here: another owner after it).
    expect(firstListedOwner(table("first.txt", [line(0, "0100007F:1000", "00000000:0000", "0A", 55), line(1, "0100007F:1000", "0100007F:C350", "01", 66)]), keys, "1000")).toBe(55);
  });

  it("finds a line past the first page and across a read boundary; a missing table answers undefined", () => {
    const filler = Array.from({ length: 3000 }, (_, index) => line(index, "0100007F:2000", `0100007F:${(10000 + index).toString(16).toUpperCase()}`, "06", 5));
    expect(firstListedOwner(table("long.txt", [...filler, line(3000, "0100007F:1000", "0100007F:C350", "01", 4321)]), keys, "1000")).toBe(4321);
    expect(firstListedOwner(join(dir, "absent.txt"), keys, "1000")).toBeUndefined();
  });
});
