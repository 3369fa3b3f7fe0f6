// Longer than ~400 lines on purpose: one host owns every server's connection, catalog, tools,
// prompts, resources and OAuth lifecycle; splitting it would pass the connection map around.
// McpHost: every configured MCP server of one host. It starts them lazily (the first catalog,
// tools, prompt or resource use, or start()), keeps one McpConnection each, and answers the
// contract's MCP operations: the catalog of the connected servers, the Tools a model request may
// use at this moment, prompt resolution, resource reads and the OAuth credential lifecycle. A
// server that fails is a status; nothing it does breaks another server or the host.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type {
  McpCatalogServer,
  McpCatalogSnapshot,
  McpCredentialCallback,
  McpCredentialForgetResponse,
  McpCredentialStartResponse,
  McpCredentialStatus,
  McpResourceReadResult,
  McpServerKind,
  McpUnavailableServer,
  PromptPart,
  StartMcpCredentialRequest,
} from "../../generated/client/types.gen.js";
import type { Env } from "../config/paths.js";
import type { Config, Limit, McpServer } from "../config/types.js";
import { notFound, unavailable } from "../contract/failure.js";
import { authFileLocation, type AuthFileLocation } from "../providers/auth-file.js";
import { injectedCredentialsOf } from "../providers/injected.js";
import type { RegisteredTool } from "../tools/registry.js";
import type { AnyToolDefinition } from "../tools/tool.js";
import { CALLBACK_PORT_VARIABLE, callbackUrl, DEFAULT_CALLBACK_PORT } from "./callback.js";
import { capabilitiesOf } from "./catalog.js";
import { resolveMcpServers, type ResolvedMcpServer } from "./config.js";
import { McpConnection, ServerUnavailable, type McpServerState } from "./connection.js";
import { unavailableServer } from "./status.js";
import { limitMs } from "./limits.js";
import { McpOAuth } from "./oauth.js";
import { checkAdvertised, checkedPrompt, promptParts, resourceReadResult } from "./prompts.js";
import type { ResultLimits } from "./results.js";
import type { StdioLifecycleLimits } from "./stdio.js";
import type { CommandSandbox } from "../sandbox/index.js";
import { mcpTool, readResourceTool } from "./tools.js";
import { credentialOperations, requestFailure } from "./operations.js";

/** Stdio lifecycle limits unless the caller configures them: none (a close SIGTERMs at once and waits for the whole tree). */
export const DEFAULT_LIFECYCLE: StdioLifecycleLimits = {};
/**
 * How long after the servers start an operation may wait for their first connection attempts
 * (a catalog read, a prompt or resource of a server still connecting). The deadline is anchored
 * at the start, not at each read: once it passed, reads answer at once with what is connected
 * and list the rest as `connecting` or `failed`, so a server that never answers can delay reads
 * by at most this much once, never each read by its own timeout (it was 30 s per read).
 */
export const DEFAULT_READY_WAIT_MS = 5_000;

export interface McpHostOptions {
  /** The config's `mcp` entries. */
  readonly servers?: readonly McpServer[] | undefined;
  /** `images.maxBase64Bytes`, also applied to Tool images. */
  readonly images?: { readonly maxBase64Bytes?: Limit | undefined } | undefined;
  /** The host environment: `environment` references, PATH/temp variables for children, auth.json's place. */
  readonly env: Env;
  /** Working directory of local servers. */
  readonly cwd: string;
  /** Resolves `secret` references (absent: they are unresolvable). */
  readonly secrets?: ((reference: string) => string | undefined | Promise<string | undefined>) | undefined;
  /** Where OAuth credentials are stored (default: the global auth.json of `env`). */
  readonly authFile?: AuthFileLocation | undefined;
  /** The loopback OAuth callback port (default: ZE_HARNESS_MCP_CALLBACK_PORT, else 19876). */
  readonly callbackPort?: number | undefined;
  readonly lifecycle?: StdioLifecycleLimits | undefined;
  /** Redirects one streamable HTTP request may follow; absent: unlimited (a loop still fails). */
  readonly redirectHops?: number | undefined;
  /** The OS sandbox local servers run in (services/sandbox); absent: unsandboxed. */
  readonly sandbox?: CommandSandbox | undefined;
  readonly readyWaitMs?: number | undefined;
  readonly clientInfo?: { readonly name: string; readonly version: string } | undefined;
  readonly now?: (() => number) | undefined;
  readonly onWarning?: ((message: string) => void) | undefined;
}

