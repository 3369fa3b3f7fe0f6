import { randomUUID } from "node:crypto";
import { sdk } from "../../../../clients/index.js";
import { sessionIdArg, uuidFlag } from "../../../args.js";
import { usageError } from "../../../errors.js";
import { jsonCommand } from "../../../json-command.js";
import { arg, flag } from "../../../spec.js";

export default jsonCommand({
  summary: "Append outside context to a Session's history for the next admitted work; print the receipt as JSON.",
  description:
    "The entry is committed as a plain user message under the Session's next history revision: no Turn is created and no model is called, and work admitted before the append does not see it. TEXT - reads the text from stdin. Repeating an append with the same --entry and text returns the same receipt; other text under that id fails with ConflictError.",
  examples: [
    '<%= config.bin %> session conversation append SESSION_ID "Remember this for the next request."',
    "cat context.txt | <%= config.bin %> session conversation append SESSION_ID -",
  ],
  args: {
    sessionId: sessionIdArg,
    text: arg.string({ name: "TEXT", description: "The entry's text, or - for stdin.", required: true }),
  },
  flags: {
    entry: uuidFlag("ENTRY_ID", "Entry id (a UUID); generated when omitted. Repeating an append with it is idempotent."),
    author: flag.string({ description: "A stable human author to attribute the entry to." }),
  },
  input: async ({ args }) => {
    const text = args.text === "-" ? (await import("node:fs")).readFileSync(0, "utf8") : args.text;
    if (text.trim() === "") throw usageError(args.text === "-" ? "stdin held no text to append" : "TEXT must not be empty");
    return text;
  },
  call: ({ client, server, connection }, { args, flags }, text) =>
    sdk.appendConversation({
      client,
      path: { server, sessionId: args.sessionId },
      headers: { "x-ze-harness-client-id": connection.client.clientId },
      body: { entryId: flags.entry ?? randomUUID(), content: [{ type: "text", text }], ...(flags.author !== undefined ? { authorId: flags.author } : {}) },
    }),
  print: (result) => result.receipt,
});
