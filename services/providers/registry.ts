// Longer than ~400 lines on purpose: the reference's resolution rules (the map, enabled,
// definitions, via, native providers) are applied in one pass, in the order they are stated.
// Provider resolution: the config's `providers` map + the catalog → the set of providers and
// models this host can address (`ProviderSet`). Reference rules:
//
// - No map: OpenAI, OpenCode Go and OpenRouter. An empty map fails (`ProvidersEmpty`). With a
//   map, only listed entries are compiled, and `enabled: false` (or `false`) disables one.
// - `true` / `{}` enables a catalog provider with its catalog transport and models. A provider
//   the catalog does not know needs a `definition` with at least `baseURL` and `protocol`.
// - `base` makes a named entry inherit a catalog provider's transport and models; it cannot name
//   the entry itself or an entry that has a `base` (no chains), and must be a catalog provider.
// - Definition fields override the catalog (display name, base URL, protocol, routes,
//   authentication, headers, credential environment names); `definition.models` entries take
//   precedence over catalog models field by field. Unknown models default to text in/out with
//   tools on; unknown limits stay 0.
// - `options` overrides `baseURL` (over every other root, per-model ones included), `headers`,
//   the request `timeout` / `requestTimeoutMs`, and `apiKey` (held as a `Secret`).
import type {
  ModelCapabilities,
  ModelDefaults,
  ModelLimits,
  ModelPricing,
} from "../../generated/client/types.gen.js";
import type { ProviderEntry } from "../config/types.js";
import { validateBaseURL, validateRoute, joinEndpoint } from "./base-url.js";
import { bundledCatalog, parseModelRef } from "./catalog.js";
import { checkDefinition, checkOptions, type LoginDefinition, type ModelDefinition, type ProviderDefinition } from "./definition.js";
import { providerInvalid, providersEmpty, type ProviderResult } from "./errors.js";
import {
  IMAGE_MIME_TYPES,
  SUPPORTED_REASONING_EFFORTS,
  isValidProviderId,
  type CatalogModelRecord,
  type CatalogProviderRecord,
  type NormalizedCatalog,
} from "./models-dev.js";
import { DEFAULT_ROUTES, defaultAuthentication, type Authentication, type ModelProtocol } from "./protocol.js";
import { discoveredRecord, type DiscoveredModel } from "./discovered.js";
import { Secret } from "./secret.js";
import type { Env } from "../config/paths.js";
import { TAP_PROVIDER_ID, withTapPreset, type ViaRoute } from "./tap.js";
import { routeVia } from "./via.js";
import { checkNativeDefinitions, compileWithNative, type NativeBinding } from "./native.js";

/** The providers enabled when the config has no `providers` map. */
export const DEFAULT_PROVIDER_IDS: readonly string[] = ["openai", "opencode-go", "openrouter"];

/** A model this host can address: everything an adapter needs except the credential. */
export interface ResolvedModel {
  /** `provider/model`. */
  readonly ref: string;
  readonly providerId: string;
  readonly id: string;
  /** The ID sent on the wire. */
  readonly upstreamId: string;
  readonly displayName: string;
  readonly protocol: ModelProtocol;
  /** The full endpoint URL (`<baseURL>/<route>` for `protocol`). */
  readonly endpoint: string;
  /** The effective rule: explicit, else the protocol's default. */
  readonly authentication: Authentication;
  /** Static headers (definition, then options). */
  readonly headers: Readonly<Record<string, string>>;
  /** The provider's request deadline; undefined = unlimited. */
  readonly timeoutMs?: number;
  readonly capabilities: ModelCapabilities;
  readonly reasoning: boolean;
  readonly temperature: boolean;
  readonly limits: ModelLimits;
  readonly pricing: ModelPricing;
  readonly defaults: ModelDefaults;
  /** Set when the provider's requests go through a key holder's gateway (`via`, e.g. TAP). */
  readonly via?: ViaRoute;
  /** Set for a model of a code-defined native provider: its requests go to the definition's model service. */
  readonly native?: NativeBinding;
}

