import { sdk } from "../../../clients/index.js";
import { sessionIdArg } from "../../args.js";
import { jsonCommand } from "../../json-command.js";

export default jsonCommand({
  summary: "Detach a Session's blocking foreground sub-agent chains to the background.",
  description:
    "The waiting task calls answer at once that their work moved to the background; each sub-agent's result arrives later as a queued Turn of the Session. Prints {\"promoted\": true} when a chain was detached, false when none was waiting.",
  args: { sessionId: sessionIdArg },
  call: ({ client, server }, { args }) => sdk.promoteSessionBackground({ client, path: { server, sessionId: args.sessionId } }),
  print: (result) => result,
});
