// WorkerHarnessHost's configuration as plain options (what worker/config.ts reads from Worker
// variables for the standalone object), compiled once per wake into the `WorkerConfig` the Turn
// composition takes — plus the two embedder choices the standalone Worker does not have:
//
// - `unknownProviders`: `'fail'` (default) refuses the host when a `providers` id has no catalog
//   entry, no `base` and no complete `definition` (baseURL and protocol); `'report'` leaves such
//   ids out and lists each on `resources().rejectedProviders` as `{ providerId, message }` (the
//   message names the id only, never an option value).
// - `modelCatalog: { document, publishedAt }`: a models.dev-format document the embedder fetched,
//   normalized as the Node host's refresh does, used only when valid and published (epoch ms) at or
//   after the bundled snapshot was built; otherwise the bundled snapshot, with the reason on
//   `resources().modelCatalog.diagnostic`. Never a construction failure.
import { createHash } from "node:crypto";
import type { ProviderDefinition } from "../plugin/provider.js";
import type { Config, PermissionRule, ProviderEntry } from "../services/config/index.js";
import { bundledCatalog } from "../services/providers/catalog.js";
import { normalizeModelsDev, type NormalizedCatalog } from "../services/providers/models-dev.js";
import { describeProviderError, resolveProviders } from "../services/providers/index.js";
import { checkPermissionRules, type WorkerConfig, type WorkerConfigResult } from "./config.js";

/** The `providers` option: the Node config file's provider map (an allowlist; absent: the defaults). */
export type ProviderConfigMap = { readonly [id: string]: ProviderEntry };

/**
 * The `providerDefinitions` option: embedder-implemented providers (`defineProvider` /
 * `makeCompatibleProviderDefinition`) keyed by a configured provider id, compiled into the plan as
 * the Node host's `providerDefinitions` (services/providers/native.ts).
 */
export type ProviderDefinitionMap = { readonly [id: string]: ProviderDefinition<never> };

/** A published models.dev-format catalog the embedder fetched. */
export interface WorkerModelCatalog {
  /** The parsed JSON document, unmodified. */
  readonly document: unknown;
  /** When it was published (the response's `Last-Modified`), in epoch milliseconds. */
  readonly publishedAt: number;
}

/** Which catalog the host compiled its providers against. */
export interface WorkerModelCatalogStatus {
  readonly source: "supplied" | "bundled";
  /** SHA-256 (hex) of the compiled catalog's providers. */
  readonly contentRevision: string;
  /** The supplied catalog's publish time, or the bundled snapshot's build time (epoch ms). */
  readonly publishedAt: number | undefined;
  /** Why a supplied catalog was not used. */
  readonly diagnostic?: string;
}

export interface RejectedProvider {
  readonly providerId: string;
  readonly message: string;
}

/** The configuration part of `WorkerHarnessHostOptions` (the standalone Worker's variables, as values). */
export interface WorkerHostSettings {
  /** The provider map (`HARNESS_PROVIDERS`); absent: openai, opencode-go, openrouter. */
  readonly providers?: ProviderConfigMap;
  /** The host's model (`HARNESS_MODEL`); absent: the first available model. */
  readonly model?: string;
  /** Ordered rules: the Server permission scope (`HARNESS_PERMISSIONS`). */
  readonly permissions?: readonly PermissionRule[];
  /** `HARNESS_PERMISSION_CASE_SENSITIVE`; default true. */
  readonly permissionCaseSensitive?: boolean;
  /** Positive milliseconds or `'unlimited'` (`HARNESS_APPROVAL_TIMEOUT_MS`); absent: unlimited. */
  readonly approvalTimeoutMs?: number | "unlimited";
  /** CodeMode's `execute` (`HARNESS_CODEMODE_ENABLED`); default enabled. */
  readonly codemode?: { readonly enabled: boolean };
  readonly unknownProviders?: "fail" | "report";
  readonly modelCatalog?: WorkerModelCatalog;
  /** Embedder-implemented providers by configured provider id; an id `providers` does not list fails (or is reported under `unknownProviders: 'report'`). */
  readonly providerDefinitions?: ProviderDefinitionMap;
  /** `'injected-only'`: keys come only through the injected port (`providerKeys`): no discovery in `env`, and a configured `options.apiKey` is dropped. Default `'ambient'`. */
  readonly credentialMode?: "ambient" | "injected-only";
}

export interface CompiledHostSettings {
  readonly configured: WorkerConfig;
  readonly rejectedProviders: readonly RejectedProvider[];
  readonly catalog: ChosenCatalog;
}

interface ChosenCatalog {
  readonly catalog: NormalizedCatalog;
  readonly source: "supplied" | "bundled";
  readonly publishedAt: number | undefined;
  readonly diagnostic?: string;
}

export class ModelsDevSourceError extends Error {
  readonly _tag = "ModelsDevSourceError";
  override readonly name = "ModelsDevSourceError";
}

