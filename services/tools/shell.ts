// `shell`: runs one command with `/bin/sh -c` in the Session workdir, in its own process group.
//
// - Output: stdout and stderr interleaved in arrival order. The result keeps the last
//   MAX_SHELL_OUTPUT_BYTES; once more was produced, the full output is streamed to an artifact
//   file `<ctx.artifactsDirectory>/<uuid>.log` (created on demand) and returned as
//   `ToolOutput.artifact` (state `complete`, or `incomplete` if writing failed).
// - Activity: an update when the command starts, then at most one per SHELL_ACTIVITY_INTERVAL_MS
//   while output arrives (the first chunk reports at once), and a final one at the end.
// - Timeout (default DEFAULT_SHELL_TIMEOUT_MS): the whole process group gets SIGKILL; the call
//   still succeeds and says it timed out. A non-zero exit is a success too.
// - Abort: the whole process group gets SIGKILL; the call rejects with `interrupted` only after
//   the shell has exited and its output pipes have closed.
// - Environment: only an allowlist of the server's variables (PATH, HOME, locale, TERM, TMPDIR,
//   TZ, USER, LOGNAME, SHELL) reaches the command.
// - Permissions: `shell` on the raw command text (saved as that exact text), preceded by
//   `external_directory` for outside-workdir paths found by the heuristic in `shell-scan.ts`.
// - `tty: true`: the command runs in a PTY registered as a Session terminal instead (shell-tty.ts);
//   same permissions.
// - Sandbox (`createShellTool({ sandbox })`, services/sandbox): where the resolver gives a sandbox
//   for the workdir, the command runs under bubblewrap (the OS enforces the workdir boundary, so no
//   `external_directory` is asked: the `shell` check alone remains, as in Codex's workspace-write
//   mode); where bubblewrap cannot run the call fails `sandbox_unavailable` and nothing runs.
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { createWriteStream, type WriteStream } from "node:fs";
import { join } from "node:path";
import type { ToolArtifact } from "../../generated/client/types.gen.js";
import { insideRoot } from "../contract/paths.js";
import { ARCHIVE_FILE_MODE, prepareArchiveDirectory } from "./archive-file.js";
import { canonicalWorkdir } from "./paths.js";
import { externalDirectoriesOf } from "./shell-scan.js";
import { childEnvironment } from "../workspace/environment.js";
import { runInTerminal } from "./shell-tty.js";
import { isSandboxUnavailable, type CommandSandbox, type SandboxResolver } from "../sandbox/index.js";
import {
  DEFAULT_SHELL_TIMEOUT_MS,
  MAX_SHELL_OUTPUT_BYTES,
  MAX_SHELL_TIMEOUT_MS,
  SHELL_ACTIVITY_INTERVAL_MS,
  ToolFailure,
  interrupted,
  textResult,
  throwIfAborted,
  type PermissionProjection,
  type ToolActivityUpdate,
  type ToolContext,
  type ToolDefinition,
  type ToolOutput,
} from "./tool.js";

export interface ShellToolOptions {
  /** The sandbox for a workdir's commands (absent, or undefined for a workdir: unsandboxed). */
  readonly sandbox?: SandboxResolver | undefined;
  /** A sentence appended to the description (what the sandbox allows), for the model. */
  readonly note?: string | undefined;
}

export interface ShellInput {
  readonly command: string;
  readonly timeoutMs?: number;
  readonly description?: string;
  /** Run in a real terminal (see shell-tty.ts). */
  readonly tty?: boolean;
}

/** After the shell exits, how long background holders of its pipes may keep them open. */
const PIPE_GRACE_MS = 500;
const MAX_MESSAGE_CHARS = 1024;


/** Drops UTF-8 continuation bytes at the start of a cut buffer (at most one partial character). */
function skipContinuation(bytes: Buffer): Buffer {
  let start = 0;
  while (start < 3 && start < bytes.length && (bytes[start]! & 0xc0) === 0x80) start++;
  return bytes.subarray(start);
}

/**
 * Decodes a byte tail, dropping a UTF-8 sequence cut at its start. Invalid bytes decode to
 * U+FFFD (3 bytes each), so the text is re-cut to stay within MAX_SHELL_OUTPUT_BYTES.
 */
function decodeTail(bytes: Buffer, cut: boolean): string {
  const text = (cut ? skipContinuation(bytes) : bytes).toString("utf8");
  const encoded = Buffer.from(text, "utf8");
  if (encoded.length <= MAX_SHELL_OUTPUT_BYTES) return text;
  return skipContinuation(encoded.subarray(encoded.length - MAX_SHELL_OUTPUT_BYTES)).toString("utf8");
}

/** Combined output: a bounded tail in memory and, past the bound, the full stream in a file. */
class OutputSink {
  total = 0;
  private tail: Buffer[] = [];
  private tailBytes = 0;
  private stream: WriteStream | undefined;
  private streamFailed = false;
  artifact: { id: string; absolute: string; path: string } | undefined;

