// The ModelGateway core uses, over services/providers: the configured provider set (or the
// defaults), credentials from config, environment and the global auth.json (re-read per
// request, so a key connected later is used without a restart), and the streaming adapters.
import type { Config, Env } from "../config/index.js";
import { unavailable } from "../contract/failure.js";
import type { ModelCall, ModelGateway, ModelLimits } from "../core/turns/gateway.js";
import {
  ProviderFailure,
  describeProviderError,
  loadCredentialSources,
  openModel,
  resolveProviders,
  streamModel,
  type ModelStreamEvent,
  type ProviderSet,
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

export function createModelGateway(config: Config, env: Env): ProviderGateway {
  const resolved = resolveProviders(config.providers as Parameters<typeof resolveProviders>[0]);
  if (!resolved.ok) throw new ProviderSetupFailed(resolved.error._tag, describeProviderError(resolved.error));
  const providers = resolved.value;

  const open = async (model: string) => openModel(providers, model, await loadCredentialSources(env));

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
