// The daemon transport's listener check (services/daemon/transport.ts verifyPeerOwner) on this
// user's own listeners: an IPv4 one (found in the IPv4 socket table alone), a dual-stack one
// reached over IPv4 (its accepted end is listed in the IPv6 table in mapped form) and an IPv6
// one all pass; another user's listener is refused in tests/trust/daemon-impostor.test.ts.
import { createServer, connect, type Server, type Socket } from "node:net";
import { afterEach, expect, it } from "vitest";
import { readSocketOwners } from "../../services/contract/socket-owner.js";
import { verifyPeerOwner } from "../../services/daemon/transport.js";

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
