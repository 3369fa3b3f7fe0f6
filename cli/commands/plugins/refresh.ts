import { sdk, unwrap } from "../../../clients/index.js";
import { existingSessionFlag } from "../../args.js";
import { usageError } from "../../errors.js";
import { defineCommand, flag } from "../../spec.js";

export default defineCommand({
  summary: "Re-resolve a Session plugin's source and adopt a newer artifact; print the Session's plugin status as JSON.",
  description:
    "The only way a Session plugin moves to a changed file or a newly installed package version: the active revision's source is resolved again and, when it now names another artifact and the revision did not pin one (--integrity at add), a new revision is recorded and activated. --revision defaults to the active revision.",
  examples: ["<%= config.bin %> plugins refresh --session SESSION_ID"],
  flags: {
    session: existingSessionFlag("The Session."),
    revision: flag.string({ description: "The active revision's id (default: read from the Session's status)." }),
  },
  connection: true,
  async run({ flags, connect, printJson }) {
    if (flags.session === undefined) throw usageError("--session SESSION_ID is required: only Session plugins are refreshed");
    const connection = await connect();
    const client = connection.client.client;
    const path = { server: connection.server, sessionId: flags.session };
    let id = flags.revision;
    if (id === undefined) {
      const { status } = await unwrap(sdk.sessionPlugins({ client, path }));
      if (!status.active) throw usageError(`Session ${flags.session} has no active plugin revision to refresh`);
      id = status.active.id;
    }
    const { status } = await unwrap(sdk.refreshSessionPlugin({ client, path, body: { id } }));
    printJson(status);
  },
});
