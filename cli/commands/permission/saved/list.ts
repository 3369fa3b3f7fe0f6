import { sdk } from "../../../../clients/index.js";
import { sessionIdArg } from "../../../args.js";
import { jsonCommand } from "../../../json-command.js";

export default jsonCommand({
  summary: "List a Session's saved permissions (the grants of `always` replies) as JSON.",
  args: { sessionId: sessionIdArg },
  call: ({ client, server }, { args }) => sdk.listSavedPermissions({ client, path: { server, sessionId: args.sessionId } }),
  print: (result) => result.permissions,
});
