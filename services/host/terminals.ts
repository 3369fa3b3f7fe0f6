// Longer than ~400 lines on purpose: opening, input, output paging, the lease renewal on a shared
// database and reconciling rows of gone hosts all guard the same row-and-live-entry pair; split,
// each part would re-derive which host owns a terminal.
// The host's terminals: PTYs clients open in a Session's workdir. The row (storage) is the
// identity and last known state; the live PTY, its complete output and its emulator are this
// host's memory (services/workspace/terminals). When the byte source closes, the settled display
// is stored with the row, so it outlives the host; output does not (503 after a restart).
import { createHash, randomUUID } from "node:crypto";
import type { OpenTerminalRequest, Terminal, TerminalOutputEvent, TerminalSize, TerminalToolOrigin } from "../../generated/client/types.gen.js";
import { conflict, notFound, unavailable, validationFailure } from "../contract/failure.js";
import { absoluteWorkdir } from "../contract/paths.js";
import { getSession, terminals as store, type NewTerminal, type StorageHandle, type StoredTerminal } from "../storage/index.js";
import type { TerminalDisplay } from "../workspace/terminals/display.js";
import type { LiveTerminal } from "../workspace/terminals/live.js";
import { processAlive } from "../contract/process.js";
import { DEFAULT_LEASE_MS } from "../contract/lease.js";
import { isSandboxUnavailable, type CommandSandbox, type SandboxResolver } from "../sandbox/index.js";

export const DEFAULT_TERMINAL_SIZE: TerminalSize = { cols: 80, rows: 24 };
/** Items per output page: 16 × 64 KiB stays within the 1 MiB body bound. */
export const OUTPUT_PAGE_ITEMS = 16;
const MAX_INPUT_BYTES = 64 * 1024;
/**
 * Most PTYs one Session may have running in this host at once (clients' and `shell` calls with
 * `tty: true` alike). Beyond it `openTerminal` answers 503 `terminal_limit` until one exits.
 */
export const MAX_TERMINALS_PER_SESSION = 32;
/** Most PTYs this host runs at once, over every Session (each is a process tree, an emulator and an output log). */
export const MAX_TERMINALS_PER_HOST = 256;
/** How long a PTY may take to exit after SIGHUP at host shutdown before it gets SIGKILL. */
const STOP_GRACE_MS = 2_000;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A PTY this host runs: its Session, the live terminal, and the promise of its stored settle. */
export interface LiveEntry {
  readonly sessionId: string;
  readonly terminal: LiveTerminal;
  /** Resolves once the exit and the display are stored (never rejects). */
  readonly stored: Promise<void>;
}

type Workspace = typeof import("../workspace/terminals/live.js") & typeof import("../workspace/terminals/display.js");

/** The caps (defaults {@link MAX_TERMINALS_PER_SESSION}, {@link MAX_TERMINALS_PER_HOST}). */
export interface TerminalLimits {
  readonly perSession?: number;
  readonly perHost?: number;
}

/** One reserved place under the caps; `release()` is idempotent. */
interface TerminalSlot {
  release(): void;
}

/**
 * The running-PTY counts the caps apply to, per Session and in total. A place is taken
 * synchronously before the first await of an open (so concurrent opens cannot overshoot) and
 * given back when the PTY's exit is stored, or at once when the open fails.
 */
class TerminalSlots {
  readonly #perSession = new Map<string, number>();
  #total = 0;

  constructor(private readonly limits: Required<TerminalLimits>) {}

  reserve(sessionId: string): TerminalSlot {
    const session = this.#perSession.get(sessionId) ?? 0;
    if (session >= this.limits.perSession) {
      throw unavailable(`Session ${sessionId} already has ${this.limits.perSession} running terminals (the limit per Session): close one first`, "terminal_limit");
    }
    if (this.#total >= this.limits.perHost) {
      throw unavailable(`This host already runs ${this.limits.perHost} terminals (the limit per server): close one first`, "terminal_limit");
    }
    this.#perSession.set(sessionId, session + 1);
    this.#total += 1;
    let held = true;
    return {
      release: () => {
        if (!held) return;
        held = false;
        this.#total -= 1;
        const left = (this.#perSession.get(sessionId) ?? 1) - 1;
        if (left > 0) this.#perSession.set(sessionId, left);
        else this.#perSession.delete(sessionId);
      },
    };
  }
}

export class TerminalHost {
  readonly #storage: StorageHandle;
  readonly #instance = randomUUID();
  readonly #live = new Map<string, LiveEntry>();
  readonly #slots: TerminalSlots;
  #workspace: Promise<Workspace> | undefined;

