// A local MCP server as an owned process tree talking JSON-RPC over stdio ("MCP stdio
// lifecycle"). The host starts a retained supervisor (supervisor.ts) that leads a new process
// group and starts a watchdog and then the target in it, with only the environment the target is
// given; stderr is drained and never copied anywhere. Unexpected stdout EOF or the target's exit
// is terminal: pending requests fail and the tree is cleaned up. close() stops write admission,
// ends stdin and waits for the writable side to confirm, then has the supervisor SIGTERM its group
// (after `stdinCloseMs` when set) and SIGKILL it after `sigtermMs` (when set), and waits until the
// supervisor reports the group empty and exits and the settlement socket closed (`cleanupMs` bounds
// that wait after the last signal); `shutdownMs` bounds the whole sequence. Every limit is
// unlimited unless the caller sets it; the first one reached is the close's `limit_reached`
// outcome. The host never signals or polls a numeric process-group id: only the supervisor
// addresses its own group, and the watchdog takes the final signal over if the supervisor dies.
// With `sandbox` the target is bubblewrap running the server (services/sandbox): the same group,
// pipes and reaping apply; a sandbox that cannot run, or a command not found, is SpawnFailed
// before anything starts.
import { spawn, type ChildProcess } from "node:child_process";
import type { Socket } from "node:net";
import { accessSync, constants } from "node:fs";
import { delimiter, isAbsolute, join, resolve } from "node:path";
import { isSandboxUnavailable, type CommandSandbox } from "../sandbox/index.js";
import { SUPERVISOR_SOURCE, type SupervisorCommand, type SupervisorReport } from "./supervisor.js";
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/** Lifecycle limits in milliseconds; undefined is unlimited. */
export interface StdioLifecycleLimits {
  /** How long the server may stay alive after its stdin closed before SIGTERM (undefined: SIGTERM at once). */
  readonly stdinCloseMs?: number | undefined;
  /** How long after SIGTERM before SIGKILL (undefined: never SIGKILL). */
  readonly sigtermMs?: number | undefined;
  /** How long to wait for the tree to be reaped after the last signal. */
  readonly cleanupMs?: number | undefined;
  /** The whole close sequence. */
  readonly shutdownMs?: number | undefined;
}

export interface OwnedStdioOptions {
  readonly command: string;
  readonly args: readonly string[];
  /** The child's complete environment (never merged with the host's). */
  readonly env: Readonly<Record<string, string>>;
  readonly cwd?: string | undefined;
  readonly limits?: StdioLifecycleLimits;
  /** Run the server under this OS sandbox (services/sandbox). */
  readonly sandbox?: CommandSandbox | undefined;
}

/** The child could not be started (ENOENT, EACCES, …): not retryable. */
export class SpawnFailed extends Error {
  readonly _tag = "SpawnFailed" as const;
  constructor(
    readonly command: string,
    readonly code: string,
    detail?: string,
  ) {
    super(`cannot start ${JSON.stringify(command)} (${code})${detail ? `: ${detail}` : ""}`);
    this.name = "SpawnFailed";
  }
}

