// The OAuth lifecycle of remote MCP servers (`transport.oauth`), on the SDK's OAuth helpers:
// protected-resource and authorization-server discovery, dynamic client registration when the
// server offers it, an authorization URL with PKCE (S256) and `resource`, the code exchange on
// callback (state and RFC 9207 issuer checked exactly), refresh within two minutes of expiry
// (one at a time per credential, storage re-read first), cancel, and forget with RFC 7009
// revocation. Statuses never carry a token, code, verifier or secret.
import { randomBytes } from "node:crypto";
import {
  discoverAuthorizationServerMetadata,
  discoverOAuthProtectedResourceMetadata,
  exchangeAuthorization,
  refreshAuthorization,
  registerClient,
  startAuthorization,
} from "@modelcontextprotocol/sdk/client/auth.js";
import { OAuthError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
import type { OAuthProtectedResourceMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { checkResourceAllowed, resourceUrlFromServerUrl } from "@modelcontextprotocol/sdk/shared/auth-utils.js";
import type {
  McpCredentialCallback,
  McpCredentialForgetResponse,
  McpCredentialRevocationStatus,
  McpCredentialStartResponse,
  McpCredentialStatus,
  StartMcpCredentialRequest,
} from "../../generated/client/types.gen.js";
import { conflict, unavailable, validationFailure } from "../contract/failure.js";
import type { AuthFileLocation } from "../providers/auth-file.js";
import type { ResolvedMcpServer } from "./config.js";
import { CredentialStore, ENTRY_TYPE, statusOf, type McpCredentialStorage, type StoredClient, type StoredCredential, type StoredTokens } from "./oauth-store.js";

/** A token this close to its expiry is refreshed before use. */
export const REFRESH_WINDOW_MS = 120_000;

export interface McpOAuthOptions {
  /** The auth.json the credentials live in (the Node host's store), unless `store` is given. */
  readonly location?: AuthFileLocation | undefined;
  /** A host's own credential store (the Worker's SQLite one); wins over `location`. */
  readonly store?: McpCredentialStorage | undefined;
  /**
   * How the revocation request treats a redirect (default "error": a redirect is `uncertain`).
   * workerd refuses the "error" mode, so the Worker asks for "manual": a redirect is `failed`.
   */
  readonly revocationRedirect?: "error" | "manual" | undefined;
  /** The loopback callback address for a server (the host's `--mcp-callback-port`). */
  readonly redirectUrl: (serverName: string) => string;
  readonly now?: () => number;
  readonly clientName?: string;
  /** A credential became usable or was forgotten: the host reconnects or retires the servers using it. */
  readonly onChange?: (reference: string, change: "authorized" | "forgotten") => void | Promise<void>;
}

const VISIBLE_ASCII = /^[\x21-\x7e]+$/;
const field = (pointer: string): string => `body${pointer.replaceAll("/", ".")} (${pointer})`;
const invalid = (pointer: string, message: string) => validationFailure(`Invalid request: ${field(pointer)}: ${message}`);
const trimSlash = (url: string): string => url.replace(/\/+$/, "");

function httpUrl(value: string, pointer: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalid(pointer, "is not a URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw invalid(pointer, "must be an http:// or https:// URL");
  return url;
}

function storedTokens(tokens: OAuthTokens, now: number, previous?: StoredTokens): StoredTokens {
  if (!VISIBLE_ASCII.test(tokens.access_token)) throw unavailable("The authorization server returned an access token that is not a visible ASCII value");
  const refresh = tokens.refresh_token ?? previous?.refresh_token;
  return {
    access_token: tokens.access_token,
    token_type: tokens.token_type,
    ...(refresh !== undefined ? { refresh_token: refresh } : {}),
    ...(tokens.scope !== undefined ? { scope: tokens.scope } : {}),
    ...(tokens.expires_in !== undefined ? { expiresAt: now + tokens.expires_in * 1000 } : {}),
  };
}

export class McpOAuth {
  private readonly store: McpCredentialStorage;
  private readonly now: () => number;
  private readonly refreshing = new Map<string, Promise<string | undefined>>();

  constructor(private readonly options: McpOAuthOptions) {
    if (options.store === undefined && options.location === undefined) throw new Error("McpOAuth needs a credential store or an auth.json location");
    this.store = options.store ?? new CredentialStore(options.location!);
    this.now = options.now ?? Date.now;
  }

  private target(server: ResolvedMcpServer): { reference: string; endpoint: string } {
    if (server.definition.kind !== "remote" || server.oauthReference === undefined) {
      throw conflict(`MCP server ${JSON.stringify(server.name)} has no OAuth credential (transport.oauth)`);
    }
    return { reference: server.oauthReference, endpoint: server.definition.transport.endpoint };
  }

  async status(server: ResolvedMcpServer): Promise<McpCredentialStatus> {
    const { reference, endpoint } = this.target(server);
    return statusOf(await this.store.load(reference, endpoint), this.now());
  }

  /** Starts authorization, or resumes the pending one started with the same request. */
  async start(server: ResolvedMcpServer, request: StartMcpCredentialRequest = {}): Promise<McpCredentialStartResponse> {
    const { reference, endpoint } = this.target(server);
    const entry = await this.store.load(reference, endpoint);
    const redirectUri = this.options.redirectUrl(server.name);
    const fingerprint = JSON.stringify([request.resource, request.challenge, request.authorizationServer, request.client, redirectUri]);
    if (entry?.pending && entry.pending.fingerprint === fingerprint) {
      return { status: { kind: "pending", generation: entry.generation }, authorizationUrl: entry.pending.authorizationUrl };
    }
    if (request.challenge) httpUrl(request.challenge.resourceMetadata, "/challenge/resourceMetadata");
    if (request.authorizationServer !== undefined) httpUrl(request.authorizationServer, "/authorizationServer");
    if (request.resource !== undefined) httpUrl(request.resource, "/resource");

    let resourceMetadata: OAuthProtectedResourceMetadata | undefined;
    try {
      resourceMetadata = await discoverOAuthProtectedResourceMetadata(endpoint, request.challenge ? { resourceMetadataUrl: request.challenge.resourceMetadata } : {});
    } catch (error) {
      if (request.challenge) throw unavailable(`The protected resource metadata of MCP server ${JSON.stringify(server.name)} could not be read: ${(error as Error).message}`);
    }
    const advertised = resourceMetadata?.authorization_servers ?? [];
    if (request.authorizationServer !== undefined && advertised.length > 0 && !advertised.some((url) => trimSlash(url) === trimSlash(request.authorizationServer!))) {
      throw invalid("/authorizationServer", `is not one of the authorization servers the MCP server advertises (${advertised.join(", ")})`);
    }
    const authorizationServer = request.authorizationServer ?? advertised[0] ?? new URL("/", endpoint).href;
    const resource = request.resource ?? resourceMetadata?.resource ?? resourceUrlFromServerUrl(endpoint).href;
    if (!checkResourceAllowed({ requestedResource: endpoint, configuredResource: resource })) {
      if (request.resource !== undefined) throw invalid("/resource", `does not cover the MCP endpoint ${endpoint}`);
      throw unavailable(`MCP server ${JSON.stringify(server.name)} advertises the protected resource ${resource}, which does not cover its endpoint`);
    }
    const scope = request.challenge?.scope ?? resourceMetadata?.scopes_supported?.join(" ");
    let metadata;
    try {
      metadata = await discoverAuthorizationServerMetadata(authorizationServer);
    } catch (error) {
      throw unavailable(`The authorization server ${authorizationServer} could not be discovered: ${(error as Error).message}`);
    }

    let client: StoredClient;
    const generation = (entry?.generation ?? 0) + 1;
    const base: StoredCredential = { type: ENTRY_TYPE, serverId: server.id, endpoint, generation, authorizationServer, metadata, resource, scope, ...(entry?.tokens ? { tokens: entry.tokens } : {}) };
    if (request.client) {
      client = { client_id: request.client.clientId, token_endpoint_auth_method: "none" };
    } else if (entry?.client && entry.authorizationServer === authorizationServer && entry.client.redirect_uris?.includes(redirectUri)) {
      client = entry.client;
    } else if (metadata?.registration_endpoint) {
      try {
        const registered = await registerClient(authorizationServer, {
          metadata,
          clientMetadata: {
            client_name: this.options.clientName ?? "Ze Harness",
            redirect_uris: [redirectUri],
            grant_types: ["authorization_code", "refresh_token"],
            response_types: ["code"],
            token_endpoint_auth_method: "none",
          },
          ...(scope !== undefined ? { scope } : {}),
        });
        client = {
          client_id: registered.client_id,
          ...(registered.client_secret !== undefined ? { client_secret: registered.client_secret } : {}),
          token_endpoint_auth_method: registered.token_endpoint_auth_method ?? "none",
          redirect_uris: [redirectUri],
        };
      } catch (error) {
        if (!(error instanceof OAuthError)) await this.store.save(reference, { ...base, required: "client-registration-uncertain" });
        throw unavailable(`Dynamic client registration with ${authorizationServer} failed: ${(error as Error).message}`);
      }
    } else {
      throw invalid("/client", "the authorization server offers no dynamic client registration; give a pre-registered public client");
    }
    const state = randomBytes(32).toString("base64url");
    let started;
    try {
      started = await startAuthorization(authorizationServer, { metadata, clientInformation: client, redirectUrl: redirectUri, state, resource, ...(scope !== undefined ? { scope } : {}) });
    } catch (error) {
      throw unavailable(`The authorization server ${authorizationServer} cannot be used: ${(error as Error).message}`);
    }
    const authorizationUrl = started.authorizationUrl.href;
    await this.store.save(reference, {
      ...base,
      client,
      pending: { state, codeVerifier: started.codeVerifier, redirectUri, authorizationUrl, fingerprint, createdAt: this.now() },
    });
    return { status: { kind: "pending", generation }, authorizationUrl };
  }

  /** Completes the pending authorization with the callback's parameters. */
  async callback(server: ResolvedMcpServer, callback: McpCredentialCallback): Promise<McpCredentialStatus> {
    const { reference, endpoint } = this.target(server);
    const entry = await this.store.load(reference, endpoint);
    const pending = entry?.pending;
    if (!entry || !pending) throw conflict(`No authorization is pending for MCP server ${JSON.stringify(server.name)}`);
    if (callback.state !== pending.state) throw invalid("/callback/state", "does not match the pending authorization");
    const issuer = entry.metadata?.issuer ?? entry.authorizationServer;
    if ((entry.metadata as Record<string, unknown> | undefined)?.["authorization_response_iss_parameter_supported"] === true && callback.issuer === undefined) {
      throw invalid("/callback/issuer", "is required: the authorization server supports RFC 9207 issuer identification");
    }
    if (callback.issuer !== undefined && callback.issuer !== issuer) throw invalid("/callback/issuer", "does not match the authorization server's issuer");
    const { pending: _done, ...settled } = entry;
    if (callback.kind === "denied") {
      await this.store.save(reference, settled);
      return statusOf(settled, this.now());
    }
    let tokens: OAuthTokens;
    try {
      tokens = await exchangeAuthorization(entry.authorizationServer!, {
        metadata: entry.metadata,
        clientInformation: entry.client!,
        authorizationCode: callback.code,
        codeVerifier: pending.codeVerifier,
        redirectUri: pending.redirectUri,
        ...(entry.resource !== undefined ? { resource: new URL(entry.resource) } : {}),
      });
    } catch (error) {
      if (error instanceof OAuthError) {
        await this.store.save(reference, settled);
        throw invalid("/callback/code", `the authorization server refused the code (${error.errorCode})`);
      }
      const uncertain: StoredCredential = { ...settled, required: "authorization-code-uncertain" };
      await this.store.save(reference, uncertain);
      return statusOf(uncertain, this.now());
    }
    const { required: _r, forgotten: _f, expiredAt: _e, ...rest } = settled;
    const authorized: StoredCredential = { ...rest, tokens: storedTokens(tokens, this.now()) };
    await this.store.save(reference, authorized);
    await this.options.onChange?.(reference, "authorized");
    return statusOf(authorized, this.now());
  }

  /** Cancels the pending authorization (of `generation`, when given). */
  async cancel(server: ResolvedMcpServer, generation?: number): Promise<McpCredentialStatus> {
    const { reference, endpoint } = this.target(server);
    const entry = await this.store.load(reference, endpoint);
    if (!entry?.pending) return statusOf(entry, this.now());
    if (generation !== undefined && generation !== entry.generation) {
      throw conflict(`Generation ${generation} is not the pending authorization of MCP server ${JSON.stringify(server.name)} (generation ${entry.generation})`);
    }
    const { pending: _p, ...rest } = entry;
    await this.store.save(reference, rest);
    return statusOf(rest, this.now());
  }

  /** Revokes (when the authorization server supports it) and forgets the credential; live connections are retired. */
  async forget(server: ResolvedMcpServer): Promise<McpCredentialForgetResponse> {
    const { reference, endpoint } = this.target(server);
    const entry = await this.store.load(reference, endpoint);
    const revocation = await this.revoke(entry);
    const generation = Math.max(entry?.generation ?? 0, 1);
    await this.store.save(reference, { type: ENTRY_TYPE, serverId: server.id, endpoint, generation, forgotten: { revocation } });
    await this.options.onChange?.(reference, "forgotten");
    return { generation, revocation };
  }

  private async revoke(entry: StoredCredential | undefined): Promise<McpCredentialRevocationStatus> {
    const tokens = entry?.tokens;
    if (!tokens) return "not-applicable";
    const endpoint = (entry.metadata as Record<string, unknown> | undefined)?.["revocation_endpoint"];
    if (typeof endpoint !== "string") return "unsupported";
    const body = new URLSearchParams({ token: tokens.refresh_token ?? tokens.access_token, token_type_hint: tokens.refresh_token ? "refresh_token" : "access_token" });
    if (entry.client) body.set("client_id", entry.client.client_id);
    if (entry.client?.client_secret) body.set("client_secret", entry.client.client_secret);
    try {
      const response = await fetch(endpoint, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body, redirect: this.options.revocationRedirect ?? "error" });
      await response.body?.cancel().catch(() => undefined);
      return response.ok ? "completed" : "failed";
    } catch {
      return "uncertain";
    }
  }

  /**
   * The access token of `reference` for a request to `endpoint`, refreshed first when it is within
   * two minutes of its expiry; undefined when there is none (the user must authorize).
   */
  async accessToken(reference: string, endpoint?: string): Promise<string | undefined> {
    const entry = await this.store.load(reference, endpoint);
    const tokens = entry?.tokens;
    if (!entry || !tokens || entry.expiredAt !== undefined) return undefined;
    if (tokens.expiresAt === undefined || this.now() < tokens.expiresAt - REFRESH_WINDOW_MS) return tokens.access_token;
    return this.refresh(reference, endpoint, tokens.access_token);
  }

  /**
   * Refreshes the credential whose access token `stale` was rejected or is expiring. One refresh
   * per credential runs at a time, and a token another request or process already rotated in is
   * reused. A refresh token the server rejects ends refreshing (status `expired`); a network
   * failure rejects and leaves the credential as it was.
   */
  refresh(reference: string, endpoint: string | undefined, stale: string): Promise<string | undefined> {
    const running = this.refreshing.get(reference);
    if (running) return running;
    const work = this.runRefresh(reference, endpoint, stale).finally(() => this.refreshing.delete(reference));
    this.refreshing.set(reference, work);
    return work;
  }

  private async runRefresh(reference: string, endpoint: string | undefined, stale: string): Promise<string | undefined> {
    const entry = await this.store.load(reference, endpoint);
    const tokens = entry?.tokens;
    if (!entry || !tokens || entry.expiredAt !== undefined) return undefined;
    const fresh = tokens.expiresAt === undefined || this.now() < tokens.expiresAt - REFRESH_WINDOW_MS;
    if (tokens.access_token !== stale && fresh) return tokens.access_token;
    if (tokens.refresh_token === undefined || !entry.client || !entry.authorizationServer) {
      await this.store.save(reference, { ...entry, expiredAt: tokens.expiresAt ?? this.now() });
      return undefined;
    }
    let refreshed: OAuthTokens;
    try {
      refreshed = await refreshAuthorization(entry.authorizationServer, {
        metadata: entry.metadata,
        clientInformation: entry.client,
        refreshToken: tokens.refresh_token,
        ...(entry.resource !== undefined ? { resource: new URL(entry.resource) } : {}),
      });
    } catch (error) {
      if (!(error instanceof OAuthError)) throw error;
      await this.store.save(reference, { ...entry, expiredAt: this.now() });
      return undefined;
    }
    const next = storedTokens(refreshed, this.now(), tokens);
    await this.store.save(reference, { ...entry, tokens: next });
    return next.access_token;
  }
}
