// One configured MCP server: its connection attempts (transport, initialize with the negotiated
// protocol version, the catalog read, all under `startupMs`), its reconnect policy, its catalog
// re-reads on list-changed notifications (`catalogMs`), its bounded requests (`executionMs`) and
// its shutdown. A failure is a status with a reason, never an exception that escapes the host.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { FetchLike, Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
  type ServerCapabilities,
} from "@modelcontextprotocol/sdk/types.js";
import { readCatalog, type CatalogLists } from "./catalog.js";
import type { ResolvedMcpServer } from "./config.js";
import { AuthorizationRequired, CredentialUnresolved, inheritedEnvironment, resolveCredentialMap, resolveReference, type McpCredentialResolvers } from "./credentials.js";
import { bounded, isLimitReached, MAX_TIMER_MS } from "./limits.js";
import { NegotiatingTransport, ProtocolVersionRejected } from "./negotiate.js";
import { followingRedirects } from "./redirects.js";
import { OwnedStdioTransport, SpawnFailed, type StdioLifecycleLimits } from "./stdio.js";
import type { CommandSandbox } from "../sandbox/index.js";
import { ServerUnavailable, type McpFailureReason, type McpServerState } from "./status.js";

// Split out (services/mcp/status.ts) so hosts without stdio (the Worker) share the status and
// ServerUnavailable without this module, which imports the stdio transport.
export { ServerUnavailable, type McpFailureReason, type McpServerState } from "./status.js";

/** What a connected server offers. */
export interface ConnectedServer {
  readonly protocolVersion: string;
  readonly capabilities: ServerCapabilities;
  readonly instructions: string | undefined;
  readonly revision: number;
  readonly lists: CatalogLists;
}

export interface ConnectionDeps {
  readonly resolvers: McpCredentialResolvers;
  /** Forces a refresh of an OAuth credential after the server answered 401; its new access token. */
  readonly refreshOAuth?: ((reference: string, rejected: string) => Promise<string | undefined>) | undefined;
  readonly lifecycle: StdioLifecycleLimits;
  /** The most redirects one streamable HTTP request may follow (undefined: unlimited). */
  readonly redirectHops?: number | undefined;
  readonly cwd: string;
  /** The OS sandbox a local server runs in (absent: unsandboxed). */
  readonly sandbox?: CommandSandbox | undefined;
  readonly clientInfo: { readonly name: string; readonly version: string };
  /** Called after every status or catalog change. */
  readonly onChange: () => void;
  readonly onWarning?: ((message: string) => void) | undefined;
}

function classify(error: unknown, transport: NegotiatingTransport | undefined, authFailed: boolean): { reason: McpFailureReason; retryable: boolean; message: string } {
  const message = error instanceof Error ? error.message : String(error);
  if (transport?.rejected) return { reason: "protocol_version", retryable: false, message: transport.rejected.message };
  if (authFailed || error instanceof AuthorizationRequired) return { reason: "authorization_required", retryable: false, message: error instanceof AuthorizationRequired ? message : "the server refused the OAuth credential" };
  if (error instanceof SpawnFailed) return { reason: "spawn_failed", retryable: false, message };
  if (error instanceof CredentialUnresolved) return { reason: "credential_unresolved", retryable: false, message };
  if (error instanceof ProtocolVersionRejected) return { reason: "protocol_version", retryable: false, message };
  if (isLimitReached(error)) return { reason: "limit_reached", retryable: true, message };
  if (error instanceof CatalogFailed) return { reason: "catalog_failed", retryable: true, message };
  return { reason: "connection_failed", retryable: true, message };
}

class CatalogFailed extends Error {}

export class McpConnection {
  private statusValue: McpServerState;
  private current: { client: Client; transport: NegotiatingTransport; info: ConnectedServer } | undefined;
  private attempting: { client: Client; transport: Transport | undefined } | undefined;
  private attempts = 0;
  private revision = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly lifetime = new AbortController();
  private firstAttempt: Promise<void> | undefined;
  private running: Promise<void> | undefined;

  constructor(
    readonly server: ResolvedMcpServer,
    private readonly deps: ConnectionDeps,
  ) {
    this.statusValue = server.enabled ? { state: "connecting", attempt: 0 } : { state: "disabled" };
  }

