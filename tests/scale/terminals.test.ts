// Terminals of hosts on one libSQL server (sqld): another host's PTY row is judged by its lease,
// which its host renews while the PTY runs, never by its owner pid — a pid from another machine
// or PID namespace names nothing here, or an unrelated live process (docs/scale.md).
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import { TerminalHost } from "../../services/host/terminals.js";
import { openDatabase, sessions, terminals, type StorageHandle } from "../../services/storage/index.js";
import { newSession, tempStateDirectory } from "../storage/helpers.js";
import { startSqld, type Sqld } from "../support/sqld.js";

let sqld: Sqld;
let storage: StorageHandle;

beforeAll(async () => {
  sqld = await startSqld();
  storage = await openDatabase({ url: sqld.url, stateDirectory: await tempStateDirectory() });
  await sessions.insertSession(storage, newSession("s"));
});

afterAll(async () => {
  await storage?.close();
  await sqld?.stop();
});

/** A running terminal row another host wrote: its owner pid and lease as given. */
async function otherHosts(ownerPid: number, leaseExpiresAt: number | null): Promise<string> {
  const id = randomUUID();
  await terminals.insertTerminal(storage, {
    id,
    sessionId: "s",
    command: ["sh"],
    requestHash: "h",
    initialCols: 80,
    initialRows: 24,
    cols: 80,
    rows: 24,
    createdAt: Date.now(),
    ownerPid,
    ownerInstance: randomUUID(),
    leaseExpiresAt,
  });
  return id;
}

it("keeps another host's terminal running while its lease holds, whatever its pid names here, and settles it once the lease ran out", async () => {
  const host = new TerminalHost(storage, await tempStateDirectory());
  try {
    // Pid 2 ** 22 + 1 exists on no Linux machine; this process's own pid is alive. Neither says anything about the other host.
    const leased = await otherHosts(2 ** 22 + 1, Date.now() + 60_000);
    const expired = await otherHosts(process.pid, Date.now() - 1);
    expect(await host.get("local", "s", leased)).toMatchObject({ status: "running", outputAvailable: false });
    expect(await host.get("local", "s", expired)).toMatchObject({ status: "exited", outputAvailable: false });
    expect((await host.list("local", "s")).map((terminal) => [terminal.terminalId, terminal.status]).sort()).toEqual(
      [
        [leased, "running"],
        [expired, "exited"],
      ].sort(),
    );
  } finally {
    await host.stop();
  }
});

it("renews the lease of the terminals it runs", async () => {
  const host = new TerminalHost(storage, await tempStateDirectory(), {}, undefined, 300);
  try {
    const opened = await host.open("local", "s", randomUUID(), { command: ["sh", "-c", "read line"] } as never);
    const first = (await terminals.getTerminal(storage, "s", opened.terminalId))!.leaseExpiresAt!;
    expect(first).toBeGreaterThan(Date.now());
    // Renewed every third of the lease: wait for the row to move on, then see it is still running.
    let renewed = first;
    while (renewed === first) renewed = await new Promise<number>((resolve) => setTimeout(async () => resolve((await terminals.getTerminal(storage, "s", opened.terminalId))!.leaseExpiresAt!), 50));
    expect(renewed).toBeGreaterThan(first);
  } finally {
    await host.stop();
  }
});
