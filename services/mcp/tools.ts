// A connected server's Tools as ToolDefinitions: `<name>_<tool>` (both sanitized to A-Z a-z 0-9 _ -),
// plus `<name>_read-resource` when the server entry enables `resourceReadTool`. Their input schemas
// are the server's, reduced to the keyword set the Turn's validator accepts. Permissions: a Tool
// call projects its own id as the action on `*` (the reference's default projection); a resource
// read projects the read-resource id on the URI, which an "always" reply saves.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import type { JsonSchema, PermissionProjection, ToolContext, ToolDefinition, ToolOutput } from "../tools/tool.js";
import { ALLOWED_SCHEMA_KEYWORDS, validateToolInput } from "../tools/validate.js";
import { sanitizeToolName } from "./config.js";
import type { McpConnection } from "./connection.js";
import { ServerUnavailable } from "./status.js";
import { isLimitReached, MAX_TIMER_MS } from "./limits.js";
import { mapToolResult, McpToolFailure, resourceContent, resultText, type ResultLimits } from "./results.js";

/** The suffix of a server's resource-reading Tool. */
export const READ_RESOURCE_TOOL = "read-resource";

/** Longest error text passed on from an `isError` result. */
const MAX_ERROR_TEXT = 4_000;

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);

const SUBSCHEMA_MAPS = new Set(["properties", "$defs", "dependentSchemas"]);
const VALUE_KEYWORDS = new Set(["enum", "const", "required", "dependentRequired", "title", "description", "$comment", "type"]);

function reduce(schema: unknown): unknown {
  if (typeof schema === "boolean") return schema;
  if (!isObject(schema)) return {};
  const source: Json = { ...schema };
  // draft-07 spellings → 2020-12.
  if (isObject(source["definitions"]) && source["$defs"] === undefined) source["$defs"] = source["definitions"];
  if (Array.isArray(source["items"])) {
    source["prefixItems"] = source["items"];
    delete source["items"];
  }
  const out: Json = {};
  for (const [key, value] of Object.entries(source)) {
    if (key === "$schema" || !ALLOWED_SCHEMA_KEYWORDS.has(key)) continue;
    if ((key === "exclusiveMinimum" || key === "exclusiveMaximum") && typeof value !== "number") continue;
    if (key === "$ref") {
      if (typeof value === "string") out[key] = value.replace(/^#\/definitions\//, "#/$defs/");
    } else if (SUBSCHEMA_MAPS.has(key) && isObject(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, reduce(sub)]));
    } else if (VALUE_KEYWORDS.has(key)) {
      out[key] = value;
    } else if (Array.isArray(value)) {
      out[key] = value.map(reduce);
    } else if (isObject(value) || typeof value === "boolean") {
      out[key] = reduce(value);
    } else {
      out[key] = value;
    }
  }
  return out;
}

/** The server's input schema as the Turn's validator accepts it; `{ type: "object" }` when it cannot be reduced to one. */
export function toolInputSchema(schema: unknown): JsonSchema {
  const reduced = reduce(schema) as Json;
  const candidate = { ...reduced, type: "object" } as JsonSchema;
  try {
    // Compiles (and caches) exactly as the Turn will; a schema it rejects is replaced.
    validateToolInput({ id: "", description: "", inputSchema: candidate, permissions: () => [], execute: async () => ({ result: { format: "text", value: "" } }) }, {});
    return candidate;
  } catch {
    return { type: "object" };
  }
}

function failureOf(error: unknown, server: string, signal: AbortSignal): McpToolFailure {
  if (error instanceof McpToolFailure) return error;
  if (signal.aborted) return new McpToolFailure("interrupted", "The tool call was interrupted.");
  if (isLimitReached(error)) return new McpToolFailure("mcp_limit_reached", `The MCP server ${JSON.stringify(server)} did not answer within its execution limit (${error.value} ms).`);
  if (error instanceof ServerUnavailable) return new McpToolFailure("mcp_unavailable", error.message);
  if (error instanceof McpError) return new McpToolFailure("mcp_request_failed", `The MCP server ${JSON.stringify(server)} failed the request: ${error.message}`);
  return new McpToolFailure("mcp_request_failed", `The request to the MCP server ${JSON.stringify(server)} failed: ${error instanceof Error ? error.message : String(error)}`);
}

async function run(connection: McpConnection, ctx: ToolContext, work: (client: Client, signal: AbortSignal) => Promise<ToolOutput>): Promise<ToolOutput> {
  try {
    return await connection.request(work, ctx.signal);
  } catch (error) {
    throw failureOf(error, connection.server.name, ctx.signal);
  }
}

/** The ToolDefinition of one MCP Tool. */
export function mcpTool(connection: McpConnection, tool: { readonly name: string; readonly title?: string; readonly description?: string; readonly inputSchema: unknown }, limits: ResultLimits): ToolDefinition<Json> {
  const id = `${connection.server.toolPrefix}_${sanitizeToolName(tool.name)}`;
  return {
    id,
    description: tool.description ?? tool.title ?? `The ${tool.name} Tool of the MCP server ${connection.server.name}.`,
    inputSchema: toolInputSchema(tool.inputSchema),
    permissions: (): PermissionProjection[] => [{ action: id, resources: ["*"], save: ["*"], metadata: { mcpServer: connection.server.id, mcpTool: tool.name } }],
    execute: (input, ctx) =>
      run(connection, ctx, async (client, signal) => {
        const result = (await client.callTool({ name: tool.name, arguments: input }, undefined, { signal, timeout: MAX_TIMER_MS })) as Json;
        const mapped = mapToolResult(result, limits);
        if (result["isError"] === true) {
          const text = resultText(mapped).slice(0, MAX_ERROR_TEXT);
          throw new McpToolFailure("mcp_tool_error", text === "" ? `The MCP Tool ${tool.name} failed.` : text, mapped);
        }
        return { result: mapped };
      }),
  };
}

/** `<name>_read-resource`: reads one of the server's resources by URI. */
export function readResourceTool(connection: McpConnection, limits: ResultLimits): ToolDefinition<{ uri: string }> {
  const id = `${connection.server.toolPrefix}_${READ_RESOURCE_TOOL}`;
  const description = `Reads a resource of the MCP server ${connection.server.name} by its URI.`;
  return {
    id,
    description,
    describe: () => {
      const resources = connection.connected?.lists.resources ?? [];
      const templates = connection.connected?.lists.resourceTemplates ?? [];
      const listed = [...resources.slice(0, 50).map((r) => `- ${r.uri}${r.description ? `: ${r.description}` : ""}`), ...templates.slice(0, 20).map((t) => `- ${t.uriTemplate} (template)`)];
      return listed.length === 0 ? description : `${description} Known resources:\n${listed.join("\n")}`;
    },
    inputSchema: { type: "object", properties: { uri: { type: "string", description: "The resource URI." } }, required: ["uri"], additionalProperties: false },
    permissions: (input): PermissionProjection[] => [{ action: id, resources: [input.uri], save: [input.uri], metadata: { mcpServer: connection.server.id } }],
    execute: (input, ctx) =>
      run(connection, ctx, async (client, signal) => {
        const read = await client.readResource({ uri: input.uri }, { signal, timeout: MAX_TIMER_MS });
        return { result: mapToolResult({ content: resourceContent(read.contents) }, limits) };
      }),
  };
}
