// MCP in the Worker: a server object's configured MCP servers connected over Streamable HTTP with
// the MCP SDK's StreamableHTTPClientTransport over `fetch`, and their Tools as `<server>_<tool>`
// ToolDefinitions a runner can offer. Local (stdio) entries are never started: their status is
// the reference's typed outcome, "Local stdio is unavailable because Workers cannot spawn local
// processes; the Worker does not emulate stdio or silently fall back to HTTP" — no emulation and
// no fallback to HTTP. An OAuth credential reference has no composed lifecycle here yet, so such
// a server is `authorization_required` and nothing is sent to it.
//
// The Node host's McpHost (services/mcp/host.ts) cannot join the Worker bundle: its connection
// module imports the stdio transport (node:child_process, missing in workerd). This file composes
// the Worker-safe parts of services/mcp instead — the entry checks (config.ts), credential
// references (credentials.ts), protocol negotiation, redirects, limits, the catalog reader and
// the result mapping — with the SDK client validating tool output through its Cloudflare
// validator (@cfworker/json-schema: Ajv generates code, which workerd forbids).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import type { McpCatalogTool } from "../generated/client/types.gen.js";
import type { Env } from "../services/config/paths.js";
import type { McpServer } from "../services/config/types.js";
import { readCatalog, type CatalogLists } from "../services/mcp/catalog.js";
import { resolveMcpServers, sanitizeToolName, type ResolvedMcpServer } from "../services/mcp/config.js";
import type { McpFailureReason, McpServerState } from "../services/mcp/connection.js";
import { AuthorizationRequired, CredentialUnresolved, resolveCredentialMap, resolveReference, type McpCredentialResolvers } from "../services/mcp/credentials.js";
import { bounded, isLimitReached, MAX_TIMER_MS } from "../services/mcp/limits.js";
import { NegotiatingTransport, ProtocolVersionRejected } from "../services/mcp/negotiate.js";
import { followingRedirects } from "../services/mcp/redirects.js";
import { mapToolResult, McpToolFailure, resourceContent, resultText, type ResultLimits } from "../services/mcp/results.js";
import type { JsonSchema, PermissionProjection, ToolContext, ToolDefinition, ToolOutput } from "../services/tools/tool.js";

/** The reference's words for a local (stdio) MCP server on this host. */
export const LOCAL_STDIO_UNAVAILABLE = "Local stdio is unavailable because Workers cannot spawn local processes; the Worker does not emulate stdio or silently fall back to HTTP";

/** The suffix of a server's resource-reading Tool (as on Node). */
export const READ_RESOURCE_TOOL = "read-resource";

/** Longest error text passed on from an `isError` result (as on Node). */
const MAX_ERROR_TEXT = 4_000;
/**
 * The most bytes one MCP answer may carry (a JSON body, a POST's SSE stream, one event of the
 * standalone GET stream): the isolate has 128 MB for everything it runs, and the SDK reads an
 * answer whole before anything here sees it.
 */
export const MAX_MCP_RESPONSE_BYTES = 16 * 1024 * 1024;

/** An MCP server's answer went past `maxResponseBytes`: a typed limit, never an isolate out of memory. */
export class McpResponseTooLarge extends Error {
  readonly _tag = "McpResponseTooLarge" as const;
  constructor(readonly limit: number) {
    super(`the MCP server's answer is over the ${limit}-byte response limit`);
    this.name = "McpResponseTooLarge";
  }
}

const tooLarge = (error: unknown): McpResponseTooLarge | undefined => {
  for (let cause = error, depth = 0; typeof cause === "object" && cause !== null && depth < 4; cause = (cause as { cause?: unknown }).cause, depth++) {
    if ((cause as { _tag?: unknown })._tag === "McpResponseTooLarge") return cause as McpResponseTooLarge;
  }
  return undefined;
};

/**
 * `response` whose body errors with McpResponseTooLarge once more than `limit` bytes arrived (a
 * declared larger Content-Length is refused before reading). On the standalone GET event
 * stream the count restarts at each event boundary, so only one event is bounded there.
 */