/** A compiled `providers.<id>` entry (or a default provider). Holds no secret in plain form. */
export interface ResolvedProvider {
  readonly id: string;
  readonly displayName: string;
  readonly enabled: boolean;
  /** The catalog provider a named entry inherits from. */
  readonly base?: string;
  /** The provider that holds this provider's key (`tap`): requests go through its gateway with its sign-in. */
  readonly via?: string;
  /** The compiled provider `via` names (its credential authenticates this provider's requests). */
  readonly holder?: ResolvedProvider;
  readonly baseURL: string;
  readonly protocol: ModelProtocol;
  readonly routes: Readonly<Record<ModelProtocol, string>>;
  /** The explicit rule, when the definition gives one (else each model uses its protocol's default). */
  readonly authentication?: Authentication;
  readonly headers: Readonly<Record<string, string>>;
  readonly timeoutMs?: number;
  /** Environment variables that may hold the credential, in lookup order. */
  readonly environment: readonly string[];
  /** `options.apiKey`, redacted in JSON and logs. */
  readonly configuredKey?: Secret;
  /**
   * Whether the discovery step (`discovery.ts`) lists `GET <baseURL>/models`: `definition.discovery`,
   * else true for a provider the catalog does not know that declares no `models` map.
   */
  readonly discovery: boolean;
  /** How the provider signs in on the host: `definition.login`, else the built-in preset's (`openai`: the ChatGPT login). */
  readonly login?: LoginDefinition;
  /** Sorted by model ID. */
  readonly models: readonly ResolvedModel[];
}

export interface ProviderSet {
  /** Every compiled entry, disabled ones included, sorted by ID. */
  readonly providers: readonly ResolvedProvider[];
  provider(id: string): ResolvedProvider | undefined;
  /** A model of an enabled provider, by `provider/model` reference. */
  model(ref: string): ResolvedModel | undefined;
}

/** Does a request to this provider carry a credential? */
export const requiresCredential = (provider: ResolvedProvider): boolean => provider.authentication?.kind !== "none";

export interface ResolveProvidersOptions {
  /** Defaults to the bundled catalog. */
  readonly catalog?: NormalizedCatalog;
  /** Models each provider's discovery found, by provider ID: added to its catalog models; `definition.models` still wins. */
  readonly discovered?: Readonly<Record<string, readonly DiscoveredModel[]>>;
  /** The host environment: `ZE_HARNESS_TAP_BASE_URL` places the `tap` preset. */
  readonly env?: Env;
  /** Native provider definitions by configured provider ID (the SDK's `providerDefinitions`; see native.ts). */
  readonly definitions?: Readonly<Record<string, unknown>>;
}

const UNKNOWN_MODEL: Omit<CatalogModelRecord, "id" | "displayName" | "protocol"> = {
  capabilities: { input: ["text"], output: ["text"], tools: true },
  reasoning: false,
  temperature: true,
  limits: { contextUnits: 0, outputUnits: 0 },
  pricing: { version: "unknown" },
};

function mergeCapabilities(base: CatalogModelRecord, override: ModelDefinition["capabilities"]): { capabilities: ModelCapabilities; reasoning: boolean; temperature: boolean } {
  const reasoning = override?.reasoning ?? base.reasoning;
  const temperature = override?.temperature ?? base.temperature;
  const input = override?.input ?? base.capabilities.input;
  const image = input.includes("image")
    ? (override?.image ?? base.capabilities.image ?? { referenceTypes: ["url", "base64"], mimeTypes: [...IMAGE_MIME_TYPES] })
    : undefined;
  const efforts = override?.reasoningEfforts ?? (reasoning ? (base.capabilities.reasoningEfforts ?? [...SUPPORTED_REASONING_EFFORTS]) : undefined);
  return {
    capabilities: {
      input: [...input],
      output: [...(override?.output ?? base.capabilities.output)],
      tools: override?.tools ?? base.capabilities.tools,
      ...(image !== undefined ? { image } : {}),
      ...(efforts !== undefined ? { reasoningEfforts: [...efforts] } : {}),
    },
    reasoning,
    temperature,
  };
}

