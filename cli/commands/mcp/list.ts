import { sdk } from "../../../clients/index.js";
import { sessionIdArg } from "../../args.js";
import { jsonCommand } from "../../json-command.js";

export default jsonCommand({
  summary: "Print the MCP catalog a Session sees as JSON: the connected servers with their Tools, resources, resource templates and prompts.",
  description:
    "Lists the servers of the config's mcp entries that are connected (a server that is disabled or failed to start is absent; the host logs why). Without --remote the servers are started for this command and stopped when it exits.",
  examples: ["<%= config.bin %> mcp list SESSION_ID"],
  args: { sessionId: sessionIdArg },
  call: ({ client, server }, { args }) => sdk.getMcpCatalog({ client, path: { server, sessionId: args.sessionId } }),
  print: (result) => result.catalog,
});
