import { sdk } from "../../../clients/index.js";
import { sessionIdArg, uuidArg } from "../../args.js";
import { jsonCommand } from "../../json-command.js";

export default jsonCommand({
  summary: "Print one context compaction as JSON.",
  args: { sessionId: sessionIdArg, compactionId: uuidArg("COMPACTION_ID", "The compaction id.") },
  call: ({ client, server }, { args }) => sdk.getContextCompaction({ client, path: { server, sessionId: args.sessionId, compactionId: args.compactionId } }),
  print: (result) => result.compaction,
});