function boundedResponse(response: Response, limit: number, perEvent: boolean): Response {
  if (response.body === null) return response;
  const declared = Number(response.headers.get("content-length") ?? "");
  if (Number.isFinite(declared) && declared > limit) {
    void response.body.cancel().catch(() => undefined);
    throw new McpResponseTooLarge(limit);
  }
  let seen = 0;
  const counted = response.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength;
        if (seen > limit) {
          controller.error(new McpResponseTooLarge(limit));
          return;
        }
        if (perEvent) {
          const text = new TextDecoder().decode(chunk.subarray(Math.max(0, chunk.byteLength - 4096)));
          const boundary = Math.max(text.lastIndexOf("\n\n"), text.lastIndexOf("\r\n\r\n"));
          if (boundary !== -1) seen = 0;
        }
        controller.enqueue(chunk);
      },
    }),
  );
  return new Response(counted, { status: response.status, statusText: response.statusText, headers: response.headers });
}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);

export interface WorkerMcpOptions {
  /** The `mcp` entries configured for the server object (checked like the Node host's; a bad entry throws McpConfigError). */
  readonly servers: readonly McpServer[];
  /** Where `environment` credential references are read: the Worker's string bindings. */
  readonly env: Env;
  /** `secret` references (absent: unresolvable, `credential_unresolved`). */
  readonly secret?: McpCredentialResolvers["secret"];
  /** The fetch every request goes through (default: the global one). */
  readonly fetch?: FetchLike;
  /** The most redirects one request may follow (undefined: unlimited). */
  readonly redirectHops?: number;
  readonly clientInfo?: { readonly name: string; readonly version: string };
  readonly results?: ResultLimits;
  /** The most bytes one answer may carry (default MAX_MCP_RESPONSE_BYTES); past it the request fails as a limit. */
  readonly maxResponseBytes?: number;
}

/** One configured server's state, as the Node host reports it (`McpServerState`). */
export interface WorkerMcpServerStatus {
  readonly id: string;
  readonly name: string;
  readonly status: McpServerState;
}

interface Connected {
  readonly client: Client;
  readonly lists: CatalogLists;
}

interface Slot {
  readonly server: ResolvedMcpServer;
  status: McpServerState;
  connected: Connected | undefined;
}

/** The Tools' input schema: the server's object schema without `$schema` (absent or not an object: any object). */
function inputSchemaOf(schema: unknown): JsonSchema {
  if (!isObject(schema)) return { type: "object" };
  const { $schema: _ignored, ...rest } = schema;
  return { ...rest, type: "object" } as JsonSchema;
}

function classify(error: unknown, transport: NegotiatingTransport | undefined): { readonly reason: McpFailureReason; readonly message: string } {
  const message = error instanceof Error ? error.message : String(error);
  if (transport?.rejected) return { reason: "protocol_version", message: transport.rejected.message };
  if (error instanceof ProtocolVersionRejected) return { reason: "protocol_version", message };
  if (error instanceof AuthorizationRequired) return { reason: "authorization_required", message };
  if (error instanceof CredentialUnresolved) return { reason: "credential_unresolved", message };
  if (isLimitReached(error)) return { reason: "limit_reached", message };
  const large = tooLarge(error);
  if (large !== undefined) return { reason: "limit_reached", message: large.message };
  return { reason: "connection_failed", message };
}

/**
 * The MCP servers of one server object. `start()` connects every enabled remote server once (a
 * failure is that server's status and never affects another; there is no reconnect loop yet: a
 * failed server stays failed until a new host is composed); `tools()` offers the connected
 * servers' Tools at that moment; `close()` ends every session.
 */
export class WorkerMcpHost {
  readonly #options: WorkerMcpOptions;
  readonly #slots: Slot[];
  #started: Promise<void> | undefined;
  #closed = false;

