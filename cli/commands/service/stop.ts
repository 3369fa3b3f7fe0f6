import { defineCommand } from "../../spec.js";
import { nameEndingTurns } from "./shared.js";

export default defineCommand({
  summary: "Stop the local daemon; its running Turns end (they are named first).",
  description:
    "Names the running Turns it will end on stderr, asks the daemon to shut down (POST /_daemon/shutdown), falls back to SIGTERM, and kills a daemon still running after 15 s. Prints `{ stopped, pid, endedTurns, via }` as JSON (`stopped: false` when none was running).",
  examples: ["<%= config.bin %> service stop"],
  async run({ printJson }) {
    const { stopDaemon } = await import("../../../services/daemon/client.js");
    printJson(await stopDaemon({ env: process.env, reason: "service stop", beforeStop: (turns) => nameEndingTurns(turns, "stopping") }));
  },
});
