import { defineCommand, flag } from "../spec.js";
import { sandboxFlag } from "../args.js";
import type { SandboxSetting } from "../../services/sandbox/policy.js";

export default defineCommand({
  summary: "Serve the Agent Client Protocol over standard input and output.",
  description:
    "Lets ACP clients such as Zed drive Ze Harness as their agent: point the client at the ze-harness executable with the single argument acp. " +
    "Runs an embedded host (no daemon); stdout carries only protocol frames and every diagnostic goes to stderr. " +
    "Each ACP session is one Ze Session in the client's working directory. ACP Sessions use their own database, acp.db in the state directory, unless --database or ZE_HARNESS_DB names another.",
  examples: ["<%= config.bin %> acp", "<%= config.bin %> acp --database ze-harness.db"],
  flags: {
    database: flag.string({ description: "Database: a path, :memory:, or a libsql:// or http(s):// URL (or ZE_HARNESS_DB; default acp.db in the state directory)." }),
    config: flag.string({ description: "Config file to use instead of the nearest ze-harness.config.json." }),
    sandbox: sandboxFlag,
  },
  async run({ flags }) {
    const { serveAcp } = await import("../acp/serve.js");
    return serveAcp({ database: flags.database, config: flags.config, sandbox: flags.sandbox as SandboxSetting | undefined });
  },
});
