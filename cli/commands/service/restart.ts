import { daemonStartProgress } from "../../start-progress.js";
import { defineCommand, flag } from "../../spec.js";
import { daemonFlags, nameEndingTurns } from "./shared.js";

export default defineCommand({
  summary: "Restart the local daemon, picking up configuration, plugin, MCP server and Skill changes.",
  description:
    "Stops the running daemon (naming the running Turns it ends on stderr) and starts a new one with the same database, config, sandbox and directory, or with the --database / --config / --sandbox given. --if-idle restarts only a running daemon without running Turns (and starts none). A release that `ze-harness update` staged while Turns ran is activated first and the daemon started from its executable. Prints the new daemon's status as JSON.",
  examples: ["<%= config.bin %> service restart", "<%= config.bin %> service restart --if-idle", "<%= config.bin %> service restart --database other.db"],
  flags: { ...daemonFlags, "if-idle": flag.boolean({ description: "Leave a daemon with running Turns as it is, and start none when none runs." }) },
  async run({ flags, printJson }) {
    // A release `update` staged while Turns ran: activate it and restart from its executable (a
    // daemon runs the executable that started it).
    const { takeStaged } = await import("../../../services/release/update.js");
    const staged = takeStaged(process.env);
    if (staged !== undefined) {
      const { spawnSync } = await import("node:child_process");
      process.stderr.write(`Activating the staged Ze Harness ${staged.version}.\n`);
      const result = spawnSync(staged.executable, process.argv.slice(2), { stdio: "inherit", env: process.env });
      if (result.status !== 0) throw new Error(`the restart from ${staged.executable} failed (${result.error?.message ?? `exit ${String(result.status ?? result.signal)}`})`);
      return;
    }
    const { clearHandOffFailure, connectDaemon, daemonStatus, stopDaemon } = await import("../../../services/daemon/client.js");
    const before = await daemonStatus(process.env);
    // The installers' finishing step: with no daemon running there is nothing to hand off, and none is started.
    if (!before.running && flags["if-idle"]) {
      printJson({ restarted: false, running: false });
      return;
    }
    if (before.running && flags["if-idle"] && before.runningTurns.length > 0) {
      process.stderr.write(`the local daemon has ${before.runningTurns.length} running Turn${before.runningTurns.length === 1 ? "" : "s"}; not restarting (--if-idle)\n`);
      printJson({ restarted: false, ...before });
      return;
    }
    if (before.running) {
      const stopped = await stopDaemon({ env: process.env, reason: "service restart", beforeStop: (turns) => nameEndingTurns(turns, "restarting"), ...(flags["if-idle"] ? { ifIdle: true } : {}) });
      // --if-idle: a Turn started since the status read; the daemon itself refused and runs on.
      if (stopped.busy !== undefined) {
        process.stderr.write(`the local daemon has ${stopped.busy.length} running Turn${stopped.busy.length === 1 ? "" : "s"}; not restarting (--if-idle)\n`);
        printJson({ restarted: false, ...(await daemonStatus(process.env)) });
        return;
      }
    }
    const daemon = await connectDaemon({
      env: process.env,
      cwd: before.running ? before.serverRoot : process.cwd(),
      database: flags.database ?? (before.running ? before.database : undefined),
      config: flags.config ?? (before.running ? (before.config ?? undefined) : undefined),
      sandbox: flags.sandbox ?? (before.running ? (before.sandbox ?? undefined) : undefined),
      notice: (line) => void process.stderr.write(`${line}\n`),
      progress: daemonStartProgress(),
    });
    clearHandOffFailure(process.env);
    printJson({ restarted: true, running: true, ...daemon.status });
  },
});
