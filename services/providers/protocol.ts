// The three native wire protocols and what each implies by default: the models.dev package
// that selects it, its endpoint route under a base URL, and its default authentication.

/** A native wire protocol: Chat Completions, Responses, or Anthropic Messages. */
export type ModelProtocol = "chat" | "responses" | "messages";

export const MODEL_PROTOCOLS: readonly ModelProtocol[] = ["chat", "responses", "messages"];

export const isModelProtocol = (value: unknown): value is ModelProtocol =>
  value === "chat" || value === "responses" || value === "messages";

/**
 * models.dev `npm` packages that map to a native protocol. Any other explicit package is
 * unknown and fails closed (the provider or model is dropped, never routed to a fallback wire).
 */
export const PACKAGE_PROTOCOLS: Readonly<Record<string, ModelProtocol>> = {
  "@ai-sdk/openai-compatible": "chat",
  "@ai-sdk/openai": "responses",
  "@ai-sdk/anthropic": "messages",
};

/** models.dev `provider.shape` values: a model's shape wins over its package. */
export const SHAPE_PROTOCOLS: Readonly<Record<string, ModelProtocol>> = {
  completions: "chat",
  responses: "responses",
};

/** The package each protocol is written back as (corrections are expressed in models.dev terms). */
export const PROTOCOL_PACKAGES: Readonly<Record<ModelProtocol, string>> = {
  chat: "@ai-sdk/openai-compatible",
  responses: "@ai-sdk/openai",
  messages: "@ai-sdk/anthropic",
};

/** The base URL a first-party package implies when models.dev gives no `api` for the provider. */
export const PACKAGE_BASE_URLS: Readonly<Record<string, string>> = {
  "@ai-sdk/openai": "https://api.openai.com/v1",
  "@ai-sdk/anthropic": "https://api.anthropic.com/v1",
};

/** Endpoint paths, joined under the provider's base URL (`<baseURL>/<route>`). */
export const DEFAULT_ROUTES: Readonly<Record<ModelProtocol, string>> = {
  chat: "chat/completions",
  responses: "responses",
  messages: "messages",
};

/** How a request carries the credential. */
export type Authentication =
  | { readonly kind: "bearer" }
  | { readonly kind: "header"; readonly name: string; readonly prefix?: string }
  | { readonly kind: "none" };

/** Chat and Responses authenticate with a bearer token; Messages with `x-api-key`. */
export function defaultAuthentication(protocol: ModelProtocol): Authentication {
  return protocol === "messages" ? { kind: "header", name: "x-api-key" } : { kind: "bearer" };
}
