import { sdk } from "../../../clients/index.js";
import { sessionIdArg } from "../../args.js";
import { usageError } from "../../errors.js";
import { jsonCommand } from "../../json-command.js";
import { flag } from "../../spec.js";

/** `SEQ.INDEX` → [sequence, index]. */
export function parsePositionFlag(value: string, name: string): [string, string] {
  const match = /^(\d+)\.(\d+)$/.exec(value);
  if (!match) throw usageError(`--${name} must be SOURCE_SEQUENCE.ITEM_INDEX (for example 3.0), got ${JSON.stringify(value)}`);
  return [match[1]!, match[2]!];
}

export default jsonCommand({
  summary: "Print a page of a Session's history rows under one fence, as JSON.",
  description:
    "Prints `{ sessionId, through, rows: [{ position: { sourceSequence, itemIndex }, role, kind, body, thinking?, toolInput?, tool?, … }], nextAfter }`. " +
    "Keep --through fixed and pass nextAfter as --after (SEQ.INDEX) for the next page; --row opens the page at one row, --event at one history event.",
  examples: ["<%= config.bin %> session history SESSION_ID --limit 20", "<%= config.bin %> session history SESSION_ID --through 7 --after 5.2"],
  args: { sessionId: sessionIdArg },
  flags: {
    limit: flag.integer({ description: "Rows per page (at most 100).", min: 1 }),
    through: flag.integer({ description: "The fence: the last history event the read sees (default: the latest).", min: 0 }),
    after: flag.string({ description: "Continue after this row position (SEQ.INDEX).", exclusive: ["row", "event"] }),
    row: flag.string({ description: "Open the page at this row (SEQ.INDEX), an internal tool row included.", exclusive: ["after", "event"] }),
    event: flag.integer({ description: "Open the page at this history event's first row.", min: 1, exclusive: ["after", "row"] }),
  },
  input: ({ flags }) => ({
    after: flags.after === undefined ? undefined : parsePositionFlag(flags.after, "after"),
    row: flags.row === undefined ? undefined : parsePositionFlag(flags.row, "row"),
  }),
  call: ({ client, server }, { args, flags }, input) => {
    const query: Record<string, string> = {
      ...(flags.limit !== undefined ? { limit: String(flags.limit) } : {}),
      ...(flags.through !== undefined ? { through: String(flags.through) } : {}),
      ...(input.after ? { afterSourceSequence: input.after[0], afterItemIndex: input.after[1] } : {}),
      ...(input.row ? { rowSourceSequence: input.row[0], rowItemIndex: input.row[1] } : {}),
      ...(flags.event !== undefined ? { eventSequence: String(flags.event) } : {}),
    };
    return sdk.history_({ client, path: { server, sessionId: args.sessionId }, query });
  },
});
