// Arguments the `mcp` commands share.
import { arg } from "../../spec.js";

export const serverNameArg = arg.string({ name: "SERVER", description: "The MCP server's name (its `name` in the config's mcp list).", required: true });
