// services/providers: model catalog, provider resolution, credentials and the model adapters.
// See README.md. Other rooms import from this file only.
export {
  bundledCatalog,
  catalogModel,
  catalogModelFeatures,
  catalogModelLimits,
  catalogProvider,
  featuresOf,
  modelRef,
  parseModelRef,
  type ModelFeatures,
  type ModelRefParts,
} from "./catalog.js";
export {
  normalizeModelsDev,
  isValidModelId,
  isValidProviderId,
  type CatalogModelRecord,
  type CatalogProviderRecord,
  type ModelStatus,
  type NormalizedCatalog,
} from "./models-dev.js";
export { MODEL_PROTOCOLS, defaultAuthentication, isModelProtocol, type Authentication, type ModelProtocol } from "./protocol.js";
export { joinEndpoint, validateBaseURL, validateRoute, type BaseUrlResult } from "./base-url.js";
export { checkDefinition, checkOptions, type ProviderDefinition, type ProviderOptions } from "./definition.js";
export {
  describeProviderError,
  type ProviderInvalid,
  type ProviderResult,
  type ProviderSetupError,
  type ProvidersEmpty,
} from "./errors.js";
export {
  DEFAULT_PROVIDER_IDS,
  providerSet,
  requiresCredential,
  resolveProviders,
  type ProviderSet,
  type ResolveProvidersOptions,
  type ResolvedModel,
  type ResolvedProvider,
} from "./registry.js";
export {
  loadCredentialSources,
  openModel,
  resolveCredential,
  storedConnection,
  storedEntry,
  type CredentialOrigin,
  type CredentialResolution,
  type CredentialSources,
  type OpenedModel,
} from "./credentials.js";
export {
  AUTH_CONTENT_VARIABLE,
  AUTH_FILE_VARIABLE,
  AUTH_FILE_NAME,
  authFileLocation,
  readAuthFile,
  removeAuthEntry,
  setAuthEntry,
  updateAuthEntry,
  writeAuthFileAtomic,
  type AuthEntry,
  type AuthFileError,
  type AuthFileLocation,
  type AuthResult,
  type AuthState,
  type OAuthAuthEntry,
} from "./auth-file.js";
export { Secret, isSecret } from "./secret.js";
export { discoveredRecord, type DiscoveredModel } from "./discovered.js";
export { discoverProviderModels, discovers, parseModelList, type DiscoveryOptions, type DiscoveryResult } from "./discovery.js";
export {
  CATALOG_CACHE_FILE,
  DEFAULT_MODELS_URL,
  DISABLE_MODELS_FETCH_VARIABLE,
  MODELS_URL_VARIABLE,
  cacheDirectory,
  cacheSupersedes,
  catalogCacheFile,
  loadCatalog,
  modelsFetchDisabled,
  modelsUrl,
  readCatalogCache,
  refreshCatalogCache,
  type CatalogCache,
  type CatalogRefresh,
  type CatalogRefreshOptions,
  type LoadedCatalog,
} from "./catalog-cache.js";
export { catalogSnapshot, providerSummaries, providerSummary, type CatalogSnapshotOptions } from "./summary.js";
export { ProviderFailure, isProviderFailure, type ProviderFailureData, type ProviderFailureKind } from "./failure.js";
export {
  AssistantMessageBuilder,
  assembleAssistantMessage,
  sharedLeadingMessages,
  toolResultText,
  type AssistantContentPart,
  type AssistantMessage,
  type ModelMessage,
  type ReasoningContinuation,
  type ReasoningPart,
  type RefusalPart,
  type ToolCallPart,
  type ToolResultMessage,
  type UserContentPart,
  type UserMessage,
} from "./history.js";
export type { FinishReason, ModelRequest, ModelStreamEvent, ModelTool } from "./events.js";
export { streamModel } from "./stream.js";
export { NO_SIBLING_MESSAGE, servedCatalogEntries, servedModel, type ServedModel, type ServedModelRequest, type SiblingRequest } from "./served.js";
export { ResponseBound, RESPONSE_CONTENT_LIMIT, RESPONSE_TOOL_CALL_LIMIT, WIRE_LIMIT_BYTES } from "./wire.js";
export { connectApiKey, deleteConnection, relabelConnection, type ConnectionResult } from "./connections.js";
export { LoginManager, MAX_WAIT_MS, type LoginManagerOptions, type StartLoginResult } from "./login/manager.js";
export { CredentialRefresher, REFRESH_MARGIN_MS, refreshDue, refreshable, type RefreshOutcome, type RefreshRequest } from "./login/refresh.js";
export { defaultLoginContext, type LoginContext } from "./login/oauth.js";
export { CODEX_BASE_URL_VARIABLE, CODEX_ISSUER_VARIABLE, CODEX_METHOD_ID, codexEndpoint } from "./login/codex.js";
export { loginMethodsOf } from "./login/methods.js";
export {
  InjectedCredentials,
  bindInjectedCredentials,
  injectedCredentialsOf,
  type CredentialMode,
  type InjectedCredentialOptions,
  type McpOAuthTokenResolver,
  type McpSecretResolver,
  type ProviderCredentialResolver,
  type ProviderCredentialsPort,
  type ProviderCredentialAnswer,
  type ProviderCredentialScope,
  type ScopedProviderCredentialResolver,
} from "./injected.js";
export {
  DEFAULT_TAP_BASE_URL,
  KEY_MISSING_CODE,
  TAP_BASE_URL_VARIABLE,
  TAP_ISSUER_VARIABLE,
  TAP_METHOD_ID,
  TAP_NOTICE,
  TAP_PROVIDER_ID,
  tapBaseURL,
  viaFailure,
  type ViaRoute,
} from "./tap.js";
export { fetchTransport, useWireTransport, type WireAnswer, type WireSend, type WireTransport } from "./transport.js";
