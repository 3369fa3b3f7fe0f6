// Longer than ~400 lines on purpose: one host owns every server's connection attempt, its
// credentials on the transport and the Tools built over it; the response bound and the routes'
// operations live beside it (mcp-response.ts, mcp-routes.ts).
// MCP in the Worker: a server object's configured MCP servers connected over Streamable HTTP with
// the MCP SDK's StreamableHTTPClientTransport over `fetch`, and their Tools as `<server>_<tool>`
// ToolDefinitions a runner can offer. Local (stdio) entries are never started: their status is
// the reference's typed outcome, "Local stdio is unavailable because Workers cannot spawn local
// processes; the Worker does not emulate stdio or silently fall back to HTTP" — no emulation and
// no fallback to HTTP. An OAuth credential reference resolves through the `oauth` lifecycle the
// server object composes (worker/oauth.ts: the token per request, one refresh after a 401);
// without one, such a server is `authorization_required` and nothing is sent to it.
//
// The Node host's McpHost (services/mcp/host.ts) cannot join the Worker bundle: its connection
// module imports the stdio transport (node:child_process, missing in workerd). This file composes
// the Worker-safe parts of services/mcp instead — the entry checks (config.ts), credential
// references (credentials.ts), protocol negotiation, redirects, limits, the catalog reader and
// the result mapping — with the SDK client validating tool output through its Cloudflare
// validator (@cfworker/json-schema: Ajv generates code, which workerd forbids). A list-changed
// notification re-reads the server's catalog (worker/mcp-list-changed.ts), as on Node.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { McpError, PromptListChangedNotificationSchema, ResourceListChangedNotificationSchema, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import type { ServerCapabilities } from "@modelcontextprotocol/sdk/types.js";
import type { McpCatalogTool } from "../generated/client/types.gen.js";
import type { Env } from "../services/config/paths.js";
import type { McpServer } from "../services/config/types.js";
import { readCatalog, type CatalogLists } from "../services/mcp/catalog.js";
import { resolveMcpServers, sanitizeToolName, type ResolvedMcpServer } from "../services/mcp/config.js";
import { ServerUnavailable, type McpFailureReason, type McpServerState } from "../services/mcp/status.js";
import { toolInputSchema } from "../services/mcp/tools.js";
import { AuthorizationRequired, CredentialUnresolved, resolveCredentialMap, resolveReference, type McpCredentialResolvers } from "../services/mcp/credentials.js";
import { bounded, isLimitReached, MAX_TIMER_MS } from "../services/mcp/limits.js";
import { NegotiatingTransport, ProtocolVersionRejected } from "../services/mcp/negotiate.js";
import { followingRedirects } from "../services/mcp/redirects.js";
import { mapToolResult, McpToolFailure, resourceContent, resultText, type ResultLimits } from "../services/mcp/results.js";
import type { RegisteredTool } from "../services/tools/registry.js";
import type { PermissionProjection, ToolContext, ToolDefinition, ToolOutput } from "../services/tools/tool.js";
import { rereadCatalog } from "./mcp-list-changed.js";
import { boundedResponse, MAX_MCP_RESPONSE_BYTES, tooLarge } from "./mcp-response.js";
// Tool inputs are checked by the interpreter worker/tools.ts installs in every Worker bundle (no
// Ajv in workerd); importing it here would install it in any Node process that imports this module.

export { MAX_MCP_RESPONSE_BYTES, McpResponseTooLarge } from "./mcp-response.js";

/** The reference's words for a local (stdio) MCP server on this host. */
export const LOCAL_STDIO_UNAVAILABLE = "Local stdio is unavailable because Workers cannot spawn local processes; the Worker does not emulate stdio or silently fall back to HTTP";

/** The suffix of a server's resource-reading Tool (as on Node). */
export const READ_RESOURCE_TOOL = "read-resource";

/**
 * How long after the servers started a Turn or an MCP route waits for their first connection
 * attempts (anchored at the start, as on Node's DEFAULT_READY_WAIT_MS): later, nothing waits.
 */
