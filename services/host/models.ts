// The ModelGateway core uses, over services/providers: the configured provider set (or the
// defaults), credentials from config, environment and the global auth.json (re-read per
// request, so a key connected later is used without a restart), and the streaming adapters.
import { configInvalid, describeConfigError, fileSettingKey, type Config, type ConfigLayer, type Env } from "../config/index.js";
import { unavailable } from "../contract/failure.js";
import type { ModelCall, ModelGateway, ModelLimits } from "../core/turns/gateway.js";
import { createModelCredentials } from "./model-credentials.js";
import {
  describeProviderError,
  resolveProviders,
  type ModelStreamEvent,
  type ProviderSet,
  type ProviderSetupError,
} from "../providers/index.js";

export class ProviderSetupFailed extends Error {
  readonly tag: string;
  constructor(tag: string, message: string) {
    super(message);
    this.tag = tag;
    this.name = tag;
  }
}

export interface ProviderGateway extends ModelGateway {
  readonly providers: ProviderSet;
}

/** Where the gateway's providers come from when they can change at run time (model-catalog.ts). */
export interface ProviderSource {
  /** The current providers, or the generation `sessionId`'s running Turn leased. */
  providers(sessionId?: string): ProviderSet;
  /** Before a Turn names a model: discovery has run, and a model the catalog lacks was looked for. */
  ensure(model: string): Promise<void>;
  /** The catalog's default: the configured model when available, else the first available ref. */
  defaultModel?(): Promise<string | undefined>;
}

/**
 * An empty `providers` map is named like a config error (`file: /providers: message`): it is
 * exactly what the last layer that set `providers` wrote. An invalid provider entry names the
 * file that set it, or every file when the entry is merged from several.
 */
export function setupFailed(error: ProviderSetupError, layers: readonly ConfigLayer[]): ProviderSetupFailed {
  const files = error._tag === "ProvidersEmpty" ? [fileSettingKey(layers, "providers")].filter((file) => file !== undefined) : providerFiles(layers, error.providerId);
  // One file: named like a config error (`file: /pointer: message`); an entry merged from
  // several files names them all after the pointer.
  const message =
    files.length === 1
      ? describeConfigError(configInvalid(files[0]!, error.path, error.message))
      : `${describeProviderError(error)}${files.length > 1 ? ` (providers.${"providerId" in error ? error.providerId : ""} is set in ${files.join(", ")})` : ""}`;
  return new ProviderSetupFailed(error._tag, message);
}

/** The config files that set `providers.<id>`, lowest precedence first. */
function providerFiles(layers: readonly ConfigLayer[], providerId: string): string[] {
  return layers
    .filter((layer) => {
      const providers = (layer.config as { providers?: unknown }).providers;
      return typeof providers === "object" && providers !== null && Object.hasOwn(providers, providerId);
    })
    .map((layer) => layer.file);
}

/** `layers`: the loaded config files (`LoadedConfig.layers`), so a setup error can name its file. */
export function createModelGateway(config: Config, env: Env, layers: readonly ConfigLayer[] = [], source?: ProviderSource): ProviderGateway {
  let fixed: ProviderSet | undefined;
  if (source === undefined) {
    const resolved = resolveProviders(config.providers as Parameters<typeof resolveProviders>[0], { env });
    if (!resolved.ok) throw setupFailed(resolved.error, layers);
    fixed = resolved.value;
  }
  const current = (sessionId?: string): ProviderSet => fixed ?? source!.providers(sessionId);

  const credentials = createModelCredentials(current, env);

  return {
    get providers() {
      return current();
    },
    async prepare(model: string): Promise<void> {
      await source?.ensure(model);
    },
    async defaultModel(): Promise<string | undefined> {
      return source?.defaultModel?.();
    },
    async check(model: string): Promise<void> {
      const opened = await credentials.open(model);
      if (!opened.ok) throw unavailable(`Model ${model} is unavailable: ${opened.message}`, "model_unavailable");
    },
    limits(model: string, sessionId?: string): ModelLimits | undefined {
      const limits = current(sessionId).model(model)?.limits;
      if (!limits) return undefined;
      return {
        ...(limits.contextUnits > 0 ? { context: limits.contextUnits } : {}),
        ...(limits.outputUnits > 0 ? { output: limits.outputUnits } : {}),
      };
    },
    // Credentials per request: refresh of stored logins, the Codex route, one 401 retry (model-credentials.ts).
    stream: (call: ModelCall): AsyncGenerator<ModelStreamEvent> => credentials.stream(call),
  };
}
