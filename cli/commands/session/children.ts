import { sdk } from "../../../clients/index.js";
import { sessionIdArg } from "../../args.js";
import { jsonCommand } from "../../json-command.js";

export default jsonCommand({
  summary: "List the Sessions spawned directly from a Session, oldest first, as JSON.",
  args: { sessionId: sessionIdArg },
  call: ({ client, server }, { args }) => sdk.listSessionChildren({ client, path: { server, sessionId: args.sessionId } }),
  print: (result) => result.sessions,
});