  get status(): McpServerState {
    return this.statusValue;
  }

  /** What the server offers while it is connected. */
  get connected(): ConnectedServer | undefined {
    return this.current?.info;
  }

  /** Starts the first attempt (once); resolves when it settled, connected or not. */
  start(): Promise<void> {
    if (!this.server.enabled) return Promise.resolve();
    this.firstAttempt ??= this.attempt();
    return this.firstAttempt;
  }

  /** A manual reconnect: a new attempt now unless connected or already connecting. */
  reconnect(): Promise<void> {
    if (!this.server.enabled || this.closed) return Promise.resolve();
    if (this.current) return Promise.resolve();
    if (this.running) return this.running;
    this.attempts = 0;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    return this.attempt();
  }

  /** Drops the live connection (its credential was forgotten); it stays down until {@link reconnect}. */
  async retire(message: string): Promise<void> {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    const live = this.current;
    this.current = undefined;
    this.setStatus({ state: "failed", reason: "authorization_required", message, attempts: this.attempts, retrying: false });
    await live?.client.close().catch(() => undefined);
  }

  /** Runs one request against the connected server under `executionMs` and the caller's signal. */
  async request<T>(work: (client: Client, signal: AbortSignal) => Promise<T>, signal?: AbortSignal): Promise<T> {
    const live = this.current;
    if (!live) throw new ServerUnavailable(this.server.name, this.statusValue);
    return bounded((bound) => work(live.client, bound), { ms: this.server.limits.executionMs, limit: "executionMs", signal });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.lifetime.abort();
    const live = this.current;
    const attempting = this.attempting;
    this.current = undefined;
    await Promise.all([live?.client.close().catch(() => undefined), attempting?.client.close().catch(() => undefined), attempting?.transport?.close().catch(() => undefined)]);
    await this.running?.catch(() => undefined);
    this.setStatus({ state: "closed" });
  }

  private setStatus(status: McpServerState): void {
    this.statusValue = status;
    this.deps.onChange();
  }

  private attempt(): Promise<void> {
    this.running = this.runAttempt().finally(() => (this.running = undefined));
    return this.running;
  }

  private async runAttempt(): Promise<void> {
    if (this.closed) return;
    this.attempts += 1;
    this.setStatus({ state: "connecting", attempt: this.attempts });
    let negotiating: NegotiatingTransport | undefined;
    const auth = { failed: false };
    const client = new Client(this.deps.clientInfo, { capabilities: {} });
    this.attempting = { client, transport: undefined };
    try {
      const info = await bounded(
        async (signal) => {
          const transport = await this.createTransport(auth);
          negotiating = new NegotiatingTransport(transport, this.server.protocolVersions);
          this.attempting = { client, transport: negotiating };
          if (signal.aborted) throw signal.reason;
          await client.connect(negotiating, { signal, timeout: MAX_TIMER_MS });
          const lists = await this.readLists(client, signal);
          return {
            protocolVersion: negotiating.negotiated ?? this.server.protocolVersions[0]!,
            capabilities: client.getServerCapabilities() ?? {},
            instructions: client.getInstructions(),
            revision: ++this.revision,
            lists,
          } satisfies ConnectedServer;
        },
        { ms: this.server.limits.startupMs, limit: "startupMs", signal: this.lifetime.signal },
      );
      this.attempting = undefined;
      if (this.closed) {
        await client.close().catch(() => undefined);
        return;
      }
      this.current = { client, transport: negotiating!, info };
      this.attempts = 0;
      client.onclose = () => this.lost(client);
      for (const schema of [ToolListChangedNotificationSchema, ResourceListChangedNotificationSchema, PromptListChangedNotificationSchema]) {
        client.setNotificationHandler(schema, () => void this.reread(client));
      }
      this.setStatus({ state: "connected", protocolVersion: info.protocolVersion });
    } catch (error) {
      this.attempting = undefined;
      await client.close().catch(() => undefined);
      await negotiating?.close().catch(() => undefined);
      if (this.closed) return;
      this.failed(classify(error, negotiating, auth.failed));
    }
  }

