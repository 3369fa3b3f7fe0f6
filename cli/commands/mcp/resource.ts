import { sdk } from "../../../clients/index.js";
import { sessionIdArg } from "../../args.js";
import { jsonCommand } from "../../json-command.js";
import { arg } from "../../spec.js";
import { serverNameArg } from "./args.js";

export default jsonCommand({
  summary: "Read one resource an MCP server advertises; print its contents as JSON.",
  description: "The URI must be one the server lists or one matching its resource templates (see mcp list). Text contents carry text, binary contents base64 blob.",
  examples: ["<%= config.bin %> mcp resource SESSION_ID everything demo://resource/static/document/architecture.md"],
  args: {
    sessionId: sessionIdArg,
    serverName: serverNameArg,
    uri: arg.string({ name: "URI", description: "The resource URI.", required: true }),
  },
  call: ({ client, server }, { args }) =>
    sdk.readMcpResource({ client, path: { server, sessionId: args.sessionId, serverName: args.serverName }, body: { uri: args.uri } }),
  print: (result) => result.resource,
});
