// A local MCP server as an owned process tree talking JSON-RPC over stdio ("MCP stdio
// lifecycle"). The child starts in a process group of its own (Unix) with only the environment
// it is given; stderr is drained and never copied anywhere. Unexpected stdout EOF or the direct
// child's exit is terminal: pending requests fail and the tree is cleaned up. close() stops write
// admission, ends stdin and waits for it to close, then SIGTERMs the group (after `stdinCloseMs`
// when set), SIGKILLs it after `sigtermMs`, and waits until no live member is left (`cleanupMs`
// bounds that wait); `shutdownMs` bounds the whole sequence. With `sandbox` the child is
// bubblewrap running the server (services/sandbox): the same group, pipes and reaping apply; a
// sandbox that cannot run, or a command not found, is SpawnFailed before anything starts.
import { spawn, type ChildProcess } from "node:child_process";
import { accessSync, constants, readdirSync, readFileSync } from "node:fs";
import { delimiter, isAbsolute, join, resolve } from "node:path";
import { isSandboxUnavailable, type CommandSandbox } from "../sandbox/index.js";
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

const isUnix = process.platform !== "win32";
const POLL_MS = 20;

/** Live (non-zombie) members of process group `pgid`, from /proc on Linux; undefined where /proc is unavailable. */
function groupMembers(pgid: number): number[] | undefined {
  if (process.platform !== "linux") return undefined;
  const members: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return undefined;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // pid (comm) state ppid pgrp …; comm may hold spaces and parentheses.
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) === pgid && fields[0] !== "Z" && fields[0] !== "X") members.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return members;
}

/** True while process group `pgid` has a live member. */
function groupAlive(pgid: number): boolean {
  const members = groupMembers(pgid);
  if (members !== undefined) return members.length > 0;
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  const pid = child.pid;
  if (pid === undefined) return;
  try {
    if (isUnix) process.kill(-pid, signal);
    else child.kill(signal);
  } catch {
    // Already gone.
  }
}

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms).unref?.());

export class OwnedStdioTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: (<T extends JSONRPCMessage>(message: T) => void) | undefined;

  private child: ChildProcess | undefined;
  private launching = false;
  private readonly buffer = new ReadBuffer();
  private admitting = true;
  private exited = false;
  private closing: Promise<void> | undefined;
  private closedNotified = false;
  private readonly exit: Promise<void>;
  private resolveExit!: () => void;

  constructor(private readonly options: OwnedStdioOptions) {
    this.exit = new Promise((resolve) => (this.resolveExit = resolve));
  }

  /** The direct child's process id (its process group on Unix). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  async start(): Promise<void> {
    if (this.child || this.launching) throw new Error("OwnedStdioTransport already started");
    this.launching = true;
    const launch = await this.launch();
    // Closed while the sandbox was prepared: nothing starts.
    if (this.closing !== undefined) throw new StdioClosed("the MCP server connection is closed");
    return new Promise((resolve, reject) => {
      const child = spawn(launch.file, launch.args, {
        env: launch.env,
        cwd: this.options.cwd,
        stdio: ["pipe", "pipe", "pipe"],
        detached: isUnix,
        windowsHide: true,
        shell: false,
      });
      this.child = child;
      let started = false;
      child.once("error", (error: NodeJS.ErrnoException) => {
        if (!started) {
          this.exited = true;
          this.resolveExit();
          reject(new SpawnFailed(this.options.command, error.code ?? "error"));
          return;
        }
        this.onerror?.(error);
      });
      child.once("spawn", () => {
        started = true;
        resolve();
      });
      child.once("exit", () => {
        this.exited = true;
        this.resolveExit();
        if (this.closing === undefined) this.terminate("the MCP server process exited");
      });
      child.stdout!.on("data", (chunk: Buffer) => {
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
      child.stdout!.once("end", () => {
        if (this.closing === undefined) this.terminate("the MCP server closed its stdout");
      });
      // Stderr is drained so the child never blocks on it; its bytes go nowhere.
      child.stderr!.on("data", () => undefined);
      child.stdin!.on("error", (error) => this.onerror?.(error));
    });
  }

  /** The command itself, or bubblewrap running it; a sandbox that cannot run rejects with SpawnFailed. */
  private async launch(): Promise<{ file: string; args: string[]; env: Record<string, string> }> {
    const { command, args, sandbox } = this.options;
    const env = { ...this.options.env };
    if (!sandbox) return { file: command, args: [...args], env };
    const fail = (error: SpawnFailed): never => {
      this.exited = true;
      this.resolveExit();
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
    const stdin = this.child?.stdin;
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

  private async shutdown(): Promise<void> {
    this.admitting = false;
    const child = this.child;
    if (!child || child.pid === undefined) return;
    const limits = this.options.limits ?? {};
    const sequence = this.reap(child, limits);
    if (limits.shutdownMs === undefined) return sequence;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([sequence, new Promise<void>((resolve) => (timer = setTimeout(resolve, limits.shutdownMs)))]);
    clearTimeout(timer);
    // The shutdown limit was reached: take the tree down at once.
    signalGroup(child, "SIGKILL");
  }

  private async reap(child: ChildProcess, limits: StdioLifecycleLimits): Promise<void> {
    const pgid = child.pid!;
    // End stdin and wait for the writable side to confirm; a blocked writer is destroyed.
    const stdin = child.stdin;
    if (stdin && !stdin.destroyed) {
      await new Promise<void>((resolve) => {
        const done = () => resolve();
        stdin.once("close", done);
        stdin.once("error", done);
        if (stdin.writableNeedDrain) stdin.destroy();
        else stdin.end();
        if (stdin.destroyed) resolve();
      });
    }
    if (limits.stdinCloseMs !== undefined) {
      await Promise.race([this.treeGone(pgid, undefined), delay(limits.stdinCloseMs)]);
    }
    if (this.treeDone(pgid)) return this.drain(child);
    signalGroup(child, "SIGTERM");
    if (!(await this.treeGone(pgid, limits.sigtermMs))) {
      signalGroup(child, "SIGKILL");
      await this.treeGone(pgid, limits.cleanupMs);
    }
    return this.drain(child);
  }

  private treeDone(pgid: number): boolean {
    return this.exited && (!isUnix || !groupAlive(pgid));
  }

  /** Resolves true once the direct child exited and no live group member is left, false after `ms`. */
  private async treeGone(pgid: number, ms: number | undefined): Promise<boolean> {
    const deadline = ms === undefined ? Infinity : Date.now() + ms;
    if (!this.exited) {
      const exited = await Promise.race([this.exit.then(() => true), ms === undefined ? new Promise<never>(() => undefined) : delay(ms).then(() => false)]);
      if (!exited) return false;
    }
    while (isUnix && groupAlive(pgid)) {
      if (Date.now() >= deadline) return false;
      await delay(POLL_MS);
    }
    return true;
  }

  private async drain(child: ChildProcess): Promise<void> {
    child.stdout?.destroy();
    child.stderr?.destroy();
  }
}
