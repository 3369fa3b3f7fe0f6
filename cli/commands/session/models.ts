import { sdk } from "../../../clients/index.js";
import { sessionIdArg } from "../../args.js";
import { jsonCommand } from "../../json-command.js";

export default jsonCommand({
  summary: "Print the model catalog a Session adopted as JSON.",
  description:
    "Prints `{ hostRevision, defaultModel?, providers, models }`: every provider with its availability, and every model with its capabilities, limits, pricing, defaults and availability. " +
    "While a Turn runs, the Session keeps the catalog that Turn started with; an idle Session follows the runtime catalog (`runtime models`). Never includes a credential.",
  examples: ["<%= config.bin %> session models SESSION_ID"],
  args: { sessionId: sessionIdArg },
  call: ({ client, server }, { args }) => sdk.sessionModels({ client, path: { server, sessionId: args.sessionId } }),
});
