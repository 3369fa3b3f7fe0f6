// Plugin models served to Turns: each `context.models.register` declaration of a generation as a
// providers `ServedModel` (services/providers/served.ts) — its catalog record from the validated
// metadata, and a `stream` that calls the declaration's `stream(request, context)` with the
// contract's request, checks every event (model-events.ts) and yields the host's events, so the
// Turn's model call, settlement and usage treat it like any provider model.
//
// Failures (reference, `PluginError` and `ModelDeclaration.stream`): a throw from the event stream
// fails the model run without retry, and the message clients see includes the first 200 characters
// of a thrown `PluginError`'s `message` (its `publicMessage` is ignored); any other throw is
// generic. A `delegate` failure rethrown unchanged keeps the sibling's own failure (and its retry).
// After the signal aborted, a throw is cancellation. A malformed stream fails as malformed.
import { PluginError, type JournalEntry, type ModelDeclaration, type PluginModelCandidate, type PluginModelStreamContext } from "../../plugin/index.js";
import { ProviderFailure, isProviderFailure, type ModelStreamEvent, type ServedModel, type ServedModelRequest } from "../providers/index.js";
import { hasTag } from "./checks.js";
import type { PluginGeneration } from "./generation.js";
import { PluginEventChecker, MalformedModelStream, pluginEventsOf } from "./model-events.js";
import { pluginRequest, siblingRequest } from "./model-request.js";

/** How much of a thrown `PluginError`'s `message` the fault carries. */
export const MODEL_FAILURE_MESSAGE_CHARS = 200;

/** A sibling failure handed to the plugin by `delegate`: rethrown unchanged, it is the sibling's own failure again. */
class DelegateFailure extends Error {
  readonly _tag = "PluginError" as const;
  constructor(readonly failure: ProviderFailure) {
    super(failure.message);
    this.name = "PluginError";
  }
}

function failureOf(ref: string, error: unknown, aborted: boolean, started: boolean): ProviderFailure {
  if (error instanceof DelegateFailure) return error.failure;
  if (isProviderFailure(error)) return error;
  if (aborted) return new ProviderFailure({ kind: "aborted", beforeOutput: !started, message: `${ref}: the model request was cancelled` });
  if (error instanceof MalformedModelStream) return new ProviderFailure({ kind: "bad_request", retryable: false, beforeOutput: !started, message: `${ref}: the plugin model sent a malformed response: ${error.message}` });
  const message = hasTag(error, "PluginError") ? (error as { message?: unknown }).message : undefined;
  const detail = typeof message === "string" && message !== "" ? `: ${message.slice(0, MODEL_FAILURE_MESSAGE_CHARS)}` : "";
  return new ProviderFailure({ kind: "server", retryable: false, beforeOutput: !started, message: `${ref}: the plugin model failed${detail}` });
}

function candidateOf(model: ServedModelRequest["siblings"][number]): PluginModelCandidate {
  const { reasoningEfforts: _efforts, ...capabilities } = model.capabilities;
  return {
    ref: model.ref,
    providerId: model.providerId,
    modelId: model.id,
    displayName: model.displayName,
    capabilities: capabilities as unknown as PluginModelCandidate["capabilities"],
    limits: model.limits,
    pricing: model.pricing,
    defaults: Object.keys(model.defaults).length > 0 ? (model.defaults as PluginModelCandidate["defaults"]) : undefined,
  };
}

export interface PluginModelOptions {
  /** The plugin's journal for `reportJournal` (from a Turn; dropped outside one). */
  readonly reportJournal?: (call: { readonly sessionId: string; readonly turnId: string }, entry: JournalEntry) => Promise<void>;
}

