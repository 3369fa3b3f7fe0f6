// The ModelGateway core uses, over services/providers: the configured provider set (or the
// defaults), credentials from config, environment and the global auth.json (re-read per
// request, so a key connected later is used without a restart), and the streaming adapters.
import { configInvalid, describeConfigError, fileSettingKey, type Config, type ConfigLayer, type Env } from "../config/index.js";
import { unavailable } from "../contract/failure.js";
import type { ModelCall, ModelGateway, ModelLimits } from "../core/turns/gateway.js";
import { createModelCredentials } from "./model-credentials.js";
import { HostServedModels, siblingModels } from "./served-models.js";
import {
  NO_SIBLING_MESSAGE,
  ProviderFailure,
  ResponseBound,
  injectedCredentialsOf,
  describeProviderError,
  servedModel,
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

/**
 * `layers`: the loaded config files (`LoadedConfig.layers`), so a setup error can name its file.
 * `served`: plugin models (served-models.ts), run beside at least one available composed model.
 */
export function createModelGateway(config: Config, env: Env, layers: readonly ConfigLayer[] = [], source?: ProviderSource, served: HostServedModels = new HostServedModels()): ProviderGateway {
  let fixed: ProviderSet | undefined;
  if (source === undefined) {
    const resolved = resolveProviders(config.providers as Parameters<typeof resolveProviders>[0], { env });
    if (!resolved.ok) throw setupFailed(resolved.error, layers);
    fixed = resolved.value;
  }
  const current = (sessionId?: string): ProviderSet => fixed ?? source!.providers(sessionId);

  const credentials = createModelCredentials(current, env);
  // A plugin model under a composed provider's id is never served (the catalog leaves it out too).
  const pluginModel = (ref: string, sessionId?: string) => {
    const model = served.find(ref, sessionId);
    return model !== undefined && current(sessionId).provider(model.providerId) === undefined ? model : undefined;
  };

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
    async check(model: string, sessionId?: string, workdir?: string): Promise<void> {
      await served.ready();
      // A model no composed provider lists may be a plugin model: the host generation's, or its Session overlay's.
      const plugin = current().model(model) === undefined ? (pluginModel(model) ?? (sessionId !== undefined ? servedModel(await served.forSession(sessionId, workdir), model) : undefined)) : undefined;
      if (plugin !== undefined && current().provider(plugin.providerId) === undefined) {
        if ((await siblingModels(current(), env)).length === 0) throw unavailable(`Model ${model} is unavailable: ${NO_SIBLING_MESSAGE}`, "model_unavailable");
        return;
      }
      const opened = await credentials.open(model);
      // A scoped credential resolver answers per acquisition, not here: the model only has to exist.
      if (!opened.ok && injectedCredentialsOf(env)?.scoped !== undefined && current().model(model) !== undefined) return;
      if (!opened.ok) throw unavailable(`Model ${model} is unavailable: ${opened.message}`, "model_unavailable");
    },
    limits(model: string, sessionId?: string): ModelLimits | undefined {
      const limits = (pluginModel(model, sessionId) ?? current(sessionId).model(model))?.limits;
      if (!limits) return undefined;
      return {
        ...(limits.contextUnits > 0 ? { context: limits.contextUnits } : {}),
        ...(limits.outputUnits > 0 ? { output: limits.outputUnits } : {}),
      };
    },
    // Credentials per request: refresh of stored logins, the Codex route, one 401 retry (model-credentials.ts).
    stream: (call: ModelCall): AsyncGenerator<ModelStreamEvent> => streamCall(call),
  };

  // A plugin model runs its own stream, given the siblings of the catalog the call uses and a
  // delegate through the same credentials path; any other model goes to the adapters.
  async function* streamCall(call: ModelCall): AsyncGenerator<ModelStreamEvent> {
    await served.ready();
    const model = pluginModel(call.model, call.sessionId);
    if (model === undefined) return yield* credentials.stream(call);
    const siblings = await siblingModels(current(call.sessionId), env);
    if (siblings.length === 0) throw new ProviderFailure({ kind: "auth", beforeOutput: true, retryable: false, message: `Model ${call.model} is unavailable: ${NO_SIBLING_MESSAGE}` });
    // The plugin's response is bounded as the adapters' are (streamModel): its whole answer, not
    // only what it delegates (each delegated request is bounded on its own).
    const bound = new ResponseBound();
    let started = false;
    for await (const event of model.stream({
      ...(call.system !== undefined ? { system: call.system } : {}),
      messages: call.messages,
      tools: call.tools,
      ...(call.reasoningEffort !== undefined ? { reasoningEffort: call.reasoningEffort } : {}),
      signal: call.signal,
      sessionId: call.sessionId ?? "",
      turnId: call.turnId ?? "",
      siblings,
      delegate: (ref, request) => credentials.stream({ ...request, model: ref, signal: call.signal, ...(call.sessionId !== undefined ? { sessionId: call.sessionId } : {}), ...(call.turnId !== undefined ? { turnId: call.turnId } : {}), ...(call.compactionId !== undefined ? { compactionId: call.compactionId } : {}), ...(call.timeoutMs !== undefined ? { timeoutMs: call.timeoutMs } : {}) }),
    })) {
      const exceeded = bound.exceeded(event);
      if (exceeded !== undefined) throw new ProviderFailure({ kind: "too_large", beforeOutput: !started, retryable: false, message: `${call.model}: ${exceeded}` });
      started = true;
      yield event;
    }
  }
}
