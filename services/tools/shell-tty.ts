// `shell` with `tty: true`: the command runs in a real PTY the host registers as one of the
// Session's terminals (`ctx.terminals`, origin this call), so a client can watch it, answer a
// prompt it shows (writeTerminalInput) and read its styled display once it settled.
//
// - Result: `(Ran in terminal <id>.)`, the emulator's plain screen and history (no escape
//   sequences; the last MAX_SHELL_OUTPUT_BYTES — past that the whole rendered text is written to
//   `<ctx.artifactsDirectory>/<uuid>.log` and returned as the artifact), then the end line as in
//   the pipe mode.
// - Activity: at the start, at most one per SHELL_ACTIVITY_INTERVAL_MS while output arrives (the
//   first at once), and at the end; `preview` is the latest plain tail of the screen.
// - Timeout and abort: SIGKILL to the PTY's process group; abort rejects with `interrupted` once
//   the byte source closed and the display was stored. The terminal always ends closed.
import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ToolArtifact } from "../../generated/client/types.gen.js";
import { insideRoot } from "../contract/paths.js";
import { ARCHIVE_FILE_MODE, prepareArchiveDirectory } from "./archive-file.js";
import { canonicalWorkdir } from "./paths.js";
import {
  DEFAULT_SHELL_TIMEOUT_MS,
  MAX_SHELL_OUTPUT_BYTES,
  SHELL_ACTIVITY_INTERVAL_MS,
  ToolFailure,
  interrupted,
  textResult,
  throwIfAborted,
  type ToolActivityUpdate,
  type ToolContext,
  type ToolOutput,
  type ToolTerminalRun,
} from "./tool.js";

export interface TtyShellInput {
  readonly command: string;
  readonly timeoutMs?: number;
  readonly description?: string;
}

const MAX_MESSAGE_CHARS = 1024;

/** The last MAX_SHELL_OUTPUT_BYTES of `text`, never starting inside a UTF-8 sequence. */
function tail(text: string): string {
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= MAX_SHELL_OUTPUT_BYTES) return text;
  let cut = bytes.subarray(bytes.length - MAX_SHELL_OUTPUT_BYTES);
  let start = 0;
  while (start < 3 && start < cut.length && (cut[start]! & 0xc0) === 0x80) start++;
  cut = cut.subarray(start);
  return cut.toString("utf8");
}

/** Writes the whole rendered text next to the other artifacts; `incomplete` when that failed. */
function writeArtifact(directory: string, workdir: string, text: string): ToolArtifact {
  const id = randomUUID();
  const observedBytes = Buffer.byteLength(text, "utf8");
  try {
    const absolute = join(prepareArchiveDirectory(directory), `${id}.log`);
    writeFileSync(absolute, text, { flag: "wx", mode: ARCHIVE_FILE_MODE });
    return { id, path: insideRoot(workdir, absolute) ?? absolute, observedBytes, state: "complete" };
  } catch {
    return { id, path: `${id}.log`, observedBytes, state: "incomplete" };
  }
}

export async function runInTerminal(input: TtyShellInput, ctx: ToolContext): Promise<ToolOutput> {
  throwIfAborted(ctx.signal);
  if (!ctx.terminals) throw new ToolFailure("terminal_unavailable", "This host has no terminals, so tty: true is not available; run the command without tty.");
  const workdir = canonicalWorkdir(ctx.workdir);
  const timeoutMs = input.timeoutMs ?? DEFAULT_SHELL_TIMEOUT_MS;
  const message = (input.description ?? `$ ${input.command}`).slice(0, MAX_MESSAGE_CHARS);
  let run: ToolTerminalRun;
  try {
    run = await ctx.terminals.runCommand({ command: input.command });
  } catch (error) {
    throwIfAborted(ctx.signal);
    throw error;
  }

  let aborted = false;
  let timedOut = false;
  const onAbort = () => {
    aborted = true;
    run.kill();
  };
  ctx.signal.addEventListener("abort", onAbort, { once: true });
  // Aborted while the PTY was being opened: it still ends closed.
  if (ctx.signal.aborted) onAbort();
  const timer = setTimeout(() => {
    timedOut = true;
    run.kill();
  }, timeoutMs);

  // Activity reports run one at a time, in order; a failing report stops the command.
  let activityChain: Promise<void> = Promise.resolve();
  let activityFailed = false;
  let lastReport = Number.NEGATIVE_INFINITY;
  let pendingReport: NodeJS.Timeout | undefined;
  const report = (update: ToolActivityUpdate) => {
    lastReport = Date.now();
    activityChain = activityChain
      .then(() => ctx.reportActivity(update))
      .catch(() => {
        if (!activityFailed) {
          activityFailed = true;
          run.kill();
        }
      });
  };
  const reportLive = () => {
    const preview = run.preview();
    const observedBytes = run.observedBytes();
    report({ message, observedBytes, truncated: preview.truncated, ...(preview.text.length > 0 && { preview: preview.text }) });
  };
  report({ message, observedBytes: 0, truncated: false });
  lastReport = Number.NEGATIVE_INFINITY; // the first output reports at once
  const unsubscribe = run.onOutput(() => {
    if (pendingReport) return;
    const wait = lastReport + SHELL_ACTIVITY_INTERVAL_MS - Date.now();
    if (wait <= 0) reportLive();
    else
      pendingReport = setTimeout(() => {
        pendingReport = undefined;
        reportLive();
      }, wait);
  });

  const end = await run.ended;
  unsubscribe();
  clearTimeout(timer);
  clearTimeout(pendingReport);
  ctx.signal.removeEventListener("abort", onAbort);
  if (aborted) throw interrupted();

  const bytes = Buffer.byteLength(end.text, "utf8");
  const artifact = bytes > MAX_SHELL_OUTPUT_BYTES ? writeArtifact(ctx.artifactsDirectory, workdir, end.text) : undefined;
  const text = tail(end.text);
  report({ message, observedBytes: end.observedBytes, truncated: artifact !== undefined, ...(text.length > 0 && { preview: text }), ...(artifact && { artifact }) });
  await activityChain;
  if (activityFailed) throw new ToolFailure("spawn_failed", "The command's progress could not be reported.");

  const parts = [`(Ran in terminal ${run.terminalId}.)`];
  if (artifact) {
    parts.push(
      artifact.state === "complete"
        ? `(Output truncated: showing the last ${MAX_SHELL_OUTPUT_BYTES} of ${bytes} bytes of the screen text; all of it is in ${artifact.path}.)`
        : `(Output truncated: showing the last ${MAX_SHELL_OUTPUT_BYTES} of ${bytes} bytes of the screen text; the rest could not be saved.)`,
    );
  }
  if (end.historyFull) parts.push("(The terminal's history was full: earlier output is not in this text.)");
  if (text.length > 0) parts.push(text);
  if (timedOut) parts.push(`(Timed out after ${timeoutMs} ms; the command and its child processes were stopped.)`);
  else if (end.exitCode !== undefined) parts.push(`(exit code ${end.exitCode})`);
  else parts.push(`(terminated by ${end.signal ?? "a signal"})`);
  return { ...textResult(parts.join("\n")), ...(artifact && { artifact }) };
}
