import { sdk } from "../../../clients/index.js";
import { sessionIdArg, uuidArg } from "../../args.js";
import { jsonCommand } from "../../json-command.js";
import { arg, flag } from "../../spec.js";

export default jsonCommand({
  summary: "Type text into a running terminal; print the terminal as JSON.",
  description: "TEXT - reads it from stdin. --enter appends a carriage return (the Enter key).",
  args: {
    sessionId: sessionIdArg,
    terminalId: uuidArg("TERMINAL_ID", "The terminal id."),
    text: arg.string({ name: "TEXT", description: "The text, or - for stdin.", required: true }),
  },
  flags: { enter: flag.boolean({ description: "Press Enter after the text." }) },
  input: async ({ args, flags }) => (args.text === "-" ? (await import("node:fs")).readFileSync(0, "utf8") : args.text) + (flags.enter ? "\r" : ""),
  call: ({ client, server }, { args }, text) => sdk.writeTerminalInput({ client, path: { server, sessionId: args.sessionId, terminalId: args.terminalId }, body: { text } }),
  print: (result) => result.terminal,
});
