// Discovered models (`GET <baseURL>/models`) as catalog records. The endpoint supplies IDs (and
// sometimes `owned_by`, `context_length` / `max_model_len`); a recognized ID is enriched with the
// catalog's capabilities, limits and pricing — preferring the provider's own catalog entry, then
// the `owned_by` provider, then a qualified `provider/model` ID, then a bare ID that exactly one
// catalog provider lists. The record never inherits another provider's endpoint or protocol: the
// discovering provider's own transport serves it. Unknown IDs are text in/out with tools on, and
// unknown limits stay 0 (no window is guessed).
import type { CatalogModelRecord, CatalogProviderRecord, NormalizedCatalog } from "./models-dev.js";
import type { ModelProtocol } from "./protocol.js";

/** One model a provider's `/models` endpoint listed. */
export interface DiscoveredModel {
  readonly id: string;
  /** The endpoint's `owned_by`, when it names a provider. */
  readonly ownedBy?: string;
  /** `context_length` or `max_model_len`, when the endpoint supplies one. */
  readonly contextUnits?: number;
  /** `max_output_tokens` / `max_completion_tokens`, when the endpoint supplies one. */
  readonly outputUnits?: number;
}

const own = <T>(record: Readonly<Record<string, T>> | undefined, key: string): T | undefined =>
  record !== undefined && Object.hasOwn(record, key) ? record[key] : undefined;

function recognized(model: DiscoveredModel, start: CatalogProviderRecord | undefined, catalog: NormalizedCatalog): CatalogModelRecord | undefined {
  const direct = own(start?.models, model.id);
  if (direct !== undefined) return direct;
  if (model.ownedBy !== undefined) {
    const owner = own(own(catalog.providers, model.ownedBy)?.models, model.id);
    if (owner !== undefined) return owner;
  }
  const slash = model.id.indexOf("/");
  if (slash > 0) {
    const qualified = own(own(catalog.providers, model.id.slice(0, slash))?.models, model.id.slice(slash + 1));
    if (qualified !== undefined) return qualified;
  }
  const matches = Object.values(catalog.providers)
    .map((provider) => own(provider.models, model.id))
    .filter((record): record is CatalogModelRecord => record !== undefined);
  return matches.length === 1 ? matches[0] : undefined;
}

/** The catalog record a discovered model stands for, served by the discovering provider over `protocol`. */
export function discoveredRecord(
  model: DiscoveredModel,
  options: { readonly start: CatalogProviderRecord | undefined; readonly catalog: NormalizedCatalog; readonly protocol: ModelProtocol },
): CatalogModelRecord {
  const found = recognized(model, options.start, options.catalog);
  const base: CatalogModelRecord = found
    ? { ...found, id: model.id, protocol: options.protocol }
    : {
        id: model.id,
        displayName: model.id.slice(0, 256),
        protocol: options.protocol,
        capabilities: { input: ["text"], output: ["text"], tools: true },
        reasoning: false,
        temperature: true,
        limits: { contextUnits: 0, outputUnits: 0 },
        pricing: { version: "unknown" },
      };
  // Never another provider's endpoint: drop a per-model root inherited from the catalog match.
  const { baseURL: _inherited, ...record } = base;
  return {
    ...record,
    limits: {
      contextUnits: model.contextUnits ?? record.limits.contextUnits,
      outputUnits: model.outputUnits ?? record.limits.outputUnits,
    },
  };
}
