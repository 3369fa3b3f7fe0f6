// Terminals through the generated client over the in-process Fetch handler: real PTYs
// (node-pty) in the Session's workdir, the complete ordered output, resize records, the settled
// styled display read off a real emulator, persistence of the display across a host restart, the
// host environment kept out, and bad input on every operation. Every SSE event is checked
// against the contract.
import { afterEach, describe, expect, it } from "vitest";
import { sdk, type TerminalDisplayEvent, type TerminalStreamEvent } from "../../clients/index.js";
import { failure, ok } from "../support/calls.js";
import { startHarness, tempHome, type TestHarness } from "../support/harness.js";
import { readSse, terminalBytes, terminalDisplay } from "../support/terminals.js";

const server = "local";
let h: TestHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function session(harness: TestHarness): Promise<string> {
  const sessionId = crypto.randomUUID();
  await ok(sdk.createSession({ client: harness.api.client, path: { server, sessionId }, body: {} }));
  return sessionId;
}

async function open(harness: TestHarness, sessionId: string, body: Record<string, unknown>) {
  const terminalId = crypto.randomUUID();
  const { terminal } = await ok(sdk.openTerminal({ client: harness.api.client, path: { server, sessionId, terminalId }, body }));
  return terminal;
}

const outputPath = (sessionId: string, terminalId: string) => `/v1/servers/${server}/sessions/${sessionId}/terminals/${terminalId}/output/events`;

async function watchUntilClosed(harness: TestHarness, sessionId: string, terminalId: string, after = 0): Promise<TerminalStreamEvent[]> {
  const path = outputPath(sessionId, terminalId);
  const response = await harness.fetch(new Request(`http://localhost${path}?after=${after}`));
  return readSse<TerminalStreamEvent>(response, path, (event) => event.type === "terminal.closed");
}

const display = (harness: TestHarness, sessionId: string, terminalId: string): Promise<TerminalDisplayEvent[]> => terminalDisplay(harness, server, sessionId, terminalId);

const bytesOf = terminalBytes;

const rowText = (row: { cells: readonly { text: string }[] }): string => row.cells.map((cell) => cell.text || " ").join("").trimEnd();

