// Served models: models that are not compiled from the `providers` map but served by code the
// host hands over (a plugin's `context.models.register`, services/plugins/models.ts). This is the
// registration seam between them and the catalog and gateway: a served model carries its catalog
// record and a `stream` that yields the same `ModelStreamEvent`s the adapters do (or throws a
// `ProviderFailure`), so a Turn runs it through the same model call, retries and settlement.
// It runs only while at least one composed (native) model is available: its `siblings`.
import type { CatalogAvailability, CatalogModel, CatalogProvider, ModelCapabilities, ModelDefaults, ModelLimits, ModelPricing, ReasoningEffort } from "../../generated/client/types.gen.js";
import type { ModelStreamEvent, ModelTool } from "./events.js";
import type { ModelMessage } from "./history.js";

/** One request to a served model: what the Turn loop sends any model, plus its call's identity. */
export interface ServedModelRequest {
  readonly system?: string;
  readonly messages: readonly ModelMessage[];
  readonly tools: readonly ModelTool[];
  readonly reasoningEffort?: ReasoningEffort;
  readonly signal: AbortSignal;
  /** Empty outside a Session. */
  readonly sessionId: string;
  /** Empty outside a Turn (titles, compaction). */
  readonly turnId: string;
  /** The available composed models (never served ones) at the call, sorted by ref; never empty. */
  readonly siblings: readonly CatalogModel[];
  /** One request to a sibling (`ref` one of `siblings`), through the host's own adapters and credentials. */
  readonly delegate: (ref: string, request: SiblingRequest) => AsyncIterable<ModelStreamEvent>;
}

/** A request a served model sends to a sibling. */
export interface SiblingRequest {
  readonly system?: string;
  readonly messages: readonly ModelMessage[];
  readonly tools: readonly ModelTool[];
  readonly reasoningEffort?: ReasoningEffort;
}

export interface ServedModel {
  /** `providerId/id`. */
  readonly ref: string;
  readonly providerId: string;
  readonly providerDisplayName: string;
  readonly id: string;
  readonly displayName: string;
  readonly capabilities: ModelCapabilities;
  readonly limits: ModelLimits;
  readonly pricing: ModelPricing;
  readonly defaults: ModelDefaults;
  /** Streams one attempt; throws a `ProviderFailure` on failure. */
  stream(request: ServedModelRequest): AsyncIterable<ModelStreamEvent>;
}

/** The message a Turn fails with when a served model has no sibling to run beside. */
export const NO_SIBLING_MESSAGE = "No configured sibling model is available";

/** `served` by ref (the first wins; a generation never holds two of one ref). */
export function servedModel(served: readonly ServedModel[], ref: string): ServedModel | undefined {
  return served.find((model) => model.ref === ref);
}

/**
 * The catalog entries of served models: their providers (the first declaration's display name)
 * and models, available while a sibling is, else `temporarily_unavailable`. Refs a composed
 * provider already lists are left out (a plugin may not name a native provider).
 */
export function servedCatalogEntries(served: readonly ServedModel[], composed: readonly CatalogModel[], composedProviders: ReadonlySet<string>): { providers: CatalogProvider[]; models: CatalogModel[] } {
  const availability: CatalogAvailability = composed.some((model) => model.availability.status === "available") ? { status: "available" } : { status: "unavailable", reason: "temporarily_unavailable" };
  const providers = new Map<string, CatalogProvider>();
  const models: CatalogModel[] = [];
  for (const model of served) {
    if (composedProviders.has(model.providerId)) continue;
    if (!providers.has(model.providerId)) providers.set(model.providerId, { id: model.providerId, displayName: model.providerDisplayName, availability });
    models.push({
      providerId: model.providerId,
      ref: model.ref,
      id: model.id,
      upstreamId: model.id,
      displayName: model.displayName,
      capabilities: model.capabilities,
      limits: model.limits,
      pricing: model.pricing,
      defaults: model.defaults,
      availability,
    });
  }
  return { providers: [...providers.values()], models };
}
