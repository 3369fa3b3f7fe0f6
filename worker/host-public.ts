// The `ze-harness/worker-host` entry (package.json `exports`): what an embedding host Durable
// Object imports. Built by tools/worker/build-host.mjs into dist/worker-host/index.mjs (one ES
// module for workerd, `node:*` imports left to `nodejs_compat`, QuickJS's .wasm beside it) with
// typings in dist/types/worker/host-public.d.ts from the public declaration pass (sdk/tsconfig.json).
import { bundledCatalog } from "../services/providers/catalog.js";
import type { NormalizedCatalog } from "../services/providers/models-dev.js";
import { DEFAULT_PROVIDER_IDS } from "../services/providers/registry.js";

export { WorkerHarnessHost, DEFAULT_RECOVERY_INTERVAL_MS, type HostDurableObjectState, type WorkerHarnessHostOptions, type WorkerHostResources } from "./host.js";
export {
  ModelsDevSourceError,
  validateModelCatalog,
  type ProviderConfigMap,
  type RejectedProvider,
  type WorkerHostSettings,
  type WorkerModelCatalog,
  type WorkerModelCatalogStatus,
} from "./host-options.js";
export {
  WorkerServerPluginConflict,
  WorkerServerPluginRejected,
  type WorkerHostPluginOptions,
  type WorkerServerPluginEntry,
  type WorkerServerPluginStatus,
  type WorkerStaticSessionPluginEntry,
} from "./host-plugins.js";
export type { WorkerLoaderBinding } from "./plugins-loader.js";
export type { WatchServerOptions, WatchSessionOptions, WatchTurnOptions } from "./host-watch.js";
export type { AlarmParticipant } from "./host-alarm.js";
export type { RecoveryQuarantine } from "./alarm.js";
export type { ProviderKeys } from "./turns.js";
export type { PermissionRule, ProviderEntry as ProviderConfigEntry } from "../services/config/index.js";
export type { ServerStreamEvent, SessionStreamEvent, TurnStreamEvent } from "../generated/client/types.gen.js";
export type { NormalizedCatalog as NormalizedModelsDevSnapshot } from "../services/providers/models-dev.js";

/** The models.dev snapshot bundled with this build (`providers` keyed by provider id). */
export function loadBundledModelsDevSnapshot(): NormalizedCatalog {
  return bundledCatalog();
}

/** The provider ids a host enables when `providers` is omitted. */
export const defaultProviderIds: readonly string[] = DEFAULT_PROVIDER_IDS;
