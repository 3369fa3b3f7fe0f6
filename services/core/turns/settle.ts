// Settlement: a Turn ends with exactly one outcome. `complete` records the model's answer
// (unless steering input is waiting); `settleStopped` records a stop (cancelled, a limit, a
// failure, shutdown). An unfinished tool call is closed when its Turn ends early (also by the
// runner for a lost process): a pending approval resolves as denied by the Turn's end
// (`terminal`), a pending question is dismissed, and the call fails — each change announced by
// the event a live watcher expects, so nothing is left showing as waiting on a finished Turn.
import type { Fault, Steer, ToolTurnPart, TurnOutcome, TurnPart } from "../../../generated/client/types.gen.js";
import type { ToolResultMessage } from "../../providers/index.js";
import { isFullError, isRetryableStorageError, turns as store, type NewTurnEvent, type StorageHandle, type StorageTransaction } from "../../storage/index.js";

type Within = (tx: StorageTransaction) => Promise<void>;
import { observeEvents } from "./observe.js";
import type { RunningTurn } from "./running.js";
import { StopSignal, fault, type Stop } from "./stop.js";
import { untilWritten } from "./storage-wait.js";

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
  const recorded = t.deps.workspaceSettle?.();
  const within = withSettleWrite(swept.within, recorded?.within);
  const { phase: _phase, outcome: _outcome, completedAt: _completedAt, steeringGate: _gate, messages: _messages, ...kept } = swept.patch;
  const putBack = () => t.recorder.unsweep({ parts: swept.parts, events: swept.events.filter((event) => event.type !== "turn.finished"), patch: kept, within: swept.within, request: swept.request });
  let result: Awaited<ReturnType<typeof store.changeTurn>>;
  try {
    // The answer waits out a full disk: the Turn completes once space returns.
    result = await untilWritten(
      () =>
        store.changeTurn(t.deps.storage, t.id, {
          patch: swept.patch,
          parts: swept.parts,
          events: swept.events,
          ...(within ? { within } : {}),
          ...(recorded ? { emptyPatchAt: recorded.emptyPatchAt } : {}),
          ...(swept.request ? { preparedRequest: swept.request.record } : {}),
          ...ownParts(t),
          expectOwner: t.deps.instance,
          expectPhases: ["running"],
          expectNoWaitingSteers: true,
        }),
      [t.signal, t.deps.hostStopping],
    );
  } catch (error) {
    // Not written: the settlement that follows (settleStopped) carries what this one took.
    putBack();
    throw error;
  }
  if (result) {
    observeEvents(t.id, [{ type: "turn.finished", data: { outcome, completedAt } }]);
    t.deps.hub.changed(t.server, t.sessionId);
    return true;
  }
  // Refused: steering input is waiting (the loop goes on), or the claim is gone.
  const row = await store.getTurnById(t.deps.storage, t.id);
  if (row?.phase !== "running" || row.ownerInstance !== t.deps.instance) throw new StopSignal({ kind: "lost" });
  putBack();
  return false;
}

/**
 * The settlement's riders plus Turn recording's settlement rider (the Turn's empty patch, when it
 * is known without a capture, is the settling UPDATE's `emptyPatchAt`): written with the outcome, so no crash separates the two. Kept apart from the
 * recorder's riders, which a refused completion puts back for a later, non-settling commit.
 */
function withSettleWrite(riders: Within | undefined, settleWrite: Within | undefined): Within | undefined {
  if (!settleWrite) return riders;
  return async (tx) => {
    await riders?.(tx);
    await settleWrite(tx);
  };
}

/**
 * The Turn's parts for its settlement to publish without reading them back, when this process
 * alone wrote them: streamed content only (a tool part can be changed by another caller's reply).
 */
