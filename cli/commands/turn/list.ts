import { sdk } from "../../../clients/index.js";
import { sessionIdArg } from "../../args.js";
import { jsonCommand } from "../../json-command.js";
import { flag } from "../../spec.js";
import { formatFlag, turnsTable } from "../../format.js";

export default jsonCommand({
  summary: "Print a page of a Session's Turns, oldest first, as JSON.",
  description:
    "Prints `{ sessionId, boundary, turns: [{ activityCursor, workSequence, turn }], nextAfterSequence? }`. Pass nextAfterSequence as --after for the next page.",
  args: { sessionId: sessionIdArg },
  flags: {
    limit: flag.integer({ description: "Turns per page.", min: 1 }),
    after: flag.integer({ description: "Start after this Turn sequence.", min: 0 }),
    format: formatFlag,
  },
  call: ({ client, server }, { args, flags }) => {
    const query = {
      ...(flags.limit !== undefined ? { limit: String(flags.limit) } : {}),
      ...(flags.after !== undefined ? { afterSequence: String(flags.after) } : {}),
    };
    return sdk.listSessionTurns({ client, path: { server, sessionId: args.sessionId }, query });
  },
  table: turnsTable,
});
