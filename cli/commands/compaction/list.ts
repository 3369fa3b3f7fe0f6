import { sdk } from "../../../clients/index.js";
import { sessionIdArg } from "../../args.js";
import { usageError } from "../../errors.js";
import { jsonCommand } from "../../json-command.js";
import { flag } from "../../spec.js";

export default jsonCommand({
  summary: "Print a page of a Session's context compactions, in work order, as JSON.",
  description:
    "Prints `{ sessionId, boundary, compactions: [{ sequence, ordinal, compaction }], next? }`. Manual compactions have their own work sequence; automatic ones (trigger preflight or overflow) share their Turn's, numbered by ordinal. Pass next as --after SEQUENCE:ORDINAL for the next page.",
  args: { sessionId: sessionIdArg },
  flags: {
    limit: flag.integer({ description: "Compactions per page.", min: 1 }),
    after: flag.string({ description: "Start after this position: SEQUENCE or SEQUENCE:ORDINAL." }),
  },
  input: ({ flags }) => {
    if (flags.after === undefined) return {};
    const match = /^(\d+)(?::(\d+))?$/.exec(flags.after);
    if (!match) throw usageError(`--after ${JSON.stringify(flags.after)} must be SEQUENCE or SEQUENCE:ORDINAL`);
    return { afterSequence: match[1]!, ...(match[2] !== undefined ? { afterOrdinal: match[2] } : {}) };
  },
  call: ({ client, server }, { args, flags }, after) =>
    sdk.listSessionCompactions({ client, path: { server, sessionId: args.sessionId }, query: { ...after, ...(flags.limit !== undefined ? { limit: String(flags.limit) } : {}) } }),
});
