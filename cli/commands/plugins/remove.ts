import { sdk } from "../../../clients/index.js";
import { existingSessionFlag } from "../../args.js";
import { usageError } from "../../errors.js";
import { jsonCommand } from "../../json-command.js";

export default jsonCommand({
  summary: "Remove a Session's plugin; print the Session's plugin status as JSON.",
  description: "Clears the Session's plugin overlay: later Turns use the host's plugins only (a running Turn keeps what it started with).",
  examples: ["<%= config.bin %> plugins remove --session SESSION_ID"],
  flags: { session: existingSessionFlag("The Session.") },
  input: ({ flags }) => {
    if (flags.session === undefined) throw usageError("--session SESSION_ID is required: only Session plugins can be removed");
    return flags.session;
  },
  // The flag is read after connecting: a Session id prefix is resolved then (cli/short-ids.ts).
  call: ({ client, server }, { flags }) => sdk.removeSessionPlugin({ client, path: { server, sessionId: flags.session! }, body: {} }),
  print: (result) => result.status,
});
