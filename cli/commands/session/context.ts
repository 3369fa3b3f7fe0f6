import { sdk } from "../../../clients/index.js";
import { sessionIdArg } from "../../args.js";
import { jsonCommand } from "../../json-command.js";
import { flag } from "../../spec.js";

export default jsonCommand({
  summary: "Print the latest Main request a Session prepared, grouped by role and tool schema, as JSON.",
  description:
    "Prints `{ sessionId, through, request: { sequence, turnId, model, turnPhase, groups: [{ role, messages, characters, estimatedTokens }], tools: [{ name, characters, estimatedTokens }], estimator, estimatedInputTokens, reportedInputTokens, contextUnits } | null }`. " +
    "Token counts are estimates; reportedInputTokens is what the provider reported (null until it does). --through pins a request sequence.",
  examples: ["<%= config.bin %> session context SESSION_ID", "<%= config.bin %> session context SESSION_ID --through 3"],
  args: { sessionId: sessionIdArg },
  flags: { through: flag.integer({ description: "Pin this request sequence (as returned in `through`).", min: 1 }) },
  call: ({ client, server }, { args, flags }) =>
    sdk.context({ client, path: { server, sessionId: args.sessionId }, query: flags.through !== undefined ? { through: String(flags.through) } : {} }),
});
