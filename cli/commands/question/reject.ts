import { sdk } from "../../../clients/index.js";
import { sessionIdArg } from "../../args.js";
import { idArg } from "../../short-ids.js";
import { jsonCommand } from "../../json-command.js";

export default jsonCommand({
  summary: "Dismiss a pending question request (the asking tool fails); print the result and its Turn as JSON.",
  args: { sessionId: sessionIdArg, requestId: idArg("question", "REQUEST_ID", "The question request.") },
  call: ({ client, server }, { args }) => sdk.rejectQuestion({ client, path: { server, sessionId: args.sessionId, questionRequestId: args.requestId } }),
});
