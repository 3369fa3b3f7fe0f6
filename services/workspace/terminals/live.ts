// One live PTY (node-pty) in a workdir: every native read and resize goes to the output log and
// to a headless terminal emulator (@xterm/headless) fed the same original bytes, so that once
// the byte source closes the settled display can be read off the emulator.
import { createRequire } from "node:module";
import type { IPty } from "node-pty";
import type { TerminalSize } from "../../../generated/client/types.gen.js";
import { readDisplay, scrollbackRows, type EmulatorView, type TerminalDisplay } from "./display.js";
import { liveTail, type LiveBufferView } from "./plain.js";
import { OutputLog } from "./records.js";
import { childEnvironment } from "../environment.js";
import type { CommandSandbox } from "../../sandbox/index.js";

const require = createRequire(import.meta.url);

/** What a terminal's program sees: the allowlisted host environment, a 256-color terminal type, then the request's variables. */
export function terminalEnvironment(extra: Readonly<Record<string, string>> = {}): Record<string, string> {
  return { ...childEnvironment(), TERM: "xterm-256color", COLORTERM: "truecolor", ...extra };
}

/** The default program: the user's shell, else /bin/sh. */
export const defaultCommand = (): string[] => [process.env["SHELL"] && process.env["SHELL"].startsWith("/") ? process.env["SHELL"] : "/bin/sh"];

export interface LiveTerminalOptions {
  readonly command: readonly string[];
  readonly cwd: string;
  readonly size: TerminalSize;
  readonly env?: Readonly<Record<string, string>>;
  /** A prepared sandbox: bubblewrap runs the wrapper and the program (the wrapper's drain works the same inside). */
  readonly sandbox?: CommandSandbox | undefined;
}

export interface TerminalExit {
  readonly exitCode?: number;
  readonly signal?: string;
}

/** How long a closed terminal may take to exit from the signal it was sent before it gets SIGKILL. */
const CLOSE_GRACE_MS = 2_000;

const SIGNAL_NAMES: Readonly<Record<number, string>> = { 1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 6: "SIGABRT", 9: "SIGKILL", 13: "SIGPIPE", 15: "SIGTERM" };

// Why a wrapper: when a PTY's session leader exits, Linux hangs the terminal up and discards
// output the master has not read yet, so the last few KiB of a program's output could be lost.
// The program therefore runs under a small /bin/sh wrapper that, after it exits, prints an exit
// marker (an OSC sequence no program emits) and waits for one line: output is ordered, so once the
// marker arrives every byte before it has, and only then is the wrapper released. The marker is
// never part of the output. `trap :` installs handlers (reset on exec, unlike ignored signals) so
// a Ctrl-C reaches the program but not the waiting wrapper.
const MARKER_PREFIX = Buffer.from("\u001b]5150;ze-exit;");
const MARKER_END = 0x07;
const WRAPPER = 'trap : INT QUIT TSTP; "$@"; s=$?; printf \'\\033]5150;ze-exit;%s\\007\' "$s"; read _; exit "$s"';

/** The longest suffix of `bytes` that starts the marker (held back until the next read decides). */
function partialMarker(bytes: Buffer): number {
  for (let length = Math.min(bytes.length, MARKER_PREFIX.length - 1); length > 0; length -= 1) {
    if (bytes.subarray(bytes.length - length).equals(MARKER_PREFIX.subarray(0, length))) return length;
  }
  return 0;
}

interface Emulator extends EmulatorView {
  write(data: Uint8Array | string, callback?: () => void): void;
  resize(cols: number, rows: number): void;
  dispose(): void;
}

export class LiveTerminal {
  readonly output = new OutputLog();
  readonly initialSize: TerminalSize;
  #size: TerminalSize;
  readonly #pty: IPty;
  readonly #emulator: Emulator;
  /** The emulator's writes complete in order; this resolves after the last one queued. */
  #parsed: Promise<void> = Promise.resolve();
  #disposed = false;
  readonly #parsedListeners = new Set<() => void>();
  readonly exited: Promise<TerminalExit>;
  /** Resolves with the settled display once the byte source closed and the emulator caught up. */
  readonly settled: Promise<TerminalDisplay>;

  private constructor(pty: IPty, emulator: Emulator, size: TerminalSize) {
    this.#pty = pty;
    this.#emulator = emulator;
    this.initialSize = size;
    this.#size = size;
    let resolveExit: (exit: TerminalExit) => void = () => {};
    this.exited = new Promise((resolve) => (resolveExit = resolve));
    const finish = (exit: TerminalExit): void => {
      if (this.output.closed) return;
      this.output.appendClosed(exit);
      resolveExit(exit);
    };
    let carry = Buffer.alloc(0);
    pty.onData((data) => {
      if (this.output.closed) return;
      const bytes = Buffer.concat([carry, typeof data === "string" ? Buffer.from(data, "utf8") : Buffer.from(data)]);
      const at = bytes.indexOf(MARKER_PREFIX);
      const end = at === -1 ? -1 : bytes.indexOf(MARKER_END, at + MARKER_PREFIX.length);
      if (at !== -1 && end !== -1) {
        this.#take(bytes.subarray(0, at));
        carry = Buffer.alloc(0);
        const status = Number(bytes.subarray(at + MARKER_PREFIX.length, end).toString("latin1"));
        finish(status > 128 && SIGNAL_NAMES[status - 128] ? { signal: SIGNAL_NAMES[status - 128]! } : { exitCode: status });
        // Every byte is in: release the wrapper.
        this.#pty.write("\n");
        return;
      }
      const hold = at !== -1 ? bytes.length - at : partialMarker(bytes);
      this.#take(bytes.subarray(0, bytes.length - hold));
      carry = Buffer.from(bytes.subarray(bytes.length - hold));
    });
    // The wrapper was killed (or could not report): its own exit, with whatever arrived.
    pty.onExit(({ exitCode, signal }) => finish(signal ? { signal: SIGNAL_NAMES[signal] ?? `SIG${signal}` } : { exitCode }));
    this.settled = this.exited.then(async () => {
      await this.#parsed;
      const display = readDisplay(this.#emulator);
      this.#disposed = true;
      this.#emulator.dispose();
      return display;
    });
  }

  #take(bytes: Buffer): void {
    if (bytes.byteLength === 0) return;
    this.output.appendData(bytes);
    this.#feed(bytes);
  }

