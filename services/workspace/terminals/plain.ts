// Plain text of a terminal: what a reader of the screen sees, without escape sequences. Soft-wrapped
// rows are joined into one line, trailing blanks of each line and trailing blank lines are dropped,
// and the right halves of wide characters are skipped. Used for a `shell` call's result (`tty: true`)
// from the settled display, and for its activity preview from the live emulator.
import type { TerminalDisplayRow } from "../../../generated/client/types.gen.js";
import { scrollbackRows, type TerminalDisplay } from "./display.js";

/** Heading of the last full-screen (alternate screen) view in a plain rendering. */
export const FULL_SCREEN_HEADING = "(The program's last full-screen view:)";

export interface PlainText {
  readonly text: string;
  /** The emulator's history was full (or the display left history out): earlier rows may be missing. */
  readonly historyFull: boolean;
}

const cellText = (cell: { readonly text: string; readonly width: number }): string => (cell.width === 0 ? "" : cell.text === "" ? " " : cell.text);

/** Joins physical rows into logical lines (a row `wrapped` continues on the next one). */
export function joinRows(rows: readonly { readonly wrapped: boolean; readonly text: string }[]): string[] {
  const lines: string[] = [];
  let current = "";
  for (const row of rows) {
    current += row.text;
    if (row.wrapped) continue;
    lines.push(current.trimEnd());
    current = "";
  }
  if (current !== "") lines.push(current.trimEnd());
  while (lines.length > 0 && lines.at(-1) === "") lines.pop();
  return lines;
}

const rowsText = (rows: readonly TerminalDisplayRow[]): string[] => joinRows(rows.map((row) => ({ wrapped: row.wrapped, text: row.cells.map(cellText).join("") })));

/** The settled display as plain text: the normal screen with its history, then a last full-screen view that has text. */
export function displayText(display: TerminalDisplay): PlainText {
  const alternateActive = display.modes.alternateScreen;
  const normal = display.rows.filter((row) => row.area === "history" || (row.area === "viewport" && !alternateActive));
  const fullScreen = display.rows.filter((row) => row.area === "alternate" || (row.area === "viewport" && alternateActive));
  const lines = rowsText(normal);
  const view = rowsText(fullScreen);
  if (view.length > 0) lines.push(FULL_SCREEN_HEADING, ...view);
  const historyFull = display.truncated || normal.length >= scrollbackRows(display.size.cols) + display.size.rows;
  return { text: lines.join("\n"), historyFull };
}

/** The structural slice of a live @xterm/headless buffer the preview reads. */
export interface LiveBufferView {
  readonly length: number;
  getLine(y: number): { readonly isWrapped: boolean; translateToString(trimRight?: boolean): string } | undefined;
}

/** The last `maxRows` physical rows of a live buffer as plain lines (xterm marks the continuation row); `truncated` when rows above were left out. */
export function liveTail(buffer: LiveBufferView, maxRows: number): { text: string; truncated: boolean } {
  const start = Math.max(0, buffer.length - maxRows);
  const rows: { wrapped: boolean; text: string }[] = [];
  for (let y = start; y < buffer.length; y += 1) {
    const line = buffer.getLine(y);
    if (!line) continue;
    rows.push({ wrapped: buffer.getLine(y + 1)?.isWrapped ?? false, text: line.translateToString(false) });
  }
  // A cut through a wrapped line starts mid-line; that is a tail.
  return { text: joinRows(rows).join("\n"), truncated: start > 0 };
}