  constructor(options: WorkerMcpOptions) {
    this.#options = options;
    this.#slots = resolveMcpServers(options.servers).map((server) => ({
      server,
      connected: undefined,
      status: !server.enabled
        ? { state: "disabled" }
        : server.definition.kind === "local"
          ? { state: "failed", reason: "spawn_failed", message: LOCAL_STDIO_UNAVAILABLE, attempts: 0, retrying: false }
          : { state: "connecting", attempt: 0 },
    }));
  }

  /** Connects the enabled remote servers (once; later calls wait for the same attempt). */
  start(): Promise<void> {
    this.#started ??= Promise.all(this.#slots.filter((slot) => slot.status.state === "connecting").map((slot) => this.#connect(slot))).then(() => undefined);
    return this.#started;
  }

  statuses(): WorkerMcpServerStatus[] {
    return this.#slots.map((slot) => ({ id: slot.server.id, name: slot.server.name, status: slot.status }));
  }

  /** The Tools of the servers connected now, `<server>_<tool>`, in server order then the server's tool order. */
  tools(): ToolDefinition<Json>[] {
    const slots = this.#slots.filter((slot) => slot.connected !== undefined).sort((a, b) => a.server.order - b.server.order || (a.server.name < b.server.name ? -1 : a.server.name > b.server.name ? 1 : 0));
    return slots.flatMap((slot) => [
      ...slot.connected!.lists.tools.map((tool) => this.#tool(slot, tool)),
      ...(slot.server.resourceReadTool ? [this.#readResourceTool(slot) as unknown as ToolDefinition<Json>] : []),
    ]);
  }

  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all(
      this.#slots.map(async (slot) => {
        const connected = slot.connected;
        slot.connected = undefined;
        if (slot.status.state === "connected" || slot.status.state === "connecting") slot.status = { state: "closed" };
        await connected?.client.close().catch(() => undefined);
      }),
    );
  }

  async #connect(slot: Slot): Promise<void> {
    const { server } = slot;
    if (server.definition.kind !== "remote") return;
    const definition = server.definition;
    slot.status = { state: "connecting", attempt: 1 };
    const client = new Client(this.#options.clientInfo ?? { name: "ze-harness-worker", version: "1" }, { capabilities: {}, jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
    let negotiating: NegotiatingTransport | undefined;
    try {
      const resolvers: McpCredentialResolvers = { env: this.#options.env, secret: this.#options.secret };
      const headers = await resolveCredentialMap(definition.transport.headers, resolvers);
      // No OAuth lifecycle is composed in the Worker yet: resolving the reference is `authorization_required`.
      if (server.oauthReference !== undefined) await resolveReference({ kind: "oauth", reference: server.oauthReference }, resolvers);
      const base: FetchLike = this.#options.fetch ?? ((url, init) => globalThis.fetch(url, init));
      const following = followingRedirects(base, { hops: this.#options.redirectHops, credentialHeaders: Object.keys(headers) });
      const maxBytes = this.#options.maxResponseBytes ?? MAX_MCP_RESPONSE_BYTES;
      const withHeaders: FetchLike = async (url, init) => {
        const merged = new Headers(init?.headers);
        for (const [name, value] of Object.entries(headers)) merged.set(name, value);
        const response = await following(url, { ...init, headers: merged });
        return boundedResponse(response, maxBytes, (init?.method ?? "GET").toUpperCase() === "GET");
      };
      const transport = new StreamableHTTPClientTransport(new URL(definition.transport.endpoint), { fetch: withHeaders, redirectPolicy: "follow" });
      negotiating = new NegotiatingTransport(transport, server.protocolVersions);
      const transportOf = negotiating;
      const lists = await bounded(
        async (signal) => {
          await client.connect(transportOf, { signal, timeout: MAX_TIMER_MS });
          return readCatalog(client, signal);
        },
        { ms: server.limits.startupMs, limit: "startupMs" },
      );
      if (this.#closed) {
        await client.close().catch(() => undefined);
        return;
      }
      slot.connected = { client, lists };
      slot.status = { state: "connected", protocolVersion: negotiating.negotiated ?? server.protocolVersions[0]! };
      client.onclose = () => {
        if (slot.connected?.client !== client) return;
        slot.connected = undefined;
        slot.status = { state: "failed", reason: "disconnected", message: "the server closed the connection", attempts: 1, retrying: false };
      };
    } catch (error) {
      const { reason, message } = classify(error, negotiating);
      slot.status = { state: "failed", reason, message, attempts: 1, retrying: false };
      await client.close().catch(() => undefined);
    }
  }

  #tool(slot: Slot, tool: McpCatalogTool): ToolDefinition<Json> {
    const server = slot.server;
    const id = `${server.toolPrefix}_${sanitizeToolName(tool.name)}`;
    const limits = this.#options.results ?? { maxImageBase64Bytes: undefined };
    return {
      id,
      description: tool.description ?? tool.title ?? `The ${tool.name} Tool of the MCP server ${server.name}.`,
      inputSchema: inputSchemaOf(tool.inputSchema),
      permissions: (): PermissionProjection[] => [{ action: id, resources: ["*"], save: ["*"], metadata: { mcpServer: server.id, mcpTool: tool.name } }],
      execute: async (input: Json, ctx: ToolContext): Promise<ToolOutput> => {
        const result = (await this.#request(slot, ctx, (client, signal) => client.callTool({ name: tool.name, arguments: input }, undefined, { signal, timeout: MAX_TIMER_MS }))) as Json;
        const mapped = mapToolResult(result, limits);
        if (result["isError"] === true) {
          const text = resultText(mapped).slice(0, MAX_ERROR_TEXT);
          throw new McpToolFailure("mcp_tool_error", text === "" ? `The MCP Tool ${tool.name} failed.` : text, mapped);
        }
        return { result: mapped };
      },
    };
  }

  /** `<server>_read-resource` (when the entry enables `resourceReadTool`): one resource by URI, as on Node. */
  #readResourceTool(slot: Slot): ToolDefinition<{ uri: string }> {
    const server = slot.server;
    const id = `${server.toolPrefix}_${READ_RESOURCE_TOOL}`;
    const limits = this.#options.results ?? { maxImageBase64Bytes: undefined };
    return {
      id,
      description: `Reads a resource of the MCP server ${server.name} by its URI.`,
      inputSchema: { type: "object", properties: { uri: { type: "string", description: "The resource URI." } }, required: ["uri"], additionalProperties: false },
      permissions: (input): PermissionProjection[] => [{ action: id, resources: [input.uri], save: [input.uri], metadata: { mcpServer: server.id } }],
      execute: async (input, ctx) => {
        const read = await this.#request(slot, ctx, (client, signal) => client.readResource({ uri: input.uri }, { signal, timeout: MAX_TIMER_MS }));
        return { result: mapToolResult({ content: resourceContent(read.contents) }, limits) };
      },
    };
  }

  /** One request to a connected server under its `executionMs`, failures as McpToolFailure codes. */
  async #request<T>(slot: Slot, ctx: ToolContext, work: (client: Client, signal: AbortSignal) => Promise<T>): Promise<T> {
    const server = slot.server;
    const connected = slot.connected;
    if (connected === undefined) {
      const status = slot.status;
      throw new McpToolFailure("mcp_unavailable", `MCP server ${JSON.stringify(server.name)} is not connected${status.state === "failed" ? ` (${status.reason}: ${status.message})` : ""}`);
    }
    try {
      return await bounded((signal) => work(connected.client, signal), { ms: server.limits.executionMs, limit: "executionMs", signal: ctx.signal });
    } catch (error) {
      if (ctx.signal.aborted) throw new McpToolFailure("interrupted", "The tool call was interrupted.");
      if (isLimitReached(error)) throw new McpToolFailure("mcp_limit_reached", `The MCP server ${JSON.stringify(server.name)} did not answer within its execution limit (${error.value} ms).`);
      const large = tooLarge(error);
      if (large !== undefined) throw new McpToolFailure("mcp_limit_reached", `The MCP server ${JSON.stringify(server.name)} answered more than the ${large.limit}-byte response limit.`);
      if (error instanceof McpError) throw new McpToolFailure("mcp_request_failed", `The MCP server ${JSON.stringify(server.name)} failed the request: ${error.message}`);
      throw new McpToolFailure("mcp_request_failed", `The request to the MCP server ${JSON.stringify(server.name)} failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}
