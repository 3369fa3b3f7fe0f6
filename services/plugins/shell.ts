// `context.workspaceShell` on the Node host: one command through `/bin/sh -c`, in its own process
// group, with only an allowlist of the server's environment variables. Output (stdout and stderr
// interleaved) keeps the last MAX_SHELL_OUTPUT_BYTES; past that the full output streams to
// `<cwd>/.ze-harness/tool-output/<uuid>.log`. A timeout or abort SIGKILLs the group; a timeout
// resolves (`timedOut`), an abort rejects with the signal's reason. No timeout when none is given.
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { createWriteStream, type WriteStream } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { WorkspaceShellError, type ToolActivityUpdate, type WorkspaceShell } from "../../plugin/index.js";
import { insideRoot } from "../contract/paths.js";
import { DEFAULT_ARTIFACTS_SUBDIRECTORY, MAX_SHELL_OUTPUT_BYTES, MAX_SHELL_TIMEOUT_MS, SHELL_ACTIVITY_INTERVAL_MS } from "../tools/tool.js";
import { makeDirectorySync } from "../contract/directory.js";

const ENV_ALLOWLIST = ["PATH", "HOME", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TERM", "TMPDIR", "TZ", "USER", "LOGNAME", "SHELL"];
const PIPE_GRACE_MS = 500;

const shellError = (code: ConstructorParameters<typeof WorkspaceShellError>[0]["code"]) => new WorkspaceShellError({ code });

function environment(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const name of ENV_ALLOWLIST) if (process.env[name] !== undefined) env[name] = process.env[name];
  env["PATH"] ??= "/usr/local/bin:/usr/bin:/bin";
  return env;
}

/** The last `MAX_SHELL_OUTPUT_BYTES` in memory; the whole output in an artifact file once it passes them. */
class Output {
  total = 0;
  private chunks: Buffer[] = [];
  private kept = 0;
  private file: { id: string; path: string; stream: WriteStream; failed: boolean } | undefined;

  constructor(private readonly cwd: string) {}

  write(chunk: Buffer): void {
    this.total += chunk.length;
    this.chunks.push(chunk);
    this.kept += chunk.length;
    if (this.file) this.append(chunk);
    else if (this.total > MAX_SHELL_OUTPUT_BYTES) this.spill();
    while (this.kept > MAX_SHELL_OUTPUT_BYTES) {
      const first = this.chunks[0]!;
      const excess = this.kept - MAX_SHELL_OUTPUT_BYTES;
      if (first.length <= excess) {
        this.chunks.shift();
        this.kept -= first.length;
      } else {
        this.chunks[0] = first.subarray(excess);
        this.kept -= excess;
      }
    }
  }

  private spill(): void {
    const id = randomUUID();
    const directory = join(this.cwd, DEFAULT_ARTIFACTS_SUBDIRECTORY);
    const path = `${DEFAULT_ARTIFACTS_SUBDIRECTORY}/${id}.log`;
    try {
      // Private like the tools' archives (services/tools/archive-file.ts): 0700 directory, 0600 file.
      makeDirectorySync(directory, 0o700);
      const stream = createWriteStream(join(directory, `${id}.log`), { flags: "wx", mode: 0o600 });
      this.file = { id, path, stream, failed: false };
      stream.on("error", () => {
        if (this.file) this.file.failed = true;
      });
    } catch {
      this.file = { id, path, stream: undefined as unknown as WriteStream, failed: true };
      return;
    }
    for (const chunk of this.chunks) this.append(chunk);
  }

  private append(chunk: Buffer): void {
    if (this.file && !this.file.failed) this.file.stream.write(chunk);
  }

  get truncated(): boolean {
    return this.total > this.kept;
  }

  text(): string {
    let bytes = Buffer.concat(this.chunks);
    // A cut may split a UTF-8 sequence: drop its continuation bytes.
    if (this.truncated) {
      let start = 0;
      while (start < 3 && start < bytes.length && (bytes[start]! & 0xc0) === 0x80) start++;
      bytes = bytes.subarray(start);
    }
    return bytes.toString("utf8");
  }

  artifact(state: "writing" | "complete") {
    if (!this.file) return undefined;
    return { id: this.file.id, path: this.file.path, observedBytes: this.total, state: this.file.failed ? ("incomplete" as const) : state };
  }

