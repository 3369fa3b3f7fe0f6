// Background update checks (reference "Upgrading the local daemon"): a channel-following native
// installation with auto-update on checks its signed channel when the local daemon starts and
// every six hours while it runs. The check is a separate CLI process (`update --stage`, run by
// the daemon's own executable): a newer release is verified and staged there, and the daemon is
// neither interrupted nor switched — `update` (or `service restart`) activates the staged copy.
// A version pin, `update --auto off` and an install record without the auto flag (an older
// installer's) get no checks; the record is read again at every tick, so `--auto on|off` takes
// effect without a restart. The npm form has no install record and is never checked.
//
// Each decision is a daemon.log line: update.check.skipped (reason pinned | auto-off),
// update.check.started, update.check.staged (version), update.check.current, update.check.failed.
// ZE_HARNESS_UPDATE_CHECK_INTERVAL_MS shortens the six hours (the tests').
//
// The TUI's once-per-session check (tuiUpdateCheck) runs the same `update --stage` when it first
// sees a newer server release.
import { execFile } from "node:child_process";
import { compareReleases } from "../daemon/client.js";
import { installPaths, readRecord, type Env } from "./layout.js";

export const CHECK_INTERVAL_MS = 6 * 60 * 60 * 1000;

type Fields = Readonly<Record<string, string | number | boolean | undefined>>;

/** The daemon's log (services/daemon/log.ts), as far as the checks write to it. */
interface CheckLog {
  info(event: string, fields?: Fields): void;
  warn(event: string, fields?: Fields): void;
}

export interface UpdateCheckOptions {
  readonly env: Env;
  readonly log: CheckLog;
  /** The CLI to run `update --stage` with: the daemon's executable and its leading arguments. */
  readonly command: readonly [string, ...string[]];
}

function intervalOf(env: Env): number {
  const value = Number.parseInt(env["ZE_HARNESS_UPDATE_CHECK_INTERVAL_MS"] ?? "", 10);
  return Number.isSafeInteger(value) && value > 0 ? value : CHECK_INTERVAL_MS;
}

/** `update --stage` in a process of its own: the release it staged (null: none newer), or why it failed. */
export function stageInProcess(command: readonly [string, ...string[]], env: Env): Promise<{ readonly staged: string | null } | { readonly error: string }> {
  const [program, ...leading] = command;
  return new Promise((resolvePromise) => {
    const child = execFile(program, [...leading, "update", "--stage"], { env: env as NodeJS.ProcessEnv, encoding: "utf8", timeout: 30 * 60_000, maxBuffer: 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) return resolvePromise({ error: (stderr.trim().split("\n").pop() ?? "") || error.message });
      try {
        resolvePromise({ staged: (JSON.parse(stdout) as { staged?: string | null }).staged ?? null });
      } catch {
        resolvePromise({ error: "update --stage printed no result" });
      }
    });
    child.stdin?.end();
  });
}

/** Whether this installation gets automatic checks: a channel install with auto-update on. */
function checksOn(env: Env): boolean {
  const record = readRecord(installPaths(env));
  return record !== undefined && record.channel !== null && record.auto;
}

/**
 * The TUI's check (reference: a TUI that sees a newer server release with native auto-update on
 * checks its signed channel once for that CLI session): returns the listener for the server's
 * release; the first newer one runs `update --stage` in a separate process, and only a staged
 * release produces `notice`. The server's header never selects what is downloaded (the channel
 * pointer does), and nothing is switched or restarted.
 */
export function tuiUpdateCheck(options: { readonly env: Env; readonly release: string; readonly command: readonly [string, ...string[]]; readonly notice: (text: string) => void }): (serverRelease: string) => void {
  let checked = false;
  return (serverRelease) => {
    if (checked || compareReleases(serverRelease, options.release) <= 0) return;
    checked = true;
    if (!checksOn(options.env)) return;
    void stageInProcess(options.command, options.env).then((outcome) => {
      if ("staged" in outcome && outcome.staged !== null) {
        options.notice(`Ze Harness ${outcome.staged} downloaded and verified: when local work finishes, exit and run \`ze-harness update\` to switch to it and restart the daemon.`);
      }
    });
  };
}

/** Starts the checks (one now, then one per interval); returns their stop. */
export function startUpdateChecks(options: UpdateCheckOptions): () => void {
  const { env, log, command } = options;
  const paths = installPaths(env);
  let running = false;
  let stopped = false;
  const check = (): void => {
    if (running || stopped) return;
    const record = readRecord(paths);
    if (record === undefined) return;
    if (record.channel === null || !record.auto) {
      log.info("update.check.skipped", { reason: record.channel === null ? "pinned" : "auto-off", installed: record.version });
      return;
    }
    running = true;
    log.info("update.check.started", { installed: record.version, channel: record.channel });
    void stageInProcess(command, env).then((outcome) => {
      running = false;
      // A check that outlived the daemon (it is not killed: it may be unpacking) logs nothing.
      if (stopped) return;
      if ("error" in outcome) log.warn("update.check.failed", { error: outcome.error });
      else if (outcome.staged !== null) log.info("update.check.staged", { version: outcome.staged });
      else log.info("update.check.current", { installed: record.version });
    });
  };
  check();
  const timer = setInterval(check, intervalOf(env));
  timer.unref();
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}
