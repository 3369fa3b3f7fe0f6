// One live PTY (node-pty) in a workdir: every native read and resize goes to the output log and
// to a headless terminal emulator (@xterm/headless) fed the same original bytes, so that once
// the byte source closes the settled display can be read off the emulator.
import { createRequire } from "node:module";
import type { IPty } from "node-pty";
import type { TerminalSize } from "../../../generated/client/types.gen.js";
import { readDisplay, scrollbackRows, type EmulatorView, type TerminalDisplay } from "./display.js";
import { OutputLog } from "./records.js";

const require = createRequire(import.meta.url);

/** The host environment a terminal inherits: never provider keys or other secrets of the host. */
const ENV_ALLOWLIST = ["PATH", "HOME", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TMPDIR", "TZ", "USER", "LOGNAME", "SHELL"];

export function terminalEnvironment(extra: Readonly<Record<string, string>> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ENV_ALLOWLIST) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  env["PATH"] ??= "/usr/local/bin:/usr/bin:/bin";
  env["TERM"] = "xterm-256color";
  env["COLORTERM"] = "truecolor";
  return { ...env, ...extra };
}

/** The default program: the user's shell, else /bin/sh. */
export const defaultCommand = (): string[] => [process.env["SHELL"] && process.env["SHELL"].startsWith("/") ? process.env["SHELL"] : "/bin/sh"];

export interface LiveTerminalOptions {
  readonly command: readonly string[];
  readonly cwd: string;
  readonly size: TerminalSize;
  readonly env?: Readonly<Record<string, string>>;
}

export interface TerminalExit {
  readonly exitCode?: number;
  readonly signal?: string;
}

const SIGNAL_NAMES: Readonly<Record<number, string>> = { 1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 6: "SIGABRT", 9: "SIGKILL", 13: "SIGPIPE", 15: "SIGTERM" };

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
  readonly exited: Promise<TerminalExit>;
  /** Resolves with the settled display once the byte source closed and the emulator caught up. */
  readonly settled: Promise<TerminalDisplay>;

  private constructor(pty: IPty, emulator: Emulator, size: TerminalSize) {
    this.#pty = pty;
    this.#emulator = emulator;
    this.initialSize = size;
    this.#size = size;
    pty.onData((data) => {
      const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : Buffer.from(data);
      this.output.appendData(bytes);
      this.#feed(bytes);
    });
    this.exited = new Promise((resolve) => {
      pty.onExit(({ exitCode, signal }) => {
        const exit: TerminalExit = signal ? { signal: SIGNAL_NAMES[signal] ?? `SIG${signal}` } : { exitCode };
        this.output.appendClosed(exit);
        resolve(exit);
      });
    });
    this.settled = this.exited.then(async () => {
      await this.#parsed;
      const display = readDisplay(this.#emulator);
      this.#emulator.dispose();
      return display;
    });
  }

  static open(options: LiveTerminalOptions): LiveTerminal {
    // Both load only when a terminal opens (node-pty is a native addon; xterm is CommonJS).
    const pty = require("node-pty") as typeof import("node-pty");
    const { Terminal } = require("@xterm/headless") as { Terminal: new (options: Record<string, unknown>) => Emulator };
    const [file, ...args] = options.command;
    const process = pty.spawn(file!, args, {
      name: "xterm-256color",
      cols: options.size.cols,
      rows: options.size.rows,
      cwd: options.cwd,
      env: terminalEnvironment(options.env),
      encoding: null,
    } as Parameters<typeof pty.spawn>[2]);
    const emulator = new Terminal({ cols: options.size.cols, rows: options.size.rows, scrollback: scrollbackRows(options.size.cols), allowProposedApi: true });
    return new LiveTerminal(process, emulator, options.size);
  }

  get pid(): number {
    return this.#pty.pid;
  }

  get size(): TerminalSize {
    return this.#size;
  }

  #feed(data: Uint8Array): void {
    this.#parsed = this.#parsed.then(() => new Promise<void>((resolve) => this.#emulator.write(data, resolve)));
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

  /** Sends `signal` (default SIGHUP) and resolves with the exit. */
  close(signal: NodeJS.Signals = "SIGHUP"): Promise<TerminalExit> {
    if (!this.output.closed) {
      try {
        this.#pty.kill(signal);
      } catch {
        // Already gone: the exit event follows.
      }
    }
    return this.exited;
  }
}
