// The daemon's structured log: opencode-style logfmt lines in `daemon.log` (one stable file,
// mode 0600), each with the fixed prefix `timestamp level run service` then `event` and the
// caller's fields. Also the same lines on a foreground `serve`'s stderr, the in-place trim
// (over 10 MiB keep the newest 5 MiB, line-aligned) and the bounded newest-first reader behind
// `GET /v1/logs`. Fields never carry prompt text, tokens or argv: callers pass only ids,
// addresses, counts and durations.
import { randomBytes } from "node:crypto";
import { chmodSync, closeSync, fstatSync, ftruncateSync, openSync, readSync, statSync, writeSync } from "node:fs";

export type LogLevel = "debug" | "info" | "warn" | "error";
export const LOG_LEVELS: readonly LogLevel[] = ["debug", "info", "warn", "error"];

export type LogFields = Readonly<Record<string, string | number | boolean | undefined>>;

export interface LogEntry {
  readonly timestamp: string;
  readonly level: LogLevel;
  readonly run: string;
  readonly service: string;
  readonly event: string;
  readonly fields: Record<string, string>;
}

/** The trim rule: a log over LOG_CAP_BYTES keeps its newest LOG_KEEP_BYTES (no override, by product decision). */
export const LOG_CAP_BYTES = 10 * 1024 * 1024;
export const LOG_KEEP_BYTES = 5 * 1024 * 1024;
/** `GET /v1/logs`: the default and largest page, and how far back from the end one read looks. */
export const MAX_LOG_PAGE = 500;
export const LOG_READ_WINDOW_BYTES = 512 * 1024;

const KEY = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
const PREFIX = ["timestamp", "level", "run", "service", "event"] as const;