  private async readLists(client: Client, signal: AbortSignal): Promise<CatalogLists> {
    try {
      return await bounded((bound) => readCatalog(client, bound), { ms: this.server.limits.catalogMs, limit: "catalogMs", signal });
    } catch (error) {
      if (isLimitReached(error) || signal.aborted) throw error;
      throw new CatalogFailed(`reading the catalog failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  private failed(failure: { reason: McpFailureReason; retryable: boolean; message: string }): void {
    const policy = this.server.reconnect;
    const retrying = failure.retryable && policy.kind === "retry" && (policy.maxAttempts === undefined || this.attempts < policy.maxAttempts);
    this.setStatus({ state: "failed", reason: failure.reason, message: failure.message, attempts: this.attempts, retrying });
    if (retrying && policy.kind === "retry") {
      this.retryTimer = setTimeout(() => {
        this.retryTimer = undefined;
        void this.attempt();
      }, policy.delayMs);
      this.retryTimer.unref();
    }
  }

  /** The live connection closed without us closing it. */
  private lost(client: Client): void {
    if (this.closed || this.current?.client !== client) return;
    this.current = undefined;
    this.attempts = 0;
    this.deps.onWarning?.(`MCP server ${JSON.stringify(this.server.name)} disconnected`);
    this.failed({ reason: "disconnected", retryable: true, message: "the connection to the server was lost" });
  }

  private async reread(client: Client): Promise<void> {
    const live = this.current;
    if (!live || live.client !== client) return;
    try {
      const lists = await this.readLists(client, this.lifetime.signal);
      if (this.current?.client !== client) return;
      this.current = { ...live, info: { ...live.info, lists, revision: ++this.revision } };
      this.deps.onChange();
    } catch (error) {
      this.deps.onWarning?.(`MCP server ${JSON.stringify(this.server.name)}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /** The credential is gone: a live connection is retired (its Tools are no longer offered) until the user authorizes again. */
  private authorizationLost(auth: { failed: boolean }, reference: string): AuthorizationRequired {
    auth.failed = true;
    const error = new AuthorizationRequired(reference);
    if (this.current) queueMicrotask(() => void this.retire(error.message));
    return error;
  }

  private async createTransport(auth: { failed: boolean }): Promise<Transport> {
    const { definition } = this.server;
    const resolvers = this.deps.resolvers;
    if (definition.kind === "local") {
      const configured = await resolveCredentialMap(definition.transport.environment, resolvers);
      return new OwnedStdioTransport({
        command: definition.transport.command,
        args: definition.transport.arguments ?? [],
        env: { ...inheritedEnvironment(resolvers.env), ...configured },
        cwd: this.deps.cwd,
        limits: this.deps.lifecycle,
        sandbox: this.deps.sandbox,
      });
    }
    const headers = await resolveCredentialMap(definition.transport.headers, resolvers);
    const reference = this.server.oauthReference;
    // Without a usable token nothing is sent: the user authorizes first.
    let token = reference === undefined ? undefined : await resolveReference({ kind: "oauth", reference }, resolvers);
    // Redirects are followed here: credential and session headers stay with the endpoint's origin.
    const following = followingRedirects(fetch, { hops: this.deps.redirectHops, credentialHeaders: Object.keys(headers) });
    const fetchWithCredentials: FetchLike = async (url, init) => {
      const send = (bearer: string | undefined) => {
        const merged = new Headers(init?.headers);
        for (const [name, value] of Object.entries(headers)) merged.set(name, value);
        if (bearer !== undefined) merged.set("authorization", `Bearer ${bearer}`);
        return following(url, { ...init, headers: merged });
      };
      if (reference !== undefined) {
        // Resolved per request: a token close to its expiry is refreshed first.
        token = await resolvers.oauth?.(reference);
        if (token === undefined) throw this.authorizationLost(auth, reference);
      }
      let response = await send(token);
      if (response.status === 401 && reference !== undefined) {
        await response.body?.cancel().catch(() => undefined);
        const refreshed = await this.deps.refreshOAuth?.(reference, token!);
        if (refreshed === undefined) throw this.authorizationLost(auth, reference);
        token = refreshed;
        response = await send(token);
        if (response.status === 401) auth.failed = true;
      }
      return response;
    };
    return new StreamableHTTPClientTransport(new URL(definition.transport.endpoint), { fetch: fetchWithCredentials, redirectPolicy: "follow" });
  }
}
