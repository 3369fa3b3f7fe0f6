// The embedder's `contentResolver` port (the reference's `DurableContentResolver`): prompts and
// conversation entries may carry `{ type: "content-reference", reference }` parts. Stored rows
// (the Turn's request, its transcript, conversation entries) always keep the reference; the model
// sees it as the text `[content reference: …]` (`userContent` in running.ts marks that text part
// with its `reference`). With a resolver, `withContentResolver` wraps the host's model gateway:
// each model request — built from the history after visibility filtering, so an entry the work
// cannot see is never resolved — has every marked part replaced by the text and image parts the
// resolver returns, once per request (attempts reuse it). A failure stops the Turn with the fault
// `content_reference_unresolved` naming the reference; the resolver's own message never reaches
// the Turn (it may hold secrets), only a `DurableContentResolutionError`'s `reason`.
import type { ImagePart, TextPart } from "../../../generated/client/types.gen.js";
import type { ModelMessage, ModelStreamEvent, UserContentPart } from "../../providers/index.js";
import type { ModelCall, ModelGateway } from "./gateway.js";
import { StopSignal, fault } from "./stop.js";

/** The Turn fault code of a reference that could not be resolved. */
export const CONTENT_UNRESOLVED = "content_reference_unresolved";

/** What the resolver is asked: one reference of the work's visible history or prompt. */
export interface DurableContentResolutionRequest {
  /** The part's `reference`, exactly as the client sent it. */
  readonly reference: string;
  readonly sessionId: string;
  /** The Turn whose model request needs it (absent for a compaction or a title request). */
  readonly turnId: string | undefined;
  /** Aborts when the request is abandoned (the Turn stopped). */
  readonly signal: AbortSignal;
}

/** Resolved content: the text and image parts the model sees in the reference's place. */
export type DurableContent = readonly (TextPart | ImagePart)[];

/** The embedder's port: resolves opaque content references at model-request time. */
export interface DurableContentResolver {
  resolve(request: DurableContentResolutionRequest): Promise<DurableContent>;
}

/** Why the resolver could not resolve a reference; `reason` (not the message) reaches the Turn's fault. */
export type DurableContentResolutionReason = "not_found" | "forbidden" | "unavailable" | "invalid";

/** The typed failure a resolver throws (any other throw reads as `unavailable`). */
export class DurableContentResolutionError extends Error {
  readonly _tag = "DurableContentResolutionError";
  override readonly name = "DurableContentResolutionError";
  constructor(
    readonly reference: string,
    readonly reason: DurableContentResolutionReason,
    message?: string,
  ) {
    super(message ?? `content reference ${reason}`);
  }
}

/** The model-visible text of a reference no resolver resolved (today's behaviour without one). */
export const referenceText = (reference: string): string => `[content reference: ${reference}]`;

/** A reference's text part, marked with the reference so a resolver can replace it at request time. */
export interface ReferenceTextPart extends TextPart {
  readonly reference: string;
}

const isMarked = (part: UserContentPart): part is ReferenceTextPart & UserContentPart => {
  const reference = (part as { reference?: unknown }).reference;
  return part.type === "text" && typeof reference === "string" && part.text === referenceText(reference);
};

const REASONS = new Set<string>(["not_found", "forbidden", "unavailable", "invalid"]);

function unresolved(reference: string, reason: string): StopSignal {
  const shown = reference.length > 256 ? `${reference.slice(0, 256)}…` : reference;
  return new StopSignal({ kind: "failed", fault: fault(CONTENT_UNRESOLVED, `The content reference ${JSON.stringify(shown)} could not be resolved (${reason})`) });
}

function usable(parts: unknown): parts is DurableContent {
  if (!Array.isArray(parts)) return false;
  return parts.every((part: unknown) => {
    if (typeof part !== "object" || part === null) return false;
    const candidate = part as { type?: unknown; text?: unknown; source?: unknown };
    if (candidate.type === "text") return typeof candidate.text === "string";
    if (candidate.type !== "image" || typeof candidate.source !== "object" || candidate.source === null) return false;
    const source = candidate.source as { type?: unknown; url?: unknown; data?: unknown; mimeType?: unknown };
    return source.type === "url" ? typeof source.url === "string" : source.type === "base64" && typeof source.data === "string" && typeof source.mimeType === "string";
  });
}

/** The request's messages with each marked reference replaced by what the resolver returns (each reference asked once). */
export async function resolveContentReferences(messages: readonly ModelMessage[], resolver: DurableContentResolver, call: Pick<ModelCall, "sessionId" | "turnId" | "signal">): Promise<readonly ModelMessage[]> {
  if (!messages.some((message) => message.role === "user" && message.content.some(isMarked))) return messages;
  const resolved = new Map<string, Promise<DurableContent>>();
  const resolve = (reference: string): Promise<DurableContent> => {
    let pending = resolved.get(reference);
    if (pending === undefined) {
      pending = (async () => {
        let parts: unknown;
        try {
          parts = await resolver.resolve({ reference, sessionId: call.sessionId ?? "", turnId: call.turnId, signal: call.signal });
        } catch (error) {
          if (call.signal.aborted) throw error;
          const typed = error instanceof DurableContentResolutionError || (error as { _tag?: unknown })?._tag === "DurableContentResolutionError";
          const reason = typed && REASONS.has((error as { reason?: string }).reason ?? "") ? (error as { reason: string }).reason : "unavailable";
          throw unresolved(reference, reason);
        }
        if (!usable(parts)) throw unresolved(reference, "the resolver returned no usable text or image parts");
        return parts.map((part) => (part.type === "text" ? { type: "text" as const, text: part.text } : { type: "image" as const, source: part.source }));
      })();
      resolved.set(reference, pending);
    }
    return pending;
  };
  const out: ModelMessage[] = [];
  for (const message of messages) {
    if (message.role !== "user" || !message.content.some(isMarked)) {
      out.push(message);
      continue;
    }
    const content: UserContentPart[] = [];
    for (const part of message.content) {
      if (isMarked(part)) content.push(...(await resolve(part.reference)));
      else content.push(part);
    }
    out.push({ ...message, content });
  }
  return out;
}

/** The gateway with `resolver` applied to every request's references (the gateway itself when none is given). */
export function withContentResolver<G extends ModelGateway>(gateway: G, resolver: DurableContentResolver | undefined): G {
  if (resolver === undefined) return gateway;
  // Resolved once per request: attempts (retries) of the same messages reuse it.
  const cache = new WeakMap<readonly ModelMessage[], Promise<readonly ModelMessage[]>>();
  const stream = async function* (call: ModelCall): AsyncGenerator<ModelStreamEvent> {
    let pending = cache.get(call.messages);
    if (pending === undefined) {
      pending = resolveContentReferences(call.messages, resolver, call);
      cache.set(call.messages, pending);
      pending.catch(() => cache.delete(call.messages));
    }
    const messages = await pending;
    yield* gateway.stream(messages === call.messages ? call : { ...call, messages });
  };
  // Everything else is the gateway's own (bound to it: its methods may use private fields).
  return new Proxy(gateway, {
    get(target, property) {
      if (property === "stream") return stream;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