/** One server as the host sees it, with its private status (for logs and `mcp` CLI diagnostics). */
export interface McpServerReport {
  readonly serverId: string;
  readonly name: string;
  readonly kind: McpServerKind;
  readonly enabled: boolean;
  readonly order: number;
  readonly status: McpServerState;
}

function callbackPortOf(options: McpHostOptions): number {
  if (options.callbackPort !== undefined) return options.callbackPort;
  const configured = Number(options.env[CALLBACK_PORT_VARIABLE]);
  return Number.isInteger(configured) && configured > 0 && configured < 65536 ? configured : DEFAULT_CALLBACK_PORT;
}

export class McpHost {
  readonly oauth: McpOAuth;
  private connections: McpConnection[];
  /** The definitions the connections were resolved from (the configured ones, then any added). */
  private readonly definitions: McpServer[];
  private readonly options: McpHostOptions;
  private readonly byName = new Map<string, McpConnection>();
  private readonly resultLimits: ResultLimits;
  private readonly readyWaitMs: number;
  private readonly toolCache = new Map<string, { revision: number; tools: AnyToolDefinition[] }>();
  private revision = 0;
  private catalogKey = "";
  private readonly listeners = new Set<() => void>();
  private started: Promise<void> | undefined;
  /** When {@link start} first ran (`performance.now()`): the reads' wait deadline is anchored here. */
  private startedAt: number | undefined;
  private closed: Promise<void> | undefined;

  /** Checks the `mcp` entries (throws `McpConfigError`); starts nothing. */
  constructor(options: McpHostOptions) {
    this.options = options;
    this.definitions = [...(options.servers ?? [])];
    const servers = resolveMcpServers(this.definitions);
    this.resultLimits = { maxImageBase64Bytes: limitMs(options.images?.maxBase64Bytes) };
    this.readyWaitMs = options.readyWaitMs ?? DEFAULT_READY_WAIT_MS;
    const port = callbackPortOf(options);
    this.oauth = new McpOAuth({
      location: options.authFile ?? authFileLocation(options.env),
      redirectUrl: (name) => callbackUrl(port, name),
      ...(options.now ? { now: options.now } : {}),
      onChange: (reference, change) => this.credentialChanged(reference, change),
    });
    this.connections = servers.map((server) => this.connectionFor(server));
  }

  /**
   * Adds servers (a plugin generation's, once it activated), checked together with the ones
   * already here (throws {@link McpConfigError}); on a started host they start connecting at once
   * and the reads' first-look deadline starts over.
   */
  add(servers: readonly McpServer[]): void {
    if (servers.length === 0 || this.closed) return;
    const resolved = resolveMcpServers([...this.definitions, ...servers]);
    this.definitions.push(...servers);
    this.connections = resolved.map((server) => this.byName.get(server.name) ?? this.connectionFor(server));
    if (this.started) {
      this.startedAt = performance.now();
      this.started = Promise.all(this.connections.map((connection) => connection.start())).then(() => undefined);
    }
    this.changed();
  }

  private connectionFor(server: ResolvedMcpServer): McpConnection {
    const options = this.options;
    const endpoint = server.definition.kind === "remote" ? server.definition.transport.endpoint : undefined;
    const injected = injectedCredentialsOf(options.env);
    const connection = new McpConnection(server, {
      // Injected-only: no environment reference resolves, and secrets and OAuth tokens come only from the embedder's resolvers.
      resolvers: injected
        ? { env: {}, secret: options.secrets ?? injected.mcpSecret, oauth: injected.mcpOAuth }
        : {
            env: options.env,
            secret: options.secrets,
            oauth: (reference) => this.oauth.accessToken(reference, reference === server.oauthReference ? endpoint : undefined),
          },
      refreshOAuth: (reference, stale) => this.oauth.refresh(reference, reference === server.oauthReference ? endpoint : undefined, stale),
      lifecycle: options.lifecycle ?? DEFAULT_LIFECYCLE,
      redirectHops: options.redirectHops,
      cwd: options.cwd,
      sandbox: options.sandbox,
      clientInfo: options.clientInfo ?? { name: "ze-harness", version: "1" },
      onChange: () => this.changed(),
      onWarning: options.onWarning,
    });
    this.byName.set(server.name, connection);
    return connection;
  }

