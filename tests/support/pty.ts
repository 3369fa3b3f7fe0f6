// The built binary in a real pseudo-terminal (node-pty), its output fed to a headless xterm so
// tests read the screen a user sees. Waits are on screen text, never on time.
import xterm from "@xterm/headless";
import { spawn, type IPty } from "node-pty";
import { binPath } from "./harness.js";

export interface PtyCli {
  readonly pty: IPty;
  /** The visible screen plus scrollback, one string per line, trailing blanks trimmed. */
  screen(): string;
  /** Everything written so far (raw, with escape sequences). */
  raw(): string;
  write(data: string): void;
  /** Resizes the PTY and the emulator (the program gets SIGWINCH). */
  resize(cols: number, rows: number): void;
  /** Where `text` first shows on the visible screen (0-based column and row), if it does. */
  find(text: string): { x: number; y: number } | undefined;
  /**
   * Waits until `text` shows on the visible screen, then says where. Ink erases and rewrites its
   * live area, so a screen read between two PTY chunks can hold half a frame: never `find` on a
   * screen that only matched some other pattern.
   */
  locate(text: string, ms?: number): Promise<{ x: number; y: number }>;
  /** Resolves once the screen matches `pattern`; rejects when the process exits first, or after `ms` (with the screen). */
  waitFor(pattern: RegExp, ms?: number): Promise<void>;
  readonly exited: Promise<{ exitCode: number; signal?: number | undefined }>;
  kill(): void;
}

export interface PtyOptions {
  readonly env: Record<string, string>;
  readonly cwd: string;
  readonly cols?: number;
  readonly rows?: number;
  /** The program and its leading arguments (default: this Node with the built bin/ze-harness.js). */
  readonly command?: readonly [string, ...string[]];
}

export function startPty(args: readonly string[], options: PtyOptions): PtyCli {
  const cols = options.cols ?? 120;
  const rows = options.rows ?? 40;
  const terminal = new xterm.Terminal({ cols, rows, scrollback: 5000, allowProposedApi: true });
  const [program, ...leading] = options.command ?? [process.execPath, binPath];
  const pty = spawn(program, [...leading, ...args], { name: "xterm-256color", cols, rows, cwd: options.cwd, env: { ...options.env, TERM: "xterm-256color" } });
  let raw = "";
  let done = false;
  const waiters = new Set<() => void>();
  const notify = (): void => {
    for (const waiter of [...waiters]) waiter();
  };
  pty.onData((data) => {
    raw += data;
    terminal.write(data, notify);
  });
  const exited = new Promise<{ exitCode: number; signal?: number | undefined }>((resolve) =>
    pty.onExit((event) => {
      done = true;
      // Let the terminal finish parsing what arrived before the exit.
      terminal.write("", () => {
        notify();
        resolve(event);
      });
    }),
  );
  const screen = (): string => {
    const buffer = terminal.buffer.active;
    const lines: string[] = [];
    for (let index = 0; index < buffer.length; index++) lines.push(buffer.getLine(index)?.translateToString(true) ?? "");
    return lines.join("\n").replace(/\n+$/, "");
  };
  const find = (text: string): { x: number; y: number } | undefined => {
    const buffer = terminal.buffer.active;
    for (let row = 0; row < terminal.rows; row++) {
      const line = buffer.getLine(buffer.viewportY + row)?.translateToString(true) ?? "";
      const x = line.indexOf(text);
      if (x >= 0) return { x, y: row };
    }
    return undefined;
  };
  const waitUntil = (test: () => boolean, what: string, ms: number): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`the screen did not show ${what} in ${ms} ms:\n${screen()}`));
      }, ms);
      const check = (): void => {
        if (test()) {
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        } else if (done) {
          clearTimeout(timer);
          waiters.delete(check);
          reject(new Error(`exited before the screen showed ${what}:\n${screen()}`));
        }
      };
      waiters.add(check);
      check();
    });
  return {
    pty,
    screen,
    raw: () => raw,
    write: (data) => pty.write(data),
    resize: (newCols, newRows) => {
      pty.resize(newCols, newRows);
      terminal.resize(newCols, newRows);
    },
    find,
    locate: async (text, ms = 12_000) => {
      await waitUntil(() => find(text) !== undefined, JSON.stringify(text), ms);
      return find(text)!;
    },
    waitFor: (pattern, ms = 12_000) => waitUntil(() => pattern.test(screen()), String(pattern), ms),
    exited,
    kill: () => {
      if (!done) pty.kill();
    },
  };
}
