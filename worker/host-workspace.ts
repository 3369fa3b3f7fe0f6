// WorkerHarnessHost's `workspace` option: the Workspace an embedding Durable Object provides —
// its file home (`files`) and its Computer backend (`computer.exec`).
// - `files` (worker/files/home.ts `WorkspaceFileHome`: synchronous stat, list, readBytes,
//   writeBytes, remove and an optional onChange) replaces the object's SQLite `/workspace` store
//   for every reader and writer: the file tools, AGENTS.md at admission, Skills, store agents, the
//   files routes (GET …/files, …/files/content, …/files/events) and the plugin API's workspace
//   files. Harness canonicalises and confines each path to `/workspace` and enforces the
//   WorkspaceFileError codes around it (worker/files/store.ts); the home sees canonical paths only.
//   Without it the file home is the object's SQLite store.
// - `computer`: with it, `shell` runs each approved command there (the Node tool's id, input
//   schema, permission projection and result text: the combined output's last 50 KiB and the exit
//   status) instead of answering the typed `spawn_failed` outcome. The embedder keeps its
//   Computer's `/workspace` and the file home in step (the reference's post-command
//   synchronization, which an alarm participant can run: `registerAlarmParticipant`).
// Harness never closes the Workspace: the owning object keeps its lifetime.
import {
  DEFAULT_SHELL_TIMEOUT_MS,
  MAX_SHELL_OUTPUT_BYTES,
  ToolFailure,
  interrupted,
  textResult,
  type ToolDefinition,
  type ToolOutput,
} from "../services/tools/tool.js";
import { fileHomeProblem, type WorkspaceFileHome } from "./files/home.js";

/** One command for the Computer: `/bin/sh -c command` in `cwd`, stopped at `timeoutMs` or when `signal` aborts. */
export interface WorkspaceExecRequest {
  readonly command: string;
  /** The Session workdir (inside `/workspace`). */
  readonly cwd: string;
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
}

/** How a command ended. */
export interface WorkspaceExecResult {
  /** The exit code; `null` when a signal ended it. */
  readonly exitCode: number | null;
  /** Combined stdout and stderr (or stdout alone, with `stderr` beside it). */
  readonly output: string;
  readonly stderr?: string;
  /** The Computer stopped it at `timeoutMs`. */
  readonly timedOut?: boolean;
}

/** The Computer backend of a Workspace. */
export interface WorkspaceComputer {
  exec(request: WorkspaceExecRequest): Promise<WorkspaceExecResult>;
}

/** The host-provided Workspace (`WorkerHarnessHostOptions.workspace`). */
export interface HostWorkspace {
  /** The file home of `/workspace`; absent: the object's SQLite store. */
  readonly files?: WorkspaceFileHome;
  /** Runs `shell` commands; absent: `shell` answers `spawn_failed` after its permission. */
  readonly computer?: WorkspaceComputer;
}

/** Why a `workspace` option cannot be used. */
export function workspaceProblem(workspace: unknown): string | undefined {
  if (workspace === undefined) return undefined;
  if (typeof workspace !== "object" || workspace === null) return "must be an object ({ files?, computer? })";
  const files = (workspace as { files?: unknown }).files;
  if (files !== undefined) {
    const problem = fileHomeProblem(files);
    if (problem !== undefined) return problem;
  }
  const computer = (workspace as { computer?: unknown }).computer;
  if (computer !== undefined && (typeof computer !== "object" || computer === null || typeof (computer as { exec?: unknown }).exec !== "function")) return "computer must be an object with an exec(request) function";
  return undefined;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The last `MAX_SHELL_OUTPUT_BYTES` of `text` (on a character boundary), and whether it was cut. */
function tail(text: string): { readonly text: string; readonly truncated: boolean; readonly total: number } {
  const bytes = encoder.encode(text);
  if (bytes.length <= MAX_SHELL_OUTPUT_BYTES) return { text, truncated: false, total: bytes.length };
  let start = bytes.length - MAX_SHELL_OUTPUT_BYTES;
  while (start < bytes.length && (bytes[start]! & 0xc0) === 0x80) start++;
  return { text: decoder.decode(bytes.subarray(start)), truncated: true, total: bytes.length };
}

type ShellInput = { readonly command: string; readonly timeoutMs?: number; readonly description?: string; readonly tty?: boolean };

/**
 * `shell` over the Workspace's Computer: `base` (worker/tools.ts `unavailableShellTool`, passed in
 * so this module never installs the Worker's schema interpreter in a Node process) gives the id,
 * input schema and permission projection.
 */
export function computerShellTool(computer: WorkspaceComputer, base: ToolDefinition<ShellInput>): ToolDefinition<ShellInput> {
  return {
    ...base,
    description:
      "Run a shell command (/bin/sh -c) in the Session workdir on the host's Computer and return its combined output (the last 50 KiB) and exit status. timeoutMs defaults to 2 minutes.",
    async execute(input, ctx): Promise<ToolOutput> {
      if (input.tty === true) throw new ToolFailure("terminal_unavailable", "tty is unavailable: the host's Computer runs commands without a terminal.");
      if (ctx.signal.aborted) throw interrupted();
      const timeoutMs = input.timeoutMs ?? DEFAULT_SHELL_TIMEOUT_MS;
      let ended: WorkspaceExecResult;
      try {
        ended = await computer.exec({ command: input.command, cwd: ctx.workdir, timeoutMs, signal: ctx.signal });
      } catch {
        if (ctx.signal.aborted) throw interrupted();
        // The backend's message may hold its internals: the model gets the typed outcome alone.
        throw new ToolFailure("spawn_failed", "The command could not be run on the host's Computer.");
      }
      if (ctx.signal.aborted) throw interrupted();
      if (typeof ended !== "object" || ended === null || typeof ended.output !== "string") throw new ToolFailure("spawn_failed", "The host's Computer answered no usable result.");
      const combined = typeof ended.stderr === "string" && ended.stderr !== "" ? `${ended.output}${ended.output.endsWith("\n") || ended.output === "" ? "" : "\n"}${ended.stderr}` : ended.output;
      const shown = tail(combined);
      const parts: string[] = [];
      if (shown.truncated) parts.push(`(Output truncated: showing the last ${MAX_SHELL_OUTPUT_BYTES} of ${shown.total} bytes.)`);
      if (shown.text.length > 0) parts.push(shown.text.endsWith("\n") ? shown.text.slice(0, -1) : shown.text);
      if (ended.timedOut === true) parts.push(`(Timed out after ${timeoutMs} ms; the command was stopped.)`);
      else if (typeof ended.exitCode === "number") parts.push(`(exit code ${ended.exitCode})`);
      else parts.push("(terminated by a signal)");
      return textResult(parts.join("\n"));
    },
  };
}
