// `streamModel`: the one entry point the Turn loop calls for a model attempt. It picks the
// adapter for the model's protocol, runs it under one `Attempt` (deadline, wire bounds, abort),
// tracks whether output has started, and turns anything thrown into a `ProviderFailure`.
// No retries here: every SDK runs with `maxRetries: 0`; retrying is the Turn loop's decision.
import type { ModelRequest, ModelStreamEvent } from "./events.js";
import { ProviderFailure } from "./failure.js";
import type { ModelProtocol } from "./protocol.js";
import { Attempt, ResponseBound } from "./wire.js";
import { viaFailure } from "./tap.js";

type Adapter = (request: ModelRequest, attempt: Attempt) => AsyncGenerator<ModelStreamEvent>;

/** Adapters load on first use: each pulls in its SDK (Anthropic's alone costs ~450 ms to import). */
const LOADERS: Readonly<Record<ModelProtocol, () => Promise<Adapter>>> = {
  chat: async () => (await import("./adapters/chat.js")).streamChat,
  responses: async () => (await import("./adapters/responses.js")).streamResponses,
  messages: async () => (await import("./adapters/messages.js")).streamMessages,
};

/** Each adapter's module, imported once (a later request does not go through the module loader again). */
const loaded = new Map<ModelProtocol, Promise<Adapter>>();
const adapterFor = (protocol: ModelProtocol): Promise<Adapter> => {
  let adapter = loaded.get(protocol);
  if (adapter === undefined) {
    adapter = LOADERS[protocol]();
    // A failed import is tried again by the next request.
    adapter.catch(() => loaded.delete(protocol));
    loaded.set(protocol, adapter);
  }
  return adapter;
};

const CONTENT = new Set<ModelStreamEvent["type"]>(["text.delta", "reasoning.delta", "reasoning.end", "refusal.delta", "tool_call"]);

/**
 * Streams one model attempt. Yields content deltas, complete tool calls, usage, and a final
 * `finish`; throws a `ProviderFailure` (never anything else). Breaking out of the loop aborts
 * the request.
 */
export async function* streamModel(request: ModelRequest): AsyncGenerator<ModelStreamEvent, void, undefined> {
  const { model } = request;
  if (request.signal.aborted) {
    throw new ProviderFailure({ kind: "aborted", beforeOutput: true, message: `${model.ref}: the model request was cancelled` });
  }
  if (model.authentication.kind !== "none" && request.credential === undefined) {
    throw new ProviderFailure({
      kind: "auth",
      beforeOutput: true,
      message: model.via !== undefined ? `${model.ref}: not signed in to ${model.via.displayName}` : `${model.ref}: provider "${model.providerId}" has no credential`,
    });
  }
  const attempt = new Attempt(request);
  const bound = new ResponseBound();
  try {
    // A code-defined native provider's model runs its own service; every other model one of the protocol adapters.
    const adapter = model.native !== undefined ? (await import("./adapters/native.js")).streamNative : await adapterFor(model.protocol);
    for await (const event of adapter(request, attempt)) {
      // A deadline or failure recorded while the stream ran wins, even where its abort did not
      // reach the SDK's request in time (a stream that went on to finish is still over its deadline).
      if (attempt.failure) throw attempt.failure;
      if (CONTENT.has(event.type)) attempt.outputStarted = true;
      const exceeded = bound.exceeded(event);
      if (exceeded !== undefined) throw attempt.record(attempt.fail("too_large", exceeded));
      yield event;
    }
    if (attempt.failure) throw attempt.failure;
  } catch (error) {
    // A request routed through a key holder's gateway (TAP) fails naming it.
    throw viaFailure(attempt.classify(error), model);
  } finally {
    // Always, even when the stream was read to its end: it lets go of the caller's signal
    // (its listener) and aborts whatever of the request is still open.
    attempt.dispose();
  }
}
