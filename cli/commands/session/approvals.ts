import { sdk } from "../../../clients/index.js";
import { sessionIdArg } from "../../args.js";
import { jsonCommand } from "../../json-command.js";

export default jsonCommand({
  summary: "List the pending permission requests of a Session's sub-agent descendants, oldest first, as JSON.",
  description: "Each entry has the request, when it was made and the agent of the sub-agent Session that owns it. Reply with `permission reply` to the parent or the owning Session.",
  args: { sessionId: sessionIdArg },
  call: ({ client, server }, { args }) => sdk.listDescendantPendingApprovals({ client, path: { server, sessionId: args.sessionId } }),
  print: (result) => result.approvals,
});