function ownParts(t: RunningTurn): { allParts?: readonly TurnPart[] } {
  const parts = t.recorder.all;
  return parts.every((part) => part.type === "text" || part.type === "reasoning" || part.type === "refusal") ? { allParts: parts } : {};
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

/** The stop a Turn settles with after `error` ended its loop. */
function stopOf(t: RunningTurn, error: unknown): Stop {
  if (error instanceof StopSignal) return error.stop;
  if (t.stopped) return t.stopped;
  if (isFullError(error)) return { kind: "failed", fault: fault("storage_full", "The disk holding the server's data is full: the Turn's progress could not be recorded") };
  return { kind: "failed", fault: fault("internal_error", "The Turn failed unexpectedly") };
}

/**
 * Settles a Turn that stopped before the model finished: one outcome, unfinished calls closed,
 * steers undelivered. Never throws: the settlement waits out a full disk (until the host stops —
 * then the Turn stays running for the next start's recovery), and a settlement that cannot be
 * written at all is replaced by the last-resort one (`settleUnrecorded`).
 */
export async function settleStopped(t: RunningTurn, error: unknown): Promise<void> {
  const stop = stopOf(t, error);
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
  const recorded = t.deps.workspaceSettle?.();
  const within = withSettleWrite(swept.within, recorded?.within);
  const settle = () =>
    t.deps.storage.transaction(async (tx) => {
      const steers = (await store.listSteers(tx, [t.id])).map((row) => row.data as Steer).filter((steer) => steer.state.state === "accepted");
      await store.updateSteers(
        tx,
        steers.map((steer) => ({ steerId: steer.steerId, data: { ...steer, state: { state: "undelivered", reason: undelivered, undeliveredAt: completedAt } } })),
      );
      await store.changeTurn(tx, t.id, {
        patch: swept.patch,
        parts: swept.parts,
        events: swept.events,
        ...(within ? { within } : {}),
        ...(recorded ? { emptyPatchAt: recorded.emptyPatchAt } : {}),
        ...(swept.request ? { preparedRequest: swept.request.record } : {}),
        ...ownParts(t),
        expectOwner: t.deps.instance,
        expectPhases: ["running"],
      });
    });
  try {
    await untilWritten(settle, [t.deps.hostStopping]);
    observeEvents(t.id, [...interrupted, { type: "turn.finished", data: { outcome, completedAt } }]);
  } catch (failure) {
    // The host stops with the disk still full: the Turn stays running, and the next start settles it.
    if (isRetryableStorageError(failure)) return;
    if (await settleUnrecorded(t.deps.storage, { turnId: t.id, ownerInstance: t.deps.instance }, completedAt, t.deps.hostStopping).catch(() => false)) {
      observeEvents(t.id, [{ type: "turn.finished", data: { outcome: { kind: "failed", turnId: t.id, fault: SETTLEMENT_FAILED }, completedAt } }]);
    }
  }
  t.deps.hub.changed(t.server, t.sessionId);
}

/** The safe fault of a Turn settled by `settleUnrecorded`. */
export const SETTLEMENT_FAILED = fault("settlement_failed", "The Turn's record could not be written in full, so it was settled without its remaining parts");

/**
 * The settlement of last resort, for a Turn whose full settlement cannot be written (a part that
 * cannot be read back or published, a statement the database refuses): failed with the safe
 * fault `settlement_failed`, steering gate closed, its accepted steers undelivered when that can
 * be written, and its prompt alone published to history — no part is read. Nothing is written
 * when the Turn no longer runs under `ownerInstance` (null: under no owner). Waits out a full
 * disk like any settlement. Resolves whether it settled the Turn.
 */
export async function settleUnrecorded(
  storage: StorageHandle,
  turn: { readonly turnId: string; readonly ownerInstance: string | null },
  now: number,
  hostStopping?: AbortSignal,
): Promise<boolean> {
  const outcome: TurnOutcome = { kind: "failed", turnId: turn.turnId, fault: SETTLEMENT_FAILED };
  return untilWritten(
    () =>
      storage.transaction(async (tx) => {
        // Best effort, in a savepoint of its own: a steer that cannot be read stays as it is.
        await storage
          .transaction(async (inner) => {
            const steers = (await store.listSteers(inner, [turn.turnId])).map((row) => row.data as Steer).filter((steer) => steer.state.state === "accepted");
            const state = { state: "undelivered", reason: "turn_failed", undeliveredAt: now };
            await store.updateSteers(inner, steers.map((steer) => ({ steerId: steer.steerId, data: { ...steer, state } })));
          })
          .catch(() => {});
        const changed = await store.changeTurn(tx, turn.turnId, {
          patch: { phase: "failed", outcome, completedAt: now, steeringGate: "closed" },
          events: [{ type: "turn.finished", data: { outcome, completedAt: now } }],
          expectPhases: ["running"],
          ...(turn.ownerInstance !== null ? { expectOwner: turn.ownerInstance } : {}),
          promptOnly: true,
        });
        return changed !== undefined;
      }),
    [hostStopping],
  );
}
