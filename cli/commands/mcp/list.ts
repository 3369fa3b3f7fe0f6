import { sdk } from "../../../clients/index.js";
import { sessionIdArg } from "../../args.js";
import { jsonCommand } from "../../json-command.js";

export default jsonCommand({
  summary: "Print the MCP catalog a Session sees as JSON: the connected servers with their Tools, resources, resource templates and prompts, and where the others stand.",
  description:
    "Lists the servers of the config's mcp entries that are connected in servers, and the others in unavailable with their state (connecting, failed with a reason code, or disabled). A fresh host waits at most 5 s for the servers' first connection attempts. Without --remote the servers are started for this command and stopped when it exits.",
  examples: ["<%= config.bin %> mcp list SESSION_ID"],
  args: { sessionId: sessionIdArg },
  call: ({ client, server }, { args }) => sdk.getMcpCatalog({ client, path: { server, sessionId: args.sessionId } }),
  print: (result) => result.catalog,
});
