import { sdk } from "../../../clients/index.js";
import { sessionIdArg, uuidArg } from "../../args.js";
import { jsonCommand } from "../../json-command.js";
import { flag } from "../../spec.js";

export default jsonCommand({
  summary: "Request cancellation of a pending or running context compaction; print it as JSON.",
  description: "A pending compaction is cancelled at once; a running one stops when its runner sees the request (`compaction show` for the outcome). A settled one is printed unchanged.",
  args: { sessionId: sessionIdArg, compactionId: uuidArg("COMPACTION_ID", "The compaction id.") },
  flags: { reason: flag.string({ description: "Why the compaction is cancelled (kept with the outcome)." }) },
  call: ({ client, server }, { args, flags }) =>
    sdk.cancelContextCompaction({
      client,
      path: { server, sessionId: args.sessionId, compactionId: args.compactionId },
      body: flags.reason !== undefined ? { reason: flags.reason } : {},
    }),
  print: (result) => result.compaction,
});
