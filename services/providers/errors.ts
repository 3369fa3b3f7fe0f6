// Typed provider setup failures. Like the config service's errors: plain values with a literal
// `_tag`, returned (never thrown) inside a `ProviderResult`, so startup can fail loudly and a
// reload can keep the previous generation. Messages never contain option values (keys could be
// among them), only names and expectations.

/** `providers: {}` — an empty map fails startup instead of silently restoring the defaults. */
export interface ProvidersEmpty {
  readonly _tag: "ProvidersEmpty";
  /** Always `/providers`. */
  readonly path: string;
  readonly message: string;
}

/** One `providers.<id>` entry cannot be compiled: unknown provider, bad base, invalid definition or options. */
export interface ProviderInvalid {
  readonly _tag: "ProviderInvalid";
  readonly providerId: string;
  /** A JSON pointer into the config, e.g. `/providers/ollama/definition/baseURL`. */
  readonly path: string;
  readonly message: string;
}

export type ProviderSetupError = ProvidersEmpty | ProviderInvalid;

export type ProviderResult<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: ProviderSetupError };

export const providersEmpty = (): ProvidersEmpty => ({
  _tag: "ProvidersEmpty",
  path: "/providers",
  message: "the providers map is empty: list at least one provider, or remove the map to use the defaults (openai, opencode-go, openrouter)",
});

const escape = (segment: string): string => segment.replace(/~/g, "~0").replace(/\//g, "~1");

export const providerInvalid = (providerId: string, subpath: string, message: string): ProviderInvalid => ({
  _tag: "ProviderInvalid",
  providerId,
  path: `/providers/${escape(providerId)}${subpath}`,
  message,
});

/** One line for people: `/providers/x/definition: message`. */
export function describeProviderError(error: ProviderSetupError): string {
  return `${error.path}: ${error.message}`;
}