/** One declaration as a served model. */
export function servePluginModel(declaration: ModelDeclaration, options: PluginModelOptions = {}): ServedModel {
  const ref = `${declaration.providerId}/${declaration.modelId}`;
  const metadata = declaration.metadata;
  const { image, ...rest } = metadata.capabilities;
  return {
    ref,
    providerId: declaration.providerId,
    providerDisplayName: declaration.providerDisplayName,
    id: declaration.modelId,
    displayName: metadata.displayName,
    capabilities: { input: [...rest.input], output: [...rest.output], tools: rest.tools, ...(image !== undefined ? { image: { referenceTypes: [...image.referenceTypes], mimeTypes: [...image.mimeTypes] } } : {}) },
    limits: { ...metadata.limits },
    pricing: metadata.pricing !== undefined ? (structuredClone(metadata.pricing) as ServedModel["pricing"]) : { version: "unknown" },
    defaults: metadata.defaults !== undefined ? (structuredClone(metadata.defaults) as ServedModel["defaults"]) : {},
    async *stream(request: ServedModelRequest): AsyncGenerator<ModelStreamEvent> {
      if (request.signal.aborted) throw new ProviderFailure({ kind: "aborted", beforeOutput: true, message: `${ref}: the model request was cancelled` });
      const checker = new PluginEventChecker(metadata.capabilities.tools ? request.tools : [], metadata.capabilities.tools);
      const siblings = new Set(request.siblings.map((model) => model.ref));
      const context: PluginModelStreamContext = {
        sessionId: request.sessionId,
        turnId: request.turnId,
        signal: request.signal,
        listCandidates: async () => request.siblings.map(candidateOf),
        delegate: (target, inner) => delegateTo(target, inner),
        reportJournal: async (entry) => {
          if (request.turnId === "" || !options.reportJournal) return;
          await options.reportJournal({ sessionId: request.sessionId, turnId: request.turnId }, entry);
        },
      };
      const delegateTo = async function* (target: string, inner: Parameters<PluginModelStreamContext["delegate"]>[1]) {
        if (!siblings.has(target)) throw new PluginError({ message: `${String(target).slice(0, 641)} is not a sibling candidate.` });
        try {
          yield* pluginEventsOf(request.delegate(target, siblingRequest(inner, request.tools)));
        } catch (error) {
          throw new DelegateFailure(isProviderFailure(error) ? error : new ProviderFailure({ kind: "server", retryable: false, beforeOutput: true, message: `${target}: the sibling model failed` }));
        }
      };
      let iterator: AsyncIterator<unknown> | undefined;
      // A stream that ignores the signal never holds a cancelled Turn: each pull races the abort.
      let onAbort: (() => void) | undefined;
      const aborted = new Promise<never>((_, reject) => {
        onAbort = () => reject(new ProviderFailure({ kind: "aborted", beforeOutput: !checker.responseStarted, message: `${ref}: the model request was cancelled` }));
        request.signal.addEventListener("abort", onAbort, { once: true });
      });
      aborted.catch(() => undefined);
      try {
        iterator = declaration.stream(pluginRequest(declaration, request), context)[Symbol.asyncIterator]();
        for (;;) {
          const next = await Promise.race([iterator.next(), aborted]);
          if (next.done) break;
          for (const event of checker.accept(next.value)) yield event;
        }
        checker.end();
      } catch (error) {
        // A delegated failure keeps its retry only before this stream started its own response.
        const failure = failureOf(ref, error, request.signal.aborted, checker.responseStarted);
        throw error instanceof DelegateFailure && checker.responseStarted ? new ProviderFailure({ ...failure.toJSON(), retryable: false, beforeOutput: false }) : failure;
      } finally {
        request.signal.removeEventListener("abort", onAbort!);
        // Ends the plugin's generator (its finally blocks run); never awaited past an abort, where it may hang.
        const closing = Promise.resolve(iterator?.return?.()).catch(() => undefined);
        if (!request.signal.aborted) await closing;
      }
    },
  };
}

const served = new WeakMap<PluginGeneration, readonly ServedModel[]>();

/** A generation's models as served models (built once per generation). */
export function servedModelsOf(generation: PluginGeneration | undefined): readonly ServedModel[] {
  if (generation === undefined || generation.models.length === 0) return [];
  let models = served.get(generation);
  if (models === undefined) {
    models = Object.freeze(
      generation.models.map(({ pluginId, declaration }) => {
        const journal = generation.journals.get(pluginId);
        return servePluginModel(declaration, journal ? { reportJournal: (call, entry) => journal.report(call, entry) } : {});
      }),
    );
    served.set(generation, models);
  }
  return models;
}
