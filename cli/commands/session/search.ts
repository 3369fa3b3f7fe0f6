import { sdk, type SearchHit, type SearchPage } from "../../../clients/index.js";
import { sessionIdArg } from "../../args.js";
import { usageError } from "../../errors.js";
import { jsonCommand } from "../../json-command.js";
import { arg, flag } from "../../spec.js";

const FIELDS = ["body", "thinking", "toolInput"];

/** `SEQ.INDEX:FIELD:BYTE` → the search cursor's query parameters. */
function parseCursor(value: string): Record<string, string> {
  const match = /^(\d+)\.(\d+):(\w+):(\d+)$/.exec(value);
  if (!match || !FIELDS.includes(match[3]!)) throw usageError(`--after must be SEQ.INDEX:FIELD:BYTE with FIELD one of ${FIELDS.join(", ")} (for example 3.1:body:120), got ${JSON.stringify(value)}`);
  return { afterSourceSequence: match[1]!, afterItemIndex: match[2]!, afterField: match[3]!, afterByte: match[4]! };
}

export default jsonCommand({
  summary: "Search a Session's history for a literal text, as JSON.",
  description:
    "Prints one page `{ sessionId, through, hits: [{ position, field, byteOffset, byteLength, role, kind, preview, … }], nextAfter }`; a page can hold no hits and still continue. " +
    "Matching is case-insensitive by Unicode simple case folding unless --case-sensitive; --whole-word refuses matches touched by a letter, mark, digit, connector or join control. " +
    "Continue with --after SEQ.INDEX:FIELD:BYTE (from nextAfter) and the same --through, or pass --all to follow every page and print `{ sessionId, through, hits }`.",
  examples: ['<%= config.bin %> session search SESSION_ID "TODO" --whole-word', '<%= config.bin %> session search SESSION_ID "Straße" --case-sensitive --all'],
  args: { sessionId: sessionIdArg, query: arg.string({ name: "QUERY", description: "The literal text to find.", required: true }) },
  flags: {
    "case-sensitive": flag.boolean({ description: "Match exact code points." }),
    "whole-word": flag.boolean({ description: "Only matches no Unicode word character touches." }),
    limit: flag.integer({ description: "Hits per page (at most 100).", min: 1 }),
    through: flag.integer({ description: "The fence: the last history event the search sees (default: the latest).", min: 0 }),
    after: flag.string({ description: "Continue at this cursor (SEQ.INDEX:FIELD:BYTE).", exclusive: ["all"] }),
    all: flag.boolean({ description: "Follow nextAfter to the end and print every hit." }),
  },
  input: ({ flags }) => (flags.after === undefined ? {} : parseCursor(flags.after)),
  call: async ({ client, server }, { args, flags }, cursor) => {
    const base = {
      query: args.query,
      caseSensitive: flags["case-sensitive"] ? "true" : "false",
      wholeWord: flags["whole-word"] ? "true" : "false",
      ...(flags.limit !== undefined ? { limit: String(flags.limit) } : {}),
      ...(flags.through !== undefined ? { through: String(flags.through) } : {}),
    } as const;
    const path = { server, sessionId: args.sessionId };
    if (!flags.all) return sdk.search({ client, path, query: { ...base, ...cursor } });
    const hits: SearchHit[] = [];
    let query: Record<string, string> = { ...base };
    for (;;) {
      const result = await sdk.search({ client, path, query: query as typeof base });
      if (!result.data) return result;
      const page: SearchPage = result.data;
      hits.push(...page.hits);
      if (!page.nextAfter) return { ...result, data: { sessionId: page.sessionId, through: page.through, hits, nextAfter: null } };
      const next = page.nextAfter;
      query = { ...base, through: String(page.through), afterSourceSequence: String(next.position.sourceSequence), afterItemIndex: String(next.position.itemIndex), afterField: next.field, afterByte: String(next.byteOffset) };
    }
  },
});
