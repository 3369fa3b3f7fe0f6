import { sdk } from "../../../clients/index.js";
import { sessionIdArg, turnIdArg } from "../../args.js";
import { jsonCommand } from "../../json-command.js";

export default jsonCommand({
  summary: "Print one Turn as JSON.",
  args: { sessionId: sessionIdArg, turnId: turnIdArg },
  call: ({ client, server }, { args }) => sdk.getTurn({ client, path: { server, sessionId: args.sessionId, turnId: args.turnId } }),
  print: (result) => result.turn,
});
