export { createZeClient, unwrap, ZeClientError } from "./client.js";
export type { ZeClient, ZeClientOptions, FetchLike, EncodedErrorBody } from "./client.js";
export { SERVER_VERSION_HEADER, CLIENT_PROTOCOL_VERSION, parseServerVersionHeader, observeServerVersion, serverVersionNotice } from "./server-version.js";
export type { ServerVersion, ServerVersionListener } from "./server-version.js";
export * as sdk from "../generated/client/sdk.gen.js";
export type * from "../generated/client/types.gen.js";
export { watchTurn, watchSession, watchServer, HEARTBEAT_MS } from "./watch.js";
export type {
  WatchOptions,
  Reconnecting,
  TurnWatchEvent,
  WatchTurnOptions,
  SessionWatchLifecycle,
  WatchSessionOptions,
  ServerWatchEvent,
  ServerWatchLifecycle,
  WatchServerOptions,
} from "./watch.js";
export { HarnessClient, createClient, textPrompt } from "./harness-client.js";
export { imageUrlPrompt, imageBase64Prompt, sniffImageMime, IMAGE_MIME_TYPES } from "./prompts.js";
export type { InlineImage } from "./prompts.js";
export { HARNESS_PROTOCOL_VERSION, MCP_PROTOCOL_VERSION } from "./version.js";
export type { CreateClientOptions } from "./harness-client.js";
export {
  getRuntimeModels,
  getSessionModels,
  runtimeModelsRevision,
  sessionModelsRevision,
  watchRuntimeModels,
  watchSessionModels,
} from "./models.js";
export type { SessionModelsRef, SessionModelsTarget, WatchModelsOptions } from "./models.js";
export {
  listProviders,
  getProvider,
  connectProviderKey,
  updateProviderConnection,
  deleteProviderConnection,
  startProviderLogin,
  getProviderLogin,
  waitProviderLogin,
  cancelProviderLogin,
} from "./providers.js";
export type { WaitProviderLoginOptions } from "./providers.js";
export { watchHistory, watchDiagnostics } from "./history-watch.js";
export type { WatchHistoryOptions, WatchDiagnosticsOptions } from "./history-watch.js";
export { watchWorkspaceFiles, readWorkspaceFile } from "./workspace.js";
export type { WatchWorkspaceFilesOptions, WorkspaceFilesLifecycle, WorkspaceFilesEnded, ReadWorkspaceFileOptions, WorkspaceFileRead } from "./workspace.js";
