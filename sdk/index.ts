// `ze-harness/sdk`: Ze Harness embedded in a Node program. createEmbeddedHarness builds the same
// host `serve` runs (services/host/harness.ts: config, libSQL storage, the Turn runner, plugins,
// MCP) and returns the method-style client over its in-process Fetch handler;
// listenEmbeddedHarness adds a loopback listener to the same instance, so other processes (the
// CLI with --remote, a browser at /dashboard) reach the very same Sessions.
import { join, resolve } from "node:path";
import type { ProviderDefinition } from "../plugin/index.js";
import { HarnessClient, createClient, textPrompt, type CreateClientOptions } from "../clients/harness-client.js";
import { createZeClient } from "../clients/client.js";
import { stateDirectory, type Config, type Env } from "../services/config/index.js";
import { HarnessStartupError, createHarness, type Harness } from "../services/host/harness.js";
import { isLoopbackAddress, listen, type Listener } from "../services/host/listen.js";
import { LOOPBACK_HOSTS } from "../services/http/guard.js";
import { resolveProjectId } from "../services/contract/project.js";
import { artifactOptionsProblem, type SessionPluginArtifactOptions } from "../services/plugins/artifact-options.js";
import { FIRST_PORT, PORT_SCAN } from "../services/daemon/paths.js";
import type { DurableContentResolver } from "../services/core/turns/content.js";
import { embedderPortProblem, type ToolDispatchLifecycle } from "../services/core/turns/dispatch.js";
import type { CredentialMode, McpOAuthTokenResolver, McpSecretResolver, ProviderCredentialAnswer, ProviderCredentialResolver, ProviderCredentialScope, ProviderCredentialsPort, ScopedProviderCredentialResolver } from "../services/providers/injected.js";

export {
  CONTENT_UNRESOLVED,
  DurableContentResolutionError,
  type DurableContent,
  type DurableContentResolutionReason,
  type DurableContentResolutionRequest,
  type DurableContentResolver,
} from "../services/core/turns/content.js";
export { ToolDispatchError, type ToolDispatchLease, type ToolDispatchLifecycle, type ToolDispatchOutcome } from "../services/core/turns/dispatch.js";
export type { CredentialMode, McpOAuthTokenResolver, McpSecretResolver, ProviderCredentialAnswer, ProviderCredentialResolver, ProviderCredentialScope, ProviderCredentialsPort, ScopedProviderCredentialResolver };
export { DECLARATIVE_SESSION_PLUGIN } from "../services/host/plugin-handlers.js";

export { HarnessClient, createClient, textPrompt, type CreateClientOptions };
export type { SessionPluginArtifactOptions };
export { sdk, unwrap, ZeClientError, watchTurn, watchSession, watchServer, SERVER_VERSION_HEADER, parseServerVersionHeader } from "../clients/index.js";
export type { ServerVersion } from "../clients/index.js";
export type * from "../generated/client/types.gen.js";
// Native provider authoring (the same functions `ze-harness/plugin` exports).
export { defineProvider, makeCompatibleProviderDefinition, makeRedacted, revealRedacted } from "../plugin/index.js";
export type {
  CompatibleProviderConfig,
  ProviderCatalogModel,
  ProviderDefinition,
  ProviderDefinitionInput,
  ProviderModelAcquisitionInput,
  ProviderModelCorrection,
  ProviderModelService,
  ProviderStreamContext,
  Redacted,
} from "../plugin/index.js";

