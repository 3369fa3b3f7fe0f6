// HarnessProviderAuthorityObject: the deployment's singleton provider authority (binding
// HARNESS_PROVIDER_AUTHORITY, addressed by `idFromName(AUTHORITY_NAME)`). It compiles the
// providers `HARNESS_PROVIDERS` enables against the bundled models.dev snapshot (the Node host's
// `resolveProviders`), keeps provider connections in its own SQLite (authority-store.ts), and
// answers typed RPC methods: the catalog snapshot, safe provider summaries, connection writes,
// and `providerCredentials()` for server objects. Credentials resolve as the reference says for
// this host: a stored key wins over the Worker secret named by `definition.credentials.environment`,
// and a stored-but-unreadable connection blocks that fallback (unavailable, `reconnect_required`),
// so inference matches the catalog. Providers that discover their models (`GET <baseURL>/models`)
// are listed on first need and again by `refreshModels` (a failure keeps what was known; a
// connection made later populates them on the next refresh, as a reload does on Node).
// Keys never appear in a summary, a snapshot, an error or a log.
import { createHash } from "node:crypto";
import { DurableObject } from "cloudflare:workers";
import type { CatalogSnapshot, ProviderModelRefreshOutcome, RefreshProviderModelsResponse, SafeProviderConnection, SafeProviderSummary } from "../generated/client/types.gen.js";
import type { Env } from "../services/config/paths.js";
import type { AuthEntry, AuthState } from "../services/providers/auth-file.js";
import { resolveCredential, type CredentialSources } from "../services/providers/credentials.js";
import type { DiscoveredModel } from "../services/providers/discovered.js";
import { discoverProviderModels, discovers } from "../services/providers/discovery.js";
import { requiresCredential, type ProviderSet, type ResolvedProvider } from "../services/providers/registry.js";
import { catalogSnapshot, providerSummary } from "../services/providers/summary.js";
import { authorityConfig, workerEnvironment, type AuthorityConfig } from "./authority-config.js";
import { ConnectionStore, type AuthoritySqlStorage, type StoredConnection } from "./authority-store.js";
import type { AuthorityError, AuthorityResult, ProviderAuthorityRpc, ProviderCredential, ProviderCredentials } from "./authority-types.js";

/** An API key goes into one Authorization header: visible ASCII, no spaces or control characters (as on Node). */
const API_KEY = /^[\x21-\x7e]{1,8192}$/;
/** A label is free text without control characters (as on Node). */
const LABEL = /^[^\x00-\x1f\x7f]{1,256}$/;

/**
 * Discovery never follows a redirect (its request says `redirect: "error"`, which workerd's fetch
 * refuses): `manual` here, so a redirect is answered as its 3xx status — a failure, as on Node.
 */
const discoveryFetch: typeof fetch = (input, init) => globalThis.fetch(input, { ...init, redirect: "manual" });

const fail = <T>(error: AuthorityError): AuthorityResult<T> => ({ ok: false, error });
const invalid = <T>(message: string): AuthorityResult<T> => fail({ _tag: "InvalidInput", message });

/** What one read of the store gives resolution: auth.json's shape, the environment, and the unreadable rows. */
interface Resolution {
  readonly sources: CredentialSources;
  readonly rows: readonly StoredConnection[];
  readonly unreadable: ReadonlySet<string>;
}

