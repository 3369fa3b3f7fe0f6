import { sdk } from "../../../clients/index.js";
import { sessionIdArg, turnIdArg } from "../../args.js";
import { jsonCommand } from "../../json-command.js";
import { flag } from "../../spec.js";

export default jsonCommand({
  summary: "Rewind a Turn: restore the files it and every later Turn changed; print the rewind as JSON.",
  description:
    "Puts every workdir file the Turn and the Turns after it changed back to its state before the Turn, and (unless --files-only) hides those Turns from later work. " +
    "Refused with RewindConflictError naming the files when any of them changed outside the harness since; nothing is restored then. " +
    "Prints `{ sessionId, turnId, turnIds, restored: [{ bytesBase64 }], visibility?, rewoundAt }`.",
  examples: ["<%= config.bin %> turn rewind SESSION_ID TURN_ID", "<%= config.bin %> turn rewind SESSION_ID TURN_ID --files-only"],
  args: { sessionId: sessionIdArg, turnId: turnIdArg },
  flags: { "files-only": flag.boolean({ description: "Restore files only; the model still sees the Turns." }) },
  call: ({ client, server }, { args, flags }) =>
    sdk.rewindTurn({ client, path: { server, sessionId: args.sessionId, turnId: args.turnId }, body: flags["files-only"] ? { filesOnly: true } : {} }),
  print: (result) => result.rewind,
});