  constructor(
    private readonly artifactsDirectory: string,
    private readonly workdir: string,
  ) {}

  write(chunk: Buffer): void {
    this.total += chunk.length;
    this.tail.push(chunk);
    this.tailBytes += chunk.length;
    if (this.stream) this.append(chunk);
    else if (this.total > MAX_SHELL_OUTPUT_BYTES) this.spill();
    while (this.tailBytes > MAX_SHELL_OUTPUT_BYTES) {
      const first = this.tail[0]!;
      const excess = this.tailBytes - MAX_SHELL_OUTPUT_BYTES;
      if (first.length <= excess) {
        this.tail.shift();
        this.tailBytes -= first.length;
      } else {
        this.tail[0] = first.subarray(excess);
        this.tailBytes -= excess;
      }
    }
  }

  /** Everything so far is still in `tail` (it was within the bound until this chunk): write it out. */
  private spill(): void {
    const id = randomUUID();
    try {
      const absolute = join(prepareArchiveDirectory(this.artifactsDirectory), `${id}.log`);
      this.artifact = { id, absolute, path: insideRoot(this.workdir, absolute) ?? absolute };
      this.stream = createWriteStream(absolute, { flags: "wx", mode: ARCHIVE_FILE_MODE });
      this.stream.on("error", () => {
        this.streamFailed = true;
      });
    } catch {
      this.streamFailed = true;
      this.artifact ??= { id, absolute: "", path: `${id}.log` };
      return;
    }
    for (const chunk of this.tail) this.append(chunk);
  }

  private append(chunk: Buffer): void {
    if (!this.streamFailed) this.stream?.write(chunk);
  }

  get truncated(): boolean {
    return this.total > this.tailBytes;
  }

  text(): string {
    return decodeTail(Buffer.concat(this.tail), this.truncated);
  }

  artifactState(state: ToolArtifact["state"]): ToolArtifact | undefined {
    if (!this.artifact) return undefined;
    return { id: this.artifact.id, path: this.artifact.path, observedBytes: this.total, state: this.streamFailed ? "incomplete" : state };
  }

  /** Closes the artifact file; resolves once every byte is flushed (or writing failed). */
  async close(): Promise<void> {
    const stream = this.stream;
    if (!stream || this.streamFailed) return;
    await new Promise<void>((resolve) => {
      stream.once("error", () => resolve());
      stream.end(() => resolve());
    });
  }
}

function describeEnd(input: { exitCode: number | null; signal: string | null; timedOut: boolean; timeoutMs: number }): string {
  if (input.timedOut) return `(Timed out after ${input.timeoutMs} ms; the command and its child processes were stopped.)`;
  if (input.exitCode !== null) return `(exit code ${input.exitCode})`;
  return `(terminated by ${input.signal ?? "a signal"})`;
}

/** The sandbox's launch of `/bin/sh -c command`, or the plain one; a sandbox that cannot run fails the call. */
async function launchOf(command: string, workdir: string, sandbox: CommandSandbox | undefined): Promise<{ file: string; args: string[]; env: Record<string, string> }> {
  const env = childEnvironment();
  if (!sandbox) return { file: "/bin/sh", args: ["-c", command], env };
  try {
    await sandbox.prepare();
  } catch (error) {
    if (isSandboxUnavailable(error)) throw new ToolFailure("sandbox_unavailable", error.message.slice(0, MAX_MESSAGE_CHARS));
    throw error;
  }
  return sandbox.wrap(["/bin/sh", "-c", command], { cwd: workdir, env });
}