interface Composition {
  readonly id: string;
  readonly start: CatalogProviderRecord | undefined;
  readonly definition: ProviderDefinition;
  readonly optionsBaseURL: string | undefined;
  readonly providerBaseURL: string;
  readonly protocol: ModelProtocol;
  readonly routes: Readonly<Record<ModelProtocol, string>>;
  readonly authentication: Authentication | undefined;
  readonly headers: Readonly<Record<string, string>>;
  readonly timeoutMs: number | undefined;
  readonly catalog: NormalizedCatalog;
  readonly discovered: readonly DiscoveredModel[] | undefined;
}

function composeModels(c: Composition): ProviderResult<ResolvedModel[]> {
  const records = new Map<string, { record: CatalogModelRecord; override?: ModelDefinition }>();
  for (const [modelId, record] of Object.entries(c.start?.models ?? {})) {
    // A provider-level protocol override applies to every catalog model of the provider.
    records.set(modelId, { record: c.definition.protocol !== undefined ? { ...record, protocol: c.definition.protocol } : record });
  }
  // Discovery adds models (it never replaces a catalog model); configured overrides still win below.
  for (const model of c.discovered ?? []) {
    if (records.has(model.id)) continue;
    records.set(model.id, { record: discoveredRecord(model, { start: c.start, catalog: c.catalog, protocol: c.protocol }) });
  }
  for (const [modelId, override] of Object.entries(c.definition.models ?? {})) {
    const record = records.get(modelId)?.record ?? { ...UNKNOWN_MODEL, id: modelId, displayName: modelId, protocol: c.protocol };
    records.set(modelId, { record, override });
  }
  const models: ResolvedModel[] = [];
  for (const modelId of [...records.keys()].sort()) {
    const { record, override } = records.get(modelId)!;
    let root = c.optionsBaseURL;
    if (root === undefined && override?.baseURL !== undefined) {
      const checked = validateBaseURL(override.baseURL);
      if (!checked.ok) return { ok: false, error: providerInvalid(c.id, `/definition/models/${modelId.replace(/~/g, "~0").replace(/\//g, "~1")}/baseURL`, checked.message) };
      root = checked.url;
    }
    if (root === undefined && record.baseURL !== undefined) {
      const checked = validateBaseURL(record.baseURL);
      root = checked.ok ? checked.url : undefined;
    }
    root ??= c.providerBaseURL;
    const protocol = override?.protocol ?? record.protocol;
    const merged = mergeCapabilities(record, override?.capabilities);
    models.push({
      ref: `${c.id}/${modelId}`,
      providerId: c.id,
      id: modelId,
      upstreamId: override?.upstreamId ?? modelId,
      displayName: override?.displayName ?? record.displayName,
      protocol,
      endpoint: joinEndpoint(root, c.routes[protocol]),
      authentication: c.authentication ?? defaultAuthentication(protocol),
      headers: c.headers,
      ...(c.timeoutMs !== undefined ? { timeoutMs: c.timeoutMs } : {}),
      capabilities: merged.capabilities,
      reasoning: merged.reasoning,
      temperature: merged.temperature,
      limits: { ...record.limits, ...(override?.limits ?? {}) },
      pricing: record.pricing,
      defaults: {},
    });
  }
  return { ok: true, value: models };
}

