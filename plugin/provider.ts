// `provider`: native LLM provider authoring (`defineProvider`, `makeCompatibleProviderDefinition`).
// A native provider module exports its `defineProvider(...)` value as a named export; an embedding
// program hands it to the SDK's `providerDefinitions` option keyed by a configured provider ID.
import type { JsonObject, JsonSchema } from "./json.js";
import type { PluginModelEvent, PluginModelRequest } from "./model.js";

/** A wire protocol of Ze's built-in adapters. */
export type ProviderProtocol = "chat" | "responses" | "messages";

/**
 * An opaque credential: it prints `<redacted>` in strings, JSON and `inspect`. Read it with
 * `revealRedacted` only where it goes on the wire.
 */
export interface Redacted {
  readonly _tag: "Redacted";
}

/** What `acquireModel` receives for one model of the provider. */
export interface ProviderModelAcquisitionInput<Options = JsonObject> {
  /** The configured provider ID (the key of `providerDefinitions` and of `providers`). */
  readonly providerId: string;
  /** Ze's model ID (`providerId/modelId` is the ref). */
  readonly modelId: string;
  /** The exact ID to send upstream. */
  readonly upstreamModelId: string;
  /** The per-model API root (or the provider's base URL), when one is configured. */
  readonly apiRoot: string | undefined;
  /** The model's selected wire protocol; a single-protocol provider may ignore it. */
  readonly protocol: ProviderProtocol;
  /** `providers.<id>.options` (without `apiKey`), already validated against `optionsSchema`. */
  readonly options: Options;
  /** The credential resolved live (config `apiKey`, `auth.json`, then environment); undefined without `credentials`. */
  readonly credentials: Redacted | undefined;
}

/** Per-call context of a native model stream. */
export interface ProviderStreamContext {
  /** Aborts on cancellation and at the request deadline. */
  readonly signal: AbortSignal;
  /** Empty when Core calls the model without a Session. */
  readonly sessionId: string;
}

/**
 * The model service `acquireModel` returns. `stream` MUST return its iterable synchronously (not a
 * Promise): put asynchronous work inside it (an `async function*` does exactly that).
 */
export interface ProviderModelService {
  readonly stream: (request: PluginModelRequest, context: ProviderStreamContext) => AsyncIterable<PluginModelEvent>;
}

/** A catalog model of the provider, as `filterModel` and `correctModel` see it. */
export interface ProviderCatalogModel {
  readonly modelId: string;
  readonly upstreamModelId: string;
  readonly displayName: string;
  readonly protocol: ProviderProtocol;
  readonly limits: { readonly contextUnits: number; readonly outputUnits: number };
}

/** Narrow corrections of a catalog model; absent fields keep the catalog's value. */
export interface ProviderModelCorrection {
  readonly upstreamModelId?: string | undefined;
  readonly displayName?: string | undefined;
  readonly limits?: { readonly contextUnits?: number | undefined; readonly outputUnits?: number | undefined } | undefined;
}

/** The private credential a provider takes: an API key, also read from these environment variables. */
export interface ProviderCredentialsDeclaration {
  readonly environment?: readonly string[] | undefined;
}

/** What `defineProvider` takes. Every callback is synchronous. */
export interface ProviderDefinitionInput<Options = JsonObject> {
  /** Stable, lowercase: `/^[a-z][a-z0-9]*(?:[._-][a-z0-9]+)*$/`. */
  readonly definitionId: string;
  /** The author's version string. */
  readonly version: string;
  /** JSON Schema (root `type: "object"`) of `providers.<id>.options`; Core validates once per setup. */
  readonly optionsSchema?: JsonSchema | undefined;
  /** Present when the provider needs a credential. */
  readonly credentials?: ProviderCredentialsDeclaration | undefined;
  /** JSON Schema of per-request provider options (`request.providerOptions`). */
  readonly requestOptionsSchema?: JsonSchema | undefined;
  /** Which catalog models the provider serves (deterministic; `true` keeps the model). */
  readonly filterModel?: ((model: ProviderCatalogModel) => boolean) | undefined;
  /** Narrow corrections of a catalog model. */
  readonly correctModel?: ((model: ProviderCatalogModel) => ProviderModelCorrection) | undefined;
  /** Builds the model service for one model (synchronously). */
  readonly acquireModel: (input: ProviderModelAcquisitionInput<Options>) => ProviderModelService;
}

/** A checked, frozen native provider definition. */
export interface ProviderDefinition<Options = JsonObject> extends ProviderDefinitionInput<Options> {
  readonly _tag: "ProviderDefinition";
  /** Set by `makeCompatibleProviderDefinition`: the data Core runs through its own adapters. */
  readonly compatible?: CompatibleProviderConfig | undefined;
}

/** Authentication of a compatible provider: bearer (Chat, Responses default), a header (Messages: `x-api-key`), or none. */
export type CompatibleProviderAuthentication =
  | { readonly kind: "bearer" }
  | { readonly kind: "header"; readonly name: string; readonly prefix?: string | undefined }
  | { readonly kind: "none" };

/** One model a compatible provider declares (fields as in `providers.<id>.definition.models`). */
export interface CompatibleProviderModel {
  readonly upstreamId?: string | undefined;
  readonly displayName?: string | undefined;
  readonly protocol?: ProviderProtocol | undefined;
  readonly baseURL?: string | undefined;
  readonly capabilities?: JsonObject | undefined;
  readonly limits?: { readonly contextUnits?: number | undefined; readonly outputUnits?: number | undefined } | undefined;
}

/**
 * A Chat Completions, Responses or Anthropic Messages compatible endpoint, declared as data: the
 * same fields as a config `providers.<id>.definition`, plus the definition's identity.
 */
export interface CompatibleProviderConfig {
  readonly definitionId: string;
  readonly version?: string | undefined;
  readonly displayName?: string | undefined;
  readonly baseURL?: string | undefined;
  readonly protocol?: ProviderProtocol | undefined;
  readonly routes?: { readonly chat?: string | undefined; readonly responses?: string | undefined; readonly messages?: string | undefined } | undefined;
  readonly authentication?: CompatibleProviderAuthentication | undefined;
  readonly headers?: { readonly [name: string]: string } | undefined;
  readonly credentials?: { readonly environment: readonly string[] } | undefined;
  readonly models?: { readonly [modelId: string]: CompatibleProviderModel } | undefined;
  readonly discovery?: boolean | undefined;
}
