import { randomUUID } from "node:crypto";
import { sdk } from "../../../clients/index.js";
import { sessionIdArg, uuidFlag } from "../../args.js";
import { jsonCommand } from "../../json-command.js";
import { flag } from "../../spec.js";

export default jsonCommand({
  summary: "Open a terminal (a real PTY) in a Session's workdir; print it as JSON.",
  description:
    "Runs --exec CMD through /bin/sh -c, or the user's shell without it. The PTY lives in the host that serves the command (the local daemon by default), so it outlives this command; follow it with `terminal output`, type with `terminal input`, end it with `terminal close`, and read its styled screen with `terminal display` once it exited.",
  examples: ['<%= config.bin %> terminal open SESSION_ID --exec "npm test" --cols 120 --rows 40'],
  args: { sessionId: sessionIdArg },
  flags: {
    exec: flag.string({ description: "A command line run through /bin/sh -c." }),
    cols: flag.integer({ description: "Columns (2–1024, default 80).", min: 2, max: 1024 }),
    rows: flag.integer({ description: "Rows (1–1024, default 24).", min: 1, max: 1024 }),
    terminal: uuidFlag("TERMINAL_ID", "Terminal id (a UUID); generated when omitted. Repeating an open with it is idempotent."),
  },
  call: ({ client, server }, { args, flags }) =>
    sdk.openTerminal({
      client,
      path: { server, sessionId: args.sessionId, terminalId: flags.terminal ?? randomUUID() },
      body: {
        ...(flags.exec !== undefined ? { command: ["/bin/sh", "-c", flags.exec] } : {}),
        ...(flags.cols !== undefined || flags.rows !== undefined ? { size: { cols: flags.cols ?? 80, rows: flags.rows ?? 24 } } : {}),
      },
    }),
  print: (result) => result.terminal,
});
