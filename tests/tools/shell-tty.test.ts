// `shell` with `tty: true` inside real Turns (the in-process harness, the scripted test model
// through the real SDK path): the command runs in a real PTY registered as one of the Session's
// terminals (origin the call), a client lists it, follows its output live and answers its prompt
// while the Turn waits; the result is the emulator's plain text; timeout and cancellation kill the
// process group; the styled display stays readable, across a host restart too. Without a
// terminal host the call fails `terminal_unavailable`. Every SSE event is checked against the contract.
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { sdk, type TerminalDisplayEvent, type TerminalStreamEvent, type ToolTurnPart, type Turn } from "../../clients/index.js";
import { shellTool } from "../../services/tools/index.js";
import { ok } from "../support/calls.js";
import { startHarness } from "../support/harness.js";
import { startModelHarness, type ModelHarness } from "../support/model.js";
import { readSse, terminalBytes, terminalDisplay } from "../support/terminals.js";
import { cancel, queue, runToEnd, seen, server, waitForTurnEvent } from "../turns/helpers.js";
import { call, context, expectCode, isAlive, workspace } from "./helpers.js";

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

const done = (words = "Done.") => ({ events: [{ type: "text" as const, text: words }] });
const ttyCall = (command: string, extra: Record<string, unknown> = {}) => ({ events: [{ type: "tool_call" as const, name: "shell", arguments: { command, tty: true, ...extra } }] });
const toolPart = (turn: Turn): ToolTurnPart => turn.parts.find((part): part is ToolTurnPart => part.type === "tool")!;
const resultText = (part: ToolTurnPart): string => {
  expect(part.canonicalResult?.format).toBe("text");
  return part.canonicalResult!.value as string;
};
const terminalIdOf = (text: string): string => /^\(Ran in terminal ([0-9a-f-]{36})\.\)/.exec(text)![1]!;

const bytesOf = terminalBytes;

const displayOf = (harness: { fetch: (request: Request) => Promise<Response> }, sessionId: string, terminalId: string): Promise<TerminalDisplayEvent[]> =>
  terminalDisplay(harness, server, sessionId, terminalId);

const listTerminals = async (harness: { api: ModelHarness["api"] }, sessionId: string) =>
  (await ok(sdk.listTerminals({ client: harness.api.client, path: { server, sessionId } }))).terminals;