/** True when `command` names an executable for `env`'s PATH (bwrap reports a missing one only by its exit). */
function findable(command: string, env: Readonly<Record<string, string>>, cwd: string): boolean {
  const runnable = (path: string): boolean => {
    try {
      accessSync(path, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  if (command.includes("/")) return runnable(isAbsolute(command) ? command : resolve(cwd, command));
  return (env["PATH"] ?? "").split(delimiter).some((directory) => directory !== "" && runnable(join(isAbsolute(directory) ? directory : resolve(cwd, directory), command)));
}

/** The connection's process ended or its stdout closed. */
export class StdioClosed extends Error {
  readonly _tag = "StdioClosed" as const;
  constructor(message: string) {
    super(message);
    this.name = "StdioClosed";
  }
}

export type StdioLifecycleLimit = "stdinCloseMs" | "sigtermMs" | "cleanupMs" | "shutdownMs";

/** How a close ended: the tree reaped, or the first configured lifecycle limit that was reached. */
export type StdioCloseOutcome = { readonly kind: "closed" } | { readonly kind: "limit_reached"; readonly limit: StdioLifecycleLimit; readonly value: number };

/** The only variables the supervisor starts with (the target gets its own environment later). */
const TEMPORARY = ["TMPDIR", "TEMP", "TMP"] as const;

const timeout = (ms: number): { promise: Promise<false>; cancel(): void } => {
  let timer: NodeJS.Timeout | undefined;
  const promise = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  return { promise, cancel: () => clearTimeout(timer) };
};

export class OwnedStdioTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: (<T extends JSONRPCMessage>(message: T) => void) | undefined;

  private supervisor: ChildProcess | undefined;
  private control: Socket | undefined;
  private stdin: Socket | undefined;
  private launching = false;
  private readonly buffer = new ReadBuffer();
  private admitting = true;
  private targetPid: number | undefined;
  private exited = false;
  private closing: Promise<void> | undefined;
  private closedNotified = false;
  private outcomeValue: StdioCloseOutcome | undefined;
  /** Resolves once the supervisor exited and the settlement socket closed: the tree is reaped. */
  private readonly settled: Promise<true>;
  private resolveSettled!: () => void;
  private isSettled = false;

  constructor(private readonly options: OwnedStdioOptions) {
    this.settled = new Promise<true>((resolve) => (this.resolveSettled = () => resolve(true)));
  }

  /** The target process's id (the server itself, or bubblewrap). */
  get pid(): number | undefined {
    return this.targetPid;
  }

  /** The supervisor's process id: the leader of the server's process group. */
  get supervisorPid(): number | undefined {
    return this.supervisor?.pid;
  }

  /** How the close ended; undefined until it did. */
  get outcome(): StdioCloseOutcome | undefined {
    return this.outcomeValue;
  }

  async start(): Promise<void> {
    if (this.supervisor || this.launching) throw new Error("OwnedStdioTransport already started");
    this.launching = true;
    const launch = await this.launch();
    // Closed while the sandbox was prepared: nothing starts.
    if (this.closing !== undefined) throw new StdioClosed("the MCP server connection is closed");
    const env: Record<string, string> = {};
    for (const name of TEMPORARY) if (launch.env[name] !== undefined) env[name] = launch.env[name];
    return new Promise((resolve, reject) => {
      const fail = (error: Error): void => {
        if (started) return this.onerror?.(error);
        started = true;
        this.settle();
        reject(error);
      };
      let started = false;
      const supervisor = spawn(process.execPath, ["-e", SUPERVISOR_SOURCE], {
        env,
        cwd: this.options.cwd,
        stdio: ["ignore", "ignore", "ignore", "pipe", "pipe", "pipe", "pipe"],
        detached: true,
        windowsHide: true,
        shell: false,
      });
      this.supervisor = supervisor;
      const [, , , control, stdin, stdout, stderr] = supervisor.stdio as unknown as Socket[];
      this.control = control!;
      this.stdin = stdin!;
      let exitedSupervisor = false;
      let controlClosed = false;
      let stdoutEnded = false;
      const maybeSettled = (): void => {
        if (exitedSupervisor && controlClosed) this.settle();
      };
      supervisor.once("error", (error: NodeJS.ErrnoException) => {
        exitedSupervisor = controlClosed = true;
        fail(new SpawnFailed(this.options.command, error.code ?? "error"));
      });
      // The supervisor's exit can be seen before the last report on its control pipe (a spawn
      // error) is read: a start that no report settled fails once the pipe is drained.
      supervisor.once("exit", () => {
        exitedSupervisor = true;
        if (!started && controlClosed) fail(new SpawnFailed(this.options.command, "supervisor_exited"));
        this.targetExited();
        maybeSettled();
      });
      control!.on("error", () => undefined);
      control!.once("close", () => {
        controlClosed = true;
        if (!started && exitedSupervisor) fail(new SpawnFailed(this.options.command, "supervisor_exited"));
        maybeSettled();
      });
      let pending = "";
      control!.setEncoding("utf8");
      control!.on("data", (chunk: string) => {
        pending += chunk;
        for (let at = pending.indexOf("\n"); at !== -1; at = pending.indexOf("\n")) {
          const report = JSON.parse(pending.slice(0, at)) as SupervisorReport;
          pending = pending.slice(at + 1);
          if (report.type === "spawned") {
            this.targetPid = report.pid;
            started = true;
            resolve();
            // It closed its stdout before this report was read: terminated now, as the end would have.
            if (stdoutEnded && this.closing === undefined) this.terminate("the MCP server closed its stdout");
          } else if (report.type === "spawn_error") fail(new SpawnFailed(this.options.command, report.code));
          else this.targetExited();
        }
      });
      this.command({ type: "start", file: launch.file, args: launch.args, env: launch.env, cwd: this.options.cwd });
      stdout!.on("data", (chunk: Buffer) => {
        this.buffer.append(chunk);
        for (;;) {
          let message: JSONRPCMessage | null;
          try {
            message = this.buffer.readMessage();
          } catch (error) {
            this.onerror?.(error as Error);
            continue;
          }
          if (message === null) break;
          this.onmessage?.(message);
        }
      });
      stdout!.on("error", () => undefined);
      stdout!.once("end", () => {
        // Before the supervisor's report (spawned, or spawn_error: the supervisor closes the
        // target's pipes when the spawn fails), the start's outcome is the report's: closing now
        // would send `term` to a supervisor that may have exited, and the failed write (EPIPE)
        // destroys the control socket with that report unread ("supervisor_exited", not ENOENT).
        stdoutEnded = true;
        if (this.closing === undefined && started) this.terminate("the MCP server closed its stdout");
      });
      // Stderr is drained so the child never blocks on it; its bytes go nowhere.
      stderr!.on("data", () => undefined);
      stderr!.on("error", () => undefined);
      stdin!.on("error", (error) => this.onerror?.(error));
    });
  }

  /** The command itself, or bubblewrap running it; a sandbox that cannot run rejects with SpawnFailed. */
  private async launch(): Promise<{ file: string; args: string[]; env: Record<string, string> }> {
    const { command, args, sandbox } = this.options;
    const env = { ...this.options.env };
    if (!sandbox) return { file: command, args: [...args], env };
    const fail = (error: SpawnFailed): never => {
      this.settle();
      throw error;
    };
    const cwd = this.options.cwd ?? process.cwd();
    if (!findable(command, env, cwd)) fail(new SpawnFailed(command, "ENOENT"));
    try {
      await sandbox.prepare();
    } catch (error) {
      if (isSandboxUnavailable(error)) fail(new SpawnFailed(command, "sandbox_unavailable", error.message));
      throw error;
    }
    return sandbox.wrap([command, ...args], { cwd, env });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.stdin;
    if (!this.admitting || !stdin || stdin.destroyed || !stdin.writable) return Promise.reject(new StdioClosed("the MCP server connection is closed"));
    return new Promise((resolve, reject) => {
      stdin.write(serializeMessage(message), (error) => (error ? reject(error) : resolve()));
    });
  }

  /** Stops the connection and reaps the process tree. Idempotent. */
  close(): Promise<void> {
    this.closing ??= this.shutdown().finally(() => this.notifyClosed());
    return this.closing;
  }

  /** Sends a command to the supervisor; false when its control socket is gone. */
  private command(message: SupervisorCommand): boolean {
    const control = this.control;
    if (!control || control.destroyed || !control.writable) return false;
    control.write(`${JSON.stringify(message)}\n`);
    return true;
  }

  private settle(): void {
    this.isSettled = true;
    this.resolveSettled();
  }

  private targetExited(): void {
    if (this.exited) return;
    this.exited = true;
    if (this.closing === undefined) this.terminate("the MCP server process exited");
  }

  /** Terminal failure while open: the tree is cleaned up and the client told. */
  private terminate(reason: string): void {
    this.onerror?.(new StdioClosed(reason));
    void this.close();
  }

  private notifyClosed(): void {
    if (this.closedNotified) return;
    this.closedNotified = true;
    this.onclose?.();
  }

  /** Records the first configured limit reached. */
  private reached(limit: StdioLifecycleLimit, value: number): void {
    this.outcomeValue ??= { kind: "limit_reached", limit, value };
  }

  private async shutdown(): Promise<void> {
    this.admitting = false;
    if (!this.supervisor || this.isSettled) return this.finished();
    const limits = this.options.limits ?? {};
    const sequence = this.reap(limits);
    if (limits.shutdownMs !== undefined) {
      const limit = timeout(limits.shutdownMs);
      const done = await Promise.race([sequence.then(() => true), limit.promise]);
      limit.cancel();
      if (!done) {
        // The shutdown limit was reached: the final signal at once; ownership is retired without waiting further.
        this.reached("shutdownMs", limits.shutdownMs);
        this.finalSignal();
      }
    } else await sequence;
    this.finished();
  }

  private finished(): void {
    this.outcomeValue ??= { kind: "closed" };
    const stdio = this.supervisor?.stdio as unknown as (Socket | null)[] | undefined;
    for (const stream of stdio?.slice(4) ?? []) stream?.destroy();
  }

  private async reap(limits: StdioLifecycleLimits): Promise<void> {
    await this.endStdin();
    if (limits.stdinCloseMs !== undefined && !(await this.settledWithin(limits.stdinCloseMs))) this.reached("stdinCloseMs", limits.stdinCloseMs);
    if (this.isSettled) return;
    this.command({ type: "term" });
    if (await this.settledWithin(limits.sigtermMs)) return;
    this.reached("sigtermMs", limits.sigtermMs!);
    this.finalSignal();
    if (!(await this.settledWithin(limits.cleanupMs))) this.reached("cleanupMs", limits.cleanupMs!);
  }

  /** Ends stdin and waits for the writable side to confirm; a blocked writer is destroyed. */
  private async endStdin(): Promise<void> {
    const stdin = this.stdin;
    if (!stdin || stdin.destroyed) return;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        stdin.destroy();
        resolve();
      };
      stdin.once("finish", done);
      stdin.once("close", done);
      stdin.once("error", done);
      if (stdin.writableNeedDrain) stdin.destroy();
      else stdin.end();
      if (stdin.destroyed) resolve();
    });
  }

  /** The final signal: the supervisor SIGKILLs its own group; killing the supervisor itself (its pid is not reaped yet) hands it to the watchdog. */
  private finalSignal(): void {
    if (this.isSettled) return;
    if (this.command({ type: "kill" })) return;
    const supervisor = this.supervisor;
    if (supervisor && supervisor.exitCode === null && supervisor.signalCode === null) supervisor.kill("SIGKILL");
  }

  /** True once the tree is reaped, false after `ms` (undefined: no limit). */
  private async settledWithin(ms: number | undefined): Promise<boolean> {
    if (this.isSettled) return true;
    if (ms === undefined) return this.settled;
    const limit = timeout(ms);
    const settled = await Promise.race([this.settled, limit.promise]);
    limit.cancel();
    return settled;
  }
}
