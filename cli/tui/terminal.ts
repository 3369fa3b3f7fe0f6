// The real terminal under Ink: what the TUI writes itself, outside Ink's frames. Clearing the
// screen and scrollback (a resize, Ctrl+L, a Session switch: Ink then prints everything again),
// mouse reporting on and off (SGR, with drag), OSC 52 for copying, and a headless mirror of the
// screen (@xterm/headless fed every byte written, loaded after the first frame) so a click or a
// drag can be read back as text.
import type xterm from "@xterm/headless";

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

/** What the mirror saw before its xterm loaded: a write, or a resize between writes. */
type Pending = string | Uint8Array | { readonly cols: number; readonly rows: number };

/**
 * A mirror of what `stream` shows: every write is parsed by a headless xterm of its size. xterm
 * (≈ 270 KiB) loads after the TUI's first frame is written, not before it: until then the writes
 * and resizes are kept in order and replayed into it, so it shows exactly what the terminal does.
 */
export class ScreenMirror {
  private terminal: xterm.Terminal | undefined;
  private pending: Pending[] = [];
  private loading: Promise<void> | undefined;
  private closed = false;
  private readonly original: NodeJS.WriteStream["write"];
  private readonly initial: { readonly cols: number; readonly rows: number };

  constructor(private readonly stream: NodeJS.WriteStream) {
    this.initial = this.size();
    this.original = stream.write;
    const mirror = this;
    const original = this.original;
    stream.write = function (this: NodeJS.WriteStream, chunk: unknown, ...rest: unknown[]): boolean {
      if (typeof chunk === "string" || chunk instanceof Uint8Array) mirror.feed(chunk);
      return (original as (...args: unknown[]) => boolean).call(stream, chunk, ...rest);
    } as NodeJS.WriteStream["write"];
    stream.on("resize", this.resize);
  }

  private size(): { cols: number; rows: number } {
    return { cols: this.stream.columns || 80, rows: this.stream.rows || 24 };
  }

  private feed(chunk: string | Uint8Array): void {
    if (this.terminal !== undefined) return void this.terminal.write(chunk);
    // A copy: the writer may reuse its buffer once write returns.
    this.pending.push(typeof chunk === "string" ? chunk : chunk.slice());
    // The first write is (part of) the first frame: xterm loads once it is on its way.
    if (this.loading === undefined) setImmediate(() => void this.load());
  }

  /** Loads xterm (once) and replays what was seen so far. */
  private load(): Promise<void> {
    this.loading ??= import("@xterm/headless").then(({ default: headless }) => {
      if (this.closed) return;
      const terminal = new headless.Terminal({ ...this.initial, scrollback: 0, allowProposedApi: true, convertEol: true });
      for (const item of this.pending) {
        if (typeof item === "string" || item instanceof Uint8Array) terminal.write(item);
        else terminal.resize(item.cols, item.rows);
      }
      this.pending = [];
      this.terminal = terminal;
    });
    return this.loading;
  }

  private readonly resize = (): void => {
    const { cols, rows } = this.size();
    if (this.terminal !== undefined) this.terminal.resize(cols, rows);
    else this.pending.push({ cols, rows });
  };

  /** Resolves once everything written so far is parsed. */
  async flushed(): Promise<void> {
    await this.load();
    const terminal = this.terminal;
    if (terminal !== undefined) await new Promise<void>((resolve) => terminal.write("", resolve));
  }

  /** Row `row` of the visible screen (call after `flushed`). */
  line(row: number): string {
    const buffer = this.terminal?.buffer.active;
    return buffer?.getLine(buffer.viewportY + row)?.translateToString(true) ?? "";
  }

  /** The text between two cells (call after `flushed`). */
  range(from: Cell, to: Cell): string {
    const buffer = this.terminal?.buffer.active;
    if (buffer === undefined) return "";
    const [start, end] = from.y < to.y || (from.y === to.y && from.x <= to.x) ? [from, to] : [to, from];
    const lines: string[] = [];
    for (let row = start.y; row <= end.y; row++) {
      const text = buffer.getLine(buffer.viewportY + row)?.translateToString(false) ?? "";
      const first = row === start.y ? start.x : 0;
      const last = row === end.y ? end.x + 1 : text.length;
      lines.push(text.slice(first, last).replace(/\s+$/, ""));
    }
    return lines.join("\n");
  }

  close(): void {
    this.closed = true;
    this.stream.write = this.original;
    this.stream.off("resize", this.resize);
    this.terminal?.dispose();
    this.pending = [];
  }
}