async function run(input: ShellInput, ctx: ToolContext, sandbox: CommandSandbox | undefined): Promise<ToolOutput> {
  throwIfAborted(ctx.signal);
  const workdir = canonicalWorkdir(ctx.workdir);
  const launch = await launchOf(input.command, workdir, sandbox);
  throwIfAborted(ctx.signal);
  const timeoutMs = input.timeoutMs ?? DEFAULT_SHELL_TIMEOUT_MS;
  const sink = new OutputSink(ctx.artifactsDirectory, workdir);
  const message = (input.description ?? `$ ${input.command}`).slice(0, MAX_MESSAGE_CHARS);

  // Activity reports run one at a time, in order; a failing report stops the command.
  let activityChain: Promise<void> = Promise.resolve();
  let activityFailed = false;
  let lastReport = Number.NEGATIVE_INFINITY;
  let pendingReport: NodeJS.Timeout | undefined;
  const report = (state: ToolArtifact["state"]) => {
    lastReport = Date.now();
    const artifact = sink.artifactState(state);
    const update: ToolActivityUpdate = {
      message,
      observedBytes: sink.total,
      truncated: sink.truncated,
      ...(sink.total > 0 && { preview: sink.text() }),
      ...(artifact && { artifact }),
    };
    activityChain = activityChain
      .then(() => ctx.reportActivity(update))
      .catch(() => {
        if (!activityFailed) {
          activityFailed = true;
          killGroup();
        }
      });
  };

  let child: ReturnType<typeof spawn>;
  try {
    child = spawn(launch.file, launch.args, {
      cwd: workdir,
      env: launch.env,
      detached: true, // its own process group, so the whole tree can be signalled
      stdio: ["ignore", "pipe", "pipe"],
    });
  } catch {
    throw new ToolFailure("spawn_failed", "The command could not be started.");
  }
  const killGroup = () => {
    if (child.pid === undefined) return;
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  };

  report("writing");
  lastReport = Number.NEGATIVE_INFINITY; // the first output chunk reports at once
  const onData = (chunk: Buffer) => {
    sink.write(chunk);
    if (pendingReport) return;
    const wait = lastReport + SHELL_ACTIVITY_INTERVAL_MS - Date.now();
    if (wait <= 0) report("writing");
    else
      pendingReport = setTimeout(() => {
        pendingReport = undefined;
        report("writing");
      }, wait);
  };
  child.stdout!.on("data", onData);
  child.stderr!.on("data", onData);

  let timedOut = false;
  let aborted = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup();
  }, timeoutMs);
  const onAbort = () => {
    aborted = true;
    killGroup();
  };
  ctx.signal.addEventListener("abort", onAbort, { once: true });

  let graceTimer: NodeJS.Timeout | undefined;
  const ended = await new Promise<{ exitCode: number | null; signal: string | null } | "spawn_error">((resolve) => {
    child.once("error", () => resolve("spawn_error"));
    child.once("exit", () => {
      // Background processes may hold the pipes open; do not wait on them forever.
      graceTimer = setTimeout(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
      }, PIPE_GRACE_MS);
    });
    child.once("close", (code, signal) => resolve({ exitCode: code, signal }));
  });
  clearTimeout(timer);
  clearTimeout(graceTimer);
  clearTimeout(pendingReport);
  ctx.signal.removeEventListener("abort", onAbort);

  await sink.close();
  if (ended === "spawn_error") throw new ToolFailure("spawn_failed", "The command could not be started.");
  if (aborted) throw interrupted();
  report("complete");
  await activityChain;
  if (activityFailed) throw new ToolFailure("spawn_failed", "The command's progress could not be reported.");

  const artifact = sink.artifactState("complete");
  const parts: string[] = [];
  if (sink.truncated) {
    parts.push(
      artifact && artifact.state === "complete"
        ? `(Output truncated: showing the last ${MAX_SHELL_OUTPUT_BYTES} of ${sink.total} bytes; the full output is in ${artifact.path}.)`
        : `(Output truncated: showing the last ${MAX_SHELL_OUTPUT_BYTES} of ${sink.total} bytes; the full output could not be saved.)`,
    );
  }
  const text = sink.text();
  if (text.length > 0) parts.push(text.endsWith("\n") ? text.slice(0, -1) : text);
  parts.push(describeEnd({ ...ended, timedOut, timeoutMs }));
  return { ...textResult(parts.join("\n")), ...(artifact && { artifact }) };
}

const DESCRIPTION =
  "Run a shell command (/bin/sh -c) in the Session workdir and return its combined output (the last 50 KiB; " +
  "longer output is saved to a file whose path is given) and exit status. timeoutMs defaults to 2 minutes.";

/** The `shell` tool, its commands sandboxed where `options.sandbox` says so. */
export const createShellTool = (options: ShellToolOptions = {}): ToolDefinition<ShellInput> => ({
  id: "shell",
  description: options.note ? `${DESCRIPTION} ${options.note}` : DESCRIPTION,
  inputSchema: {
    type: "object",
    properties: {
      command: { type: "string", minLength: 1, description: "The command line." },
      timeoutMs: { type: "integer", minimum: 1, maximum: MAX_SHELL_TIMEOUT_MS, description: "Time limit in milliseconds." },
      description: { type: "string", maxLength: 200, description: "A few words saying what the command does." },
      tty: {
        type: "boolean",
        description:
          "Run in a real terminal (for colours, progress bars, prompting or full-screen programs); the user can watch and " +
          "type into it; the result is the rendered screen text.",
      },
    },
    required: ["command"],
    additionalProperties: false,
  },
  permissions(input, ctx) {
    if (input.command.includes("\0")) throw new ToolFailure("invalid_input", "Tool input validation failed: input/command must not contain NUL.");
    const projections: PermissionProjection[] = [];
    // Sandboxed, the OS holds the boundary the heuristic guesses at: no external_directory ask.
    const external = options.sandbox?.(ctx.workdir) ? [] : externalDirectoriesOf(input.command, ctx.workdir);
    if (external.length > 0) projections.push({ action: "external_directory", resources: external, save: external });
    projections.push({ action: "shell", resources: [input.command], save: [input.command] });
    return projections;
  },
  // With tty the host's terminals run it, under the same sandbox (they hold the same resolver).
  execute: (input, ctx) => (input.tty === true ? runInTerminal(input, ctx) : run(input, ctx, options.sandbox?.(ctx.workdir))),
});

/** `shell` without a sandbox (the reference's behaviour). */
export const shellTool: ToolDefinition<ShellInput> = createShellTool();
