import { sdk } from "../../../clients/index.js";
import { sessionIdArg } from "../../args.js";
import { jsonCommand } from "../../json-command.js";
import { serverNameArg } from "./args.js";

export default jsonCommand({
  summary: "Print the OAuth credential status of a remote MCP server as JSON (never a token).",
  description: "One of absent, pending, authorized, expired, authorization-required or forgotten, with its generation.",
  examples: ["<%= config.bin %> mcp status SESSION_ID linear"],
  args: { sessionId: sessionIdArg, serverName: serverNameArg },
  call: ({ client, server }, { args }) => sdk.getMcpCredential({ client, path: { server, sessionId: args.sessionId, serverName: args.serverName } }),
  print: (result) => result.status,
});
