import { sdk, unwrap, ZeClientError, type TerminalDisplayEvent, type TerminalDisplayRow } from "../../../clients/index.js";
import { sessionIdArg, uuidArg } from "../../args.js";
import { defineCommand, flag } from "../../spec.js";

const rowText = (row: TerminalDisplayRow): string => row.cells.map((cell) => cell.text || (cell.width === 0 ? "" : " ")).join("").trimEnd();

export default defineCommand({
  summary: "Print an exited terminal's durable styled display as JSON (or its text with --text).",
  description:
    "The display is read off a terminal emulator fed the PTY's bytes: geometry, cursor, palette, input modes, styles and rows of styled cells (history first, then the screen). A running terminal is refused (ConflictError): close it or wait for it to exit.",
  args: { sessionId: sessionIdArg, terminalId: uuidArg("TERMINAL_ID", "The terminal id.") },
  flags: { text: flag.boolean({ description: "Print the rows as plain text lines." }) },
  connection: true,
  async run({ args, flags, connect, printJson }) {
    const { client, server } = await connect();
    const path = { server, sessionId: args.sessionId, terminalId: args.terminalId };
    // Refusals are named before any event: a running terminal, or one whose display was not kept.
    const { terminal } = await unwrap(sdk.getTerminal({ client: client.client, path }));
    if (terminal.status === "running") throw new ZeClientError(409, { _tag: "ConflictError", message: `Terminal ${terminal.terminalId} is still running: its display is read once it exits` });
    if (!terminal.displayAvailable) throw new ZeClientError(503, { _tag: "UnavailableError", message: `Terminal ${terminal.terminalId} has no retained display` });
    const events: TerminalDisplayEvent[] = [];
    let failure: unknown;
    const { stream } = await sdk.readTerminalDisplay({ client: client.client, path, sseMaxRetryAttempts: 1, onSseError: (error) => (failure ??= error) });
    for await (const event of stream) events.push(event as TerminalDisplayEvent);
    const begin = events.find((event) => event.type === "terminal.display.begin");
    if (!begin || !events.some((event) => event.type === "terminal.display.end")) {
      throw new ZeClientError(0, { _tag: "TransportError", message: `the display was not delivered completely${failure instanceof Error ? `: ${failure.message}` : ""}` });
    }
    const rows = events.flatMap((event) => (event.type === "terminal.display.rows" ? event.rows : []));
    if (flags.text) {
      process.stdout.write(`${rows.map(rowText).join("\n").trimEnd()}\n`);
      return 0;
    }
    const { type: _type, ...meta } = begin;
    printJson({ ...meta, rows });
    return 0;
  },
});
