// The terminal caps: at most MAX_TERMINALS_PER_SESSION running PTYs per Session and
// MAX_TERMINALS_PER_HOST per host (300 opened unchecked before). A new terminal past a cap is a
// typed 503 (`terminal_limit`) that creates nothing; a replay is never refused; an exited
// terminal gives its place back; a `shell` call with `tty: true` counts like a client's terminal
// and is refused the same way. Real PTYs throughout, over the in-process harness (the Session
// cap at its real value) and a second TerminalHost over the same storage (the host cap, lowered).
import { randomUUID } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { sdk, type ToolTurnPart } from "../../clients/index.js";
import { MAX_TERMINALS_PER_HOST, MAX_TERMINALS_PER_SESSION, TerminalHost } from "../../services/host/terminals.js";
import { toolTerminals } from "../../services/host/tool-terminals.js";
import { failure, ok } from "../support/calls.js";
import { startModelHarness, type ModelHarness } from "../support/model.js";
import { queue, runToEnd, server, waitForTurnEvent } from "../turns/helpers.js";

let h: ModelHarness;
beforeAll(async () => {
  h = await startModelHarness();
});
afterAll(async () => {
  await h.close();
});
afterEach(() => {
  h.model.reply(() => ({ events: [{ type: "text", text: "unscripted" }] }));
});

/** A PTY that runs until its input is closed (`cat` reads the terminal). */
const waiting = { command: ["/bin/cat"] };

const openCall = (sessionId: string, terminalId: string = randomUUID(), body: Record<string, unknown> = waiting) =>
  sdk.openTerminal({ client: h.api.client, path: { server, sessionId, terminalId }, body });

async function openMany(sessionId: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  // One at a time: each open is a PTY and a row; the machine is shared.
  for (let index = 0; index < count; index += 1) ids.push((await ok(openCall(sessionId))).terminal.terminalId);
  return ids;
}

const closeAll = (sessionId: string, ids: readonly string[]) =>
  Promise.all(ids.map((terminalId) => ok(sdk.closeTerminal({ client: h.api.client, path: { server, sessionId, terminalId }, body: {} }))));

const listed = async (sessionId: string) => (await ok(sdk.listTerminals({ client: h.api.client, path: { server, sessionId } }))).terminals;

describe("terminal caps", () => {
  it("names its bounds", () => {
    expect([MAX_TERMINALS_PER_SESSION, MAX_TERMINALS_PER_HOST]).toEqual([32, 256]);
  });

  it("refuses a Session's terminal past the cap with a typed 503 that creates nothing; a replay and other Sessions still work; an exit frees a place", async () => {
    const sessionId = await h.createSession();
    const ids = await openMany(sessionId, MAX_TERMINALS_PER_SESSION);

    const refusedId = randomUUID();
    const refused = await failure(openCall(sessionId, refusedId));
    expect(refused).toMatchObject({ status: 503, body: { _tag: "UnavailableError", reason: "terminal_limit", message: expect.stringContaining(`${MAX_TERMINALS_PER_SESSION} running terminals`) } });
    expect(await listed(sessionId)).toHaveLength(MAX_TERMINALS_PER_SESSION);
    expect(await failure(sdk.getTerminal({ client: h.api.client, path: { server, sessionId, terminalId: refusedId } }))).toMatchObject({ status: 404 });

    // Replaying an existing terminal's identity is an answer, not a new PTY.
    expect((await ok(openCall(sessionId, ids[0]!))).terminal).toMatchObject({ terminalId: ids[0], status: "running" });
    // The cap is per Session.
    const other = await h.createSession();
    const [elsewhere] = await openMany(other, 1);

    // A terminal that exits gives its place back.
    await closeAll(sessionId, [ids[0]!]);
    const [again] = await openMany(sessionId, 1);
    expect(await failure(openCall(sessionId))).toMatchObject({ status: 503, body: { reason: "terminal_limit" } });
    await closeAll(sessionId, [...ids.slice(1), again!]);
    await closeAll(other, [elsewhere!]);
  });

  it("counts a shell call's tty terminal: a full Session refuses it, and a running one fills the Session's last place", async () => {
    const sessionId = await h.createSession();
    const ids = await openMany(sessionId, MAX_TERMINALS_PER_SESSION);
    // Full: the call fails as terminal_unavailable, naming the limit, and the Turn goes on.
    h.model.enqueue({ events: [{ type: "tool_call", name: "shell", arguments: { command: "echo never", tty: true } }] }, { events: [{ type: "text", text: "no terminal" }] });
    const full = await runToEnd(h, sessionId, (await queue(h, sessionId, "run it")).turnId);
    const refusedPart = full.turn.parts.find((part): part is ToolTurnPart => part.type === "tool")!;
    expect(refusedPart).toMatchObject({ toolId: "shell", state: "failed", fault: { code: "terminal_unavailable", message: expect.stringContaining("limit per Session") } });
    expect(full.turn.outcome).toMatchObject({ kind: "completed", text: "no terminal" });
    expect(await listed(sessionId)).toHaveLength(MAX_TERMINALS_PER_SESSION);

    // One place left: the tool's terminal takes it while it waits for input.
    await closeAll(sessionId, [ids.pop()!]);
    h.model.enqueue({ events: [{ type: "tool_call", name: "shell", arguments: { command: "printf 'go? '; read x; echo got $x", tty: true } }] }, { events: [{ type: "text", text: "ran" }] });
    const { turnId } = await queue(h, sessionId, "run it");
    await waitForTurnEvent(h, sessionId, turnId, "turn.tool.activity", (event) => event.activity.preview?.includes("go?") === true);
    expect(await failure(openCall(sessionId))).toMatchObject({ status: 503, body: { reason: "terminal_limit" } });
    const tool = (await listed(sessionId)).find((terminal) => terminal.origin?.kind === "tool" && terminal.status === "running")!;
    await ok(sdk.writeTerminalInput({ client: h.api.client, path: { server, sessionId, terminalId: tool.terminalId }, body: { text: "yes\r" } }));
    const ran = await runToEnd(h, sessionId, turnId);
    expect(ran.turn.outcome).toMatchObject({ kind: "completed", text: "ran" });
    // Its exit was stored before the call returned: the place is free again.
    const [last] = await openMany(sessionId, 1);
    await closeAll(sessionId, [...ids, last!]);
  });

  it("caps the host over every Session (a lowered cap on a second host over the same storage)", async () => {
    const host = new TerminalHost(h.harness.storage, h.home.root, { perHost: 2 });
    try {
      const [a, b, c] = [await h.createSession(), await h.createSession(), await h.createSession()];
      const first = await host.open(server, a, randomUUID(), waiting);
      await host.open(server, b, randomUUID(), waiting);
      await expect(host.open(server, c, randomUUID(), waiting)).rejects.toMatchObject({ body: { _tag: "UnavailableError", reason: "terminal_limit", message: expect.stringContaining("limit per server") } });
      // The shell tool's terminals are refused by the same count.
      const runner = toolTerminals(host).forCall({ server, sessionId: c, turnId: randomUUID(), toolCallId: "call-1" });
      await expect(runner.runCommand({ command: "echo never" })).rejects.toMatchObject({ code: "terminal_unavailable", message: expect.stringContaining("limit per server") });
      await host.close(server, a, first.terminalId);
      expect(await host.open(server, c, randomUUID(), waiting)).toMatchObject({ status: "running" });
    } finally {
      await host.stop();
    }
  });
});
