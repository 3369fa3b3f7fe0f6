import { sdk } from "../../../clients/index.js";
import { sessionIdArg, uuidArg } from "../../args.js";
import { jsonCommand } from "../../json-command.js";
import { flag } from "../../spec.js";

export default jsonCommand({
  summary: "End a terminal's process; print the settled terminal as JSON.",
  args: { sessionId: sessionIdArg, terminalId: uuidArg("TERMINAL_ID", "The terminal id.") },
  flags: { signal: flag.string({ description: "The signal to send (default SIGHUP).", options: ["SIGHUP", "SIGTERM", "SIGKILL", "SIGINT"] }) },
  call: ({ client, server }, { args, flags }) =>
    sdk.closeTerminal({
      client,
      path: { server, sessionId: args.sessionId, terminalId: args.terminalId },
      body: flags.signal !== undefined ? { signal: flags.signal as "SIGHUP" | "SIGTERM" | "SIGKILL" | "SIGINT" } : {},
    }),
  print: (result) => result.terminal,
});
