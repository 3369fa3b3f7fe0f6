// Running the BUILT binary (`node bin/ze-harness.js …`) the way a user does: a fresh
// process, a tempHome env (nothing inherited from the test runner but PATH) and a cwd.
import { spawn, type ChildProcess } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, statSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import type { ScriptedResponse, TestModel } from "../../tools/test-model/index.js";
import { binPath, repoRoot } from "./harness.js";

export interface CliResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface CliOptions {
  readonly env: Record<string, string>;
  readonly cwd: string;
  /** Written to stdin, which is then closed (without input, stdin is /dev/null; never a TTY). */
  readonly input?: string;
}

/** Runs any command with args and resolves when it exits; never rejects on a non-zero exit. */
export function runProcess(command: string, args: readonly string[], options: CliOptions): Promise<CliResult> {
  return new Promise((resolvePromise, reject) => {
    const input = options.input;
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.once("error", reject);
    child.once("close", (code, signal) => resolvePromise({ code, signal, stdout, stderr }));
    if (input !== undefined) {
      // A process may exit without reading its stdin: that EPIPE is not the test's failure.
      child.stdin!.on("error", () => {});
      child.stdin!.end(input);
    }
  });
}

/**
 * `args` run in-process (`--embedded` first) unless they choose a connection themselves
 * (`--embedded`, `--remote`): without either flag a command uses (and starts) the shared local
 * daemon, which only the daemon suites (tests/daemon/) start, and stop.
 */
export function embedded(args: readonly string[]): string[] {
  const chosen = args.some((arg) => arg === "--embedded" || arg === "--remote" || arg.startsWith("--remote="));
  return chosen ? [...args] : ["--embedded", ...args];
}

/** `node bin/ze-harness.js ...args`. */
export function runCli(args: readonly string[], options: CliOptions): Promise<CliResult> {
  return runProcess(process.execPath, [binPath, ...args], options);
}

/** Parses stdout as JSON, with the whole result in the message when it is not. */
/** The JSON stdout of a command that must succeed: exit 0 and nothing on stderr. */
export async function succeeded<T>(result: Promise<CliResult>): Promise<T> {
  const settled = await result;
  expect(settled.stderr).toBe("");
  expect(settled.code).toBe(0);
  return jsonOf<T>(settled);
}

export function jsonOf<T = any>(result: CliResult): T {
  try {
    return JSON.parse(result.stdout) as T;
  } catch {
    throw new Error(`stdout is not JSON (exit ${result.code}):\n${result.stdout}\nstderr:\n${result.stderr}`);
  }
}

function newestMtime(directory: string): number {
  let newest = 0;
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestMtime(path));
    else if (entry.name.endsWith(".ts")) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/**
 * The CLI suites test dist/, not the sources: fail early with the fix when dist/ is missing or
 * older than the CLI and client sources (`npm test` builds first; plain `npx vitest` does not).
 * The rest of services/ is left out on purpose: other work edits it constantly in a shared checkout.
 */
/**
 * A copy of the built package's fast path in `directory` (bin/, dist/bundle/, package.json, and
 * `extra` files by their path in the repository), with node_modules linked: a case may rewrite its
 * files (the code caches, say) without touching the checkout's. Returns `directory`.
 */
export function copyBuiltPackage(directory: string, extra: readonly string[] = []): string {
  for (const path of ["bin", join("dist", "bundle"), "package.json", ...extra]) {
    mkdirSync(join(directory, path, ".."), { recursive: true });
    cpSync(join(repoRoot, path), join(directory, path), { recursive: true });
  }
  symlinkSync(join(repoRoot, "node_modules"), join(directory, "node_modules"));
  return directory;
}