  /** An McpHost for a loaded config (`mcp` and `images`). */
  static fromConfig(config: Config, options: Omit<McpHostOptions, "servers" | "images">): McpHost {
    return new McpHost({ ...options, servers: config.mcp, images: config.images });
  }

  /** Starts connecting every enabled server (once); resolves when each first attempt settled. */
  start(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.startedAt ??= performance.now();
    this.started ??= Promise.all(this.connections.map((connection) => connection.start())).then(() => undefined);
    return this.started;
  }

  /**
   * Starts the servers and waits for their first attempts, but never past `readyWaitMs` after
   * they started (see {@link DEFAULT_READY_WAIT_MS}): a read after that deadline waits for nothing.
   */
  async ready(): Promise<void> {
    await this.untilDeadline(this.start());
  }


  /** Calls `listener` after every status or catalog change; returns the unsubscribe function. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Resolves once `predicate` holds (checked now and after every change). */
  until(predicate: (host: McpHost) => boolean): Promise<void> {
    if (predicate(this)) return Promise.resolve();
    return new Promise((resolve) => {
      const stop = this.onChange(() => {
        if (!predicate(this)) return;
        stop();
        resolve();
      });
    });
  }

  /** Every configured server in the reference's order, with its status. */
  servers(): McpServerReport[] {
    return this.connections.map(({ server, status }) => ({
      serverId: server.id,
      name: server.name,
      kind: server.definition.kind,
      enabled: server.enabled,
      order: server.order,
      status,
    }));
  }

  /** The contract's catalog: the connected servers, without private metadata, and where the others stand. */
  catalog(): McpCatalogSnapshot {
    const servers: McpCatalogServer[] = [];
    const unavailable: McpUnavailableServer[] = [];
    for (const { server, connected, status } of this.connections) {
      if (!connected) {
        unavailable.push(unavailableServer(server, status));
        continue;
      }
      servers.push({
        origin: "host",
        serverId: server.id,
        name: server.name,
        order: server.order,
        protocolVersion: connected.protocolVersion,
        capabilities: capabilitiesOf(connected.capabilities),
        ...(connected.instructions !== undefined ? { instructions: connected.instructions } : {}),
        catalog: { revision: connected.revision, ...connected.lists },
      });
    }
    return { revision: this.revision, servers, unavailable };
  }

  /** The Tools of the servers connected now, in server order (stable definitions per catalog revision). */
  tools(): AnyToolDefinition[] {
    const out: AnyToolDefinition[] = [];
    for (const connection of this.connections) {
      const connected = connection.connected;
      if (!connected) continue;
      let cached = this.toolCache.get(connection.server.id);
      if (cached?.revision !== connected.revision) {
        const tools = connected.lists.tools.map((tool) => mcpTool(connection, tool, this.resultLimits) as AnyToolDefinition);
        if (connection.server.resourceReadTool) tools.push(readResourceTool(connection, this.resultLimits) as AnyToolDefinition);
        cached = { revision: connected.revision, tools };
        this.toolCache.set(connection.server.id, cached);
      }
      out.push(...cached.tools);
    }
    return out;
  }

  /** {@link tools} with their source, in the tool registry's shape (`{ kind: "mcp", server: <server id> }`). */
  toolEntries(): RegisteredTool[] {
    const owner = new Map<AnyToolDefinition, string>();
    for (const [serverId, cached] of this.toolCache) for (const tool of cached.tools) owner.set(tool, serverId);
    return this.tools().map((tool) => ({ tool, source: { kind: "mcp", server: owner.get(tool)! } }));
  }

  /** The handshake instructions of the connected servers, in server order (developer instructions of a model request). */
  instructions(): { readonly server: string; readonly text: string }[] {
    return this.connections.flatMap(({ server, connected }) => (connected?.instructions ? [{ server: server.name, text: connected.instructions }] : []));
  }

  /** Resolves a prompt into prompt parts (messages in order; text, images, embedded text resources). */
  async prompt(serverName: string, promptName: string, args: Readonly<Record<string, string>> = {}, signal?: AbortSignal): Promise<PromptPart[]> {
    const connection = await this.connectedServer(serverName);
    checkedPrompt(connection.connected!.lists.prompts, serverName, promptName, args);
    const result = await this.call(connection, (client, bound) => client.getPrompt({ name: promptName, arguments: { ...args } }, { signal: bound }), signal, "mcp_prompt");
    return promptParts(result, serverName);
  }

