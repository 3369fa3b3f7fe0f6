import { sdk } from "../../../../clients/index.js";
import { sessionIdArg } from "../../../args.js";
import { jsonCommand } from "../../../json-command.js";

export default jsonCommand({
  summary: "Print a Session's versioned permission and approval configuration as JSON.",
  args: { sessionId: sessionIdArg },
  call: ({ client, server }, { args }) => sdk.getSessionConfiguration({ client, path: { server, sessionId: args.sessionId } }),
  print: (result) => result.configuration,
});
