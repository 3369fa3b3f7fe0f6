// How an unfinished tool call is closed when its Turn ends early (cancelled, limit, shutdown,
// lost process): a pending approval resolves as denied by the Turn's end (`terminal`), a
// pending question is dismissed, and the call fails with `fault` — each change announced by the
// event a live watcher expects, so nothing is left showing as waiting on a finished Turn.
import type { Fault, ToolTurnPart } from "../../../generated/client/types.gen.js";
import type { NewTurnEvent } from "../../storage/index.js";

export function closeToolPart(part: ToolTurnPart, fault: Fault, now: number): { part: ToolTurnPart; events: NewTurnEvent[] } {
  const fields = { partId: part.id, toolId: part.toolId, toolCallId: part.toolCallId };
  const events: NewTurnEvent[] = [];
  let closed: ToolTurnPart = { ...part, state: "failed", fault, completedAt: now };
  if (part.approval.state === "pending") {
    const { request, requestedAt } = part.approval;
    closed = { ...closed, approval: { state: "resolved", request, requestedAt, resolvedAt: now, decision: "deny", source: "terminal" } };
    events.push({ type: "turn.approval.resolved", data: { ...fields, requestId: request.id, decision: "deny", source: "terminal", resolvedAt: now } });
  }
  if (part.question?.state === "pending") {
    const { request, requestedAt } = part.question;
    closed = { ...closed, question: { state: "dismissed", request, requestedAt, resolvedAt: now } };
    events.push({ type: "turn.question.rejected", data: { ...fields, requestId: request.id, resolvedAt: now } });
  }
  events.push({ type: "turn.tool.completed", data: { ...fields, ok: false, part: closed } });
  return { part: closed, events };
}
