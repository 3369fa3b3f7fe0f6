import { sdk } from "../../../clients/index.js";
import { sessionIdArg, uuidArg } from "../../args.js";
import { jsonCommand } from "../../json-command.js";

export default jsonCommand({
  summary: "Dismiss a pending question request (the asking tool fails); print the result and its Turn as JSON.",
  args: { sessionId: sessionIdArg, requestId: uuidArg("REQUEST_ID", "The question request id.") },
  call: ({ client, server }, { args }) => sdk.rejectQuestion({ client, path: { server, sessionId: args.sessionId, questionRequestId: args.requestId } }),
});