function safeConnection(row: StoredConnection): SafeProviderConnection {
  return {
    connectionId: row.connectionId,
    providerId: row.providerId,
    label: row.label,
    method: "api_key",
    status: row.key === undefined ? "reconnect_required" : "ready",
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

export class HarnessProviderAuthorityObject extends DurableObject<Record<string, unknown>> implements ProviderAuthorityRpc {
  readonly #store: ConnectionStore;
  /** The current generation: the configuration compiled with what discovery found. */
  #config: AuthorityConfig;
  #discovered: Readonly<Record<string, readonly DiscoveredModel[]>> = {};
  #discovery: Promise<unknown> | undefined;
  readonly #env: Env;

  constructor(ctx: unknown, env: Record<string, unknown>) {
    super(ctx, env);
    this.#store = new ConnectionStore((ctx as { readonly storage: AuthoritySqlStorage }).storage);
    this.#env = workerEnvironment(env);
    this.#config = authorityConfig(this.#env);
  }

  /** Resolves once the first discovery ran (at most once; never rejects). */
  #ready(): Promise<unknown> {
    this.#discovery ??= this.#discover(undefined);
    return this.#discovery;
  }

  /** Discovery for `only` (else every discovering provider); a result that compiles becomes the generation. */
  async #discover(only: string | undefined): Promise<Map<string, ProviderModelRefreshOutcome>> {
    const outcomes = new Map<string, ProviderModelRefreshOutcome>();
    if (!this.#config.ok) return outcomes;
    const set = this.#config.providers;
    const targets = set.providers.filter((provider) => discovers(provider) && (only === undefined || provider.id === only));
    if (targets.length === 0) return outcomes;
    const { sources } = this.#resolution(set);
    const before = this.#discovered;
    const discovered: Record<string, readonly DiscoveredModel[]> = { ...before };
    await Promise.all(
      targets.map(async (provider) => {
        const result = await discoverProviderModels(provider, sources, { fetch: discoveryFetch });
        if (!result.ok) {
          outcomes.set(provider.id, { providerId: provider.id, status: "failed", message: result.message });
          return;
        }
        discovered[provider.id] = result.models;
        const same = JSON.stringify(before[provider.id] ?? []) === JSON.stringify(result.models);
        outcomes.set(provider.id, { providerId: provider.id, status: same ? "unchanged" : "updated" });
      }),
    );
    const next = authorityConfig(this.#env, discovered);
    if (next.ok) {
      this.#discovered = discovered;
      this.#config = next;
    }
    return outcomes;
  }

  #providers<T>(use: (set: ProviderSet) => AuthorityResult<T>): AuthorityResult<T> {
    return this.#config.ok ? use(this.#config.providers) : fail(this.#config.error);
  }

  #provider<T>(providerId: string, use: (provider: ResolvedProvider, set: ProviderSet) => AuthorityResult<T>): AuthorityResult<T> {
    return this.#providers((set) => {
      const provider = set.provider(providerId);
      if (provider === undefined) return fail({ _tag: "ProviderNotFound", providerId, message: `Provider "${providerId}" is not configured on this host` });
      return use(provider, set);
    });
  }

  /**
   * The stored rows in auth.json's shape for the shared resolver. An unreadable row stands as a
   * rejected login (unavailable, `reconnect_required`) and removes its provider's environment
   * names from the environment, so nothing falls back past it.
   */
  #resolution(set: ProviderSet): Resolution {
    const rows = this.#store.list();
    const entries: Record<string, AuthEntry> = {};
    const unreadable = new Set<string>();
    const blocked = new Set<string>();
    for (const row of rows) {
      const metadata = { connectionId: row.connectionId, label: row.label, createdAt: row.createdAt, updatedAt: row.updatedAt };
      if (row.key !== undefined) {
        entries[row.providerId] = { type: "api", key: row.key, ...metadata };
        continue;
      }
      unreadable.add(row.providerId);
      entries[row.providerId] = { type: "oauth", access: "", refresh: "", expires: 0, refreshRejected: true, ...metadata };
      for (const variable of set.provider(row.providerId)?.environment ?? []) blocked.add(variable);
    }
    const env = Object.fromEntries(Object.entries(this.#env).filter(([name]) => !blocked.has(name)));
    const auth: AuthState = { entries, modifiedAt: 0, present: rows.length > 0 };
    return { sources: { env, auth }, rows, unreadable };
  }

  /** The Worker offers no login: summaries list API keys only, and the shape stays the Node host's. */
  #summary(provider: ResolvedProvider, resolution: Resolution): SafeProviderSummary {
    const summary = providerSummary(provider, resolution.sources);
    const row = resolution.rows.find((stored) => stored.providerId === provider.id);
    return {
      ...summary,
      ...(summary.connection !== undefined && row !== undefined ? { connection: safeConnection(row) } : {}),
      methods: summary.methods.filter((method) => method !== "oauth"),
      logins: [],
    };
  }

  #snapshot(set: ProviderSet, resolution: Resolution): CatalogSnapshot {
    const snapshot = catalogSnapshot(set, resolution.sources);
    // A credential change publishes a new revision even when availability reads the same.
    const hostRevision = `catalog-${createHash("sha256").update(`${snapshot.hostRevision}\n${this.#store.revision()}`).digest("hex").slice(0, 32)}`;
    return { ...snapshot, hostRevision };
  }

  async catalog(): Promise<AuthorityResult<CatalogSnapshot>> {
    await this.#ready();
    return this.#providers((set) => ({ ok: true, value: this.#snapshot(set, this.#resolution(set)) }));
  }

  async listProviders(): Promise<AuthorityResult<SafeProviderSummary[]>> {
    await this.#ready();
    return this.#providers((set) => {
      const resolution = this.#resolution(set);
      return { ok: true, value: set.providers.map((provider) => this.#summary(provider, resolution)) };
    });
  }

  async getProvider(providerId: string): Promise<AuthorityResult<SafeProviderSummary>> {
    await this.#ready();
    return this.#provider(providerId, (provider, set) => ({ ok: true, value: this.#summary(provider, this.#resolution(set)) }));
  }

  async connectKey(providerId: string, apiKey: string, label: string | undefined): Promise<AuthorityResult<SafeProviderConnection>> {
    return this.#provider(providerId, (provider) => {
      if (typeof apiKey !== "string" || !API_KEY.test(apiKey)) {
        return invalid("Invalid request: body.apiKey: must be 1–8192 visible ASCII characters (no spaces, line breaks or control characters)");
      }
      if (label !== undefined && (typeof label !== "string" || !LABEL.test(label) || label.trim() === "")) {
        return invalid("Invalid request: body.label: must be 1–256 characters, not only spaces, without control characters");
      }
      if (provider.via !== undefined) return invalid(`Invalid request: provider "${provider.id}" takes its key via "${provider.via}"; connect "${provider.via}" instead`);
      if (!requiresCredential(provider)) return invalid(`Invalid request: provider "${provider.id}" authenticates with no credential; there is no key to connect`);
      const row = this.#store.connect(provider.id, `conn_${crypto.randomUUID()}`, apiKey, label ?? provider.id, Date.now());
      return { ok: true, value: safeConnection(row) };
    });
  }

  async relabelConnection(providerId: string, connectionId: string, label: string): Promise<AuthorityResult<SafeProviderConnection>> {
    return this.#provider(providerId, (provider) => {
      if (typeof label !== "string" || !LABEL.test(label) || label.trim() === "") {
        return invalid("Invalid request: body.label: must be 1–256 characters, not only spaces, without control characters");
      }
      const row = this.#store.relabel(provider.id, connectionId, label, Date.now());
      if (row === undefined) return this.#noConnection(provider.id, connectionId);
      return { ok: true, value: safeConnection(row) };
    });
  }

  async deleteConnection(providerId: string, connectionId: string): Promise<AuthorityResult<true>> {
    return this.#provider(providerId, (provider) => (this.#store.delete(provider.id, connectionId) ? { ok: true, value: true } : this.#noConnection(provider.id, connectionId)));
  }

  #noConnection<T>(providerId: string, connectionId: string): AuthorityResult<T> {
    return fail({ _tag: "ConnectionNotFound", providerId, connectionId, message: `Provider "${providerId}" has no stored connection ${connectionId}` });
  }

  /** For server objects only: each enabled provider's inference credential, resolved as the catalog shows it. */
  async refreshModels(providerId: string | undefined): Promise<AuthorityResult<RefreshProviderModelsResponse>> {
    await this.#ready();
    if (!this.#config.ok) return fail(this.#config.error);
    if (providerId !== undefined && this.#config.providers.provider(providerId) === undefined) {
      return fail({ _tag: "ProviderNotFound", providerId, message: `Provider "${providerId}" is not configured on this host` });
    }
    const outcomes = await this.#discover(providerId);
    return this.#providers((set) => {
      // The bundled catalog is all this host has: a provider that does not discover is unchanged.
      for (const provider of set.providers) {
        if ((providerId === undefined || provider.id === providerId) && !outcomes.has(provider.id)) outcomes.set(provider.id, { providerId: provider.id, status: "unchanged" });
      }
      const providers = [...outcomes.values()].sort((a, b) => (a.providerId < b.providerId ? -1 : a.providerId > b.providerId ? 1 : 0));
      return { ok: true, value: { providers, snapshot: this.#snapshot(set, this.#resolution(set)) } };
    });
  }

  async providerCredentials(): Promise<AuthorityResult<ProviderCredentials>> {
    await this.#ready();
    return this.#providers((set) => {
      const resolution = this.#resolution(set);
      const providers: Record<string, ProviderCredential> = {};
      for (const provider of set.providers) {
        if (resolution.unreadable.has(provider.id) && provider.via === undefined) {
          providers[provider.id] = {
            ok: false,
            reason: "reconnect_required",
            message: `Provider "${provider.id}" has a stored connection that cannot be read: connect a new key or delete the connection (the Worker secret is not used meanwhile).`,
          };
          continue;
        }
        const resolved = resolveCredential(provider, resolution.sources);
        if (!resolved.ok) providers[provider.id] = { ok: false, reason: resolved.reason, message: resolved.message };
        else {
          const origin = resolved.origin === "config" ? "environment" : resolved.origin;
          providers[provider.id] = resolved.secret !== undefined ? { ok: true, origin, key: resolved.secret.reveal() } : { ok: true, origin };
        }
      }
      return { ok: true, value: { hostRevision: this.#snapshot(set, resolution).hostRevision, providers } };
    });
  }
}
