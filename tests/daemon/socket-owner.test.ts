// procEndpoint names an endpoint as /proc/net/tcp{,6} prints it. It parses IPv6 itself (net.isIPv6
// costs milliseconds per call on the daemon client's path), so it must accept exactly what Node
// accepts and produce the kernel's word-reversed hex.
import { connect, createServer, isIP, type AddressInfo, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { connectionKeys, ownerOf, procEndpoint, readSocketOwnersAsync, scanSocketOwnersAsync } from "../../services/contract/socket-owner.js";

const addresses = [
  "127.0.0.1", "0.0.0.0", "10.1.2.3", "::1", "::", "::ffff:127.0.0.1", "::FFFF:7f00:1", "fe80::1%lo", "fe80::1%",
  "2001:db8::8a2e:370:7334", "2001:0db8:0000:0000:0000:ff00:0042:8329", "1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7::", "::2:3:4:5:6:7:8",
  "1:2:3:4:5:6:7:8:9", "1:2:3:4::5:6:7:8", "1::2::3", ":::", "12345::", "g::1", "::ffff:256.0.0.1", "::ffff:1.2.3", "1.2.3.4::",
  "localhost", "", ":", "1:2:3:4:5:6:1.2.3.4", "::1.2.3.4", "1:2:3:4:5:6:7:1.2.3.4", " ::1", "::1 ",
];

describe("procEndpoint", () => {
  it("accepts exactly the addresses Node accepts", () => {
    for (const address of addresses) {
      expect({ address, named: procEndpoint({ address, port: 80 }) !== undefined }).toEqual({ address, named: isIP(address) !== 0 });
    }
  });

  it("prints each 32-bit word reversed, as the kernel does", () => {
    expect(procEndpoint({ address: "127.0.0.1", port: 4317 })).toBe("0100007F:10DD");
    expect(procEndpoint({ address: "::1", port: 80 })).toBe("00000000000000000000000001000000:0050");
    expect(procEndpoint({ address: "::ffff:127.0.0.1", port: 80 })).toBe("0000000000000000FFFF00000100007F:0050");
    expect(procEndpoint({ address: "::FFFF:7F00:1", port: 80 })).toBe(procEndpoint({ address: "::ffff:127.0.0.1", port: 80 }));
  });

  it("asks every form of a dual-stack connection", () => {
    expect(new Set(connectionKeys({ address: "127.0.0.1", port: 1 }, { address: "::ffff:127.0.0.1", port: 2 }))).toEqual(new Set([
      "0100007F:0001->0100007F:0002",
      "0100007F:0001->0000000000000000FFFF00000100007F:0002",
      "0000000000000000FFFF00000100007F:0001->0100007F:0002",
      "0000000000000000FFFF00000100007F:0001->0000000000000000FFFF00000100007F:0002",
    ]));
  });
});

describe("scanSocketOwnersAsync", () => {
  it("finds the owners of the sockets it waits for, as a whole read does, and reads no further than it must", async () => {
    const server = createServer((socket) => socket.on("error", () => undefined));
    await new Promise<void>((resolvePromise) => server.listen(0, "127.0.0.1", resolvePromise));
    const { port } = server.address() as AddressInfo;
    // Several connections, so the rows of those not waited for can tell how far the scan read.
    const clients = await Promise.all(
      Array.from({ length: 40 }, () => new Promise<Socket>((resolvePromise) => {
        const socket = connect(port, "127.0.0.1", () => resolvePromise(socket));
      })),
    );
    try {
      const ends = clients.map((socket) => ({ client: { address: socket.localAddress!, port: socket.localPort! }, server: { address: "127.0.0.1", port } }));
      const keep = (line: string): boolean => line.includes(`:${port.toString(16).toUpperCase().padStart(4, "0")} `);
      const whole = await readSocketOwnersAsync(keep);
      const scanned = await scanSocketOwnersAsync(keep, ends.map(({ client, server: end }) => connectionKeys(client, end)));
      expect(scanned).not.toBeNull();
      for (const { client, server: end } of ends) {
        expect(ownerOf(scanned!, client, end)).toBe(process.geteuid!());
        expect(ownerOf(scanned!, client, end)).toBe(ownerOf(whole!, client, end));
      }
      // Waiting for one socket: found like the rest, and the scan holds no more rows than the whole table.
      const one = await scanSocketOwnersAsync(keep, [connectionKeys(ends[0]!.client, ends[0]!.server)]);
      expect(ownerOf(one!, ends[0]!.client, ends[0]!.server)).toBe(process.geteuid!());
      expect(one!.size).toBeLessThanOrEqual(whole!.size);
      // A socket that is not there: the whole table is read, and it stays unknown.
      const absent = await scanSocketOwnersAsync(keep, [connectionKeys({ address: "127.0.0.1", port: 1 }, { address: "127.0.0.1", port })]);
      expect(absent!.size).toBe(whole!.size);
      expect(ownerOf(absent!, { address: "127.0.0.1", port: 1 }, { address: "127.0.0.1", port })).toBeUndefined();
    } finally {
      for (const socket of clients) socket.destroy();
      await new Promise((resolvePromise) => server.close(resolvePromise));
    }
  });
});
