// The config's `mcp` entries, checked beyond the JSON Schema and with the documented defaults
// applied: unique ids and names, supported protocol versions, an endpoint without credentials,
// header and environment names the transport can honour. A problem is a config error naming the
// entry's JSON pointer (`/mcp/0/transport/endpoint`), raised before anything is started.
import type { McpServer } from "../config/types.js";
import { limitMs } from "./limits.js";

/** The MCP protocol versions Core supports (the reference: only 2025-06-18). */
export const SUPPORTED_PROTOCOL_VERSIONS: readonly string[] = ["2025-06-18"];
export const DEFAULT_PROTOCOL_VERSION = "2025-06-18";

/** The default reconnect policy: retry every 1,000 ms without limit. */
export const DEFAULT_RECONNECT_DELAY_MS = 1_000;

/** Headers the streamable HTTP transport owns; a configured header may not set them. */
const OWNED_HEADERS: ReadonlySet<string> = new Set([
  "accept",
  "content-type",
  "content-length",
  "host",
  "connection",
  "transfer-encoding",
  "last-event-id",
  "mcp-protocol-version",
  "mcp-session-id",
]);

/** Query parameters that carry credentials; an endpoint holding one is refused. */
const CREDENTIAL_QUERY_PARAMETERS: ReadonlySet<string> = new Set([
  "token",
  "access_token",
  "refresh_token",
  "id_token",
  "api_key",
  "apikey",
  "api-key",
  "key",
  "secret",
  "client_secret",
  "password",
  "auth",
  "authorization",
]);

const ENVIRONMENT_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const MAX_ENDPOINT_LENGTH = 2_048;

export interface McpServerLimits {
  readonly startupMs: number | undefined;
  readonly catalogMs: number | undefined;
  readonly executionMs: number | undefined;
}

export type ResolvedReconnect = { readonly kind: "manual" } | { readonly kind: "retry"; readonly delayMs: number; readonly maxAttempts: number | undefined };

/** One `mcp` entry with its defaults applied. */
export interface ResolvedMcpServer {
  /** Position in the config's `mcp` array (for JSON pointers). */
  readonly index: number;
  readonly definition: McpServer;
  readonly id: string;
  readonly name: string;
  /** The name as it prefixes tool names: characters outside A-Z a-z 0-9 _ - become `_`. */
  readonly toolPrefix: string;
  readonly enabled: boolean;
  readonly order: number;
  readonly resourceReadTool: boolean;
  readonly protocolVersions: readonly string[];
  readonly limits: McpServerLimits;
  readonly reconnect: ResolvedReconnect;
  /** The OAuth credential reference of a remote server (`transport.oauth.reference`). */
  readonly oauthReference: string | undefined;
}

/** An `mcp` entry the host cannot use: a config error at `path` (a JSON pointer into the file). */
export class McpConfigError extends Error {
  readonly _tag = "ConfigInvalid" as const;
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(`${path}: ${message}`);
    this.name = "McpConfigError";
  }
}

/** Replaces characters outside `A-Z`, `a-z`, `0-9`, `_` and `-` with `_` (the reference's tool-name rule). */
export const sanitizeToolName = (value: string): string => value.replace(/[^A-Za-z0-9_-]/g, "_");