export const DEFAULT_READY_WAIT_MS = 5_000;

/** Longest error text passed on from an `isError` result (as on Node). */
const MAX_ERROR_TEXT = 4_000;
type Json = Record<string, unknown>;

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
  /** The OAuth lifecycle `transport.oauth` references resolve through (absent: `authorization_required`). */
  readonly oauth?: WorkerMcpOAuth;
  /** How long reads wait for the first connection attempts after the start (default DEFAULT_READY_WAIT_MS). */
  readonly readyWaitMs?: number;
}

/** The part of an OAuth lifecycle (services/mcp/oauth.ts's McpOAuth) the transport uses. */
export interface WorkerMcpOAuth {
  /** The current access token (refreshed first when close to its expiry); undefined: none, the user must authorize. */
  accessToken(reference: string, endpoint?: string): Promise<string | undefined>;
  /** The token after the server rejected `stale` (one refresh per credential at a time); undefined: none. */
  refresh(reference: string, endpoint: string | undefined, stale: string): Promise<string | undefined>;
}

/** One configured server's state, as the Node host reports it (`McpServerState`). */
export interface WorkerMcpServerStatus {
  readonly id: string;
  readonly name: string;
  readonly status: McpServerState;
}

/** What a connected server offers (as Node's ConnectedServer). */
export interface WorkerMcpConnected {
  readonly client: Client;
  readonly lists: CatalogLists;
  readonly protocolVersion: string;
  readonly capabilities: ServerCapabilities;
  readonly instructions: string | undefined;
  readonly revision: number;
}

/** One configured server as the routes see it. */
export interface WorkerMcpSlot {
  readonly server: ResolvedMcpServer;
  readonly status: McpServerState;
  readonly connected: WorkerMcpConnected | undefined;
}

interface Slot {
  readonly server: ResolvedMcpServer;
  status: McpServerState;
  connected: WorkerMcpConnected | undefined;
  /** The attempt running now (a start, a retry or a reconnect). */
  attempt: Promise<void> | undefined;
  /** Attempts since the last connection or requested reconnect (the first counts), as on Node. */
  attempts: number;
  /** When the policy's next retry is due (`retrying` statuses only). */
  retryAt: number | undefined;
  /** A list-changed notification arrived since the catalog was last read (worker/mcp-list-changed.ts). */
  stale: boolean;
  /** The catalog re-read running now. */
  reread: Promise<void> | undefined;
}

type Failure = { readonly reason: McpFailureReason; readonly retryable: boolean; readonly message: string };

/** A failed attempt's reason and whether the reconnect policy may retry it (the Node host's rule: credential, authorization and protocol failures never are). */
function classify(error: unknown, transport: NegotiatingTransport | undefined, authFailed: boolean): Failure {
  const message = error instanceof Error ? error.message : String(error);
  if (transport?.rejected) return { reason: "protocol_version", retryable: false, message: transport.rejected.message };
  if (authFailed && !(error instanceof AuthorizationRequired)) return { reason: "authorization_required", retryable: false, message: "the server refused the OAuth credential" };
  if (error instanceof ProtocolVersionRejected) return { reason: "protocol_version", retryable: false, message };
  if (error instanceof AuthorizationRequired) return { reason: "authorization_required", retryable: false, message };
  if (error instanceof CredentialUnresolved) return { reason: "credential_unresolved", retryable: false, message };
  if (isLimitReached(error)) return { reason: "limit_reached", retryable: true, message };
  const large = tooLarge(error);
  if (large !== undefined) return { reason: "limit_reached", retryable: true, message: large.message };
  return { reason: "connection_failed", retryable: true, message };
}