  readonly #serverRoot: string;
  readonly #sandbox: SandboxResolver | undefined;

  readonly #leaseMs: number;
  /** Renews this host's running terminals' lease while it has any. */
  readonly #renewal: NodeJS.Timeout;

  /**
   * `sandbox`: the OS sandbox of a workdir's terminals (services/sandbox); absent, they run
   * unsandboxed. `leaseMs`: how long this host vouches for its running PTYs without renewing.
   */
  /** `leaseMs`: how long this host vouches for its running PTYs without renewing (the Turn runner's lease). */
  constructor(storage: StorageHandle, serverRoot: string, limits: TerminalLimits = {}, sandbox?: SandboxResolver, leaseMs = DEFAULT_LEASE_MS) {
    this.#storage = storage;
    this.#serverRoot = serverRoot;
    this.#sandbox = sandbox;
    this.#slots = new TerminalSlots({ perSession: limits.perSession ?? MAX_TERMINALS_PER_SESSION, perHost: limits.perHost ?? MAX_TERMINALS_PER_HOST });
    this.#leaseMs = leaseMs;
    this.#renewal = setInterval(() => {
      // No PTY here, no statement; a busy database is retried on the next tick.
      if (this.#live.size > 0) void store.renewTerminalLeases(this.#storage, this.#instance, Date.now() + this.#leaseMs).catch(() => {});
    }, Math.max(100, Math.floor(leaseMs / 3)));
    this.#renewal.unref();
  }

  // node-pty and the emulator load only when a terminal is first opened.
  #load(): Promise<Workspace> {
    return (this.#workspace ??= Promise.all([import("../workspace/terminals/live.js"), import("../workspace/terminals/display.js")]).then(([live, display]) => ({ ...live, ...display })));
  }