/** What the embedding program hands over. */
export interface CreateEmbeddedHarnessOptions {
  /** The server root: Session workdirs resolve inside it and project config is found from it. */
  readonly cwd: string;
  /** The database: a file path (relative to `cwd`), `:memory:`, or a libSQL URL. Required. */
  readonly databaseFilename: string;
  /** Configuration merged over the global and project files, validated like a config file. */
  readonly config?: Config | Record<string, unknown>;
  /** Trusted plugin objects (`{ id, setup }`, see `ze-harness/plugin`), loaded after configured ones. */
  readonly inlinePlugins?: readonly unknown[];
  /** The provider `auth.json` (default `defaultAuthFilePath()`). */
  readonly authFilePath?: string;
  /** The environment providers and paths read (default `process.env`). */
  readonly env?: Env;
  /**
   * `injected-only`: an injected-port host with no ambient credential discovery — provider keys
   * only from `providerCredentials` (and `setProviderCredential`), MCP `secret` references only
   * from `mcpCredentialResolver`, MCP OAuth tokens only from `mcpOAuthTokenResolver`; never
   * `auth.json`, a configured `apiKey` or the environment. Default `ambient`.
   */
  readonly credentialMode?: CredentialMode;
  /** Initial keys by provider id, a per-acquisition resolver `({ providerId, sessionId }) => key`, or `{ keys, resolve }`. */
  readonly providerCredentials?: ProviderCredentialsPort;
  /**
   * Injected-only: asked before the slot at every model acquisition serving Session work, with
   * its scope (`turn`, `compaction` or `detached`), once per Turn: `{ apiKey }`, `{ denied, code? }`
   * (the work fails with `model_run_failed`) or `undefined` (the slot).
   */
  readonly resolveProviderCredential?: ScopedProviderCredentialResolver;
  /** Resolves MCP `secret` references (see `makeMcpSecretCredentialResolver`). */
  readonly mcpCredentialResolver?: McpSecretResolver;
  /** The access token of an MCP `oauth` reference. */
  readonly mcpOAuthTokenResolver?: McpOAuthTokenResolver;
  /**
   * How trusted `Package` and `Git` Session plugin sources are installed: `cacheDirectory`
   * (default `plugin-artifacts` in the state directory; relative to `cwd`), the npm registry as
   * `packageManager.registry` (default `ZE_HARNESS_NPM_REGISTRY`, `npm_config_registry`, then
   * the public registry; `command` is accepted and unused: no package manager runs), and the
   * optional `resolveTimeoutMs` / `installTimeoutMs` (default unlimited).
   */
  readonly sessionPluginArtifacts?: SessionPluginArtifactOptions;
  /**
   * Native providers (`defineProvider` / `makeCompatibleProviderDefinition`) keyed by configured
   * provider ID (`config.providers` must list each); an unknown ID fails startup.
   */
  readonly providerDefinitions?: Readonly<Record<string, ProviderDefinition<never>>>;
  /**
   * Resolves `content-reference` prompt and conversation parts to text and image parts at model
   * request time, only for the history the work can see; stored rows keep the reference. A failure
   * fails the Turn with `content_reference_unresolved` naming the reference. Absent: the model
   * sees `[content reference: …]`.
   */
  readonly contentResolver?: DurableContentResolver;
  /**
   * Host custody of every tool call after its permission resolution: wrap it (`lease.proceed()`),
   * refuse it (`{ kind: "refused", message }`) or run it yourself (`{ kind: "result", result }`).
   */
  readonly toolDispatch?: ToolDispatchLifecycle;
}


/** A startup failure (bad configuration, an unusable database, a plugin that did not activate). */
export class EmbeddedHarnessError extends Error {
  constructor(
    readonly _tag: string,
    message: string,
  ) {
    super(message);
    this.name = "EmbeddedHarnessError";
  }
}

/** The embedded instance: its typed client, its Fetch handler, and `close()`. */
export class EmbeddedHarness extends HarnessClient {
  readonly #harness: Harness;
  readonly #listeners = new Set<Listener>();

  constructor(harness: Harness) {
    super(createZeClient({ baseUrl: "http://localhost", fetch: harness.fetch, clientId: `ze-harness-sdk/${process.pid}` }));
    this.#harness = harness;
  }

  /** Injected-only: writes one provider's key (memory only); the next model acquisition uses it. Throws on other hosts and unknown ids. */
  async setProviderCredential(providerId: string, apiKey: string): Promise<void> {
    await this.#provider(providerId);
    if (typeof apiKey !== "string" || !/^[\x21-\x7e]{1,8192}$/.test(apiKey)) throw new EmbeddedHarnessError("ValidationError", "an API key must be 1–8192 visible ASCII characters");
    this.#injected().set(providerId, apiKey);
  }

  /** Injected-only: whether the slot holds a key for the provider (never the key). */
  async hasProviderCredential(providerId: string): Promise<boolean> {
    return this.#injected().has(providerId);
  }

