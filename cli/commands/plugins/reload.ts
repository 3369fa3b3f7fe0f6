import { sdk, unwrap } from "../../../clients/index.js";
import { existingSessionFlag } from "../../args.js";
import { defineCommand } from "../../spec.js";

export default defineCommand({
  summary: "Reload the runtime plugins, or a Session's plugin; print the result as JSON.",
  description:
    "Without --session the host reads its configuration again and activates a new plugin generation: `{ result: reloaded | rejected, plugins }`; a rejected reload keeps the current generation and exits 1. " +
    "With --session the Session's desired plugin revision is rebuilt from its recorded artifact and activated; prints the Session's plugin status (exit 1 when its activation failed). Running Turns keep the plugins they started with.",
  examples: ["<%= config.bin %> plugins reload", "<%= config.bin %> plugins reload --session SESSION_ID"],
  flags: { session: existingSessionFlag("Reload this Session's plugin.") },
  connection: true,
  async run({ flags, connect, printJson }) {
    const connection = await connect();
    const client = connection.client.client;
    if (flags.session === undefined) {
      const result = await unwrap(sdk.reload({ client, body: {} }));
      printJson(result);
      return result.result === "reloaded" ? 0 : 1;
    }
    const { status } = await unwrap(sdk.reloadSessionPlugin({ client, path: { server: connection.server, sessionId: flags.session }, body: {} }));
    printJson(status);
    return status.desiredActivation?.state === "failed" ? 1 : 0;
  },
});
