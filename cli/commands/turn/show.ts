import { sdk } from "../../../clients/index.js";
import { sessionIdArg, uuidArg } from "../../args.js";
import { jsonCommand } from "../../json-command.js";

export default jsonCommand({
  summary: "Print one Turn as JSON.",
  args: { sessionId: sessionIdArg, turnId: uuidArg("TURN_ID", "The Turn id.") },
  call: ({ client, server }, { args }) => sdk.getTurn({ client, path: { server, sessionId: args.sessionId, turnId: args.turnId } }),
  print: (result) => result.turn,
});