  /** Injected-only: removes the provider's key; new acquisitions fail closed. Throws on unknown ids. */
  async removeProviderCredential(providerId: string): Promise<void> {
    await this.#provider(providerId);
    this.#injected().remove(providerId);
  }

  #injected() {
    const injected = this.#harness.injectedCredentials;
    if (injected === undefined) throw new EmbeddedHarnessError("ValidationError", "provider credentials are written only on an injected-only host (credentialMode: 'injected-only')");
    return injected;
  }

  async #provider(providerId: string): Promise<void> {
    this.#injected();
    const known = (await this.listProviders()).some((provider) => provider.id === providerId);
    if (!known) throw new EmbeddedHarnessError("NotFoundError", `Provider "${providerId}" is not configured on this host`);
  }

  /** The Fetch handler every call goes through (serve it yourself, or use listenEmbeddedHarness). */
  get fetch(): (request: Request) => Promise<Response> {
    return this.#harness.fetch;
  }

  /** @internal */
  track(listener: Listener): void {
    this.#listeners.add(listener);
  }

  /** Stops the listeners, ends this instance's running Turns gracefully and closes the database. */
  async close(): Promise<void> {
    await Promise.all([...this.#listeners].map((listener) => listener.close()));
    this.#listeners.clear();
    await this.#harness.close();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

export async function createEmbeddedHarness(options: CreateEmbeddedHarnessOptions): Promise<EmbeddedHarness> {
  if (typeof options?.cwd !== "string" || options.cwd === "") throw new EmbeddedHarnessError("ValidationError", "createEmbeddedHarness needs `cwd`");
  if (typeof options.databaseFilename !== "string" || options.databaseFilename === "") {
    throw new EmbeddedHarnessError("ValidationError", "createEmbeddedHarness needs an explicit `databaseFilename` (a file path, `:memory:` or a libSQL URL)");
  }
  const cwd = resolve(options.cwd);
  const artifacts = options.sessionPluginArtifacts;
  const sessionPluginArtifacts =
    artifacts !== undefined && artifacts.cacheDirectory !== undefined ? { ...artifacts, cacheDirectory: resolve(cwd, artifacts.cacheDirectory) } : artifacts;
  const artifactProblem = sessionPluginArtifacts !== undefined ? artifactOptionsProblem(sessionPluginArtifacts) : undefined;
  if (artifactProblem !== undefined) throw new EmbeddedHarnessError("ValidationError", artifactProblem);
  const portProblem = embedderPortProblem(options);
  if (portProblem !== undefined) throw new EmbeddedHarnessError("ValidationError", portProblem);
  const database = /^(:memory:|[a-z][a-z0-9+.-]*:)/i.test(options.databaseFilename) ? options.databaseFilename : resolve(cwd, options.databaseFilename);
  try {
    const harness = await createHarness({
      database,
      serverRoot: cwd,
      env: options.env ?? process.env,
      ...(options.config !== undefined ? { inlineConfig: options.config } : {}),
      ...(options.inlinePlugins !== undefined ? { inlinePlugins: options.inlinePlugins } : {}),
      ...(sessionPluginArtifacts !== undefined ? { sessionPluginArtifacts } : {}),
      ...(options.authFilePath !== undefined ? { authFilePath: resolve(cwd, options.authFilePath) } : {}),
      ...(options.credentialMode !== undefined ? { credentialMode: options.credentialMode } : {}),
      ...(options.providerCredentials !== undefined ? { providerCredentials: options.providerCredentials } : {}),
      ...(options.resolveProviderCredential !== undefined ? { resolveProviderCredential: options.resolveProviderCredential } : {}),
      ...(options.mcpCredentialResolver !== undefined ? { mcpCredentialResolver: options.mcpCredentialResolver } : {}),
      ...(options.mcpOAuthTokenResolver !== undefined ? { mcpOAuthTokenResolver: options.mcpOAuthTokenResolver } : {}),
      ...(options.providerDefinitions !== undefined ? { providerDefinitions: options.providerDefinitions } : {}),
      ...(options.contentResolver !== undefined ? { contentResolver: options.contentResolver } : {}),
      ...(options.toolDispatch !== undefined ? { toolDispatch: options.toolDispatch } : {}),
      allowedHosts: LOOPBACK_HOSTS,
      // Like an embedded command: this instance runs the Sessions it operates on (holding their
      // runner lease), and a serve on the same database runs the rest.
      runnerScope: "owned",
    });
    return new EmbeddedHarness(harness);
  } catch (error) {
    if (error instanceof HarnessStartupError) throw new EmbeddedHarnessError(error.tag, error.message);
    throw error;
  }
}

export interface ListenOptions {
  /** Default 0: any free port. */
  readonly port?: number;
  /** Loopback only: 127.0.0.1 (default), ::1 or localhost. */
  readonly hostname?: string;
}

/** A listener bound to the embedded instance. */
export interface NodeListener {
  /** e.g. http://127.0.0.1:43117 */
  readonly url: string;
  close(): Promise<void>;
}

/** Refused listener options (a non-loopback address). */
export class ServerListenError extends Error {
  readonly _tag = "ServerListenError";
}

/** Serves the same instance over loopback HTTP; closed with it. */
export async function listenEmbeddedHarness(harness: EmbeddedHarness, options: ListenOptions = {}): Promise<NodeListener> {
  const hostname = options.hostname ?? "127.0.0.1";
  if (!isLoopbackAddress(hostname)) throw new ServerListenError(`listenEmbeddedHarness binds loopback only, not ${hostname}`);
  const listener = await listen(harness.fetch, { port: options.port ?? 0, hostname });
  harness.track(listener);
  return listener;
}

/** The shared host data root: `$XDG_DATA_HOME` when absolute, else `~/.local/share`. */
export function authFileDataRoot(env: Env = process.env): string {
  return resolve(stateDirectory(env), "..");
}

/** `<authFileDataRoot()>/ze-harness/auth.json`: the provider connections every database shares. */
export function defaultAuthFilePath(env: Env = process.env): string {
  return join(stateDirectory(env), "auth.json");
}

/** The project a directory belongs to (its repository's normalized remote, or the directory). */
export function resolveProjectIdentity(directory: string): string {
  return resolveProjectId(directory);
}

/**
 * An MCP `secret` reference resolver over a map of secrets (or a lookup function), for
 * `mcpCredentialResolver`: a reference that is not there stays unresolved (its connection fails
 * naming the reference, never a value).
 */
export function makeMcpSecretCredentialResolver(secrets: Readonly<Record<string, string>> | ((reference: string) => string | undefined | Promise<string | undefined>)): McpSecretResolver {
  if (typeof secrets === "function") return async (reference) => (await secrets(reference)) ?? undefined;
  if (typeof secrets !== "object" || secrets === null) throw new TypeError("makeMcpSecretCredentialResolver takes a map of secrets or a function");
  const copy = new Map(Object.entries(secrets).filter((entry): entry is [string, string] => typeof entry[1] === "string" && entry[1] !== ""));
  return (reference) => copy.get(reference);
}

// The local daemon: its manager, log helpers and well-known names (its files live in `daemonDirectory()`).
export {
  Daemon,
  DaemonError,
  DaemonOptionsMismatch,
  DaemonVersionMismatch,
  DAEMON_STARTUP_FILE_NAME,
  makeDaemonLog,
  makeDaemonStartupReporter,
  startDaemonLogTrim,
  type ClientConnection,
  type ClientDisconnection,
  type DaemonLog,
  type DaemonOptions,
  type DaemonStartObserver,
  type DaemonStartupProgress,
  type DaemonStartupReporter,
  type DaemonStartupStep,
  type DaemonStatusValue,
  type DaemonTransport,
  type DaemonTransportOptions,
  type StorageMigrationProgress,
} from "./daemon.js";
export {
  FIRST_PORT as DAEMON_BASE_PORT,
  REGISTRATION_FILE as DAEMON_FILE_NAME,
  LOG_FILE as DAEMON_LOG_FILE_NAME,
  TOKEN_FILE as DAEMON_TOKEN_FILE_NAME,
  daemonDirectory,
} from "../services/daemon/paths.js";
/** The last port the daemon scans. */
export const DAEMON_MAX_PORT = FIRST_PORT + PORT_SCAN - 1;