  /** The workdir's sandbox, prepared; a sandbox that cannot run is 503 `sandbox_unavailable` before anything is created. */
  async #prepareSandbox(workdir: string): Promise<CommandSandbox | undefined> {
    const sandbox = this.#sandbox?.(workdir);
    if (!sandbox) return undefined;
    try {
      await sandbox.prepare();
    } catch (error) {
      if (isSandboxUnavailable(error)) throw unavailable(error.message, "sandbox_unavailable");
      throw error;
    }
    return sandbox;
  }

  async #session(server: string, sessionId: string) {
    const session = await getSession(this.#storage, server, sessionId);
    if (!session) throw notFound("session", `Session ${sessionId} not found`);
    return session;
  }

  async #row(server: string, sessionId: string, terminalId: string): Promise<StoredTerminal> {
    await this.#session(server, sessionId);
    const row = await store.getTerminal(this.#storage, sessionId, terminalId);
    if (!row) throw notFound("terminal", `Terminal ${terminalId} not found`);
    return this.#reconcile(row);
  }

  /** A row still `running` whose host is gone settles now (exit unknown, no display). */
  async #reconcile(row: StoredTerminal): Promise<StoredTerminal> {
    if (row.status !== "running" || row.ownerInstance === this.#instance || !this.#ownerGone(row)) return row;
    await store.settleTerminal(this.#storage, row.id, { exitCode: null, signal: null, exitedAt: Date.now(), display: null });
    return (await store.getTerminal(this.#storage, row.sessionId, row.id)) ?? row;
  }

  /**
   * Whether another host's running terminal is orphaned. On a libSQL server the hosts may be on
   * other machines or in other PID namespaces, where its owner pid names nothing (or an unrelated
   * process): its lease decides. On a local database the hosts share this machine: its pid does.
   */
  #ownerGone(row: StoredTerminal): boolean {
    if (this.#storage.location.kind === "remote" && row.leaseExpiresAt !== null) return row.leaseExpiresAt < Date.now();
    return !processAlive(row.ownerPid);
  }

  #view(row: StoredTerminal): Terminal {
    const live = this.#live.get(row.id);
    const size = live ? live.terminal.size : { cols: row.cols, rows: row.rows };
    return {
      terminalId: row.id,
      sessionId: row.sessionId,
      command: row.command,
      initialSize: { cols: row.initialCols, rows: row.initialRows },
      size,
      status: row.status,
      ...(row.exitCode !== null ? { exitCode: row.exitCode } : {}),
      ...(row.signal !== null ? { signal: row.signal } : {}),
      createdAt: row.createdAt,
      ...(row.exitedAt !== null ? { exitedAt: row.exitedAt } : {}),
      outputAvailable: live !== undefined,
      displayAvailable: row.hasDisplay,
      ...(row.origin ? { origin: row.origin } : {}),
    };
  }

  async open(server: string, sessionId: string, terminalId: string, request: OpenTerminalRequest): Promise<Terminal> {
    const workspace = await this.#load();
    const size = request.size ?? DEFAULT_TERMINAL_SIZE;
    const geometry = workspace.validGeometry(size);
    if (geometry) throw validationFailure(`Invalid request: size: ${geometry}`);
    if (request.command?.some((part) => part.length === 0 || part.includes("\0"))) throw validationFailure("Invalid request: command: every part must be a non-empty string without NUL");
    for (const [name, value] of Object.entries(request.env ?? {})) {
      if (!ENV_NAME.test(name) || value.includes("\0")) throw validationFailure(`Invalid request: env: ${JSON.stringify(name)} is not a valid variable`);
    }
    const session = await this.#session(server, sessionId);
    const command = request.command ?? workspace.defaultCommand();
    const requestHash = createHash("sha256").update(JSON.stringify({ command: request.command ?? null, size, env: request.env ?? {} })).digest("hex");
    const existing = await store.findTerminal(this.#storage, terminalId);
    if (existing) {
      if (existing.sessionId !== sessionId || existing.requestHash !== requestHash) throw conflict(`Terminal ${terminalId} already exists with a different request`);
      return this.#view(await this.#reconcile(existing));
    }
    const cwd = absoluteWorkdir(this.#serverRoot, session.workdir);
    const sandbox = await this.#prepareSandbox(cwd);
    // A replay above answers without a place; a new PTY needs one under the caps.
    const slot = this.#slots.reserve(sessionId);
    let inserted: StoredTerminal | undefined;
    try {
      inserted = await this.#insert({ id: terminalId, sessionId, command, requestHash, size });
    } catch (error) {
      slot.release();
      throw error;
    }
    if (!inserted) {
      slot.release();
      const raced = await store.findTerminal(this.#storage, terminalId);
      if (raced && raced.sessionId === sessionId && raced.requestHash === requestHash) return this.#view(raced);
      throw conflict(`Terminal ${terminalId} already exists with a different request`);
    }
    try {
      await this.#start(workspace, inserted, { command, cwd, size, sandbox, ...(request.env ? { env: request.env } : {}) }, slot);
    } catch (error) {
      // A storage failure while settling the row passes through; a program that cannot start is the request's fault.
      if (typeof (error as { _tag?: unknown })._tag === "string") throw error;
      throw validationFailure(`Invalid request: command: cannot start ${JSON.stringify(command[0])}: ${(error as Error).message}`);
    }
    return this.#view(inserted);
  }

  /** A new terminal row owned by this host process, at its initial size (undefined when the id exists or the Session is gone). */
  #insert(row: { readonly id: string; readonly sessionId: string; readonly command: NewTerminal["command"]; readonly requestHash: string; readonly size: TerminalSize; readonly origin?: TerminalToolOrigin }): Promise<StoredTerminal | undefined> {
    const { size, origin, ...rest } = row;
    return store.insertTerminal(this.#storage, {
      ...rest,
      initialCols: size.cols,
      initialRows: size.rows,
      cols: size.cols,
      rows: size.rows,
      createdAt: Date.now(),
      ownerPid: process.pid,
      ownerInstance: this.#instance,
      leaseExpiresAt: Date.now() + this.#leaseMs,
      ...(origin ? { origin } : {}),
    });
  }

  /**
   * Starts the PTY of an inserted row, holding `slot` until its exit is stored; a PTY that cannot
   * start gives the slot back, settles the row (no display) and rethrows.
   */
  async #start(workspace: Workspace, row: StoredTerminal, options: Parameters<Workspace["LiveTerminal"]["open"]>[0], slot: TerminalSlot): Promise<LiveEntry> {
    let terminal: LiveTerminal;
    try {
      terminal = workspace.LiveTerminal.open(options);
    } catch (error) {
      slot.release();
      await store.settleTerminal(this.#storage, row.id, { exitCode: null, signal: null, exitedAt: Date.now(), display: null });
      throw error;
    }
    const stored = terminal.settled
      .then(
        (display) => this.#settle(row.id, terminal, display),
        () => this.#settle(row.id, terminal, undefined),
      )
      // A settle that cannot be stored (the Session was deleted meanwhile) leaves the row as it is.
      .catch(() => {})
      .finally(() => slot.release());
    const entry = { sessionId: row.sessionId, terminal, stored };
    this.#live.set(row.id, entry);
    return entry;
  }

  /**
   * Opens the PTY a `shell` call with `tty: true` runs `/bin/sh -c command` in: a new terminal of
   * the Session, origin that call (see tool-terminals.ts). Rejects when the Session is gone, the
   * caps are reached (503 `terminal_limit`) or the PTY cannot start.
   */
  async openForTool(server: string, sessionId: string, origin: TerminalToolOrigin, command: string, size: TerminalSize): Promise<{ terminal: Terminal; live: LiveEntry }> {
    const workspace = await this.#load();
    const session = await this.#session(server, sessionId);
    const cwd = absoluteWorkdir(this.#serverRoot, session.workdir);
    const sandbox = await this.#prepareSandbox(cwd);
    const terminalId = randomUUID();
    const argv = ["/bin/sh", "-c", command];
    const requestHash = createHash("sha256").update(JSON.stringify({ origin, command: argv, size })).digest("hex");
    const slot = this.#slots.reserve(sessionId);
    let inserted: StoredTerminal | undefined;
    try {
      inserted = await this.#insert({ id: terminalId, sessionId, command: argv, requestHash, size, origin });
    } catch (error) {
      slot.release();
      throw error;
    }
    if (!inserted) {
      slot.release();
      throw notFound("session", `Session ${sessionId} not found`);
    }
    const live = await this.#start(workspace, inserted, { command: argv, cwd, size, sandbox }, slot);
    return { terminal: this.#view(inserted), live };
  }

  async #settle(terminalId: string, terminal: LiveTerminal, display: TerminalDisplay | undefined): Promise<void> {
    const exit = await terminal.exited;
    await store.settleTerminal(this.#storage, terminalId, {
      exitCode: exit.exitCode ?? null,
      signal: exit.signal ?? null,
      exitedAt: Date.now(),
      display: display ? JSON.stringify(display) : null,
    });
  }

  async list(server: string, sessionId: string): Promise<Terminal[]> {
    await this.#session(server, sessionId);
    const rows = await store.listTerminals(this.#storage, sessionId);
    return Promise.all(rows.map(async (row) => this.#view(await this.#reconcile(row))));
  }

  async get(server: string, sessionId: string, terminalId: string): Promise<Terminal> {
    return this.#view(await this.#row(server, sessionId, terminalId));
  }

  /** The live PTY of a running terminal, or the reason there is none. */
  async #running(server: string, sessionId: string, terminalId: string): Promise<{ row: StoredTerminal; terminal: LiveTerminal }> {
    const row = await this.#row(server, sessionId, terminalId);
    const live = this.#live.get(terminalId);
    if (row.status === "exited" || live?.terminal.output.closed) throw conflict(`Terminal ${terminalId} has exited`);
    if (!live) throw unavailable(`Terminal ${terminalId} runs in another host process`);
    return { row, terminal: live.terminal };
  }

  async write(server: string, sessionId: string, terminalId: string, input: { text?: string; dataBase64?: string }): Promise<Terminal> {
    if ((input.text === undefined) === (input.dataBase64 === undefined)) throw validationFailure("Invalid request: exactly one of text or dataBase64 is required");
    let bytes: Buffer;
    if (input.text !== undefined) bytes = Buffer.from(input.text, "utf8");
    else {
      if (!/^[A-Za-z0-9+/]*={0,2}$/.test(input.dataBase64!) || input.dataBase64!.length % 4 !== 0) throw validationFailure("Invalid request: dataBase64 is not Base64");
      bytes = Buffer.from(input.dataBase64!, "base64");
    }
    if (bytes.byteLength > MAX_INPUT_BYTES) throw validationFailure(`Invalid request: input exceeds ${MAX_INPUT_BYTES} bytes`);
    const { row, terminal } = await this.#running(server, sessionId, terminalId);
    terminal.write(bytes);
    return this.#view(row);
  }

  async resize(server: string, sessionId: string, terminalId: string, size: TerminalSize): Promise<Terminal> {
    const geometry = (await this.#load()).validGeometry(size);
    if (geometry) throw validationFailure(`Invalid request: ${geometry}`);
    const { row, terminal } = await this.#running(server, sessionId, terminalId);
    terminal.resize(size);
    await store.resizeTerminal(this.#storage, terminalId, size.cols, size.rows);
    return this.#view({ ...row, cols: size.cols, rows: size.rows });
  }

  /** Ends the process and resolves once the exit and the display are stored. */
  async close(server: string, sessionId: string, terminalId: string, signal: NodeJS.Signals = "SIGHUP"): Promise<Terminal> {
    const row = await this.#row(server, sessionId, terminalId);
    const live = this.#live.get(terminalId);
    if (live) {
      await live.terminal.close(signal);
      await live.stored;
    } else if (row.status === "running") throw unavailable(`Terminal ${terminalId} runs in another host process`);
    return this.get(server, sessionId, terminalId);
  }

  /** The output log of a terminal this host holds. */
  async output(server: string, sessionId: string, terminalId: string) {
    const row = await this.#row(server, sessionId, terminalId);
    const live = this.#live.get(terminalId);
    if (!live) throw unavailable(`The output of terminal ${terminalId} is not retained by this host (it ran in another host process or before a restart); its display may still be read`);
    return { terminal: this.#view(row), log: live.terminal.output };
  }

  async page(server: string, sessionId: string, terminalId: string, after: number): Promise<{ initialSize: TerminalSize; events: TerminalOutputEvent[]; next: number; complete: boolean }> {
    const { terminal, log } = await this.output(server, sessionId, terminalId);
    const events = log.itemsAfter(after, OUTPUT_PAGE_ITEMS);
    const next = events.at(-1)?.sequence ?? Math.min(after, log.last);
    return { initialSize: terminal.initialSize, events, next, complete: log.closed && next >= log.last };
  }

  /** The stored display of a settled terminal. */
  async display(server: string, sessionId: string, terminalId: string): Promise<TerminalDisplay> {
    const row = await this.#row(server, sessionId, terminalId);
    if (row.status === "running") {
      const live = this.#live.get(terminalId);
      // The byte source closed but the display is being stored: wait for it.
      if (live?.terminal.output.closed) await live.stored;
      else throw conflict(`Terminal ${terminalId} is still running: its display is read once it settles`);
    }
    const text = await store.readTerminalDisplay(this.#storage, terminalId);
    if (text === undefined) throw unavailable(`Terminal ${terminalId} has no retained display (its host stopped before it settled)`);
    return JSON.parse(text) as TerminalDisplay;
  }

  /** Ends the terminals of deleted Sessions (their rows go with the Session). */
  closeSessions(sessionIds: readonly string[]): void {
    const ids = new Set(sessionIds);
    // The entries stay until host shutdown, which waits for their settling writes.
    for (const live of this.#live.values()) if (ids.has(live.sessionId)) void live.terminal.close("SIGHUP");
  }

  /** Host shutdown: ends every PTY and stores each exit and display. */
  async stop(): Promise<void> {
    clearInterval(this.#renewal);
    const all = [...this.#live.values()];
    await Promise.all(
      all.map(async (live) => {
        // A program that ignores SIGHUP gets SIGKILL after a grace period.
        let timer: NodeJS.Timeout | undefined;
        const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, STOP_GRACE_MS)));
        await Promise.race([live.terminal.close("SIGHUP"), grace]);
        clearTimeout(timer);
        if (!live.terminal.output.closed) await live.terminal.close("SIGKILL");
        await live.stored.catch(() => {});
      }),
    );
  }
}
