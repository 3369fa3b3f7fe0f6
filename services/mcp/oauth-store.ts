// MCP OAuth credentials in the global auth.json (services/providers/auth-file.ts: mode 0600,
// atomic rewrites that keep every other entry), one entry per credential reference under
// `mcp:<reference>`. Provider code ignores these entries (their `type` is `mcp-oauth`).
// The entry holds tokens, the registered client and a pending authorization's PKCE verifier: it
// never leaves the host, and no status, event or log carries a value from it.
import type { AuthorizationServerMetadata } from "@modelcontextprotocol/sdk/shared/auth.js";
import type { McpCredentialAuthorizationRequiredReason, McpCredentialRevocationStatus, McpCredentialStatus } from "../../generated/client/types.gen.js";
import { unavailable } from "../contract/failure.js";
import { readAuthValue, setAuthValue, type AuthFileLocation } from "../providers/auth-file.js";

export const ENTRY_TYPE = "mcp-oauth";

export interface StoredClient {
  readonly client_id: string;
  readonly client_secret?: string | undefined;
  readonly token_endpoint_auth_method?: string | undefined;
  readonly redirect_uris?: readonly string[] | undefined;
}

export interface StoredTokens {
  readonly access_token: string;
  readonly refresh_token?: string | undefined;
  readonly token_type: string;
  readonly scope?: string | undefined;
  /** Epoch milliseconds; undefined when the server gave no lifetime. */
  readonly expiresAt?: number | undefined;
}

export interface PendingAuthorization {
  readonly state: string;
  readonly codeVerifier: string;
  readonly redirectUri: string;
  readonly authorizationUrl: string;
  /** The start request, to resume it idempotently. */
  readonly fingerprint: string;
  readonly createdAt: number;
}

export interface StoredCredential {
  readonly type: typeof ENTRY_TYPE;
  readonly serverId: string;
  /** The endpoint the credential was issued for: a changed endpoint never receives it. */
  readonly endpoint: string;
  readonly generation: number;
  readonly authorizationServer?: string | undefined;
  readonly metadata?: AuthorizationServerMetadata | undefined;
  readonly resource?: string | undefined;
  readonly scope?: string | undefined;
  readonly client?: StoredClient | undefined;
  readonly tokens?: StoredTokens | undefined;
  readonly pending?: PendingAuthorization | undefined;
  /** Set when the tokens expired and could not be refreshed. */
  readonly expiredAt?: number | undefined;
  readonly required?: McpCredentialAuthorizationRequiredReason | undefined;
  readonly forgotten?: { readonly revocation: McpCredentialRevocationStatus } | undefined;
}

export const entryKey = (reference: string): string => `mcp:${reference}`;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * Where a lifecycle keeps its credentials: the Node host's auth.json ({@link CredentialStore}),
 * or a host's own store (the Worker's, in its server object's SQLite: worker/oauth-store.ts).
 * `load` answers a credential issued for another endpoint as absent (keeping its generation).
 */
export interface McpCredentialStorage {
  load(reference: string, endpoint?: string): Promise<StoredCredential | undefined>;
  save(reference: string, entry: StoredCredential): Promise<void>;
}

/** A stored value as a credential of `endpoint` (undefined: not a credential entry). */
export function credentialOf(value: unknown, endpoint?: string): StoredCredential | undefined {
  if (!isObject(value) || value["type"] !== ENTRY_TYPE || typeof value["generation"] !== "number") return undefined;
  const entry = value as unknown as StoredCredential;
  if (endpoint !== undefined && entry.endpoint !== endpoint) return { type: ENTRY_TYPE, serverId: entry.serverId, endpoint, generation: entry.generation };
  return entry;
}

export class CredentialStore implements McpCredentialStorage {
  constructor(private readonly location: AuthFileLocation) {}

  /** The stored credential of `reference`; one issued for another endpoint counts as absent (keeping its generation). */
  async load(reference: string, endpoint?: string): Promise<StoredCredential | undefined> {
    const read = await readAuthValue(this.location, entryKey(reference));
    if (!read.ok) throw unavailable(`The MCP credential store is unavailable: ${read.error.message}`);
    return credentialOf(read.value, endpoint);
  }

  async save(reference: string, entry: StoredCredential): Promise<void> {
    const written = await setAuthValue(this.location, entryKey(reference), entry);
    if (!written.ok) throw unavailable(`The MCP credential could not be stored: ${written.error.message}`);
  }
}

/** The secret-free status of a stored credential at `now`. */
export function statusOf(entry: StoredCredential | undefined, now: number): McpCredentialStatus {
  if (entry === undefined) return { kind: "absent", generation: 0 };
  const generation = entry.generation;
  if (entry.pending) return { kind: "pending", generation };
  if (entry.required) return { kind: "authorization-required", generation, reason: entry.required };
  if (entry.forgotten) return { kind: "forgotten", generation, revocation: entry.forgotten.revocation };
  if (entry.tokens) {
    if (entry.expiredAt !== undefined) return { kind: "expired", generation, expiredAtEpochMs: entry.expiredAt };
    const expiresAt = entry.tokens.expiresAt;
    if (expiresAt !== undefined && now >= expiresAt && entry.tokens.refresh_token === undefined) return { kind: "expired", generation, expiredAtEpochMs: expiresAt };
    return { kind: "authorized", generation };
  }
  return { kind: "absent", generation };
}
