// The Turn's events as plugin subscribers see them (plugin/session.ts `TurnEvent`): the durable
// events a Turn records, mapped to the reference's observational shapes, and its streamed
// content deltas. Events with no observational twin (snapshots, steering) are left out.
//
// A running Turn with subscribers attaches its sink here by Turn id for as long as it runs; the
// places that record its events — the Turn's recorder, and the interaction service that writes
// replies to its requests — hand them to `observeEvents` as they record them (each event once).
import type { TurnEvent } from "../../../plugin/index.js";
import type { NewTurnEvent } from "../../storage/index.js";

/** Where a Turn's observational events go (services/plugins/observers.ts `TurnEventQueue`). */
export interface TurnEventSink {
  push(event: TurnEvent): void;
}

type Data = Record<string, unknown>;

const toolOf = (data: Data) => ({ toolId: data["toolId"] as string, toolCallId: data["toolCallId"] as string });

/** `provider/model` as the reference's `{ providerId, modelId }` (the model id may hold slashes). */
export function modelParts(ref: string): { providerId: string; modelId: string } {
  const slash = ref.indexOf("/");
  return slash < 0 ? { providerId: "", modelId: ref } : { providerId: ref.slice(0, slash), modelId: ref.slice(slash + 1) };
}

export function observedEvent(turnId: string, event: NewTurnEvent): TurnEvent | undefined {
  const data = (event.data ?? {}) as Data;
  switch (event.type) {
    case "turn.usage":
      return { type: "model.usage", turnId, usage: data["usage"] as never };
    case "turn.tool.requested":
      return { type: "tool.requested", turnId, ...toolOf(data) };
    case "turn.approval.requested":
      return { type: "approval.requested", turnId, ...toolOf(data), request: data["request"] as never };
    case "turn.approval.resolved":
      return {
        type: "approval.resolved",
        turnId,
        ...toolOf(data),
        requestId: data["requestId"] as string,
        decision: data["decision"] as never,
        source: data["source"] as never,
        ...(data["reply"] !== undefined ? { reply: data["reply"] as never } : {}),
        ...(typeof data["replyMessage"] === "string" ? { replyMessage: data["replyMessage"] } : {}),
      };
    case "turn.tool.completed":
      return { type: "tool.completed", turnId, ...toolOf(data), ok: data["ok"] === true };
    case "turn.tool.activity": {
      const activity = (data["activity"] ?? {}) as Data;
      const artifact = activity["artifact"] as { state?: string } | undefined;
      return {
        type: "tool.progress",
        turnId,
        ...toolOf(data),
        checkpoint: Number(activity["checkpoint"] ?? 0),
        observedBytes: Number(activity["observedBytes"] ?? 0),
        truncated: activity["truncated"] === true,
        ...(artifact?.state !== undefined ? { artifactState: artifact.state as never } : {}),
      };
    }
    case "turn.question.asked":
      return { type: "question.asked", turnId, ...toolOf(data), request: data["request"] as never };
    case "turn.question.replied":
      return { type: "question.replied", turnId, ...toolOf(data), requestId: data["requestId"] as string, answers: data["answers"] as never };
    case "turn.question.rejected":
      return { type: "question.rejected", turnId, ...toolOf(data), requestId: data["requestId"] as string };
    case "turn.finished":
      return { type: "turn.terminal", turnId, outcome: data["outcome"] as never };
    default:
      return undefined;
  }
}

const sinks = new Map<string, TurnEventSink>();

/** Routes `turnId`'s events to `sink` until the returned detach is called. */
export function attachSink(turnId: string, sink: TurnEventSink): () => void {
  sinks.set(turnId, sink);
  return () => {
    if (sinks.get(turnId) === sink) sinks.delete(turnId);
  };
}

/** Hands recorded events of `turnId` to its subscribers, if any are attached. */
export function observeEvents(turnId: string, events: readonly NewTurnEvent[]): void {
  const sink = sinks.get(turnId);
  if (!sink) return;
  for (const event of events) {
    const observed = observedEvent(turnId, event);
    if (observed) sink.push(observed);
  }
}

/** Hands a streamed content delta of `turnId` to its subscribers, if any are attached. */
export function observeDelta(turnId: string, kind: "text" | "reasoning" | "refusal", partId: string, offset: number, delta: string): void {
  sinks.get(turnId)?.push({ type: kind === "text" ? "model.text.delta" : kind === "reasoning" ? "model.reasoning.delta" : "model.refusal.delta", turnId, partId, offset, delta });
}
