// Settlement: a Turn ends with exactly one outcome. `complete` records the model's answer
// (unless steering input is waiting); `settleStopped` records a stop (cancelled, a limit, a
// failure, shutdown). An unfinished tool call is closed when its Turn ends early (also by the
// runner for a lost process): a pending approval resolves as denied by the Turn's end
// (`terminal`), a pending question is dismissed, and the call fails — each change announced by
// the event a live watcher expects, so nothing is left showing as waiting on a finished Turn.
import type { Fault, Steer, ToolTurnPart, TurnOutcome } from "../../../generated/client/types.gen.js";
import type { ToolResultMessage } from "../../providers/index.js";
import { turns as store, type NewTurnEvent } from "../../storage/index.js";
import type { RunningTurn } from "./running.js";
import { StopSignal, fault, type Stop } from "./stop.js";

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

/**
 * Completes the Turn unless steering input is waiting (then the loop goes on and this returns
 * false). One transaction: no steer can be accepted after the gate closes with the outcome.
 */
export async function complete(t: RunningTurn, text: string): Promise<boolean> {
  await t.recorder.quiesce();
  const completedAt = t.deps.now();
  const outcome: TurnOutcome = { kind: "completed", turnId: t.id, text };
  const swept = t.recorder.sweep([{ type: "turn.finished", data: { outcome, completedAt } }], {
    phase: "completed",
    outcome,
    completedAt,
    steeringGate: "closed",
    messages: [...t.transcript],
    ...(t.usage ? { usage: t.usage } : {}),
  });
  const result = await store.changeTurn(t.deps.storage, t.id, {
    patch: swept.patch,
    parts: swept.parts,
    events: swept.events,
    ...(swept.within ? { within: swept.within } : {}),
    expectOwner: t.deps.instance,
    expectPhases: ["running"],
    expectNoWaitingSteers: true,
  });
  if (result) {
    t.deps.hub.changed(t.server, t.sessionId);
    return true;
  }
  // Refused: steering input is waiting (the loop goes on), or the claim is gone.
  const row = await store.getTurnById(t.deps.storage, t.id);
  if (row?.phase !== "running" || row.ownerInstance !== t.deps.instance) throw new StopSignal({ kind: "lost" });
  const { phase: _phase, outcome: _outcome, completedAt: _completedAt, steeringGate: _gate, messages: _messages, ...kept } = swept.patch;
  t.recorder.unsweep({ parts: swept.parts, events: swept.events.filter((event) => event.type !== "turn.finished"), patch: kept, within: swept.within });
  return false;
}

/** The outcome a stop settles as, and how its undelivered steers are marked. */
function outcomeOf(t: RunningTurn, stop: Exclude<Stop, { kind: "lost" }>): { phase: "cancelled" | "failed"; outcome: TurnOutcome; undelivered: "turn_cancelled" | "turn_failed" } {
  switch (stop.kind) {
    case "cancelled":
      return { phase: "cancelled", outcome: { kind: "cancelled", turnId: t.id, ...(stop.reason !== undefined ? { reason: stop.reason } : {}) }, undelivered: "turn_cancelled" };
    case "limit":
      return { phase: "failed", outcome: { kind: "limit_reached", turnId: t.id, limit: stop.limit, diagnostic: stop.diagnostic }, undelivered: "turn_failed" };
    case "shutdown":
      return { phase: "failed", outcome: { kind: "failed", turnId: t.id, fault: fault("host_shutdown", "The server stopped while the Turn was running") }, undelivered: "turn_failed" };
    case "failed":
      return { phase: "failed", outcome: { kind: "failed", turnId: t.id, fault: stop.fault }, undelivered: "turn_failed" };
  }
}

/** Settles a Turn that stopped before the model finished: one outcome, unfinished calls closed, steers undelivered. */
export async function settleStopped(t: RunningTurn, error: unknown): Promise<void> {
  const stop: Stop =
    error instanceof StopSignal ? error.stop : (t.stopped ?? { kind: "failed", fault: fault("internal_error", "The Turn failed unexpectedly") });
  if (stop.kind === "lost") return; // another owner settled it, or the Session is gone
  await t.recorder.quiesce().catch(() => {});
  const completedAt = t.deps.now();
  const { phase, outcome, undelivered } = outcomeOf(t, stop);
  // Tool calls that never finished fail as interrupted (each announced as settled, like any
  // other tool completion); the transcript answers every call.
  const interrupted: NewTurnEvent[] = [];
  for (const [ordinal, part] of t.recorder.all.entries()) {
    if (part.type === "tool" && part.state === "requested") {
      const closed = closeToolPart(part, fault("interrupted", "The tool call was interrupted"), completedAt);
      t.recorder.set(ordinal, closed.part);
      interrupted.push(...closed.events);
    }
  }
  const answered = new Set(t.transcript.filter((message): message is ToolResultMessage => message.role === "tool").map((message) => message.toolCallId));
  for (const message of [...t.transcript]) {
    if (message.role !== "assistant") continue;
    for (const part of message.content) {
      if (part.type === "tool_call" && !answered.has(part.id)) {
        t.transcript.push({ role: "tool", toolCallId: part.id, toolName: part.name, result: { format: "text", value: "The tool call was interrupted." }, isError: true });
      }
    }
  }
  await t.recorder.settled();
  const swept = t.recorder.sweep([...interrupted, { type: "turn.finished", data: { outcome, completedAt } }], {
    phase,
    outcome,
    completedAt,
    steeringGate: "closed",
    messages: [...t.transcript],
    ...(t.usage ? { usage: t.usage } : {}),
  });
  await t.deps.storage.transaction(async (tx) => {
    const steers = (await store.listSteers(tx, [t.id])).map((row) => row.data as Steer).filter((steer) => steer.state.state === "accepted");
    await store.updateSteers(
      tx,
      steers.map((steer) => ({ steerId: steer.steerId, data: { ...steer, state: { state: "undelivered", reason: undelivered, undeliveredAt: completedAt } } })),
    );
    await store.changeTurn(tx, t.id, {
      patch: swept.patch,
      parts: swept.parts,
      events: swept.events,
      ...(swept.within ? { within: swept.within } : {}),
      expectOwner: t.deps.instance,
      expectPhases: ["running"],
    });
  });
  t.deps.hub.changed(t.server, t.sessionId);
}
