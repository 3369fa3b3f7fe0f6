// The provider authority's RPC vocabulary, shared by the object (authority.ts) and its callers
// (the gateway's runtime routes and the server objects' key seam, authority-routes.ts): typed
// results whose failures carry a `_tag` the gateway maps to protocol errors. Only
// `providerCredentials()` carries key material, and only to server objects, never to a client.
import type { CatalogSnapshot, CatalogUnavailableReason, RefreshProviderModelsResponse, SafeProviderConnection, SafeProviderSummary } from "../generated/client/types.gen.js";
import type { AuthoritySetupError } from "./authority-config.js";

export const AUTHORITY_BINDING = "HARNESS_PROVIDER_AUTHORITY";
/** The singleton's name (`idFromName`): one authority per deployment. */
export const AUTHORITY_NAME = "provider-authority";

export type AuthorityError =
  /** `HARNESS_PROVIDERS` cannot be used: every operation answers it. */
  | AuthoritySetupError
  | { readonly _tag: "ProviderNotFound"; readonly providerId: string; readonly message: string }
  | { readonly _tag: "ConnectionNotFound"; readonly providerId: string; readonly connectionId: string; readonly message: string }
  /** Bad input: nothing was changed. */
  | { readonly _tag: "InvalidInput"; readonly message: string };

export type AuthorityResult<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: AuthorityError };

/** One provider's inference credential as a server object initializes with it. */
export type ProviderCredential =
  | { readonly ok: true; readonly origin: "stored" | "environment" | "none" | "via"; readonly key?: string }
  | { readonly ok: false; readonly reason: CatalogUnavailableReason; readonly message: string };

export interface ProviderCredentials {
  /** The catalog revision the credentials belong to (the snapshot's `hostRevision`). */
  readonly hostRevision: string;
  readonly providers: Readonly<Record<string, ProviderCredential>>;
}

/** The typed RPC methods of `HarnessProviderAuthorityObject`, as its stub offers them. */
export interface ProviderAuthorityRpc {
  catalog(): Promise<AuthorityResult<CatalogSnapshot>>;
  listProviders(): Promise<AuthorityResult<SafeProviderSummary[]>>;
  getProvider(providerId: string): Promise<AuthorityResult<SafeProviderSummary>>;
  connectKey(providerId: string, apiKey: string, label: string | undefined): Promise<AuthorityResult<SafeProviderConnection>>;
  relabelConnection(providerId: string, connectionId: string, label: string): Promise<AuthorityResult<SafeProviderConnection>>;
  deleteConnection(providerId: string, connectionId: string): Promise<AuthorityResult<true>>;
  /** Discovery again (for `providerId`, or every provider); the bundled catalog itself never changes. */
  refreshModels(providerId: string | undefined): Promise<AuthorityResult<RefreshProviderModelsResponse>>;
  providerCredentials(): Promise<AuthorityResult<ProviderCredentials>>;
}

export interface AuthorityNamespace {
  idFromName(name: string): unknown;
  get(id: unknown): ProviderAuthorityRpc;
}
