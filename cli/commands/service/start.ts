import { daemonStartProgress } from "../../start-progress.js";
import { defineCommand } from "../../spec.js";
import { daemonFlags } from "./shared.js";

export default defineCommand({
  summary: "Start the local daemon (or reuse the running one) and print its status as JSON.",
  description:
    "The first start wins: with a daemon already running, a --database, --config or --sandbox that differs from the one it started with is refused (run `service restart` with the new flags, or pass --embedded to a single command). The daemon runs in the background in the current directory; local commands without --embedded or --remote use it.",
  examples: ["<%= config.bin %> service start", "<%= config.bin %> service start --database work.db"],
  flags: daemonFlags,
  async run({ flags, printJson }) {
    const { connectDaemon } = await import("../../../services/daemon/client.js");
    const daemon = await connectDaemon({
      env: process.env,
      cwd: process.cwd(),
      database: flags.database,
      config: flags.config,
      sandbox: flags.sandbox,
      notice: (line) => void process.stderr.write(`${line}\n`),
      progress: daemonStartProgress(),
    });
    printJson({ running: true, started: daemon.spawned, ...daemon.status });
  },
});
