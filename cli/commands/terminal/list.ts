import { sdk } from "../../../clients/index.js";
import { sessionIdArg } from "../../args.js";
import { jsonCommand } from "../../json-command.js";

export default jsonCommand({
  summary: "List a Session's terminals, oldest first, as JSON.",
  args: { sessionId: sessionIdArg },
  call: ({ client, server }, { args }) => sdk.listTerminals({ client, path: { server, sessionId: args.sessionId } }),
  print: (result) => result.terminals,
});
