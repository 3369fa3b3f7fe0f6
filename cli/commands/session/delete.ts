import { sdk } from "../../../clients/index.js";
import { sessionIdArg } from "../../args.js";
import { jsonCommand } from "../../json-command.js";
import { flag } from "../../spec.js";

export default jsonCommand({
  summary: "Delete a Session (cancels its work; the id stays retired).",
  args: { sessionId: sessionIdArg },
  flags: { reason: flag.string({ description: "Why the Session is deleted." }) },
  call: ({ client, server }, { args, flags }) =>
    sdk.deleteSession({ client, path: { server, sessionId: args.sessionId }, body: flags.reason !== undefined ? { reason: flags.reason } : null }),
  print: (result) => result.deleted,
});
