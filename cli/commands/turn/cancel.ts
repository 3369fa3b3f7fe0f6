import { sdk } from "../../../clients/index.js";
import { sessionIdArg, turnIdArg } from "../../args.js";
import { jsonCommand } from "../../json-command.js";
import { flag } from "../../spec.js";

export default jsonCommand({
  summary: "Request cancellation of a pending or running Turn; print the Turn as JSON.",
  description: "The Turn settles as cancelled when its runner sees the request; watch it (or `turn show`) for the outcome.",
  args: { sessionId: sessionIdArg, turnId: turnIdArg },
  flags: { reason: flag.string({ description: "Why the Turn is cancelled (kept with the outcome)." }) },
  call: ({ client, server }, { args, flags }) =>
    sdk.cancelTurn({ client, path: { server, sessionId: args.sessionId, turnId: args.turnId }, body: flags.reason !== undefined ? { reason: flags.reason } : {} }),
  print: (result) => result.turn,
});