function checkEndpoint(endpoint: string, at: string): void {
  if (endpoint.length > MAX_ENDPOINT_LENGTH) throw new McpConfigError(at, `the endpoint is longer than ${MAX_ENDPOINT_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new McpConfigError(at, "the endpoint is not a URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new McpConfigError(at, `the endpoint must be an http:// or https:// URL, not ${url.protocol}`);
  if (url.username !== "" || url.password !== "") throw new McpConfigError(at, "the endpoint must not hold credentials (user or password); use headers or oauth");
  if (url.hash !== "") throw new McpConfigError(at, "the endpoint must not have a fragment");
  for (const name of url.searchParams.keys()) {
    if (CREDENTIAL_QUERY_PARAMETERS.has(name.toLowerCase())) {
      throw new McpConfigError(at, `the endpoint must not hold credentials (query parameter ${JSON.stringify(name)}); use headers or oauth`);
    }
  }
}

function resolveOne(server: McpServer, index: number): ResolvedMcpServer {
  const at = `/mcp/${index}`;
  if (server.id.length === 0) throw new McpConfigError(`${at}/id`, "must not be empty");
  if (server.name.length === 0) throw new McpConfigError(`${at}/name`, "must not be empty");
  const versions = server.protocolVersions ?? [DEFAULT_PROTOCOL_VERSION];
  if (versions.length === 0) throw new McpConfigError(`${at}/protocolVersions`, "must list at least one version");
  for (const [i, version] of versions.entries()) {
    if (!SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
      throw new McpConfigError(`${at}/protocolVersions/${i}`, `${JSON.stringify(version)} is not supported (supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")})`);
    }
    if (versions.indexOf(version) !== i) throw new McpConfigError(`${at}/protocolVersions/${i}`, `${JSON.stringify(version)} is listed twice`);
  }
  let oauthReference: string | undefined;
  if (server.kind === "local") {
    for (const name of Object.keys(server.transport.environment ?? {})) {
      if (!ENVIRONMENT_NAME.test(name) || name.length > 128) {
        throw new McpConfigError(`${at}/transport/environment/${name}`, "an environment variable name is letters, digits and _ (not starting with a digit), at most 128 characters");
      }
    }
  } else {
    checkEndpoint(server.transport.endpoint, `${at}/transport/endpoint`);
    const seen = new Set<string>();
    for (const name of Object.keys(server.transport.headers ?? {})) {
      const lower = name.toLowerCase();
      const path = `${at}/transport/headers/${name}`;
      if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) throw new McpConfigError(path, "is not a valid header name");
      if (seen.has(lower)) throw new McpConfigError(path, "is given twice (header names ignore case)");
      seen.add(lower);
      if (OWNED_HEADERS.has(lower)) throw new McpConfigError(path, "is a header the transport owns");
      if (lower === "authorization" && server.transport.oauth !== undefined) {
        throw new McpConfigError(path, "the OAuth credential owns the Authorization header; remove this header or the oauth field");
      }
    }
    if (server.transport.oauth !== undefined) {
      if (server.transport.oauth.kind !== "oauth") throw new McpConfigError(`${at}/transport/oauth/kind`, 'must be "oauth"');
      oauthReference = server.transport.oauth.reference;
    }
  }
  const reconnect: ResolvedReconnect =
    server.reconnect?.kind === "manual"
      ? { kind: "manual" }
      : { kind: "retry", delayMs: server.reconnect?.delayMs ?? DEFAULT_RECONNECT_DELAY_MS, maxAttempts: limitMs(server.reconnect?.maxAttempts) };
  return {
    index,
    definition: server,
    id: server.id,
    name: server.name,
    toolPrefix: sanitizeToolName(server.name),
    enabled: server.enabled ?? true,
    order: server.order ?? 0,
    resourceReadTool: server.resourceReadTool ?? false,
    protocolVersions: versions,
    limits: {
      startupMs: limitMs(server.limits?.startupMs),
      catalogMs: limitMs(server.limits?.catalogMs),
      executionMs: limitMs(server.limits?.executionMs),
    },
    reconnect,
    oauthReference,
  };
}

/**
 * Checks and resolves the config's `mcp` entries, sorted as the reference orders servers: by
 * `order`, then by `name` (every configured server is a host server). Throws {@link McpConfigError}.
 */
export function resolveMcpServers(servers: readonly McpServer[] = []): ResolvedMcpServer[] {
  const ids = new Map<string, number>();
  const names = new Map<string, number>();
  const resolved = servers.map((server, index) => {
    const one = resolveOne(server, index);
    if (ids.has(one.id)) throw new McpConfigError(`/mcp/${index}/id`, `${JSON.stringify(one.id)} is already the id of /mcp/${ids.get(one.id)}`);
    if (names.has(one.name)) throw new McpConfigError(`/mcp/${index}/name`, `${JSON.stringify(one.name)} is already the name of /mcp/${names.get(one.name)}`);
    ids.set(one.id, index);
    names.set(one.name, index);
    return one;
  });
  return resolved.sort((a, b) => a.order - b.order || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
