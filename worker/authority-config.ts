// The provider authority's configuration from Worker variables: `HARNESS_PROVIDERS` (the Node
// host's `providers` map as JSON; absent → OpenAI, OpenCode Go and OpenRouter) compiled against
// the bundled models.dev snapshot — the same `resolveProviders` the Node host runs — and the
// Worker's string bindings as the environment credentials are read from (secrets named by
// `definition.credentials.environment`). A map that enables nothing (`"{}"`), a value that is not
// a JSON object, or an entry carrying `options.apiKey` (secrets do not belong in a plain
// variable) is a typed setup error; messages name paths, never values.
import type { Env } from "../services/config/paths.js";
import type { ProviderEntry } from "../services/config/types.js";
import { bundledCatalog } from "../services/providers/catalog.js";
import type { DiscoveredModel } from "../services/providers/discovered.js";
import { providerInvalid, type ProviderSetupError } from "../services/providers/errors.js";
import { resolveProviders, type ProviderSet } from "../services/providers/registry.js";

export const PROVIDERS_VARIABLE = "HARNESS_PROVIDERS";

/** `HARNESS_PROVIDERS` is not a JSON object of provider entries. */
export interface ProvidersMalformed {
  readonly _tag: "ProvidersMalformed";
  readonly path: string;
  readonly message: string;
}

export type AuthoritySetupError = ProviderSetupError | ProvidersMalformed;

export type AuthorityConfig =
  | { readonly ok: true; readonly providers: ProviderSet; readonly map: Readonly<Record<string, ProviderEntry>> | undefined }
  | { readonly ok: false; readonly error: AuthoritySetupError };

const ENTRY_KEYS = new Set(["options", "enabled", "base", "via", "definition"]);
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** The Worker bindings that are strings (variables and secrets), as the environment credentials come from. */
export function workerEnvironment(bindings: Readonly<Record<string, unknown>>): Env {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(bindings)) if (typeof value === "string") env[name] = value;
  return env;
}

function malformed(path: string, message: string): { readonly ok: false; readonly error: AuthoritySetupError } {
  return { ok: false, error: { _tag: "ProvidersMalformed", path, message } };
}

/** Parses and checks `HARNESS_PROVIDERS` (undefined or blank: the defaults). */
export function parseProvidersVariable(value: string | undefined): { readonly ok: true; readonly map: Record<string, ProviderEntry> | undefined } | { readonly ok: false; readonly error: AuthoritySetupError } {
  if (value === undefined || value.trim() === "") return { ok: true, map: undefined };
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return malformed("/providers", `${PROVIDERS_VARIABLE} is not JSON: it must be a JSON object of provider entries`);
  }
  if (!isObject(parsed)) return malformed("/providers", `${PROVIDERS_VARIABLE} must be a JSON object of provider entries`);
  for (const [id, entry] of Object.entries(parsed)) {
    if (typeof entry === "boolean") continue;
    if (!isObject(entry)) return { ok: false, error: providerInvalid(id, "", "must be true, false or an object") };
    for (const key of Object.keys(entry)) if (!ENTRY_KEYS.has(key)) return { ok: false, error: providerInvalid(id, `/${key}`, "is not a provider entry field") };
    if (entry["enabled"] !== undefined && typeof entry["enabled"] !== "boolean") return { ok: false, error: providerInvalid(id, "/enabled", "must be a boolean") };
    for (const key of ["base", "via"] as const) {
      if (entry[key] !== undefined && typeof entry[key] !== "string") return { ok: false, error: providerInvalid(id, `/${key}`, "must be a string") };
    }
    if (entry["options"] !== undefined && !isObject(entry["options"])) return { ok: false, error: providerInvalid(id, "/options", "must be an object") };
    if (isObject(entry["options"]) && Object.hasOwn(entry["options"], "apiKey")) {
      return {
        ok: false,
        error: providerInvalid(id, "/options/apiKey", `must not be set in ${PROVIDERS_VARIABLE}: store a provider connection or name a Worker secret in definition.credentials.environment`),
      };
    }
  }
  return { ok: true, map: parsed as Record<string, ProviderEntry> };
}

/** Compiles the providers this deployment enables (with the bundled catalog and what discovery found). */
export function authorityConfig(env: Env, discovered: Readonly<Record<string, readonly DiscoveredModel[]>> = {}): AuthorityConfig {
  const parsed = parseProvidersVariable(env[PROVIDERS_VARIABLE]);
  if (!parsed.ok) return parsed;
  const resolved = resolveProviders(parsed.map, { catalog: bundledCatalog(), discovered, env });
  if (!resolved.ok) return { ok: false, error: resolved.error };
  return { ok: true, providers: resolved.value, map: parsed.map };
}
