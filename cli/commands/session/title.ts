import { sdk } from "../../../clients/index.js";
import { sessionIdArg } from "../../args.js";
import { jsonCommand } from "../../json-command.js";
import { arg } from "../../spec.js";

export default jsonCommand({
  summary: "Set a Session's title (at most 100 characters) and print the Session.",
  args: { sessionId: sessionIdArg, title: arg.string({ description: "The new title.", required: true }) },
  call: ({ client, server }, { args }) => sdk.setSessionTitle({ client, path: { server, sessionId: args.sessionId }, body: { title: args.title } }),
  print: (result) => result.session,
});
