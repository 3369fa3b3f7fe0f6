// A server object's MCP composition, made once per wake: the host-configured servers of
// `HARNESS_MCP` (worker/mcp-config.ts) in one WorkerMcpHost — started lazily by the first Turn
// (its lease waits, bounded, for the first attempts) or the first MCP route, never at wake —
// and the routes' operations over it (worker/mcp-routes.ts). A bad variable throws the tagged
// refusal the object answers to every request as a 503.
import type { WorkerMcpOAuth } from "./mcp.js";
import { WorkerMcpHost } from "./mcp.js";
import { readMcpVariable } from "./mcp-config.js";
import { WorkerMcpOperations } from "./mcp-routes.js";
import { RELEASE } from "./release.js";
import type { McpOAuth } from "../services/mcp/oauth.js";

export interface WorkerMcpEnv {
  /** JSON array of the config file's `mcp` entries (absent: no MCP servers). */
  readonly HARNESS_MCP?: string;
}

export interface ComposedMcp {
  readonly host: WorkerMcpHost;
  readonly operations: WorkerMcpOperations;
}

export interface ComposeMcpInput {
  readonly env: WorkerMcpEnv & { readonly [name: string]: unknown };
  /** The server-wide OAuth lifecycle (worker/oauth.ts); absent: OAuth references are `authorization_required`. */
  readonly oauth?: McpOAuth;
}

/** The object's MCP host and operations (throws a `ConfigInvalid`-tagged error for a bad HARNESS_MCP). */
export function composeWorkerMcp(input: ComposeMcpInput): ComposedMcp {
  const read = readMcpVariable(input.env.HARNESS_MCP);
  if (!read.ok) throw Object.assign(new Error(read.message), { _tag: read.tag });
  // `environment` credential references read the Worker's string bindings.
  const strings = Object.fromEntries(Object.entries(input.env).filter((entry): entry is [string, string] => typeof entry[1] === "string"));
  const oauth: WorkerMcpOAuth | undefined = input.oauth;
  const host = new WorkerMcpHost({ servers: read.servers, env: strings, clientInfo: { name: "ze-harness", version: RELEASE }, ...(oauth !== undefined ? { oauth } : {}) });
  return { host, operations: new WorkerMcpOperations(host, input.oauth) };
}
