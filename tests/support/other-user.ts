// Another local user, for the attacks a shared machine allows: a Node script run as uid/gid 65534
// (`nobody`) through util-linux's setpriv. Only root can switch users, and CI runs as root; the
// suites that need it run only there (`describe.runIf(otherUserAvailable)`).
import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";

export const OTHER_UID = 65534;
const SETPRIV = "/usr/bin/setpriv";

export const otherUserAvailable = process.getuid?.() === 0 && existsSync(SETPRIV);

export interface OtherUserProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** Every JSON line the script printed so far. */
  readonly lines: readonly Record<string, unknown>[];
  /** Resolves with the first printed line (now or later) that `match` accepts. */
  line(match: (line: Record<string, unknown>) => boolean, what: string): Promise<Record<string, unknown>>;
  stop(): Promise<void>;
}

/** Runs the ESM `source` as another user (its args after it); it talks back in JSON lines on stdout. */
export function runAsOtherUser(source: string, args: readonly string[] = []): OtherUserProcess {
  const directory = mkdtempSync(join(tmpdir(), "ze-other-user-"));
  chmodSync(directory, 0o755);
  const script = join(directory, "script.mjs");
  writeFileSync(script, source, { mode: 0o644 });
  const child = spawn(SETPRIV, [`--reuid=${OTHER_UID}`, `--regid=${OTHER_UID}`, "--clear-groups", process.execPath, script, ...args], {
    cwd: directory,
    stdio: ["ignore", "pipe", "pipe"],
    env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin" },
  });
  const lines: Record<string, unknown>[] = [];
  const waiters: { match: (line: Record<string, unknown>) => boolean; resolve: (line: Record<string, unknown>) => void }[] = [];
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  createInterface({ input: child.stdout! }).on("line", (text) => {
    let line: Record<string, unknown>;
    try {
      line = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return;
    }
    lines.push(line);
    for (const waiter of waiters.splice(0)) {
      if (waiter.match(line)) waiter.resolve(line);
      else waiters.push(waiter);
    }
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    child,
    pid: child.pid!,
    lines,
    line: (match, what) => {
      const found = lines.find(match);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        waiters.push({ match, resolve });
        void exited.then(() => reject(new Error(`the other user's script exited before ${what}: ${stderr}`)));
      });
    },
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/**
 * Runs `fn` with this process's effective user and group switched to `nobody` when it runs as
 * root (CI), so a permission check means what it means for a user: root reads files whose mode
 * forbids it. `root` (a test's temp tree, 0700 from mkdtemp) is opened to others first. The real
 * ids stay root, so the effective ones are restored afterwards, whatever `fn` did.
 */
export async function withoutRootPrivileges<T>(root: string, fn: () => Promise<T>): Promise<T> {
  if (process.getuid?.() !== 0) return fn();
  chmodSync(root, 0o755);
  process.setegid!(OTHER_UID);
  process.seteuid!(OTHER_UID);
  try {
    return await fn();
  } finally {
    process.seteuid!(0);
    process.setegid!(0);
  }
}