/**
 * The MCP servers of one server object. `start()` connects every enabled remote server once (a
 * failure is that server's status and never affects another); `tools()` offers the connected
 * servers' Tools at that moment; `close()` ends every session.
 *
 * Reconnects follow each server's `reconnect` policy with the Node host's statuses, but a retry
 * runs on the next use, not on a timer (see "The MCP reconnect policy" in worker/README.md): a
 * retryable failure under `retry` is `failed` with `retrying: true` and `retryAt` = now +
 * `delayMs`; the first use at or after that moment (a Turn's lease or model request, a catalog,
 * prompt or resource read) starts the next attempt in the background — only a prompt or resource
 * read of that server waits for it, at most `readyWaitMs` — until `maxAttempts` (counting the
 * first) is reached, then `retrying: false`. `manual` servers,
 * and servers past `maxAttempts`, stay failed until {@link reconnect} (the host's request) or,
 * for an OAuth server, its credential being authorized ({@link reconnectUsing}).
 */
export class WorkerMcpHost {
  readonly #options: WorkerMcpOptions;
  readonly #slots: Slot[];
  readonly #byName = new Map<string, Slot>();
  readonly #toolCache = new Map<string, { revision: number; entries: RegisteredTool[] }>();
  #started: Promise<void> | undefined;
  #startedAt: number | undefined;
  #closed = false;
  #revision = 0;
  #connections = 0;