describe("shell with tty: true", () => {
  it("runs the command on a terminal and returns the plain screen text and the exit code; the styled display stays readable", async () => {
    const before = h.model.requests.length;
    const long = "L".repeat(150) + "-end";
    h.model.enqueue(
      ttyCall(`if [ -t 1 ]; then printf '\\033[1;31mred\\033[0m is a tty\\n'; else echo 'no tty'; fi; echo "TERM=$TERM in $(pwd)"; echo ${long}; exit 3`),
      done("Saw it."),
    );
    const sessionId = await h.createSession();
    const { turnId } = await queue(h, sessionId, "Run it in a terminal");
    const { turn } = await runToEnd(h, sessionId, turnId);
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "Saw it." });
    const part = toolPart(turn);
    expect(part).toMatchObject({ toolId: "shell", state: "completed" });
    const text = resultText(part);
    const terminalId = terminalIdOf(text);
    // Plain text: no escape sequences, the 150-column line joined across its soft wrap.
    expect(text).toBe(`(Ran in terminal ${terminalId}.)\nred is a tty\nTERM=xterm-256color in ${h.home.root}\n${long}\n(exit code 3)`);
    expect(text).not.toContain("\u001b");
    expect(part.artifact).toBeUndefined();
    expect(seen(h.model.requests[before + 1])).toContain("red is a tty");

    // The Session's terminal, its origin this call, closed.
    const [terminal, ...others] = await listTerminals(h, sessionId);
    expect(others).toEqual([]);
    expect(terminal).toMatchObject({
      terminalId,
      status: "exited",
      exitCode: 3,
      command: ["/bin/sh", "-c", expect.stringContaining("[ -t 1 ]")],
      initialSize: { cols: 120, rows: 40 },
      displayAvailable: true,
      origin: { kind: "tool", turnId, toolCallId: part.toolCallId },
    });
    // The styled display: `red` is bold and palette colour 1; soft-wrapped rows are marked.
    const events = await displayOf(h, sessionId, terminalId);
    const begin = events[0] as Extract<TerminalDisplayEvent, { type: "terminal.display.begin" }>;
    const rows = events.flatMap((event) => (event.type === "terminal.display.rows" ? event.rows : []));
    const redRow = rows.find((row) => row.cells.map((cell) => cell.text).join("").startsWith("red is a tty"))!;
    expect(begin.styles[redRow.cells[0]!.style]).toMatchObject({ foreground: "1", bold: true });
    expect(begin.styles[redRow.cells[4]!.style]).toMatchObject({ foreground: "default", bold: false });
    const longRow = rows.findIndex((row) => row.cells[0]!.text === "L");
    expect([rows[longRow]!.wrapped, rows[longRow + 1]!.wrapped]).toEqual([true, false]);
  });

  it("is listed and watchable while it runs, and a client's input answers its prompt while the Turn waits", async () => {
    h.model.enqueue(ttyCall(`printf 'name? '; read x; echo "got $x"`, { description: "asks a name" }), done());
    const sessionId = await h.createSession();
    const { turnId } = await queue(h, sessionId, "Ask me");
    // Activity carries the latest plain tail of the screen.
    const activity = await waitForTurnEvent(h, sessionId, turnId, "turn.tool.activity", (event) => event.activity.preview?.includes("name?") === true);
    expect(activity.activity).toMatchObject({ message: "asks a name", preview: "name?" });
    const [running] = await listTerminals(h, sessionId);
    expect(running).toMatchObject({ status: "running", outputAvailable: true, origin: { kind: "tool", turnId, toolCallId: activity.toolCallId } });
    const terminalId = running!.terminalId;

    const path = `/v1/servers/${server}/sessions/${sessionId}/terminals/${terminalId}/output/events`;
    const response = await h.fetch(new Request(`http://localhost${path}?after=0`));
    const seenEvents: TerminalStreamEvent[] = [];
    let sent = false;
    const events = await readSse<TerminalStreamEvent>(response, path, (event) => {
      seenEvents.push(event);
      if (!sent && bytesOf(seenEvents).includes("name? ")) {
        sent = true;
        void ok(sdk.writeTerminalInput({ client: h.api.client, path: { server, sessionId, terminalId }, body: { text: "Ada\r" } }));
      }
      return event.type === "terminal.closed";
    });
    expect(events[0]).toMatchObject({ type: "terminal.ready", terminal: { terminalId, origin: { kind: "tool", turnId } } });
    expect(events.at(-1)).toMatchObject({ type: "terminal.closed", exitCode: 0 });
    expect(bytesOf(events)).toContain("got Ada");

    const { turn } = await runToEnd(h, sessionId, turnId);
    expect(resultText(toolPart(turn))).toBe(`(Ran in terminal ${terminalId}.)\nname? Ada\ngot Ada\n(exit code 0)`);
    expect((await listTerminals(h, sessionId))[0]).toMatchObject({ terminalId, status: "exited", exitCode: 0 });
  });

  it("stops the command and its children at the timeout; the call succeeds saying so and the terminal is closed", async () => {
    h.model.enqueue(ttyCall("echo started; sleep 30 & echo $! > sleeper.pid; wait", { timeoutMs: 1000 }), done());
    const sessionId = await h.createSession();
    const { turnId } = await queue(h, sessionId, "Run something slow");
    const { turn } = await runToEnd(h, sessionId, turnId);
    const text = resultText(toolPart(turn));
    const terminalId = terminalIdOf(text);
    expect(text).toBe(`(Ran in terminal ${terminalId}.)\nstarted\n(Timed out after 1000 ms; the command and its child processes were stopped.)`);
    const pid = Number(readFileSync(join(h.home.root, "sleeper.pid"), "utf8"));
    expect(isAlive(pid)).toBe(false);
    expect((await listTerminals(h, sessionId)).find((entry) => entry.terminalId === terminalId)).toMatchObject({ status: "exited", signal: "SIGKILL", displayAvailable: true });
  });

  it("cancelling the Turn kills the command; the call settles as interrupted and the terminal is closed", async () => {
    h.model.enqueue(ttyCall("sleep 30 & echo $! > cancelled.pid; echo waiting; wait"));
    const sessionId = await h.createSession();
    const { turnId } = await queue(h, sessionId, "Run and cancel");
    await waitForTurnEvent(h, sessionId, turnId, "turn.tool.activity", (event) => event.activity.preview?.includes("waiting") === true);
    await cancel(h, sessionId, turnId);
    const { turn } = await runToEnd(h, sessionId, turnId);
    expect(turn.phase).toBe("cancelled");
    expect(toolPart(turn)).toMatchObject({ toolId: "shell", state: "failed", fault: { code: "interrupted" } });
    const pid = Number(readFileSync(join(h.home.root, "cancelled.pid"), "utf8"));
    expect(isAlive(pid)).toBe(false);
    const [terminal] = await listTerminals(h, sessionId);
    expect(terminal).toMatchObject({ status: "exited", signal: "SIGKILL", origin: { kind: "tool", turnId } });
  });

  it("keeps the last 50 KiB of long screen text and writes all of it to an artifact", async () => {
    const line = "x".repeat(99);
    h.model.enqueue(ttyCall(`i=0; while [ $i -lt 1000 ]; do echo "$i ${line}"; i=$((i+1)); done`), done());
    const sessionId = await h.createSession();
    const { turnId } = await queue(h, sessionId, "Lots of output");
    const { turn } = await runToEnd(h, sessionId, turnId);
    const part = toolPart(turn);
    const text = resultText(part);
    expect(part.artifact).toMatchObject({ state: "complete", path: expect.stringMatching(/^\.ze-harness\/tool-output\/[0-9a-f-]{36}\.log$/) });
    const full = readFileSync(join(h.home.root, part.artifact!.path), "utf8");
    expect(statSync(join(h.home.root, part.artifact!.path)).mode & 0o777).toBe(0o600);
    expect(statSync(join(h.home.root, ".ze-harness/tool-output")).mode & 0o777).toBe(0o700);
    const lines = full.split("\n");
    expect(lines).toHaveLength(1000);
    expect(lines[0]).toBe(`0 ${line}`);
    expect(lines[999]).toBe(`999 ${line}`);
    expect(part.artifact!.observedBytes).toBe(Buffer.byteLength(full));
    expect(text).toContain(`(Output truncated: showing the last 51200 of ${Buffer.byteLength(full)} bytes of the screen text; all of it is in ${part.artifact!.path}.)`);
    expect(text.endsWith(`999 ${line}\n(exit code 0)`)).toBe(true);
    expect(text).not.toContain(`\n0 ${line}\n`);
  });

  it("says so when the terminal's history was full", async () => {
    h.model.enqueue(ttyCall("seq 1 8000"), done());
    const sessionId = await h.createSession();
    const { turnId } = await queue(h, sessionId, "Many lines");
    const { turn } = await runToEnd(h, sessionId, turnId);
    const text = resultText(toolPart(turn));
    expect(text).toContain("(The terminal's history was full: earlier output is not in this text.)");
    expect(text.endsWith("\n7999\n8000\n(exit code 0)")).toBe(true);
    expect(text).not.toContain("\n1\n2\n3\n");
  });

  it("keeps the display of a tool terminal across a host restart", async () => {
    const own = await startModelHarness();
    let closed = false;
    try {
      own.model.enqueue(ttyCall("printf '\\033[32mgreen-survives\\033[0m\\n'"), done());
      const sessionId = await own.createSession();
      const { turnId } = await queue(own, sessionId, "Colour");
      const { turn } = await runToEnd(own, sessionId, turnId);
      const terminalId = terminalIdOf(resultText(toolPart(turn)));
      await own.harness.close();
      closed = true;
      const again = await startHarness({}, own.home);
      try {
        const [terminal] = await listTerminals(again, sessionId);
        expect(terminal).toMatchObject({ terminalId, status: "exited", exitCode: 0, outputAvailable: false, displayAvailable: true, origin: { kind: "tool", turnId } });
        const events = await displayOf(again, sessionId, terminalId);
        const begin = events[0] as Extract<TerminalDisplayEvent, { type: "terminal.display.begin" }>;
        const row = events.flatMap((event) => (event.type === "terminal.display.rows" ? event.rows : [])).find((entry) => entry.cells.map((cell) => cell.text).join("").startsWith("green-survives"))!;
        expect(begin.styles[row.cells[0]!.style]).toMatchObject({ foreground: "2" });
      } finally {
        await again.close();
      }
    } finally {
      if (!closed) await own.harness.close();
      await own.model.close();
      own.home.cleanup();
    }
  });
});

