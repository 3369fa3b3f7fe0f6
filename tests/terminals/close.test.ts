// Closing a terminal always ends it (found by the contract fuzzer: closeTerminal answered nothing
// for 30 s). Two causes, both in services/workspace/terminals/live.ts: a close right after the
// open signalled the process group before the forked child had called setsid() (ESRCH, ignored:
// nothing was signalled and the shell ran on), and an interactive shell ignores SIGINT in a
// process group of its own, so close(SIGINT) waited for an exit that never came.
import { randomUUID } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { sdk, type TerminalStreamEvent } from "../../clients/index.js";
import { ok } from "../support/calls.js";
import { startHarness, type TestHarness } from "../support/harness.js";
import { readSse } from "../support/terminals.js";

const server = "local";
let h: TestHarness;
let sessionId: string;
beforeEach(async () => {
  h = await startHarness();
  sessionId = randomUUID();
  await ok(sdk.createSession({ client: h.api.client, path: { server, sessionId }, body: {} }));
});
afterEach(async () => {
  await h.close();
});

const open = async (command: string[]): Promise<string> => {
  const terminalId = randomUUID();
  await ok(sdk.openTerminal({ client: h.api.client, path: { server, sessionId, terminalId }, body: { command } }));
  return terminalId;
};

describe("closeTerminal", () => {
  it("ends an interactive shell closed the moment it was opened, every time", async () => {
    for (let round = 0; round < 30; round++) {
      const terminalId = await open(["/bin/sh", "-i"]);
      const closed = await ok(sdk.closeTerminal({ client: h.api.client, path: { server, sessionId, terminalId }, body: {} }));
      expect({ round, status: closed.terminal.status }).toEqual({ round, status: "exited" });
    }
  });

  it("ends an interactive shell that ignores the SIGINT it was closed with", async () => {
    const terminalId = await open(["/bin/sh", "-i"]);
    // Wait for the shell's first output (its prompt): it is running and has set up its signals.
    const path = `/v1/servers/${server}/sessions/${sessionId}/terminals/${terminalId}/output/events`;
    await readSse<TerminalStreamEvent>(await h.fetch(new Request(`http://localhost${path}`)), path, (event) => event.type === "terminal.data");
    const closed = await ok(sdk.closeTerminal({ client: h.api.client, path: { server, sessionId, terminalId }, body: { signal: "SIGINT" } }));
    expect(closed.terminal.status).toBe("exited");
  });
});