  constructor(options: WorkerMcpOptions) {
    this.#options = options;
    this.#slots = resolveMcpServers(options.servers).map((server) => ({
      server,
      connected: undefined,
      attempt: undefined,
      attempts: 0,
      retryAt: undefined,
      stale: false,
      reread: undefined,
      status: !server.enabled
        ? { state: "disabled" }
        : server.definition.kind === "local"
          ? { state: "failed", reason: "spawn_failed", message: LOCAL_STDIO_UNAVAILABLE, attempts: 0, retrying: false }
          : { state: "connecting", attempt: 0 },
    }));
    for (const slot of this.#slots) this.#byName.set(slot.server.name, slot);
  }

  /** Connects the enabled remote servers (once; later calls wait for the same attempt). */
  start(): Promise<void> {
    if (this.#started === undefined) {
      this.#startedAt = Date.now();
      this.#started = Promise.all(this.#slots.filter((slot) => slot.status.state === "connecting").map((slot) => this.#attempt(slot))).then(() => undefined);
    }
    return this.#started;
  }

  /**
   * Starts the servers and waits for their first attempts, never past `readyWaitMs` after they
   * started; starts the retries that are due without waiting for them (a Turn or a catalog read
   * never waits on a retry, as on Node, where retries run in the background); then waits for the
   * catalog re-reads list-changed notifications asked for (worker/mcp-list-changed.ts).
   */
  async ready(): Promise<void> {
    const started = this.start();
    const left = (this.#options.readyWaitMs ?? DEFAULT_READY_WAIT_MS) - (Date.now() - (this.#startedAt ?? Date.now()));
    await within(started, left);
    void this.#retries();
    // A catalog a list-changed notification made stale is read again first (each read bounded by its `catalogMs`).
    await Promise.all(this.#slots.map((slot) => (slot.stale || slot.reread !== undefined ? this.#reread(slot) : undefined)));
  }

  /** Starts the attempt of every server (or only `only`) whose policy retry is due; resolves when they settled. */
  async #retries(only?: Slot): Promise<void> {
    if (this.#closed || this.#started === undefined) return;
    const now = Date.now();
    const due = this.#slots.filter((slot) => (only === undefined || slot === only) && slot.attempt === undefined && slot.retryAt !== undefined && slot.retryAt <= now && slot.status.state === "failed" && slot.status.retrying);
    await Promise.all(due.map((slot) => this.#attempt(slot)));
  }

  /**
   * The host's request to reconnect the server `name` (the reference's "until the host requests a
   * reconnect"): a new attempt now unless it is connected or connecting, with its attempts counted
   * from zero again; waits for it at most `readyWaitMs`. False when no such server is configured.
   */
  async reconnect(name: string): Promise<boolean> {
    const slot = this.#byName.get(name);
    if (slot === undefined) return false;
    void this.start();
    const { server } = slot;
    if (this.#closed || !server.enabled || server.definition.kind !== "remote" || slot.connected !== undefined) return true;
    if (slot.attempt === undefined) {
      slot.attempts = 0;
      slot.retryAt = undefined;
      void this.#attempt(slot);
    }
    await within(slot.attempt!, this.#options.readyWaitMs ?? DEFAULT_READY_WAIT_MS);
    return true;
  }

  /** The catalog's revision: it moves whenever a server connects, drops or is re-read. */
  get revision(): number {
    return this.#revision;
  }

  statuses(): WorkerMcpServerStatus[] {
    return this.#slots.map((slot) => ({ id: slot.server.id, name: slot.server.name, status: slot.status }));
  }

  /** Every configured server in the reference's order (the catalog's view). */
  slots(): readonly WorkerMcpSlot[] {
    return this.#slots;
  }

  /** The server named `name`, if one is configured. */
  slot(name: string): WorkerMcpSlot | undefined {
    return this.#byName.get(name);
  }

  /**
   * Waits (bounded like `ready`) for the server's running attempt, starting the servers first;
   * a due retry of that server — a prompt or resource read of it would otherwise fail — is
   * started and waited for at most `readyWaitMs`.
   */
  async settled(name: string): Promise<void> {
    void this.start();
    const slot = this.#byName.get(name);
    const left = (this.#options.readyWaitMs ?? DEFAULT_READY_WAIT_MS) - (Date.now() - (this.#startedAt ?? Date.now()));
    if (slot?.attempt !== undefined) await within(slot.attempt, left);
    if (slot !== undefined) await within(this.#retries(slot), this.#options.readyWaitMs ?? DEFAULT_READY_WAIT_MS);
  }

  /** The Tools of the servers connected now, `<server>_<tool>`, in server order then the server's tool order. */
  tools(): ToolDefinition<Json>[] {
    return this.toolEntries().map((entry) => entry.tool as ToolDefinition<Json>);
  }

  /** {@link tools} in the tool registry's shape (`{ kind: "mcp", server: <server id> }`), stable per catalog revision. */
  toolEntries(): RegisteredTool[] {
    // Each model request is a use: retries that are due start now (their Tools join a later request).
    void this.#retries();
    const slots = this.#slots.filter((slot) => slot.connected !== undefined).sort((a, b) => a.server.order - b.server.order || (a.server.name < b.server.name ? -1 : a.server.name > b.server.name ? 1 : 0));
    return slots.flatMap((slot) => {
      const connected = slot.connected!;
      let cached = this.#toolCache.get(slot.server.id);
      if (cached?.revision !== connected.revision) {
        const source = { kind: "mcp" as const, server: slot.server.id };
        const tools = [...connected.lists.tools.map((tool) => this.#tool(slot, tool)), ...(slot.server.resourceReadTool ? [this.#readResourceTool(slot) as unknown as ToolDefinition<Json>] : [])];
        cached = { revision: connected.revision, entries: tools.map((tool) => ({ tool, source })) };
        this.#toolCache.set(slot.server.id, cached);
      }
      return cached.entries;
    });
  }

  /** The handshake instructions of the connected servers, in server order. */
  instructions(): { readonly server: string; readonly text: string }[] {
    return this.#slots.flatMap(({ server, connected }) => (connected?.instructions ? [{ server: server.name, text: connected.instructions }] : []));
  }

  /**
   * A new connection attempt of every enabled remote server using OAuth `reference` that is not
   * connected (its credential was just authorized), waited for at most `readyWaitMs`.
   */
  async reconnectUsing(reference: string): Promise<void> {
    if (this.#closed) return;
    const attempts = this.#slots
      .filter((slot) => slot.server.enabled && slot.server.definition.kind === "remote" && slot.server.oauthReference === reference && slot.connected === undefined)
      .map((slot) => {
        if (slot.attempt === undefined) (slot.attempts = 0), (slot.retryAt = undefined);
        return slot.attempt ?? this.#attempt(slot);
      });
    await within(Promise.all(attempts), this.#options.readyWaitMs ?? DEFAULT_READY_WAIT_MS);
  }

  /** Drops the live connections using OAuth `reference` (its credential was forgotten): `authorization_required` until authorized again. */
  async retireUsing(reference: string, message: string): Promise<void> {
    await Promise.all(
      this.#slots
        .filter((slot) => slot.server.oauthReference === reference && slot.server.enabled && slot.server.definition.kind === "remote")
        .map(async (slot) => {
          const live = slot.connected;
          slot.connected = undefined;
          slot.retryAt = undefined;
          slot.status = { state: "failed", reason: "authorization_required", message, attempts: slot.attempts, retrying: false };
          if (live !== undefined) this.#revision += 1;
          await live?.client.close().catch(() => undefined);
        }),
    );
  }

  /** One request to the connected server `name` under its `executionMs` and the caller's signal; ServerUnavailable when it is not connected. */
  async request<T>(slot: WorkerMcpSlot, work: (client: Client, signal: AbortSignal) => Promise<T>, signal?: AbortSignal): Promise<T> {
    const connected = slot.connected;
    if (connected === undefined) throw new ServerUnavailable(slot.server.name, slot.status);
    return bounded((bound) => work(connected.client, bound), { ms: slot.server.limits.executionMs, limit: "executionMs", signal });
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

  #attempt(slot: Slot): Promise<void> {
    const running = this.#connect(slot).finally(() => {
      if (slot.attempt === running) slot.attempt = undefined;
    });
    slot.attempt = running;
    return running;
  }

  async #connect(slot: Slot): Promise<void> {
    const { server } = slot;
    if (server.definition.kind !== "remote") return;
    const definition = server.definition;
    slot.attempts += 1;
    slot.status = { state: "connecting", attempt: slot.attempts };
    const client = new Client(this.#options.clientInfo ?? { name: "ze-harness-worker", version: "1" }, { capabilities: {}, jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
    let negotiating: NegotiatingTransport | undefined;
    const auth = { failed: false };
    try {
      const lifecycle = this.#options.oauth;
      // `oauth` references in headers resolve through the lifecycle too (absent: `authorization_required`).
      const resolvers: McpCredentialResolvers = { env: this.#options.env, secret: this.#options.secret, ...(lifecycle !== undefined ? { oauth: (ref: string) => lifecycle.accessToken(ref) } : {}) };
      const headers = await resolveCredentialMap(definition.transport.headers, resolvers);
      const reference = server.oauthReference;
      const oauth = reference !== undefined ? lifecycle : undefined;
      const endpoint = definition.transport.endpoint;
      // Without a lifecycle, or without a usable token, nothing is sent: the user authorizes first.
      if (reference !== undefined && oauth === undefined) await resolveReference({ kind: "oauth", reference }, resolvers);
      let token = reference !== undefined && oauth !== undefined ? await oauth.accessToken(reference, endpoint) : undefined;
      if (reference !== undefined && token === undefined) throw new AuthorizationRequired(reference);
      const base: FetchLike = this.#options.fetch ?? ((url, init) => globalThis.fetch(url, init));
      const following = followingRedirects(base, { hops: this.#options.redirectHops, credentialHeaders: Object.keys(headers) });
      const maxBytes = this.#options.maxResponseBytes ?? MAX_MCP_RESPONSE_BYTES;
      const lost = (): AuthorizationRequired => {
        auth.failed = true;
        const error = new AuthorizationRequired(reference!);
        if (slot.connected?.client === client) queueMicrotask(() => void this.retireUsing(reference!, error.message));
        return error;
      };
      const withHeaders: FetchLike = async (url, init) => {
        const send = (bearer: string | undefined) => {
          const merged = new Headers(init?.headers);
          for (const [name, value] of Object.entries(headers)) merged.set(name, value);
          if (bearer !== undefined) merged.set("authorization", `Bearer ${bearer}`);
          return following(url, { ...init, headers: merged });
        };
        if (reference !== undefined && oauth !== undefined) {
          // Per request: a token close to its expiry is refreshed first.
          token = await oauth.accessToken(reference, endpoint);
          if (token === undefined) throw lost();
        }
        let response = await send(token);
        if (response.status === 401 && reference !== undefined && oauth !== undefined) {
          await response.body?.cancel().catch(() => undefined);
          const refreshed = await oauth.refresh(reference, endpoint, token!);
          if (refreshed === undefined) throw lost();
          token = refreshed;
          response = await send(token);
          if (response.status === 401) auth.failed = true;
        }
        return boundedResponse(response, maxBytes, (init?.method ?? "GET").toUpperCase() === "GET");
      };
      const transport = new StreamableHTTPClientTransport(new URL(endpoint), { fetch: withHeaders, redirectPolicy: "follow" });
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
      slot.connected = {
        client,
        lists,
        protocolVersion: negotiating.negotiated ?? server.protocolVersions[0]!,
        capabilities: client.getServerCapabilities() ?? {},
        instructions: client.getInstructions(),
        revision: ++this.#connections,
      };
      slot.attempts = 0;
      slot.retryAt = undefined;
      this.#revision += 1;
      slot.status = { state: "connected", protocolVersion: slot.connected.protocolVersion };
      slot.stale = false;
      // As on Node: a list-changed notification (on the GET stream or in any answer) re-reads the catalog.
      for (const schema of [ToolListChangedNotificationSchema, ResourceListChangedNotificationSchema, PromptListChangedNotificationSchema]) {
        client.setNotificationHandler(schema, () => {
          if (slot.connected?.client !== client) return;
          slot.stale = true;
          void this.#reread(slot);
        });
      }
      client.onclose = () => {
        if (this.#closed || slot.connected?.client !== client) return;
        slot.connected = undefined;
        slot.attempts = 0;
        this.#revision += 1;
        this.#failed(slot, { reason: "disconnected", retryable: true, message: "the connection to the server was lost" });
      };
    } catch (error) {
      await client.close().catch(() => undefined);
      if (this.#closed) return;
      this.#failed(slot, classify(error, negotiating, auth.failed));
    }
  }

  /**
   * Reads a stale catalog again under its `catalogMs` until no notification arrived during the
   * read (one read at a time per server). The connection's revision and the host's move, as Node's
   * McpConnection does; a failed read keeps the last catalog and leaves it stale for the next use.
   */
  #reread(slot: Slot): Promise<void> {
    slot.reread ??= rereadCatalog(slot, {
      read: (client, signal) => readCatalog(client, signal),
      revised: (connected, lists) => {
        slot.connected = { ...connected, lists, revision: ++this.#connections };
        this.#revision += 1;
      },
    }).finally(() => (slot.reread = undefined));
    return slot.reread;
  }

  /** A failed attempt's status under the server's reconnect policy (as Node's McpConnection words it). */
  #failed(slot: Slot, failure: Failure): void {
    const policy = slot.server.reconnect;
    const retrying = failure.retryable && policy.kind === "retry" && (policy.maxAttempts === undefined || slot.attempts < policy.maxAttempts);
    slot.retryAt = retrying && policy.kind === "retry" ? Date.now() + policy.delayMs : undefined;
    slot.status = { state: "failed", reason: failure.reason, message: failure.message, attempts: slot.attempts, retrying };
  }

  #tool(slot: Slot, tool: McpCatalogTool): ToolDefinition<Json> {
    const server = slot.server;
    const id = `${server.toolPrefix}_${sanitizeToolName(tool.name)}`;
    const limits = this.#options.results ?? { maxImageBase64Bytes: undefined };
    return {
      id,
      description: tool.description ?? tool.title ?? `The ${tool.name} Tool of the MCP server ${server.name}.`,
      inputSchema: toolInputSchema(tool.inputSchema),
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

/** Waits for `work`, but at most `ms` (≤ 0: not at all). */
async function within(work: Promise<unknown>, ms: number): Promise<void> {
  if (ms <= 0) return;
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([work.then(() => undefined), new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}
