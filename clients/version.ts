// The protocol constants a client checks a server against. Every response of a Ze Harness server
// carries `Ze-Harness-Version: <HARNESS_PROTOCOL_VERSION>/<release>` (services/http/handler.ts
// sets it; tests/client/exports.test.ts holds the two equal). MCP_PROTOCOL_VERSION is the MCP
// protocol revision the harness speaks to MCP servers (services/mcp/config.ts). One definition
// each: the header name lives with the notice logic (server-version.ts), the protocol with the host.

export { SERVER_VERSION_HEADER } from "./server-version.js";
export { HARNESS_PROTOCOL_VERSION } from "../services/contract/protocol.js";

/** The MCP protocol revision the harness negotiates with MCP servers (the only one it supports). */
export const MCP_PROTOCOL_VERSION = "2025-06-18";
