// The safe, contract-typed views of the providers: `SafeProviderSummary` (provider list) and
// `CatalogSnapshot` (the host model catalog). Built from names, availability and metadata
// only — no credential value can reach them (resolved keys are `Secret`s and never read here).
import { createHash } from "node:crypto";
import type {
  CatalogAvailability,
  CatalogModel,
  CatalogProvider,
  CatalogSnapshot,
  ProviderCredentialSource,
  SafeProviderSummary,
} from "../../generated/client/types.gen.js";
import { resolveCredential, storedConnection, type CredentialOrigin, type CredentialResolution, type CredentialSources } from "./credentials.js";
import { loginMethodsOf } from "./login/methods.js";
import { requiresCredential, type ProviderSet, type ResolvedProvider } from "./registry.js";
import { servedCatalogEntries, type ServedModel } from "./served.js";

/** The contract's credential source: a configured `options.apiKey` is host-supplied, like the environment. */
const SOURCES: Readonly<Record<CredentialOrigin, ProviderCredentialSource>> = {
  config: "environment",
  environment: "environment",
  stored: "stored",
  none: "none",
  via: "via",
};

function availabilityOf(credential: CredentialResolution): CatalogAvailability {
  return credential.ok ? { status: "available" } : { status: "unavailable", reason: credential.reason };
}

export function providerSummary(provider: ResolvedProvider, sources: CredentialSources): SafeProviderSummary {
  const credential = resolveCredential(provider, sources);
  // A `via` provider's own stored key is not what authenticates it: no connection is shown.
  const connection = provider.via === undefined ? storedConnection(provider, sources) : undefined;
  const logins = loginMethodsOf(provider);
  const source: ProviderCredentialSource = provider.via !== undefined ? "via" : credential.ok ? SOURCES[credential.origin] : "none";
  return {
    id: provider.id,
    displayName: provider.displayName,
    availability: availabilityOf(credential),
    source,
    ...(provider.via !== undefined ? { via: provider.via } : {}),
    ...(connection !== undefined ? { connection } : {}),
    methods: [...(requiresCredential(provider) && provider.via === undefined ? (["api_key"] as const) : []), ...(logins.length > 0 ? (["oauth"] as const) : [])],
    logins,
  };
}

/** Every compiled provider's safe summary, in ID order. */
export function providerSummaries(set: ProviderSet, sources: CredentialSources): SafeProviderSummary[] {
  return set.providers.map((provider) => providerSummary(provider, sources));
}

export interface CatalogSnapshotOptions {
  /** The configured `model`: the default when it names an available model. */
  readonly defaultModel?: string;
  /** Served (plugin) models, listed after the composed ones (served.ts); a configured default may name one. */
  readonly served?: readonly ServedModel[];
}

/**
 * The host catalog: every compiled provider, and the models of enabled ones, each with the
 * availability of its provider's credential. `hostRevision` is a content hash, so an unchanged
 * catalog keeps its revision across restarts and any change (a credential appearing) moves it.
 */
export function catalogSnapshot(set: ProviderSet, sources: CredentialSources, options: CatalogSnapshotOptions = {}): CatalogSnapshot {
  const providers: CatalogProvider[] = [];
  const models: CatalogModel[] = [];
  for (const provider of set.providers) {
    const availability = availabilityOf(resolveCredential(provider, sources));
    providers.push({ id: provider.id, displayName: provider.displayName, availability });
    if (!provider.enabled) continue;
    for (const model of provider.models) {
      models.push({
        providerId: model.providerId,
        ref: model.ref,
        id: model.id,
        upstreamId: model.upstreamId,
        displayName: model.displayName,
        capabilities: model.capabilities,
        limits: model.limits,
        pricing: model.pricing,
        defaults: model.defaults,
        availability,
      });
    }
  }
  const served = servedCatalogEntries(options.served ?? [], models, new Set(set.providers.map((provider) => provider.id)));
  // With no configured default, the first available composed ref (a served model is chosen only by name).
  const fallback = models.filter((model) => model.availability.status === "available").sort((a, b) => (a.ref < b.ref ? -1 : a.ref > b.ref ? 1 : 0))[0]?.ref;
  providers.push(...served.providers);
  models.push(...served.models);
  models.sort((a, b) => (a.ref < b.ref ? -1 : a.ref > b.ref ? 1 : 0));
  const available = models.filter((model) => model.availability.status === "available");
  const configured = options.defaultModel;
  // The configured default only when it is available; with no configured default, the first available ref.
  const defaultModel = configured !== undefined ? available.find((model) => model.ref === configured)?.ref : fallback;
  const hostRevision = `catalog-${createHash("sha256").update(JSON.stringify({ providers, models, defaultModel })).digest("hex").slice(0, 32)}`;
  return { hostRevision, ...(defaultModel !== undefined ? { defaultModel } : {}), providers, models };
}