const time = (iso: string | undefined): number | undefined => {
  const value = iso === undefined ? Number.NaN : Date.parse(iso);
  return Number.isNaN(value) ? undefined : value;
};

/** The supplied catalog normalized, or why it cannot be used. */
function normalizeSupplied(supplied: WorkerModelCatalog): NormalizedCatalog | string {
  if (typeof supplied !== "object" || supplied === null) return "modelCatalog must be { document, publishedAt }";
  if (typeof supplied.publishedAt !== "number" || !Number.isFinite(supplied.publishedAt)) return "modelCatalog.publishedAt must be a finite epoch-millisecond number";
  const document = supplied.document;
  if (typeof document !== "object" || document === null || Array.isArray(document)) return "modelCatalog.document must be a models.dev-format JSON object";
  const catalog = normalizeModelsDev(document, "supplied modelCatalog (models.dev format)");
  if (Object.keys(catalog.providers).length === 0) return "modelCatalog.document lists no usable provider";
  return catalog;
}

/**
 * Applies the host's normalization to a fetched catalog without starting a host: resolves with the
 * normalized catalog, rejects with `ModelsDevSourceError` naming the problem.
 */
export async function validateModelCatalog(supplied: WorkerModelCatalog): Promise<NormalizedCatalog> {
  const normalized = normalizeSupplied(supplied);
  if (typeof normalized === "string") throw new ModelsDevSourceError(normalized);
  return normalized;
}

/** The supplied catalog when valid and not older than the bundled snapshot; else the bundled one and why. */
export function chooseModelCatalog(supplied: WorkerModelCatalog | undefined): ChosenCatalog {
  const bundle = bundledCatalog();
  const built = time(bundle.builtAt);
  const bundled = (diagnostic?: string): ChosenCatalog => ({ catalog: bundle, source: "bundled", publishedAt: built, ...(diagnostic !== undefined ? { diagnostic } : {}) });
  if (supplied === undefined) return bundled();
  const normalized = normalizeSupplied(supplied);
  if (typeof normalized === "string") return bundled(`the supplied model catalog was not used: ${normalized}`);
  if (built !== undefined && supplied.publishedAt < built) {
    return bundled(`the supplied model catalog was not used: published ${new Date(supplied.publishedAt).toISOString()}, before the bundled snapshot (${bundle.builtAt})`);
  }
  return { catalog: normalized, source: "supplied", publishedAt: supplied.publishedAt };
}

const revisions = new WeakMap<NormalizedCatalog, string>();

/** The catalog's content revision (hashed once per catalog object). */
export function catalogRevision(catalog: NormalizedCatalog): string {
  let revision = revisions.get(catalog);
  if (revision === undefined) {
    revision = createHash("sha256").update(JSON.stringify(catalog.providers)).digest("hex");
    revisions.set(catalog, revision);
  }
  return revision;
}

/** An id the catalog does not know, with no `base` and no complete definition (`unknownProviders` decides). */
function unknownProvider(id: string, entry: ProviderEntry, catalog: NormalizedCatalog, definitions: ProviderDefinitionMap | undefined): boolean {
  if (Object.hasOwn(catalog.providers, id)) return false;
  // An embedder-implemented provider is known through its definition.
  if (definitions !== undefined && Object.hasOwn(definitions, id)) return false;
  if (typeof entry !== "object" || entry === null) return true;
  if (entry.base !== undefined) return false;
  const definition = entry.definition as { baseURL?: unknown; protocol?: unknown } | undefined;
  return typeof definition !== "object" || definition === null || definition.baseURL === undefined || definition.protocol === undefined;
}

const invalid = (option: string, message: string): WorkerConfigResult & { ok: false } => ({ ok: false, tag: "ConfigInvalid", message: `WorkerHarnessHost option ${option}: ${message}` });

