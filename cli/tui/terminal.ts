// The real terminal under Ink: what the TUI writes itself, outside Ink's frames. Clearing the
// screen and scrollback (a resize, Ctrl+L, a Session switch: Ink then prints everything again),
// mouse reporting on and off (SGR, with drag), OSC 52 for copying, and a headless mirror of the
// screen (@xterm/headless fed every byte written) so a click or a drag can be read back as text.
import xterm from "@xterm/headless";

/** What the controller may ask of the terminal; absent in component tests. */
export interface TerminalHooks {
  /** Clears the screen and the scrollback; Ink's next frame prints everything again. */
  clear(): void;
  /**
   * Ink is suspended while the real terminal prompts for a secret without echo, then resumes;
   * undefined when the user cancelled (Ctrl-C, Esc).
   */
  readSecret(prompt: string): Promise<string | undefined>;
  /** The text of screen row `row` (0-based, of the visible screen), once all output so far is parsed. */
  line(row: number): Promise<string>;
  /** The text between two screen cells (inclusive, in reading order), once all output so far is parsed. */
  range(from: Cell, to: Cell): Promise<string>;
  /** Writes an OSC 52 sequence that asks the terminal to copy `text`. */
  osc52(text: string): void;
  /** Mouse capture on or off (off: the terminal's own selection works without Shift). */
  mouse(on: boolean): void;
}

export interface Cell {
  /** 0-based column. */
  readonly x: number;
  /** 0-based row of the visible screen. */
  readonly y: number;
}

export const CLEAR_ALL = "\u001b[2J\u001b[3J\u001b[H";
/** Button events with drag (1002) in SGR encoding (1006). */
export const MOUSE_ON = "\u001b[?1002h\u001b[?1006h";
export const MOUSE_OFF = "\u001b[?1002l\u001b[?1006l";

/** `ESC ] 52 ; c ; BASE64 BEL`: the terminal (also over SSH) puts `text` on the clipboard. */
export const osc52 = (text: string): string => `\u001b]52;c;${Buffer.from(text, "utf8").toString("base64")}\u0007`;

/** A mirror of what `stream` shows: every write is parsed by a headless xterm of its size. */
export class ScreenMirror {
  private readonly terminal: xterm.Terminal;
  private readonly original: NodeJS.WriteStream["write"];

  constructor(private readonly stream: NodeJS.WriteStream) {
    this.terminal = new xterm.Terminal({ cols: stream.columns || 80, rows: stream.rows || 24, scrollback: 0, allowProposedApi: true, convertEol: true });
    this.original = stream.write;
    const terminal = this.terminal;
    const original = this.original;
    stream.write = function (this: NodeJS.WriteStream, chunk: unknown, ...rest: unknown[]): boolean {
      if (typeof chunk === "string" || chunk instanceof Uint8Array) terminal.write(chunk);
      return (original as (...args: unknown[]) => boolean).call(stream, chunk, ...rest);
    } as NodeJS.WriteStream["write"];
    stream.on("resize", this.resize);
  }

  private readonly resize = (): void => {
    this.terminal.resize(this.stream.columns || 80, this.stream.rows || 24);
  };

  /** Resolves once everything written so far is parsed. */
  flushed(): Promise<void> {
    return new Promise((resolve) => this.terminal.write("", resolve));
  }

  line(row: number): string {
    const buffer = this.terminal.buffer.active;
    return buffer.getLine(buffer.viewportY + row)?.translateToString(true) ?? "";
  }

  range(from: Cell, to: Cell): string {
    const [start, end] = from.y < to.y || (from.y === to.y && from.x <= to.x) ? [from, to] : [to, from];
    const lines: string[] = [];
    for (let row = start.y; row <= end.y; row++) {
      const buffer = this.terminal.buffer.active;
      const text = buffer.getLine(buffer.viewportY + row)?.translateToString(false) ?? "";
      const first = row === start.y ? start.x : 0;
      const last = row === end.y ? end.x + 1 : text.length;
      lines.push(text.slice(first, last).replace(/\s+$/, ""));
    }
    return lines.join("\n");
  }

  close(): void {
    this.stream.write = this.original;
    this.stream.off("resize", this.resize);
    this.terminal.dispose();
  }
}