describe("terminals", () => {
  it("runs a PTY in the workdir: input, live output, exit, the complete output in pages", async () => {
    h = await startHarness();
    const sessionId = await session(h);
    const terminal = await open(h, sessionId, { command: ["/bin/sh", "-c", "printf 'ready\\n'; read line; echo \"got:$line in $(pwd)\"; exit 7"], size: { cols: 60, rows: 10 } });
    expect(terminal).toMatchObject({ status: "running", command: ["/bin/sh", "-c", expect.any(String)], initialSize: { cols: 60, rows: 10 }, outputAvailable: true, displayAvailable: false });

    const path = outputPath(sessionId, terminal.terminalId);
    const live = h.fetch(new Request(`http://localhost${path}`));
    // The first item names where a fresh parser starts.
    const seen: TerminalStreamEvent[] = [];
    let sent = false;
    const events = await readSse<TerminalStreamEvent>(await live, path, (event) => {
      seen.push(event);
      if (!sent && bytesOf(seen).includes("ready")) {
        sent = true;
        void ok(sdk.writeTerminalInput({ client: h!.api.client, path: { server, sessionId, terminalId: terminal.terminalId }, body: { text: "hello\r" } }));
      }
      return event.type === "terminal.closed";
    });
    expect(events[0]).toMatchObject({ type: "terminal.ready", sequence: 0, terminal: { terminalId: terminal.terminalId } });
    expect(events.at(-1)).toMatchObject({ type: "terminal.closed", exitCode: 7 });
    expect(bytesOf(events)).toContain(`got:hello in ${h.home.root}`);

    // The settled row, and every byte again from a page read.
    const settled = await ok(sdk.closeTerminal({ client: h.api.client, path: { server, sessionId, terminalId: terminal.terminalId }, body: {} }));
    expect(settled.terminal).toMatchObject({ status: "exited", exitCode: 7, displayAvailable: true });
    const page = await ok(sdk.readTerminalOutput({ client: h.api.client, path: { server, sessionId, terminalId: terminal.terminalId }, query: { after: "0" } }));
    expect(page).toMatchObject({ initialSize: { cols: 60, rows: 10 }, complete: true });
    expect(bytesOf(page.events)).toBe(bytesOf(events));
    expect(page.next).toBe(page.events.at(-1)!.sequence);
    // After the last item: an empty, complete page.
    const empty = await ok(sdk.readTerminalOutput({ client: h.api.client, path: { server, sessionId, terminalId: terminal.terminalId }, query: { after: String(page.next) } }));
    expect(empty).toMatchObject({ events: [], next: page.next, complete: true });
    // Input to an exited terminal is a conflict.
    expect(await failure(sdk.writeTerminalInput({ client: h.api.client, path: { server, sessionId, terminalId: terminal.terminalId }, body: { text: "x" } }))).toMatchObject({ status: 409 });
  });

  it("batches large output within 64 KiB items and any cursor selects its exact suffix", async () => {
    h = await startHarness();
    const sessionId = await session(h);
    const terminal = await open(h, sessionId, { command: ["/bin/sh", "-c", "head -c 300000 /dev/zero | tr '\\0' x; printf END"], size: { cols: 200, rows: 50 } });
    const events = await watchUntilClosed(h, sessionId, terminal.terminalId);
    const data = events.filter((event): event is Extract<TerminalStreamEvent, { type: "terminal.data" }> => event.type === "terminal.data");
    for (const event of data) expect(event.dataBase64.length).toBeLessThanOrEqual(64 * 1024);
    const all = bytesOf(events).replaceAll("\r\n", "\n");
    expect(all.replaceAll("\n", "")).toBe(`${"x".repeat(300000)}END`);
    // Resume from the middle item's sequence: exactly the bytes after it.
    const middle = data[Math.floor(data.length / 2)]!;
    const before = bytesOf(events.slice(0, events.indexOf(middle) + 1));
    const resumed = await watchUntilClosed(h, sessionId, terminal.terminalId, middle.sequence);
    expect(resumed[0]).toMatchObject({ type: "terminal.ready", sequence: middle.sequence });
    expect(before + bytesOf(resumed)).toBe(bytesOf(events));
  });

  it("records resizes in order and settles a styled display", async () => {
    h = await startHarness();
    const sessionId = await session(h);
    const terminal = await open(h, sessionId, { command: ["/bin/sh", "-c", "read _; printf '\\033[1;31mred\\033[0m \\033[44m  \\033[0m plain\\n'; printf '\\033[?2004h'; read _"], size: { cols: 40, rows: 6 } });
    const id = { server, sessionId, terminalId: terminal.terminalId };
    const running = await h.fetch(new Request(`http://localhost/v1/servers/${server}/sessions/${sessionId}/terminals/${terminal.terminalId}/display`));
    expect(running.status).toBe(409);
    expect(await running.json()).toMatchObject({ _tag: "ConflictError" });
    const resized = await ok(sdk.resizeTerminal({ client: h.api.client, path: id, body: { cols: 50, rows: 8 } }));
    expect(resized.terminal.size).toEqual({ cols: 50, rows: 8 });
    await ok(sdk.writeTerminalInput({ client: h.api.client, path: id, body: { dataBase64: Buffer.from("go\r").toString("base64") } }));
    const watched = h.fetch(new Request(`http://localhost${outputPath(sessionId, terminal.terminalId)}`));
    // Wait until the program enabled bracketed paste (its output arrived), then end it.
    const seen: TerminalStreamEvent[] = [];
    await readSse<TerminalStreamEvent>(await watched, outputPath(sessionId, terminal.terminalId), (event) => {
      seen.push(event);
      return bytesOf(seen).includes("\u001b[?2004h");
    });
    expect(seen).toContainEqual(expect.objectContaining({ type: "terminal.resize", size: { cols: 50, rows: 8 } }));
    await ok(sdk.closeTerminal({ client: h.api.client, path: id, body: { signal: "SIGTERM" } }));

    const events = await display(h, sessionId, terminal.terminalId);
    const begin = events[0];
    expect(begin).toMatchObject({ type: "terminal.display.begin", revision: 1, size: { cols: 50, rows: 8 }, truncated: false, modes: { bracketedPaste: true, alternateScreen: false } });
    expect(events.at(-1)).toMatchObject({ type: "terminal.display.end", revision: 1 });
    if (begin?.type !== "terminal.display.begin") throw new Error("no begin");
    expect(begin.palette).toHaveLength(16);
    const rows = events.flatMap((event) => (event.type === "terminal.display.rows" ? event.rows : []));
    expect(rows).toHaveLength(begin.rowCount);
    const line = rows.find((row) => rowText(row).startsWith("red"))!;
    expect(rowText(line)).toBe("red    plain");
    const style = (x: number) => begin.styles[line.cells[x]!.style]!;
    expect(style(0)).toMatchObject({ foreground: "1", bold: true });
    expect(style(3)).toMatchObject({ foreground: "default", bold: false });
    // Styled blanks keep their background.
    expect(style(4)).toMatchObject({ background: "4" });
    expect(line.cells[4]!.text).toBe(" ");
  });

  it("keeps the display across a host restart while the output is gone", async () => {
    const home = tempHome();
    let first: TestHarness | undefined = await startHarness({}, home);
    const sessionId = await session(first);
    const terminal = await open(first, sessionId, { command: ["/bin/sh", "-c", "echo persisted-line"] });
    await watchUntilClosed(first, sessionId, terminal.terminalId);
    await ok(sdk.closeTerminal({ client: first.api.client, path: { server, sessionId, terminalId: terminal.terminalId }, body: {} }));
    await first.harness.close();
    first = undefined;
    h = await startHarness({}, home);
    const id = { server, sessionId, terminalId: terminal.terminalId };
    const { terminal: after } = await ok(sdk.getTerminal({ client: h.api.client, path: id }));
    expect(after).toMatchObject({ status: "exited", exitCode: 0, outputAvailable: false, displayAvailable: true });
    expect(await failure(sdk.readTerminalOutput({ client: h.api.client, path: id }))).toMatchObject({ status: 503, body: { _tag: "UnavailableError", reason: "service_unavailable" } });
    const rows = (await display(h, sessionId, terminal.terminalId)).flatMap((event) => (event.type === "terminal.display.rows" ? event.rows : []));
    expect(rows.map(rowText)).toContain("persisted-line");
    const listed = await ok(sdk.listTerminals({ client: h.api.client, path: { server, sessionId } }));
    expect(listed.terminals.map((entry) => entry.terminalId)).toEqual([terminal.terminalId]);
  });

  it("keeps the host's secrets out of the terminal's environment", async () => {
    process.env["ZE_TEST_SECRET_KEY"] = "sk-terminal-marker-5150";
    try {
      h = await startHarness();
      const sessionId = await session(h);
      const terminal = await open(h, sessionId, { command: ["/bin/sh", "-c", 'echo "[$ZE_TEST_SECRET_KEY][$TERM][$EXTRA]"'], env: { EXTRA: "given" } });
      const events = await watchUntilClosed(h, sessionId, terminal.terminalId);
      expect(bytesOf(events)).toContain("[][xterm-256color][given]");
    } finally {
      delete process.env["ZE_TEST_SECRET_KEY"];
    }
  });

  it("ends a deleted Session's terminals", async () => {
    h = await startHarness();
    const sessionId = await session(h);
    const terminal = await open(h, sessionId, { command: ["/bin/sh", "-c", "echo started; read _"] });
    const watching = watchUntilClosed(h, sessionId, terminal.terminalId);
    await ok(sdk.deleteSession({ client: h.api.client, path: { server, sessionId } }));
    expect((await watching).at(-1)).toMatchObject({ type: "terminal.closed", signal: "SIGHUP" });
  });

  it("refuses bad input and changes nothing", async () => {
    h = await startHarness();
    const sessionId = await session(h);
    const client = h.api.client;
    const terminalId = crypto.randomUUID();
    const path = { server, sessionId, terminalId };
    expect(await failure(sdk.openTerminal({ client, path, body: { size: { cols: 1, rows: 10 } } }))).toMatchObject({ status: 400 });
    expect(await failure(sdk.openTerminal({ client, path, body: { size: { cols: 1024, rows: 100 } } }))).toMatchObject({ status: 400, body: { message: expect.stringMatching(/65536/) } });
    expect(await failure(sdk.openTerminal({ client, path, body: { command: [""] } }))).toMatchObject({ status: 400 });
    expect(await failure(sdk.openTerminal({ client, path, body: { env: { "BAD=NAME": "x" } } }))).toMatchObject({ status: 400 });
    expect(await failure(sdk.openTerminal({ client, path: { ...path, sessionId: crypto.randomUUID() }, body: {} }))).toMatchObject({ status: 404, body: { resource: "session" } });
    expect((await ok(sdk.listTerminals({ client, path: { server, sessionId } }))).terminals).toEqual([]);
    expect(await failure(sdk.getTerminal({ client, path }))).toMatchObject({ status: 404, body: { resource: "terminal" } });

    const body = { command: ["/bin/sh", "-c", "read _"] };
    const first = await ok(sdk.openTerminal({ client, path, body }));
    // The same identity and body replays; a different body conflicts.
    expect((await ok(sdk.openTerminal({ client, path, body }))).terminal.createdAt).toBe(first.terminal.createdAt);
    expect(await failure(sdk.openTerminal({ client, path, body: { command: ["/bin/sh"] } }))).toMatchObject({ status: 409 });
    expect(await failure(sdk.writeTerminalInput({ client, path, body: { text: "a", dataBase64: "YQ==" } }))).toMatchObject({ status: 400 });
    expect(await failure(sdk.writeTerminalInput({ client, path, body: {} }))).toMatchObject({ status: 400 });
    expect(await failure(sdk.writeTerminalInput({ client, path, body: { dataBase64: "not base64!" } }))).toMatchObject({ status: 400 });
    expect(await failure(sdk.resizeTerminal({ client, path, body: { cols: 2000, rows: 10 } }))).toMatchObject({ status: 400 });
    expect(await failure(sdk.readTerminalOutput({ client, path, query: { after: "-1" } }))).toMatchObject({ status: 400 });
    const closed = await ok(sdk.closeTerminal({ client, path, body: { signal: "SIGKILL" } }));
    expect(closed.terminal).toMatchObject({ status: "exited", signal: "SIGKILL" });
  });
});
