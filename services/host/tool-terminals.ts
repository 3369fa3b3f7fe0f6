// The host's terminals as `shell` calls with `tty: true` reach them (Core hands each call a
// TerminalCapability bound to it): a PTY registered as one of the Session's terminals, origin the
// call, whose settled display is rendered to plain text for the result.
import type { TerminalSize } from "../../generated/client/types.gen.js";
import type { TurnTerminals } from "../core/turns/environment.js";
import { ToolFailure, type ToolTerminalEnd, type ToolTerminalRun } from "../tools/index.js";
import { displayText } from "../workspace/terminals/plain.js";
import type { TerminalHost } from "./terminals.js";

/** A tool terminal's geometry: wide enough that most lines do not wrap (soft wraps are joined anyway). */
export const TOOL_TERMINAL_SIZE: TerminalSize = { cols: 120, rows: 40 };
/** Rows of the live screen and history an activity preview shows. */
const PREVIEW_ROWS = 100;

export function toolTerminals(host: TerminalHost): TurnTerminals {
  return {
    forCall: (call) => ({
      async runCommand({ command }): Promise<ToolTerminalRun> {
        let opened: Awaited<ReturnType<TerminalHost["openForTool"]>>;
        try {
          opened = await host.openForTool(call.server, call.sessionId, { kind: "tool", turnId: call.turnId, toolCallId: call.toolCallId }, command, TOOL_TERMINAL_SIZE);
        } catch (error) {
          if ((error as { body?: { reason?: string } }).body?.reason === "sandbox_unavailable") throw new ToolFailure("sandbox_unavailable", (error as Error).message.slice(0, 1024));
          throw new ToolFailure("terminal_unavailable", `The terminal could not be opened: ${(error as Error).message}`.slice(0, 1024));
        }
        const pty = opened.live.terminal;
        const ended: Promise<ToolTerminalEnd> = opened.live.stored.then(async () => {
          const exit = await pty.exited;
          const display = await pty.settled.catch(() => undefined);
          const plain = display ? displayText(display) : { text: "", historyFull: false };
          return { ...exit, ...plain, observedBytes: pty.output.bytes };
        });
        return {
          terminalId: opened.terminal.terminalId,
          observedBytes: () => pty.output.bytes,
          preview: () => pty.previewText(PREVIEW_ROWS),
          onOutput: (listener) => pty.onParsed(listener),
          kill: () => void pty.close("SIGKILL"),
          ended,
        };
      },
    }),
  };
}
