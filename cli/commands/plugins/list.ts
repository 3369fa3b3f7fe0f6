import { sdk, type RuntimePluginsResponse, type SessionPluginsResponse } from "../../../clients/index.js";
import { existingSessionFlag } from "../../args.js";
import { jsonCommand } from "../../json-command.js";

export default jsonCommand<{}, { session: ReturnType<typeof existingSessionFlag> }, undefined, RuntimePluginsResponse | SessionPluginsResponse>({
  summary: "Print the runtime plugins, or a Session's plugin status, as JSON.",
  description:
    "Without --session prints the host generation's plugins: `{ plugins: [{ source, generationId, pluginId?, packageVersion?, status, registrations, error? }] }`. " +
    "With --session prints the Session's plugin status: its desired and active revisions (redacted), the desired revision's activation, and the effective plugins (the host's, then the Session's).",
  examples: ["<%= config.bin %> plugins list", "<%= config.bin %> plugins list --session SESSION_ID"],
  flags: { session: existingSessionFlag("Show this Session's plugins.") },
  call: ({ client, server }, { flags }) =>
    flags.session === undefined ? sdk.plugins({ client }) : sdk.sessionPlugins({ client, path: { server, sessionId: flags.session } }),
  print: (result) => ("status" in result ? result.status : result),
});