function compileEntry(
  id: string,
  entry: ProviderEntry,
  entries: Readonly<Record<string, ProviderEntry>>,
  catalog: NormalizedCatalog,
  discovered?: readonly DiscoveredModel[],
): ProviderResult<ResolvedProvider> {
  if (!isValidProviderId(id)) {
    return { ok: false, error: providerInvalid(id, "", "a provider ID is lowercase letters and digits joined by `.`, `_` or `-` (at most 128 characters)") };
  }
  const config = typeof entry === "boolean" ? {} : entry;
  const enabled = entry !== false && config.enabled !== false;

  const options = checkOptions(config.options);
  if (!options.ok) return { ok: false, error: providerInvalid(id, `/options${options.path}`, options.message) };
  let definition: ProviderDefinition = {};
  if (config.definition !== undefined) {
    const checked = checkDefinition(config.definition);
    if (!checked.ok) return { ok: false, error: providerInvalid(id, `/definition${checked.path}`, checked.message) };
    definition = checked.value;
  }

  let start: CatalogProviderRecord | undefined;
  if (config.base !== undefined) {
    const base = config.base;
    if (base === id) return { ok: false, error: providerInvalid(id, "/base", "a provider cannot use itself as its base") };
    const named = entries[base];
    if (named !== undefined && typeof named === "object" && named.base !== undefined) {
      return { ok: false, error: providerInvalid(id, "/base", `"${base}" has a base itself; bases cannot chain`) };
    }
    start = Object.hasOwn(catalog.providers, base) ? catalog.providers[base] : undefined;
    if (start === undefined) return { ok: false, error: providerInvalid(id, "/base", `"${base}" is not a catalog provider`) };
  } else {
    start = Object.hasOwn(catalog.providers, id) ? catalog.providers[id] : undefined;
    if (start === undefined) {
      if (config.definition === undefined) {
        return {
          ok: false,
          error: providerInvalid(id, "", "the catalog does not know this provider: give it a definition (baseURL, protocol, authentication, models) or a base"),
        };
      }
      if (definition.baseURL === undefined) return { ok: false, error: providerInvalid(id, "/definition/baseURL", "a provider the catalog does not know needs a baseURL") };
      if (definition.protocol === undefined) return { ok: false, error: providerInvalid(id, "/definition/protocol", "a provider the catalog does not know needs a protocol (chat, responses or messages)") };
    }
  }

  let optionsBaseURL: string | undefined;
  if (options.value.baseURL !== undefined) {
    const checked = validateBaseURL(options.value.baseURL);
    if (!checked.ok) return { ok: false, error: providerInvalid(id, "/options/baseURL", checked.message) };
    optionsBaseURL = checked.url;
  }
  let providerBaseURL: string;
  if (optionsBaseURL !== undefined) providerBaseURL = optionsBaseURL;
  else if (definition.baseURL !== undefined) {
    const checked = validateBaseURL(definition.baseURL);
    if (!checked.ok) return { ok: false, error: providerInvalid(id, "/definition/baseURL", checked.message) };
    providerBaseURL = checked.url;
  } else {
    const checked = validateBaseURL(start?.baseURL);
    if (!checked.ok) return { ok: false, error: providerInvalid(id, "", `the catalog base URL is unusable: ${checked.message}`) };
    providerBaseURL = checked.url;
  }

  const routes: Record<ModelProtocol, string> = { ...DEFAULT_ROUTES };
  for (const [protocol, value] of Object.entries(definition.routes ?? {}) as [ModelProtocol, string | undefined][]) {
    if (value === undefined) continue;
    const route = validateRoute(value);
    if (route === undefined) {
      return { ok: false, error: providerInvalid(id, `/definition/routes/${protocol}`, "a route is a relative path without query, fragment or `..` segments") };
    }
    routes[protocol] = route;
  }

  const timeout = options.value.requestTimeoutMs !== undefined ? options.value.requestTimeoutMs : options.value.timeout;
  const timeoutMs = typeof timeout === "number" ? timeout : undefined;
  const protocol = definition.protocol ?? start!.protocol;
  const headers = { ...(definition.headers ?? {}), ...(options.value.headers ?? {}) };
  const composition: Composition = {
    id,
    start,
    definition,
    optionsBaseURL,
    providerBaseURL,
    protocol,
    routes,
    authentication: definition.authentication,
    headers,
    timeoutMs,
    catalog,
    discovered,
  };
  const models = composeModels(composition);
  if (!models.ok) return models;

  const displayName =
    definition.displayName ?? (config.base !== undefined && start !== undefined ? `${start.displayName} (${id})` : (start?.displayName ?? id));
  return {
    ok: true,
    value: {
      id,
      displayName,
      enabled,
      ...(config.base !== undefined ? { base: config.base } : {}),
      ...(config.via !== undefined ? { via: config.via } : {}),
      baseURL: providerBaseURL,
      protocol,
      routes,
      ...(definition.authentication !== undefined ? { authentication: definition.authentication } : {}),
      headers,
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
      environment: [...(definition.credentials?.environment ?? start?.environment ?? [])],
      ...(options.value.apiKey !== undefined ? { configuredKey: new Secret(options.value.apiKey) } : {}),
      // The tap preset keeps discovering its models (`GET <base>/models`) whatever the catalog lists.
      discovery: definition.discovery ?? ((config.base ?? id) === TAP_PROVIDER_ID || (start === undefined && definition.models === undefined)),
      ...loginOf(definition, config.base ?? id),
      models: models.value,
    },
  };
}