export function assertBuilt(): void {
  const marker = join(repoRoot, "dist", "cli", "root-help.txt"); // written last by `npm run build`
  if (!existsSync(marker)) throw new Error("dist/ is missing: run `npm run build` before the CLI tests");
  const built = statSync(marker).mtimeMs;
  // services/daemon is the daemon client every local command bundles.
  const sources = ["cli", "clients", join("services", "daemon")].map((folder) => newestMtime(join(repoRoot, folder)));
  if (Math.max(...sources) > built) throw new Error("dist/ is older than the sources: run `npm run build` before the CLI tests");
}

export interface LiveCli {
  readonly child: ChildProcess;
  /** Output so far. */
  stdout(): string;
  stderr(): string;
  /** Writes to stdin (a pipe, never a TTY). */
  write(text: string): void;
  /** Closes stdin (end of input). */
  end(): void;
  /** Resolves as soon as `stream` so far matches `pattern`; rejects if the process exits first. */
  waitFor(pattern: RegExp, stream?: "stdout" | "stderr"): Promise<void>;
  /** Resolves when the process exits, with everything it printed. */
  readonly exited: Promise<CliResult>;
}

export interface LiveCliOptions extends Omit<CliOptions, "input"> {
  /** stdout and stderr on one pipe (`2>&1`): everything arrives as stdout(), in the order written. */
  readonly sharedOutput?: boolean;
}

/** `node bin/ze-harness.js ...args` kept running, for tests that talk to it while it works. */
export function startCli(args: readonly string[], options: LiveCliOptions): LiveCli {
  const child = options.sharedOutput
    ? // `exec` makes the shell the CLI process itself, so signals reach it directly.
      spawn("sh", ["-c", 'exec "$0" "$@" 2>&1', process.execPath, binPath, ...args], { cwd: options.cwd, env: options.env, stdio: ["pipe", "pipe", "pipe"] })
    : spawn(process.execPath, [binPath, ...args], { cwd: options.cwd, env: options.env, stdio: ["pipe", "pipe", "pipe"] });
  const output = { stdout: "", stderr: "" };
  const waiters = new Set<() => void>();
  const notify = (): void => {
    for (const waiter of [...waiters]) waiter();
  };
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => ((output.stdout += chunk), notify()));
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => ((output.stderr += chunk), notify()));
  child.stdin!.on("error", () => {});
  const exited = new Promise<CliResult>((resolvePromise, reject) => {
    child.once("error", reject);
    child.once("close", (code, signal) => {
      resolvePromise({ code, signal, stdout: output.stdout, stderr: output.stderr });
      notify();
    });
  });
  return {
    child,
    stdout: () => output.stdout,
    stderr: () => output.stderr,
    write: (text) => void child.stdin!.write(text),
    end: () => void child.stdin!.end(),
    waitFor: (pattern, stream = "stdout") =>
      new Promise<void>((resolvePromise, reject) => {
        const check = (): void => {
          if (pattern.test(output[stream])) {
            waiters.delete(check);
            resolvePromise();
          } else if (child.exitCode !== null || child.signalCode !== null) {
            waiters.delete(check);
            reject(new Error(`exited (${child.exitCode ?? child.signalCode}) before ${stream} matched ${pattern}:\nstdout:\n${output.stdout}\nstderr:\n${output.stderr}`));
          }
        };
        waiters.add(check);
        check();
      }),
    exited,
  };
}

/**
 * Scripted model answers keyed by a marker in the prompt: a request gets the next answer of the
 * first marker its body contains that still has one. A test that fails early leaves its unused
 * answers under its own marker instead of shifting every later test's script.
 */
export function scriptByPrompt(model: TestModel): (marker: string, ...responses: ScriptedResponse[]) => void {
  const queues = new Map<string, ScriptedResponse[]>();
  model.reply((request) => {
    const body = JSON.stringify(request.body);
    for (const [marker, queue] of queues) if (queue.length > 0 && body.includes(marker)) return queue.shift()!;
    return { error: { status: 500, body: "no scripted answer for this prompt" } };
  });
  return (marker, ...responses) => void queues.set(marker, [...(queues.get(marker) ?? []), ...responses]);
}
