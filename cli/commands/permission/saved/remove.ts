import { sdk } from "../../../../clients/index.js";
import { sessionIdArg, uuidArg } from "../../../args.js";
import { jsonCommand } from "../../../json-command.js";

export default jsonCommand({
  summary: "Remove one saved permission; print it as JSON.",
  args: { sessionId: sessionIdArg, savedId: uuidArg("SAVED_ID", "The saved permission id (permission saved list).") },
  call: ({ client, server }, { args }) =>
    sdk.removeSavedPermission({ client, path: { server, sessionId: args.sessionId, savedPermissionId: args.savedId } }),
  print: (result) => result.permission,
});
