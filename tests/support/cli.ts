// Running the BUILT binary (`node bin/ze-harness.js …`) the way a user does: a fresh
// process, a tempHome env (nothing inherited from the test runner but PATH) and a cwd.
import { spawn } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
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

/** `node bin/ze-harness.js ...args`. */
export function runCli(args: readonly string[], options: CliOptions): Promise<CliResult> {
  return runProcess(process.execPath, [binPath, ...args], options);
}

/** Parses stdout as JSON, with the whole result in the message when it is not. */
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
 * services/ is left out on purpose: other work edits it constantly in a shared checkout.
 */
export function assertBuilt(): void {
  const marker = join(repoRoot, "dist", "cli", "root-help.txt"); // written last by `npm run build`
  if (!existsSync(marker)) throw new Error("dist/ is missing: run `npm run build` before the CLI tests");
  const built = statSync(marker).mtimeMs;
  const sources = ["cli", "clients"].map((folder) => newestMtime(join(repoRoot, folder)));
  if (Math.max(...sources) > built) throw new Error("dist/ is older than the sources: run `npm run build` before the CLI tests");
}
