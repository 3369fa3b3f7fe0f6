import { sdk } from "../../../clients/index.js";
import { sessionIdArg } from "../../args.js";
import { jsonCommand } from "../../json-command.js";
import { serverNameArg } from "./args.js";

export default jsonCommand({
  summary: "Revoke and forget a remote MCP server's OAuth credential; print the forgotten generation and the revocation outcome as JSON.",
  description: "Live connections that used the credential are closed; the server needs `mcp auth` again.",
  examples: ["<%= config.bin %> mcp logout SESSION_ID linear"],
  args: { sessionId: sessionIdArg, serverName: serverNameArg },
  call: ({ client, server }, { args }) =>
    sdk.forgetMcpCredential({ client, path: { server, sessionId: args.sessionId, serverName: args.serverName }, body: {} }),
});