describe("shell with tty: true at host shutdown", () => {
  it("interrupts the call and kills the command before the terminals stop; the row ends exited", async () => {
    const own = await startModelHarness();
    let closed = false;
    try {
      own.model.enqueue(ttyCall("sleep 30 & echo $! > shutdown.pid; echo waiting; wait"));
      const sessionId = await own.createSession();
      const { turnId } = await queue(own, sessionId, "Run until shutdown");
      await waitForTurnEvent(own, sessionId, turnId, "turn.tool.activity", (event) => event.activity.preview?.includes("waiting") === true);
      const pid = Number(readFileSync(join(own.home.root, "shutdown.pid"), "utf8"));
      await own.harness.close();
      closed = true;
      expect(isAlive(pid)).toBe(false);
      const again = await startHarness({}, own.home);
      try {
        const [terminal] = await listTerminals(again, sessionId);
        // Killed by the interrupted call (SIGKILL), not hung up by the terminal host's stop (SIGHUP).
        expect(terminal).toMatchObject({ status: "exited", signal: "SIGKILL", displayAvailable: true, origin: { kind: "tool", turnId } });
      } finally {
        await again.close();
      }
    } finally {
      if (!closed) await own.harness.close();
      await own.model.close();
      own.home.cleanup();
    }
  });
});

describe("shell with tty: true and no terminal host", () => {
  it("fails with terminal_unavailable and runs nothing", async () => {
    const ws = workspace();
    try {
      await expectCode(call(shellTool, { command: "touch ran", tty: true }, context(ws.workdir)), "terminal_unavailable");
      expect(existsSync(join(ws.workdir, "ran"))).toBe(false);
    } finally {
      ws.dispose();
    }
  });

  it("keeps the permission projection of a normal shell call", () => {
    const ws = workspace();
    try {
      expect(shellTool.permissions({ command: "ls", tty: true }, context(ws.workdir))).toEqual(shellTool.permissions({ command: "ls" }, context(ws.workdir)));
      expect(shellTool.permissions({ command: "ls", tty: true }, context(ws.workdir))).toEqual([{ action: "shell", resources: ["ls"], save: ["ls"] }]);
    } finally {
      ws.dispose();
    }
  });
});
