export { createZeClient, unwrap, ZeClientError } from "./client.js";
export type { ZeClient, ZeClientOptions, FetchLike, EncodedErrorBody } from "./client.js";
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
export { watchWorkspaceFiles, readWorkspaceFile } from "./workspace.js";
export type { WatchWorkspaceFilesOptions, WorkspaceFilesLifecycle, WorkspaceFilesEnded, ReadWorkspaceFileOptions, WorkspaceFileRead } from "./workspace.js";
