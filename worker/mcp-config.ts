// The Worker variable `HARNESS_MCP`: the server objects' host-configured MCP servers, a JSON
// array of exactly the config file's `mcp` entries (the standalone Worker has no config file;
// the reference leaves this name open). Checked like the Node host's file: the config schema's
// `McpServer` entries (by @cfworker/json-schema's interpreter: Ajv generates code, which workerd
// forbids), the nesting bound, then the Node host's `resolveMcpServers` (unique ids and names,
// endpoints, header names, protocol versions). A bad value is a `ConfigInvalid` refusal naming
// the variable and a JSON pointer into it — never a value from it — which the server object
// answers to every request as a typed 503.
import { Validator, type OutputUnit } from "@cfworker/json-schema";
import schema from "../generated/config.schema.json" with { type: "json" };
import { MAX_CONFIG_DEPTH, tooDeep } from "../services/config/depth.js";
import type { McpServer } from "../services/config/types.js";
import { McpConfigError, resolveMcpServers } from "../services/mcp/config.js";

export const MCP_VARIABLE = "HARNESS_MCP";

export type WorkerMcpConfigResult = { readonly ok: true; readonly servers: McpServer[] } | { readonly ok: false; readonly tag: "ConfigInvalid"; readonly message: string };

/** A base for the schema's relative `$id`s (never fetched: every schema is added here). */
const BASE = "https://ze-harness.invalid/config/";
let validator: Validator | undefined;

function mcpValidator(): Validator {
  if (validator !== undefined) return validator;
  const made = new Validator({ $id: `${BASE}HarnessMcp.json`, type: "array", items: { $ref: "McpServer.json" } }, "2020-12", false);
  for (const definition of Object.values((schema as { $defs: Record<string, { $id: string }> }).$defs)) made.addSchema(definition as never, `${BASE}${definition.$id}`);
  validator = made;
  return made;
}

const invalid = (message: string): WorkerMcpConfigResult => ({ ok: false, tag: "ConfigInvalid", message: `Worker variable ${MCP_VARIABLE}: ${message}` });
const at = (pointer: string): string => (pointer === "" ? "the value" : pointer);

/** The deepest failing location of a schema check and its keyword (an interpreter's messages may quote values). */
function schemaProblem(errors: readonly OutputUnit[]): string {
  let deepest: OutputUnit | undefined;
  for (const unit of errors) if (deepest === undefined || unit.instanceLocation.length > deepest.instanceLocation.length) deepest = unit;
  const pointer = (deepest?.instanceLocation ?? "#").replace(/^#/, "");
  return `${at(pointer)} is not a valid MCP server entry (JSON Schema keyword ${JSON.stringify(deepest?.keyword ?? "type")})`;
}

/** The `mcp` entries of `HARNESS_MCP` (absent or blank: none), or the refusal naming where it is wrong. */
export function readMcpVariable(text: string | undefined): WorkerMcpConfigResult {
  if (text === undefined || text.trim() === "") return { ok: true, servers: [] };
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    return invalid("is not valid JSON");
  }
  if (!Array.isArray(value)) return invalid("must be a JSON array of MCP server entries (the config file's `mcp`)");
  const deep = tooDeep(value);
  if (deep !== undefined) return invalid(`${deep} is nested deeper than ${MAX_CONFIG_DEPTH} levels`);
  const checked = mcpValidator().validate(value);
  if (!checked.valid) return invalid(schemaProblem(checked.errors));
  try {
    resolveMcpServers(value as McpServer[]);
  } catch (error) {
    // The path only: the Node host's messages quote the offending value.
    if (error instanceof McpConfigError) return invalid(`${at(error.path.replace(/^\/mcp/, ""))} is invalid (the Node host's check of the config file's mcp entries)`);
    throw error;
  }
  return { ok: true, servers: value as McpServer[] };
}
