// The protocol constants a client checks a server against. Every response of a Ze Harness server
// carries `Ze-Harness-Version: <HARNESS_PROTOCOL_VERSION>/<release>` (services/http/handler.ts
// sets it; tests/client/exports.test.ts holds the two equal). MCP_PROTOCOL_VERSION is the MCP
// protocol revision the harness speaks to MCP servers (services/mcp/config.ts).

/** The response header naming the server's protocol and release, e.g. `Ze-Harness-Version: 1/0.1.0`. */
export const SERVER_VERSION_HEADER = "Ze-Harness-Version";

/** The v1 HTTP protocol's version: the part before `/` in {@link SERVER_VERSION_HEADER}. */
export const HARNESS_PROTOCOL_VERSION = 1;

/** The MCP protocol revision the harness negotiates with MCP servers (the only one it supports). */
export const MCP_PROTOCOL_VERSION = "2025-06-18";
