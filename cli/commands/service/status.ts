import { defineCommand } from "../../spec.js";

export default defineCommand({
  summary: "Print the local daemon's status as JSON.",
  description:
    "Prints `{ running: false }`, or `{ running: true, id, version, url, pid, run, database, config, serverRoot, startedAt, uptimeMs, registered, runningTurns }` of the healthy registered daemon. A registration whose process is gone or that does not answer is removed.",
  examples: ["<%= config.bin %> service status"],
  async run({ printJson }) {
    const { daemonStatus } = await import("../../../services/daemon/client.js");
    printJson(await daemonStatus(process.env));
  },
});