  async close(): Promise<void> {
    const file = this.file;
    if (!file || file.failed) return;
    await new Promise<void>((done) => {
      file.stream.once("error", () => done());
      file.stream.end(() => done());
    });
  }
}

/** The shell capability; relative `cwd` values resolve inside `root` and must stay there. */
export function createWorkspaceShell(root: string): WorkspaceShell {
  return {
    execute: async ({ command, cwd, timeoutMs, signal, onOutput }) => {
      if (typeof command !== "string" || command === "" || command.includes("\0")) throw shellError("invalid_command");
      let directory = root;
      if (cwd !== undefined) {
        if (typeof cwd !== "string" || cwd === "" || cwd.includes("\0")) throw shellError("invalid_command");
        directory = isAbsolute(cwd) ? cwd : resolve(root, cwd);
        if (!isAbsolute(cwd) && insideRoot(root, directory) === undefined) throw shellError("invalid_command");
      }
      if (timeoutMs !== undefined && (typeof timeoutMs !== "number" || !Number.isFinite(timeoutMs) || timeoutMs <= 0 || timeoutMs > MAX_SHELL_TIMEOUT_MS)) {
        throw shellError("invalid_timeout");
      }
      if (signal.aborted) throw signal.reason;
      const output = new Output(directory);
      let reports: Promise<void> = Promise.resolve();
      let reportFailed = false;
      let last = Number.NEGATIVE_INFINITY;
      let pending: NodeJS.Timeout | undefined;
      const report = (state: "writing" | "complete") => {
        if (!onOutput) return;
        last = Date.now();
        const artifact = output.artifact(state);
        const update: ToolActivityUpdate = { observedBytes: output.total, truncated: output.truncated, ...(output.total > 0 ? { preview: output.text() } : {}), ...(artifact ? { artifact } : {}) };
        reports = reports.then(() => onOutput(update)).catch(() => {
          reportFailed = true;
          kill();
        });
      };
      let child: ReturnType<typeof spawn>;
      try {
        child = spawn("/bin/sh", ["-c", command], { cwd: directory, env: environment(), detached: true, stdio: ["ignore", "pipe", "pipe"] });
      } catch {
        throw shellError("spawn_failed");
      }
      const kill = () => {
        if (child.pid === undefined) return;
        try {
          process.kill(-child.pid, "SIGKILL");
        } catch {
          // Already gone.
        }
      };
      const onData = (chunk: Buffer) => {
        output.write(chunk);
        if (pending) return;
        const wait = last + SHELL_ACTIVITY_INTERVAL_MS - Date.now();
        if (wait <= 0) report("writing");
        else
          pending = setTimeout(() => {
            pending = undefined;
            report("writing");
          }, wait);
      };
      child.stdout!.on("data", onData);
      child.stderr!.on("data", onData);
      let timedOut = false;
      const timer =
        timeoutMs === undefined
          ? undefined
          : setTimeout(() => {
              timedOut = true;
              kill();
            }, timeoutMs);
      signal.addEventListener("abort", kill, { once: true });
      let grace: NodeJS.Timeout | undefined;
      const ended = await new Promise<{ code: number | null; signal: string | null } | "error">((done) => {
        child.once("error", () => done("error"));
        child.once("exit", () => {
          grace = setTimeout(() => {
            child.stdout?.destroy();
            child.stderr?.destroy();
          }, PIPE_GRACE_MS);
        });
        child.once("close", (code, endSignal) => done({ code, signal: endSignal }));
      });
      clearTimeout(timer);
      clearTimeout(grace);
      clearTimeout(pending);
      signal.removeEventListener("abort", kill);
      await output.close();
      if (ended === "error") throw shellError("spawn_failed");
      if (signal.aborted) throw signal.reason;
      report("complete");
      await reports;
      if (reportFailed) throw shellError("spawn_failed");
      const artifact = output.artifact("complete");
      return {
        output: output.text(),
        exitCode: timedOut ? null : ended.code,
        signal: ended.signal,
        timedOut,
        truncated: output.truncated,
        ...(artifact && artifact.state !== "writing" ? { artifact: { id: artifact.id, path: artifact.path, observedBytes: artifact.observedBytes, state: artifact.state } } : {}),
      };
    },
  };
}
