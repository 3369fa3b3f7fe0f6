// The ModelGateway core uses, over services/providers: the configured provider set (or the
// defaults), credentials from config, environment and the global auth.json (re-read per
// request, so a key connected later is used without a restart), and the streaming adapters.
import { configInvalid, describeConfigError, fileSettingKey, type Config, type ConfigLayer, type Env } from "../config/index.js";
import { unavailable } from "../contract/failure.js";
import type { ModelCall, ModelGateway, ModelLimits } from "../core/turns/gateway.js";
import {
  ProviderFailure,
  authFileLocation,
  describeProviderError,
  loadCredentialSources,
  openModel,
  resolveProviders,
  streamModel,
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

/**
 * An empty `providers` map is named like a config error (`file: /providers: message`): it is
 * exactly what the last layer that set `providers` wrote. Other setup errors keep their pointer
 * only — a provider entry can be merged from several files, so no one file is certain.
 */
function setupFailed(error: ProviderSetupError, layers: readonly ConfigLayer[]): ProviderSetupFailed {
  const file = error._tag === "ProvidersEmpty" ? fileSettingKey(layers, "providers") : undefined;
  const message = file !== undefined ? describeConfigError(configInvalid(file, error.path, error.message)) : describeProviderError(error);
  return new ProviderSetupFailed(error._tag, message);
}

/** `layers`: the loaded config files (`LoadedConfig.layers`), so a setup error can name its file. */
/** `authFilePath`: the provider `auth.json` when it is not the state directory's. */
export function createModelGateway(config: Config, env: Env, layers: readonly ConfigLayer[] = [], authFilePath?: string): ProviderGateway {
  const resolved = resolveProviders(config.providers as Parameters<typeof resolveProviders>[0]);
  if (!resolved.ok) throw setupFailed(resolved.error, layers);
  const providers = resolved.value;

  const location = authFileLocation(env, authFilePath);
  const open = async (model: string) => openModel(providers, model, await loadCredentialSources(env, location));

  return {
    providers,
    async check(model: string): Promise<void> {
      const opened = await open(model);
      if (!opened.ok) throw unavailable(`Model ${model} is unavailable: ${opened.message}`, "model_unavailable");
    },
    limits(model: string): ModelLimits | undefined {
      const limits = providers.model(model)?.limits;
      if (!limits) return undefined;
      return {
        ...(limits.contextUnits > 0 ? { context: limits.contextUnits } : {}),
        ...(limits.outputUnits > 0 ? { output: limits.outputUnits } : {}),
      };
    },
    async *stream(call: ModelCall): AsyncGenerator<ModelStreamEvent> {
      const opened = await open(call.model);
      if (!opened.ok) throw new ProviderFailure({ kind: "auth", beforeOutput: true, retryable: false, message: `Model ${call.model} is unavailable: ${opened.message}` });
      yield* streamModel({
        model: opened.model,
        ...(opened.credential !== undefined ? { credential: opened.credential } : {}),
        ...(call.system !== undefined ? { system: call.system } : {}),
        messages: call.messages,
        tools: call.tools,
        ...(call.reasoningEffort !== undefined ? { reasoningEffort: call.reasoningEffort } : {}),
        signal: call.signal,
        ...(call.timeoutMs !== undefined ? { timeoutMs: call.timeoutMs } : {}),
      });
    },
  };
}
