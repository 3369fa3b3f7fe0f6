// The bundled model catalog: a normalized models.dev snapshot shipped in the package
// (catalog/snapshot.json, written by tools/catalog/build.mjs; never fetched at run time), and
// lookups by `provider/model` reference.
import type { ModelCapabilities, ModelLimits } from "../../generated/client/types.gen.js";
import snapshot from "./catalog/snapshot.json" with { type: "json" };
import type { CatalogModelRecord, CatalogProviderRecord, NormalizedCatalog } from "./models-dev.js";

const bundled = snapshot as unknown as NormalizedCatalog;

/** The catalog bundled with this build. */
export function bundledCatalog(): NormalizedCatalog {
  return bundled;
}

/** A `provider/model` reference split at its first `/` (model IDs may contain `/`, provider IDs may not). */
export interface ModelRefParts {
  readonly providerId: string;
  readonly modelId: string;
}

export function parseModelRef(ref: string): ModelRefParts | undefined {
  const slash = ref.indexOf("/");
  if (slash <= 0 || slash === ref.length - 1) return undefined;
  return { providerId: ref.slice(0, slash), modelId: ref.slice(slash + 1) };
}

export const modelRef = (providerId: string, modelId: string): string => `${providerId}/${modelId}`;

/** A catalog provider by ID. */
export function catalogProvider(providerId: string, catalog: NormalizedCatalog = bundled): CatalogProviderRecord | undefined {
  return Object.hasOwn(catalog.providers, providerId) ? catalog.providers[providerId] : undefined;
}

/** A catalog model by `provider/model` reference. */
export function catalogModel(ref: string, catalog: NormalizedCatalog = bundled): CatalogModelRecord | undefined {
  const parts = parseModelRef(ref);
  if (parts === undefined) return undefined;
  const provider = catalogProvider(parts.providerId, catalog);
  if (provider === undefined || !Object.hasOwn(provider.models, parts.modelId)) return undefined;
  return provider.models[parts.modelId];
}

/** A catalog model's context and output limits (0 = not advertised). */
export function catalogModelLimits(ref: string, catalog: NormalizedCatalog = bundled): ModelLimits | undefined {
  return catalogModel(ref, catalog)?.limits;
}

/** What a model can do, in the three terms the Turn loop asks about. */
export interface ModelFeatures {
  readonly tools: boolean;
  readonly reasoning: boolean;
  readonly images: boolean;
}

export function featuresOf(model: { readonly capabilities: ModelCapabilities; readonly reasoning: boolean }): ModelFeatures {
  return {
    tools: model.capabilities.tools,
    reasoning: model.reasoning,
    images: model.capabilities.input.includes("image"),
  };
}

/** A catalog model's tools / reasoning / image-input support. */
export function catalogModelFeatures(ref: string, catalog: NormalizedCatalog = bundled): ModelFeatures | undefined {
  const model = catalogModel(ref, catalog);
  return model === undefined ? undefined : featuresOf(model);
}
