import { sdk } from "../../../clients/index.js";
import { sessionIdArg } from "../../args.js";
import { jsonCommand } from "../../json-command.js";
import { flag } from "../../spec.js";

export default jsonCommand({
  summary: "Print a page of a Session's failure diagnostics, newest first, as JSON.",
  description:
    "Prints `{ sessionId, through, diagnostics: [{ sequence, kind: execution | model_step | automatic_title, turnId?, attempt?, cause: { code, message, providerCode?, limit? }, recordedAt }], nextBefore }`. " +
    "Keep --through fixed and pass nextBefore as --before for older records.",
  examples: ["<%= config.bin %> session diagnostics SESSION_ID", "<%= config.bin %> session diagnostics SESSION_ID --through 9 --before 4"],
  args: { sessionId: sessionIdArg },
  flags: {
    limit: flag.integer({ description: "Records per page (at most 100).", min: 1 }),
    through: flag.integer({ description: "The fence: the diagnostic revision the read sees (default: the latest).", min: 0 }),
    before: flag.integer({ description: "Older than this diagnostic sequence.", min: 1 }),
  },
  call: ({ client, server }, { args, flags }) => {
    const query = {
      ...(flags.limit !== undefined ? { limit: String(flags.limit) } : {}),
      ...(flags.through !== undefined ? { through: String(flags.through) } : {}),
      ...(flags.before !== undefined ? { beforeSequence: String(flags.before) } : {}),
    };
    return sdk.diagnostics({ client, path: { server, sessionId: args.sessionId }, query });
  },
});
