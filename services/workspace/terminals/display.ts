// The durable styled display of a settled PTY, read off a real terminal emulator
// (@xterm/headless fed the same original bytes): geometry, cursor, palette, input modes and rows
// of styled physical cells. Retention: the current viewport and the last alternate viewport come
// first, then the newest whole history rows within the encoded budget; omitted history is marked
// `truncated`. The emulator keeps an 800,000-cell history allowance (10,000 rows at 80 columns).
import type {
  TerminalCell,
  TerminalCellStyle,
  TerminalCursor,
  TerminalDisplayRow,
  TerminalInputModes,
  TerminalSize,
} from "../../../generated/client/types.gen.js";

/** History cells the emulator keeps, converted to rows for its column count. */
export const HISTORY_CELL_ALLOWANCE = 800_000;
/** The encoded display keeps at most this many bytes (the viewports always). */
export const MAX_DISPLAY_BYTES = 64 * 1024 * 1024;
export const MAX_VISIBLE_CELLS = 65_536;

/** The xterm default 16-color palette. */
export const ANSI_PALETTE: readonly string[] = [
  "#2e3436", "#cc0000", "#4e9a06", "#c4a000", "#3465a4", "#75507b", "#06989a", "#d3d7cf",
  "#555753", "#ef2929", "#8ae234", "#fce94f", "#729fcf", "#ad7fa8", "#34e2e2", "#eeeeec",
];

export interface TerminalDisplay {
  readonly size: TerminalSize;
  readonly cursor: TerminalCursor;
  readonly palette: readonly string[];
  readonly styles: readonly TerminalCellStyle[];
  readonly modes: TerminalInputModes;
  readonly rows: readonly TerminalDisplayRow[];
  readonly truncated: boolean;
}

/** Scrollback rows for `cols` columns within the history allowance. */
export const scrollbackRows = (cols: number): number => Math.floor(HISTORY_CELL_ALLOWANCE / cols);

/** Whether a geometry is allowed: 2–1,024 columns, 1–1,024 rows, at most 65,536 visible cells. */
export function validGeometry(size: TerminalSize): string | undefined {
  if (!Number.isInteger(size.cols) || size.cols < 2 || size.cols > 1024) return "cols must be an integer from 2 to 1024";
  if (!Number.isInteger(size.rows) || size.rows < 1 || size.rows > 1024) return "rows must be an integer from 1 to 1024";
  if (size.cols * size.rows > MAX_VISIBLE_CELLS) return `cols × rows must be at most ${MAX_VISIBLE_CELLS} cells`;
  return undefined;
}

// The structural slice of @xterm/headless this module reads (kept narrow so tests can reason about it).
interface Cell {
  getChars(): string;
  getWidth(): number;
  getFgColor(): number;
  getBgColor(): number;
  isFgRGB(): boolean;
  isFgPalette(): boolean;
  isBgRGB(): boolean;
  isBgPalette(): boolean;
  isBold(): number;
  isDim(): number;
  isItalic(): number;
  isUnderline(): number;
  isInverse(): number;
  isInvisible(): number;
  isStrikethrough(): number;
}
interface Line {
  readonly isWrapped: boolean;
  getCell(x: number, cell?: Cell): Cell | undefined;
}
interface Buffer {
  readonly type: "normal" | "alternate";
  readonly cursorX: number;
  readonly cursorY: number;
  readonly baseY: number;
  readonly length: number;
  getLine(y: number): Line | undefined;
  getNullCell(): Cell;
}
export interface EmulatorView {
  readonly cols: number;
  readonly rows: number;
  readonly buffer: { readonly active: Buffer; readonly normal: Buffer; readonly alternate: Buffer };
  readonly modes: { readonly applicationCursorKeysMode: boolean; readonly applicationKeypadMode: boolean; readonly bracketedPasteMode: boolean; readonly mouseTrackingMode: TerminalInputModes["mouseTracking"] };
  /** Private state, read defensively: whether DECTCEM hid the cursor. */
  readonly _core?: { readonly coreService?: { readonly isCursorHidden?: boolean } };
}

const color = (rgb: boolean, palette: boolean, value: number): string =>
  rgb ? `#${value.toString(16).padStart(6, "0")}` : palette ? String(value) : "default";

class StyleTable {
  readonly styles: TerminalCellStyle[] = [];
  readonly #index = new Map<string, number>();