/** Compiles the host's settings; a refusal names the option (never its value). */
export function compileHostSettings(settings: WorkerHostSettings): { readonly ok: true; readonly value: CompiledHostSettings } | (WorkerConfigResult & { ok: false }) {
  const chosen = chooseModelCatalog(settings.modelCatalog);
  let permissions: PermissionRule[] | undefined;
  if (settings.permissions !== undefined) {
    const rules = checkPermissionRules(settings.permissions);
    if (typeof rules === "string") return invalid("permissions", rules);
    permissions = rules;
  }
  if (settings.permissionCaseSensitive !== undefined && typeof settings.permissionCaseSensitive !== "boolean") return invalid("permissionCaseSensitive", "must be a boolean");
  if (settings.codemode !== undefined && typeof settings.codemode?.enabled !== "boolean") return invalid("codemode", "must be { enabled: boolean }");
  let approval: Config["approval"];
  const timeout = settings.approvalTimeoutMs;
  if (timeout === "unlimited") approval = { timeoutMs: { kind: "unlimited" } };
  else if (timeout !== undefined) {
    if (typeof timeout !== "number" || !Number.isSafeInteger(timeout) || timeout < 1) return invalid("approvalTimeoutMs", 'must be a positive whole number of milliseconds or "unlimited"');
    approval = { timeoutMs: { kind: "finite", value: timeout } };
  }
  if (settings.unknownProviders !== undefined && settings.unknownProviders !== "fail" && settings.unknownProviders !== "report") return invalid("unknownProviders", 'must be "fail" or "report"');
  if (settings.credentialMode !== undefined && settings.credentialMode !== "ambient" && settings.credentialMode !== "injected-only") return invalid("credentialMode", 'must be "ambient" or "injected-only"');

  let providerMap = settings.providers;
  if (providerMap !== undefined && (typeof providerMap !== "object" || providerMap === null || Array.isArray(providerMap))) return invalid("providers", "must be an object mapping provider IDs to entries");
  const rejectedProviders: RejectedProvider[] = [];
  if (providerMap !== undefined && settings.unknownProviders === "report") {
    const kept: Record<string, ProviderEntry> = {};
    for (const [id, entry] of Object.entries(providerMap)) {
      if (unknownProvider(id, entry, chosen.catalog, settings.providerDefinitions)) {
        rejectedProviders.push({ providerId: id, message: `provider ${JSON.stringify(id)} is not in the model catalog and has no complete definition (baseURL, protocol): left out` });
      } else kept[id] = entry;
    }
    providerMap = kept;
  }
  let definitions = settings.providerDefinitions;
  if (definitions !== undefined && (typeof definitions !== "object" || definitions === null || Array.isArray(definitions))) return invalid("providerDefinitions", "must be an object mapping provider IDs to provider definitions");
  if (definitions !== undefined && settings.unknownProviders === "report") {
    // A definition for an id the (kept) providers do not list: left out and reported.
    const listed = providerMap ?? {};
    const kept: Record<string, ProviderDefinition<never>> = {};
    for (const [id, definition] of Object.entries(definitions)) {
      if (Object.hasOwn(listed, id)) kept[id] = definition;
      else if (!rejectedProviders.some((rejected) => rejected.providerId === id)) {
        rejectedProviders.push({ providerId: id, message: `providerDefinitions names provider ${JSON.stringify(id)}, which providers does not list: left out` });
      }
    }
    definitions = kept;
  }
  // Injected-only: a configured key counts for nothing (the reference: it "drops the config key").
  if (providerMap !== undefined && settings.credentialMode === "injected-only") providerMap = withoutConfiguredKeys(providerMap);
  const resolved = resolveProviders(providerMap as Parameters<typeof resolveProviders>[0], { catalog: chosen.catalog, ...(definitions !== undefined ? { definitions } : {}) });
  if (!resolved.ok) return { ok: false, tag: resolved.error._tag, message: `WorkerHarnessHost option providers: ${describeProviderError(resolved.error)}` };

  const model = settings.model;
  if (model !== undefined && model !== "" && resolved.value.model(model) === undefined) return invalid("model", "names no model of an enabled provider in providers");
  const config: Config = {
    ...(model !== undefined && model !== "" ? { model } : {}),
    ...(providerMap !== undefined ? { providers: providerMap } : {}),
    ...(permissions !== undefined ? { permissions } : {}),
    ...(settings.permissionCaseSensitive !== undefined ? { permissionMatching: { caseSensitive: settings.permissionCaseSensitive } } : {}),
    ...(approval !== undefined ? { approval } : {}),
    ...(settings.codemode !== undefined ? { codemode: { enabled: settings.codemode.enabled } } : {}),
  };
  return { ok: true, value: { configured: { config, providers: resolved.value }, rejectedProviders, catalog: chosen } };
}

function withoutConfiguredKeys(map: ProviderConfigMap): ProviderConfigMap {
  const out: Record<string, ProviderEntry> = {};
  for (const [id, entry] of Object.entries(map)) {
    if (typeof entry === "object" && entry !== null && typeof entry.options === "object" && entry.options !== null && Object.hasOwn(entry.options, "apiKey")) {
      const { apiKey: _dropped, ...options } = entry.options;
      out[id] = { ...entry, options };
    } else out[id] = entry;
  }
  return out;
}

/** The standalone object's settings: what worker/config.ts read from the Worker's variables, as values. */
export function settingsOfConfig(config: Config): WorkerHostSettings {
  const timeout = config.approval?.timeoutMs;
  return {
    ...(config.providers !== undefined ? { providers: config.providers } : {}),
    ...(config.model !== undefined ? { model: config.model } : {}),
    ...(config.permissions !== undefined ? { permissions: config.permissions } : {}),
    ...(config.permissionMatching?.caseSensitive !== undefined ? { permissionCaseSensitive: config.permissionMatching.caseSensitive } : {}),
    ...(timeout !== undefined ? { approvalTimeoutMs: timeout.kind === "unlimited" ? ("unlimited" as const) : timeout.value } : {}),
    ...(config.codemode?.enabled !== undefined ? { codemode: { enabled: config.codemode.enabled } } : {}),
  };
}