  /** Reads one resource the server's catalog advertises (listed, or matching a resource template). */
  async readResource(serverName: string, uri: string, signal?: AbortSignal): Promise<McpResourceReadResult> {
    const connection = await this.connectedServer(serverName);
    const lists = connection.connected!.lists;
    checkAdvertised(lists, serverName, uri);
    const read = await this.call(connection, (client, bound) => client.readResource({ uri }, { signal: bound }), signal, "mcp_resource");
    return resourceReadResult(read);
  }

  /** Manually reconnects a server that is down (an explicit host request). */
  async reconnect(serverName: string): Promise<void> {
    await this.connection(serverName).reconnect();
  }

  // OAuth credentials of remote servers, addressed by server name (services/mcp/operations.ts, shared with the Worker).
  private readonly credentials = credentialOperations(() => this.oauth, (serverName) => this.connection(serverName).server);
  credentialStatus(serverName: string): Promise<McpCredentialStatus> {
    return this.credentials.credentialStatus(serverName);
  }
  authorize(serverName: string, request?: StartMcpCredentialRequest): Promise<McpCredentialStartResponse> {
    return this.credentials.authorize(serverName, request);
  }
  completeAuthorization(serverName: string, callback: McpCredentialCallback): Promise<McpCredentialStatus> {
    return this.credentials.completeAuthorization(serverName, callback);
  }
  cancelAuthorization(serverName: string, generation?: number): Promise<McpCredentialStatus> {
    return this.credentials.cancelAuthorization(serverName, generation);
  }
  forgetCredential(serverName: string): Promise<McpCredentialForgetResponse> {
    return this.credentials.forgetCredential(serverName);
  }

  /** Shuts every server down and reaps every child process tree. Idempotent. */
  close(): Promise<void> {
    this.closed ??= Promise.all(this.connections.map((connection) => connection.close())).then(() => undefined);
    return this.closed;
  }

  private connection(serverName: string): McpConnection {
    const connection = this.byName.get(serverName);
    if (!connection) throw notFound("mcp_server", `No MCP server is named ${JSON.stringify(serverName)}`);
    return connection;
  }

  private async connectedServer(serverName: string): Promise<McpConnection> {
    const connection = this.connection(serverName);
    if (!this.closed) {
      void this.start();
      await this.untilDeadline(connection.start());
    }
    if (!connection.connected) throw unavailable(new ServerUnavailable(serverName, connection.status).message);
    return connection;
  }

  private async call<T>(connection: McpConnection, work: (client: Client, signal: AbortSignal) => Promise<T>, signal: AbortSignal | undefined, missing: "mcp_prompt" | "mcp_resource"): Promise<T> {
    try {
      return await connection.request(work, signal);
    } catch (error) {
      throw requestFailure(error, connection.server.name, missing);
    }
  }

  private changed(): void {
    const key = this.connections.map(({ server, connected }) => (connected ? `${server.id}:${connected.revision}` : "")).join("\u0000");
    if (key !== this.catalogKey) {
      this.catalogKey = key;
      this.revision += 1;
    }
    for (const listener of [...this.listeners]) listener();
  }

  private async credentialChanged(reference: string, change: "authorized" | "forgotten"): Promise<void> {
    const users = this.connections.filter(({ server }) => usesReference(server, reference));
    if (change === "forgotten") await Promise.all(users.map((connection) => connection.retire("the OAuth credential was forgotten")));
    else await this.bounded(Promise.all(users.map((connection) => connection.reconnect())));
  }

  /** Waits for `work`, at most readyWaitMs (a reconnect after the user authorized). */
  private async bounded(work: Promise<unknown>, waitMs: number = this.readyWaitMs): Promise<void> {
    if (waitMs <= 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([work, new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)))]);
    clearTimeout(timer);
  }

  /** Waits for `work`, but not past readyWaitMs after the servers started. */
  private untilDeadline(work: Promise<unknown>): Promise<void> {
    const elapsed = this.startedAt === undefined ? 0 : performance.now() - this.startedAt;
    return this.bounded(work, this.readyWaitMs - elapsed);
  }
}

function usesReference(server: ResolvedMcpServer, reference: string): boolean {
  if (server.oauthReference === reference) return true;
  const map = server.definition.kind === "local" ? server.definition.transport.environment : server.definition.transport.headers;
  return Object.values(map ?? {}).some((ref) => ref.kind === "oauth" && ref.reference === reference);
}