/** Built-in presets' logins, by catalog provider ID. */
const PRESET_LOGINS: Readonly<Record<string, LoginDefinition>> = { openai: { module: "codex" }, tap: { module: "tap" } };

function loginOf(definition: ProviderDefinition, catalogId: string): { login?: LoginDefinition } {
  if (definition.login !== undefined) return { login: definition.login };
  const preset = Object.hasOwn(PRESET_LOGINS, catalogId) ? PRESET_LOGINS[catalogId] : undefined;
  return preset !== undefined ? { login: preset } : {};
}

/** Compiles the `providers` map (or the defaults when it is absent). */
export function resolveProviders(
  providers: { readonly [id: string]: ProviderEntry } | undefined,
  options: ResolveProvidersOptions = {},
): ProviderResult<ProviderSet> {
  let catalog = options.catalog ?? bundledCatalog();
  let entries: Readonly<Record<string, ProviderEntry>>;
  if (providers === undefined) {
    entries = Object.fromEntries(DEFAULT_PROVIDER_IDS.filter((id) => Object.hasOwn(catalog.providers, id)).map((id) => [id, true]));
  } else {
    if (Object.keys(providers).length === 0) return { ok: false, error: providersEmpty() };
    entries = providers;
  }
  // The tap preset joins the catalog (its URL over a catalog section's) when an entry uses it.
  const withTap = withTapPreset(catalog, entries, options.env);
  if (!withTap.ok) return withTap;
  catalog = withTap.value;
  const natives = checkNativeDefinitions(options.definitions, entries);
  if (!natives.ok) return natives;
  const compiled: ResolvedProvider[] = [];
  for (const id of Object.keys(entries).sort()) {
    const entry = entries[id]!;
    const known = Object.hasOwn(catalog.providers, (typeof entry === "object" ? entry.base : undefined) ?? id);
    const result = compileWithNative(id, entry, natives.value.get(id), known, (prepared) => compileEntry(id, prepared, entries, catalog, options.discovered?.[id]));
    if (!result.ok) return result;
    compiled.push(result.value);
  }
  const routed = routeVia(compiled);
  if (!routed.ok) return routed;
  return { ok: true, value: providerSet(routed.value) };
}

/** A `ProviderSet` over already compiled providers. */
export function providerSet(providers: readonly ResolvedProvider[]): ProviderSet {
  const byId = new Map(providers.map((provider) => [provider.id, provider]));
  const models = new Map<string, ResolvedModel>();
  for (const provider of providers) {
    if (!provider.enabled) continue;
    for (const model of provider.models) models.set(model.ref, model);
  }
  return {
    providers,
    provider: (id) => byId.get(id),
    model: (ref) => {
      const parts = parseModelRef(ref);
      return parts === undefined ? undefined : models.get(`${parts.providerId}/${parts.modelId}`);
    },
  };
}
