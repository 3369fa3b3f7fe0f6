import { randomUUID } from "node:crypto";
import { sdk } from "../../../clients/index.js";
import { sessionIdArg, uuidFlag } from "../../args.js";
import { usageError } from "../../errors.js";
import { jsonCommand } from "../../json-command.js";
import { arg, flag } from "../../spec.js";
import { serverNameArg } from "./args.js";

export default jsonCommand({
  summary: "Resolve an MCP prompt and queue it as a Turn of the Session; print the receipt as JSON.",
  description:
    "The server resolves the prompt with the --arg values; its messages become the Turn's prompt. Repeating a submission with the same --turn and arguments returns the same receipt.",
  examples: ['<%= config.bin %> mcp prompt SESSION_ID everything args-prompt --arg city=Paris --arg state=Texas'],
  args: {
    sessionId: sessionIdArg,
    serverName: serverNameArg,
    promptName: arg.string({ name: "PROMPT", description: "The prompt's name (see mcp list).", required: true }),
  },
  flags: {
    arg: flag.string({ description: "A prompt argument as NAME=VALUE (repeatable).", multiple: true, multipleNonGreedy: true }),
    model: flag.string({ description: "Model to serve the Turn, as PROVIDER/MODEL (default: the Session's)." }),
    turn: uuidFlag("TURN_ID", "Turn id (a UUID); generated when omitted. Repeating a submission with it is idempotent."),
  },
  input: ({ flags }) => {
    const values: Record<string, string> = {};
    for (const item of flags.arg ?? []) {
      const at = item.indexOf("=");
      if (at <= 0) throw usageError(`--arg ${JSON.stringify(item)} is not NAME=VALUE`);
      values[item.slice(0, at)] = item.slice(at + 1);
    }
    return values;
  },
  call: ({ client, server, connection }, { args, flags }, values) =>
    sdk.submitMcpPrompt({
      client,
      path: { server, sessionId: args.sessionId, serverName: args.serverName, promptName: args.promptName },
      headers: { "x-ze-harness-client-id": connection.client.clientId },
      body: { turnId: flags.turn ?? randomUUID(), arguments: values, ...(flags.model !== undefined ? { model: flags.model } : {}) },
    }),
  print: (result) => result.receipt,
});
