import { sdk } from "../../../clients/index.js";
import { sessionIdArg } from "../../args.js";
import { jsonCommand } from "../../json-command.js";

export default jsonCommand({
  summary: "Print one Session as JSON.",
  args: { sessionId: sessionIdArg },
  call: ({ client, server }, { args }) => sdk.getSession({ client, path: { server, sessionId: args.sessionId } }),
  print: (result) => result.session,
});