  of(cell: Cell): number {
    const style: TerminalCellStyle = {
      foreground: color(cell.isFgRGB(), cell.isFgPalette(), cell.getFgColor()),
      background: color(cell.isBgRGB(), cell.isBgPalette(), cell.getBgColor()),
      bold: cell.isBold() !== 0,
      dim: cell.isDim() !== 0,
      italic: cell.isItalic() !== 0,
      underline: cell.isUnderline() !== 0,
      inverse: cell.isInverse() !== 0,
      invisible: cell.isInvisible() !== 0,
      strikethrough: cell.isStrikethrough() !== 0,
    };
    const key = JSON.stringify(style);
    let index = this.#index.get(key);
    if (index === undefined) {
      index = this.styles.length;
      this.styles.push(style);
      this.#index.set(key, index);
    }
    return index;
  }
}

function readRow(buffer: Buffer, y: number, cols: number, styles: StyleTable, scratch: Cell): { wrapped: boolean; cells: TerminalCell[] } {
  const line = buffer.getLine(y);
  const cells: TerminalCell[] = [];
  for (let x = 0; x < cols; x += 1) {
    const cell = line?.getCell(x, scratch);
    if (!cell) {
      cells.push({ text: "", width: 1, style: 0 });
      continue;
    }
    cells.push({ text: cell.getChars(), width: cell.getWidth(), style: styles.of(cell) });
  }
  // xterm marks the continuation row; the contract marks the row that continues on the next one.
  return { wrapped: buffer.getLine(y + 1)?.isWrapped ?? false, cells };
}

const rowBytes = (row: { cells: readonly TerminalCell[] }): number => 64 + row.cells.reduce((total, cell) => total + 32 + Buffer.byteLength(cell.text), 0);

/** Reads the display off the emulator; `maxBytes` bounds the encoded rows (viewports always kept). */
export function readDisplay(view: EmulatorView, maxBytes = MAX_DISPLAY_BYTES): TerminalDisplay {
  const styles = new StyleTable();
  const { cols, rows } = view;
  const normal = view.buffer.normal;
  const alternate = view.buffer.alternate;
  const active = view.buffer.active;
  const scratch = normal.getNullCell();
  styles.of(scratch); // style 0: the default style of an empty cell

  const viewport = [];
  for (let y = 0; y < rows; y += 1) viewport.push({ area: "viewport" as const, ...readRow(active, active.baseY + y, cols, styles, scratch) });
  // The last alternate viewport: when the program left the alternate screen, what it last showed there.
  const alternateRows = [];
  if (active.type === "normal") {
    let blank = true;
    const read = [];
    for (let y = 0; y < Math.min(rows, alternate.length); y += 1) {
      const row = readRow(alternate, y, cols, styles, scratch);
      if (row.cells.some((cell) => cell.text !== "" && cell.text !== " ")) blank = false;
      read.push({ area: "alternate" as const, ...row });
    }
    if (!blank) alternateRows.push(...read);
  }
  let budget = maxBytes - [...viewport, ...alternateRows].reduce((total, row) => total + rowBytes(row), 0);
  // History: the normal buffer's rows above its viewport, newest first until the budget ends.
  // With the alternate screen active, the normal screen's viewport counts as history too.
  const historyCount = normal.baseY + (active.type === "alternate" ? rows : 0);
  const history = [];
  let truncated = false;
  for (let y = Math.min(historyCount, normal.length) - 1; y >= 0; y -= 1) {
    const row = { area: "history" as const, ...readRow(normal, y, cols, styles, scratch) };
    const cost = rowBytes(row);
    if (cost > budget) {
      truncated = true;
      break;
    }
    budget -= cost;
    history.push(row);
  }
  history.reverse();
  const ordered = [...history, ...(active.type === "normal" ? viewport : []), ...alternateRows, ...(active.type === "alternate" ? viewport : [])];
  return {
    size: { cols, rows },
    cursor: { x: active.cursorX, y: active.cursorY, visible: view._core?.coreService?.isCursorHidden !== true },
    palette: ANSI_PALETTE,
    styles: styles.styles,
    modes: {
      applicationCursorKeys: view.modes.applicationCursorKeysMode,
      applicationKeypad: view.modes.applicationKeypadMode,
      bracketedPaste: view.modes.bracketedPasteMode,
      mouseTracking: view.modes.mouseTrackingMode,
      alternateScreen: active.type === "alternate",
    },
    rows: ordered.map((row, index) => ({ index, ...row })),
    truncated,
  };
}