  static open(options: LiveTerminalOptions): LiveTerminal {
    // Both load only when a terminal opens (node-pty is a native addon; xterm is CommonJS).
    const pty = require("node-pty") as typeof import("node-pty");
    const { Terminal } = require("@xterm/headless") as { Terminal: new (options: Record<string, unknown>) => Emulator };
    const argv = ["/bin/sh", "-c", WRAPPER, "ze-terminal", ...options.command];
    const env = terminalEnvironment(options.env);
    // Sandboxed, bubblewrap leads the PTY's session and process group; the wrapper runs inside,
    // so it still holds the hang-up back until every byte was read, and group signals reach all.
    const launch = options.sandbox ? options.sandbox.wrap(argv, { cwd: options.cwd, env }) : { file: argv[0]!, args: argv.slice(1), env };
    const process = pty.spawn(launch.file, launch.args, {
      name: "xterm-256color",
      cols: options.size.cols,
      rows: options.size.rows,
      cwd: options.cwd,
      env: launch.env,
      encoding: null,
    } as Parameters<typeof pty.spawn>[2]);
    const emulator = new Terminal({ cols: options.size.cols, rows: options.size.rows, scrollback: scrollbackRows(options.size.cols), allowProposedApi: true });
    return new LiveTerminal(process, emulator, options.size);
  }

  /** The last `maxRows` rows of the screen and history as plain text, as parsed so far (empty once settled). */
  previewText(maxRows: number): { text: string; truncated: boolean } {
    if (this.#disposed) return { text: "", truncated: false };
    return liveTail(this.#emulator.buffer.active as unknown as LiveBufferView, maxRows);
  }

  get pid(): number {
    return this.#pty.pid;
  }

  get size(): TerminalSize {
    return this.#size;
  }

  #feed(data: Uint8Array): void {
    this.#parsed = this.#parsed.then(() => new Promise<void>((resolve) => this.#emulator.write(data, resolve))).then(() => {
      for (const listener of [...this.#parsedListeners]) listener();
    });
  }

  /** Calls `listener` each time the emulator caught up with a read (its screen shows it); returns the unsubscribe. */
  onParsed(listener: () => void): () => void {
    this.#parsedListeners.add(listener);
    return () => this.#parsedListeners.delete(listener);
  }

  write(data: Buffer): void {
    if (this.output.closed) return;
    this.#pty.write(data as unknown as string);
  }

  resize(size: TerminalSize): void {
    if (this.output.closed) return;
    this.#pty.resize(size.cols, size.rows);
    this.#size = size;
    this.output.appendResize(size);
    // The emulator resizes in order with the bytes around it.
    this.#parsed = this.#parsed.then(() => this.#emulator.resize(size.cols, size.rows));
  }

  /**
   * Sends `signal` (default SIGHUP) to the terminal's process group and resolves with the exit. A
   * terminal still running CLOSE_GRACE_MS later gets SIGKILL: an interactive shell ignores SIGINT
   * (and the wrapper traps it) and runs in a process group of its own, so without this a close
   * could wait forever; killing the wrapper, the session leader, hangs the PTY up for the rest.
   */
  close(signal: NodeJS.Signals = "SIGHUP"): Promise<TerminalExit> {
    if (!this.output.closed) {
      this.#signal(signal);
      if (signal !== "SIGKILL") {
        const escalate = setTimeout(() => {
          if (!this.output.closed) this.#signal("SIGKILL");
        }, CLOSE_GRACE_MS);
        void this.exited.then(() => clearTimeout(escalate));
      }
    }
    return this.exited;
  }

  #signal(signal: NodeJS.Signals): void {
    try {
      // The wrapper leads the PTY's session and process group; the program runs in that group.
      globalThis.process.kill(-this.#pty.pid, signal);
    } catch (error) {
      // Right after the fork the child has not called setsid() yet, so its process group does not
      // exist (ESRCH) while the child does: signal the child itself (it holds the signal until its
      // dispositions are reset to the defaults, then dies of it). The child is not reaped yet
      // (output.closed is still false), so its pid is still its own.
      if ((error as NodeJS.ErrnoException).code !== "ESRCH" || this.output.closed) return;
      try {
        globalThis.process.kill(this.#pty.pid, signal);
      } catch {
        // Already gone: the exit event follows.
      }
    }
  }
}
