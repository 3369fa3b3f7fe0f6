import { sdk } from "../../../clients/index.js";
import { sessionIdArg, uuidArg } from "../../args.js";
import { jsonCommand } from "../../json-command.js";
import { flag } from "../../spec.js";

export default jsonCommand({
  summary: "Print a page of a terminal's output (original bytes as Base64, resizes, the exit) as JSON.",
  description:
    "Items after --after SEQUENCE (default 0: from the start); continue with the page's `next`. `complete` is true once the page reached the end and the process exited.",
  args: { sessionId: sessionIdArg, terminalId: uuidArg("TERMINAL_ID", "The terminal id.") },
  flags: { after: flag.integer({ description: "Start after this sequence.", min: 0 }) },
  call: ({ client, server }, { args, flags }) =>
    sdk.readTerminalOutput({ client, path: { server, sessionId: args.sessionId, terminalId: args.terminalId }, query: { after: String(flags.after ?? 0) } }),
});