const quote = (value: string): string => (value === "" || /[\s="\\]|[\u0000-\u001f\u007f]/.test(value) ? JSON.stringify(value) : value);

/** A short boot id minted per `serve`. */
export const newRunId = (): string => randomBytes(4).toString("hex");

export function formatLogLine(entry: { readonly timestamp: string; readonly level: LogLevel; readonly run: string; readonly service: string; readonly event: string; readonly fields?: LogFields }): string {
  const parts = [`timestamp=${entry.timestamp}`, `level=${entry.level.toUpperCase()}`, `run=${quote(entry.run)}`, `service=${quote(entry.service)}`, `event=${quote(entry.event)}`];
  for (const [key, value] of Object.entries(entry.fields ?? {})) {
    if (value === undefined || !KEY.test(key) || (PREFIX as readonly string[]).includes(key)) continue;
    parts.push(`${key}=${quote(String(value))}`);
  }
  return `${parts.join(" ")}\n`;
}

/** One complete logfmt entry, or undefined for anything else (a URL line, a torn line, a stack trace). */
export function parseLogLine(line: string): LogEntry | undefined {
  const values = new Map<string, string>();
  let index = 0;
  while (index < line.length) {
    while (line[index] === " ") index += 1;
    if (index >= line.length) break;
    const equals = line.indexOf("=", index);
    if (equals < 0) return undefined;
    const key = line.slice(index, equals);
    if (!KEY.test(key)) return undefined;
    index = equals + 1;
    let value: string;
    if (line[index] === '"') {
      let end = index + 1;
      while (end < line.length && line[end] !== '"') end += line[end] === "\\" ? 2 : 1;
      if (end >= line.length) return undefined;
      try {
        value = JSON.parse(line.slice(index, end + 1)) as string;
      } catch {
        return undefined;
      }
      index = end + 1;
      if (index < line.length && line[index] !== " ") return undefined;
    } else {
      const space = line.indexOf(" ", index);
      value = line.slice(index, space < 0 ? undefined : space);
      index = space < 0 ? line.length : space;
    }
    values.set(key, value);
  }
  const [timestamp, level, run, service, event] = PREFIX.map((key) => values.get(key));
  const lowered = level?.toLowerCase() as LogLevel | undefined;
  if (timestamp === undefined || run === undefined || service === undefined || event === undefined || lowered === undefined || !LOG_LEVELS.includes(lowered)) return undefined;
  if (Number.isNaN(Date.parse(timestamp))) return undefined;
  const fields: Record<string, string> = {};
  for (const [key, value] of values) if (!(PREFIX as readonly string[]).includes(key)) fields[key] = value;
  return { timestamp, level: lowered, run, service, event, fields };
}

export interface Logger {
  readonly run: string;
  log(level: LogLevel, event: string, fields?: LogFields): void;
  info(event: string, fields?: LogFields): void;
  warn(event: string, fields?: LogFields): void;
  error(event: string, fields?: LogFields): void;
}

/** `--log-level` (cli/global-flags.ts) travels as ZE_HARNESS_LOG_LEVEL: the lowest level written. */
export const LOG_LEVEL_VARIABLE = "ZE_HARNESS_LOG_LEVEL";

/** The index in LOG_LEVELS of the lowest level to write (LOG_LEVELS.length: none). */
export function logFloor(setting: string | undefined): number {
  switch (setting?.toLowerCase()) {
    case "info":
      return 1;
    case "warn":
    case "warning":
      return 2;
    case "error":
    case "fatal":
      return 3;
    case "none":
      return LOG_LEVELS.length;
    default:
      return 0; // all, trace, debug, or not set
  }
}

function logger(run: string, service: string, write: (line: string) => void): Logger {
  const floor = logFloor(process.env[LOG_LEVEL_VARIABLE]);
  const log = (level: LogLevel, event: string, fields?: LogFields): void => {
    if (LOG_LEVELS.indexOf(level) < floor) return;
    try {
      write(formatLogLine({ timestamp: new Date().toISOString(), level, run, service, event, ...(fields ? { fields } : {}) }));
    } catch {
      // A full disk or a closed stream must not take the host down.
    }
  };
  return { run, log, info: (event, fields) => log("info", event, fields), warn: (event, fields) => log("warn", event, fields), error: (event, fields) => log("error", event, fields) };
}

/** Logfmt lines on this process's stderr (a foreground `serve`). */
export function stderrLogger(service = "server", run = newRunId()): Logger {
  return logger(run, service, (line) => void process.stderr.write(line));
}

export interface DaemonLog extends Logger {
  readonly file: string;
  /** Trims the file in place when it is over the cap; true when it did. */
  trim(): boolean;
  /** A newest-first page of entries at or above `level`. */
  read(options?: { readonly limit?: number; readonly level?: LogLevel }): { entries: LogEntry[]; truncated: boolean };
  /** An INFO line written whatever the log level: the start-up progress the starting CLI follows (services/daemon/progress.ts). */
  progress(event: string, fields?: LogFields): void;
  close(): void;
}

/** Appends to `file` (created 0600). Other writers (the daemon's own stderr) may append to it too. */
export function openDaemonLog(file: string, options: { readonly run?: string; readonly service?: string } = {}): DaemonLog {
  const fd = openSync(file, "a", 0o600);
  chmodSync(file, 0o600);
  let open = true;
  const write = (line: string): void => {
    if (open) writeSync(fd, line);
  };
  const base = logger(options.run ?? newRunId(), options.service ?? "daemon", write);
  return {
    ...base,
    progress: (event, fields) => {
      try {
        write(formatLogLine({ timestamp: new Date().toISOString(), level: "info", run: base.run, service: options.service ?? "daemon", event, ...(fields ? { fields } : {}) }));
      } catch {
        // As every log line: never takes the host down.
      }
    },
    file,
    trim: () => trimLog(file),
    read: (page = {}) => readLogPage(file, page),
    close: () => {
      if (!open) return;
      open = false;
      closeSync(fd);
    },
  };
}

/**
 * Over `cap` bytes, keeps the newest `keep` bytes from the first whole line on, rewritten at the
 * start of the same file (appending writers keep writing to it, at its new end).
 */
export function trimLog(file: string, cap = LOG_CAP_BYTES, keep = LOG_KEEP_BYTES): boolean {
  let fd: number;
  try {
    fd = openSync(file, "r+");
  } catch {
    return false;
  }
  try {
    const size = fstatSync(fd).size;
    if (size <= cap) return false;
    const start = size - keep;
    const tail = Buffer.alloc(keep);
    const read = readSync(fd, tail, 0, keep, start);
    const newline = tail.subarray(0, read).indexOf(0x0a);
    const kept = newline < 0 ? Buffer.alloc(0) : tail.subarray(newline + 1, read);
    writeSync(fd, kept, 0, kept.length, 0);
    ftruncateSync(fd, kept.length);
    return true;
  } finally {
    closeSync(fd);
  }
}

export function readLogPage(
  file: string,
  options: { readonly limit?: number; readonly level?: LogLevel; readonly windowBytes?: number } = {},
): { entries: LogEntry[]; truncated: boolean } {
  const limit = Math.min(Math.max(options.limit ?? MAX_LOG_PAGE, 1), MAX_LOG_PAGE);
  const floor = LOG_LEVELS.indexOf(options.level ?? "debug");
  let size: number;
  try {
    size = statSync(file).size;
  } catch {
    return { entries: [], truncated: false };
  }
  const window = Math.min(size, options.windowBytes ?? LOG_READ_WINDOW_BYTES);
  const start = size - window;
  const buffer = Buffer.alloc(window);
  const fd = openSync(file, "r");
  let read: number;
  try {
    read = readSync(fd, buffer, 0, window, start);
  } finally {
    closeSync(fd);
  }
  let text = buffer.subarray(0, read).toString("utf8");
  // A window that starts mid-file starts mid-line: that first fragment is not an entry.
  if (start > 0) text = text.slice(text.indexOf("\n") + 1);
  const matching: LogEntry[] = [];
  const lines = text.split("\n");
  for (let index = lines.length - 1; index >= 0 && matching.length <= limit; index--) {
    const entry = parseLogLine(lines[index]!);
    if (entry !== undefined && LOG_LEVELS.indexOf(entry.level) >= floor) matching.push(entry);
  }
  return { entries: matching.slice(0, limit), truncated: start > 0 || matching.length > limit };
}

/** Logs `client.connect` when a connection opens and `client.disconnect` (with `durationMs`) when it closes. */
export function connectionLogger(log: Logger): (socket: import("node:net").Socket) => void {
  let next = 0;
  return (socket) => {
    next += 1;
    const connectionId = `${log.run}-${next}`;
    const started = Date.now();
    const peer = { connectionId, remoteAddr: socket.remoteAddress, remotePort: socket.remotePort };
    log.info("client.connect", peer);
    socket.once("close", () => log.info("client.disconnect", { ...peer, durationMs: Date.now() - started }));
  };
}

/** How often a running daemon trims its log (besides once at boot). */
export const LOG_TRIM_EVERY_MS = 60 * 60 * 1000;

/** Trims `log` now and every `everyMs` (unref'd: it never keeps a process alive); returns the stop. */
export function startDaemonLogTrim(log: Pick<DaemonLog, "trim">, everyMs = LOG_TRIM_EVERY_MS): () => void {
  log.trim();
  const timer = setInterval(() => log.trim(), everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
