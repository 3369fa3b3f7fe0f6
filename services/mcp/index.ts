// services/mcp: MCP clients (stdio and streamable HTTP), the catalog, MCP Tools and OAuth. See README.md.
export { McpHost, DEFAULT_LIFECYCLE, DEFAULT_READY_WAIT_MS, type McpHostOptions, type McpServerReport } from "./host.js";
export { McpConfigError, resolveMcpServers, sanitizeToolName, SUPPORTED_PROTOCOL_VERSIONS, DEFAULT_PROTOCOL_VERSION, type ResolvedMcpServer } from "./config.js";
export type { McpServerState, McpFailureReason } from "./connection.js";
export { McpOAuth, REFRESH_WINDOW_MS, type McpOAuthOptions } from "./oauth.js";
export { listenForCallbacks, parseCallbackQuery, callbackUrl, DEFAULT_CALLBACK_PORT, CALLBACK_PORT_VARIABLE, CALLBACK_PATH_PREFIX, type CallbackListener } from "./callback.js";
export { McpToolFailure, mapToolResult, MAX_MCP_BINARY_BYTES, type McpToolFailureCode } from "./results.js";
export { READ_RESOURCE_TOOL, toolInputSchema } from "./tools.js";
export type { StdioLifecycleLimits } from "./stdio.js";
