import { sdk } from "../../../clients/index.js";
import { sessionIdFlag } from "../../args.js";
import { usageError } from "../../errors.js";
import { jsonCommand } from "../../json-command.js";

export default jsonCommand({
  summary: "Remove a Session's plugin; print the Session's plugin status as JSON.",
  description: "Clears the Session's plugin overlay: later Turns use the host's plugins only (a running Turn keeps what it started with).",
  examples: ["<%= config.bin %> plugins remove --session SESSION_ID"],
  flags: { session: sessionIdFlag("The Session (a UUID).") },
  input: ({ flags }) => {
    if (flags.session === undefined) throw usageError("--session SESSION_ID is required: only Session plugins can be removed");
    return flags.session;
  },
  call: ({ client, server }, _context, sessionId) => sdk.removeSessionPlugin({ client, path: { server, sessionId }, body: {} }),
  print: (result) => result.status,
});
