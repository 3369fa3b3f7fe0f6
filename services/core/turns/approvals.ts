// Authorizing one tool call's permission checks, and waiting for what a user answers: each
// projection is evaluated against the policy's rules and the Session's saved grants (and a
// `tool.execute.before` hook's decision); `ask` records a durable pending request and waits for
// `replyPermission` (or the approval wait limit). Questions a tool asks wait the same way.
import { randomUUID } from "node:crypto";
import type { Fault, PermissionRequest, Question, ToolTurnPart, TurnPart } from "../../../generated/client/types.gen.js";
import type { ToolApprovalDecision } from "../../plugins/hooks.js";
import { listSavedPermissions, turns as store } from "../../storage/index.js";
import { QuestionDismissedError, type PermissionProjection } from "../../tools/tool.js";
import { evaluateProjection } from "../permissions/index.js";
import { toolFields, type RunningTurn } from "./running.js";
import { fault, finite, limitReached } from "./stop.js";


/** A refused check: the part's fault, and what the Turn's `tool_denied` fault says. */
export interface Denial {
  readonly fault: Fault;
}

/**
 * Authorizes one projection of the tool call at `ordinal`; resolves with the denial when it is
 * refused. A hook `deny` refuses every check; a hook `allow` approves checks nothing else decided.
 */
export async function authorize(t: RunningTurn, ordinal: number, projection: PermissionProjection, hook: ToolApprovalDecision | undefined): Promise<Denial | undefined> {
  const saved = await listSavedPermissions(t.deps.storage, t.sessionId);
  const decision = evaluateProjection(projection, {
    server: t.policy.permissions,
    saved: saved.map((grant) => ({ action: grant.action, resource: grant.resource })),
    caseSensitive: t.policy.permissionMatching.caseSensitive,
  });
  const part = t.recorder.part(ordinal) as ToolTurnPart;
  const request: PermissionRequest = {
    id: randomUUID(),
    sessionId: t.sessionId,
    turnId: t.id,
    toolId: part.toolId,
    toolCallId: part.toolCallId,
    action: projection.action,
    resources: [...projection.resources],
    ...(projection.save !== undefined ? { save: [...projection.save] } : {}),
    ...(projection.metadata !== undefined ? { metadata: projection.metadata } : {}),
  };
  const what = `${projection.action} ${projection.resources.join(", ")}`;
  const resolveNow = async (effect: "allow" | "deny", source: "saved" | "config" | "hook"): Promise<void> => {
    const now = t.deps.now();
    t.recorder.set(ordinal, { ...part, approval: { state: "resolved", request, requestedAt: now, resolvedAt: now, decision: effect, source } });
    await t.recorder.commit([{ type: "turn.approval.resolved", data: { ...toolFields(part), requestId: request.id, decision: effect, source, resolvedAt: now } }]);
  };
  if (hook === "deny") {
    await resolveNow("deny", "hook");
    return { fault: fault("permission_denied", `A plugin hook denied ${what}`) };
  }
  if (decision.effect === "deny") {
    await resolveNow("deny", "config");
    return { fault: fault("permission_denied", `Permission denied by configuration: ${what}`) };
  }
  if (decision.effect === "allow") {
    if (decision.resources.some((resource) => resource.decision.source === "saved")) await resolveNow("allow", "saved");
    return undefined;
  }
  if (hook === "allow") {
    await resolveNow("allow", "hook");
    return undefined;
  }
  // Ask: a durable pending request, answered by replyPermission (or the approval wait limit).
  const requestedAt = t.deps.now();
  t.recorder.set(ordinal, { ...part, approval: { state: "pending", request, requestedAt } });
  await t.recorder.commit([{ type: "turn.approval.requested", data: { ...toolFields(part), request, requestedAt } }]);
  const timeout = finite(t.policy.approval.timeoutMs);
  const settled = await waitForPart(t, ordinal, (candidate) => candidate.type === "tool" && candidate.approval.state === "resolved", timeout);
  if (!settled) {
    const now = t.deps.now();
    const current = t.recorder.part(ordinal) as ToolTurnPart;
    const denied: ToolTurnPart = {
      ...current,
      state: "denied",
      fault: fault("approval_timeout", `No reply to the permission request within ${timeout} ms`),
      completedAt: now,
      approval: { state: "resolved", request, requestedAt, resolvedAt: now, decision: "deny", source: "timeout" },
    };
    t.recorder.set(ordinal, denied);
    await t.recorder.commit([
      { type: "turn.approval.resolved", data: { ...toolFields(current), requestId: request.id, decision: "deny", source: "timeout", resolvedAt: now } },
      { type: "turn.tool.completed", data: { ...toolFields(current), ok: false, part: denied } },
    ]);
    throw limitReached("approval_wait", t.policy.approval.timeoutMs, timeout!, "milliseconds", `No reply to the permission request within ${timeout} ms`);
  }
  const resolved = (settled as ToolTurnPart).approval;
  if (resolved.state === "resolved" && resolved.decision === "deny") {
    const note = resolved.replyMessage !== undefined ? ` The user said: ${resolved.replyMessage}` : "";
    return { fault: fault("permission_rejected", `The user rejected ${what}.${note}`) };
  }
  return undefined;
}

/** Waits until a part satisfies `done` (re-reading storage on each wake); false on timeout. */
export async function waitForPart(t: RunningTurn, ordinal: number, done: (part: TurnPart) => boolean, timeoutMs: number | undefined): Promise<TurnPart | false> {
  const deadline = timeoutMs !== undefined ? t.deps.now() + timeoutMs : undefined;
  let wake: (() => void) | undefined;
  const unsubscribe = t.deps.hub.onSession(t.sessionId, () => wake?.());
  const onAbort = (): void => wake?.();
  t.signal.addEventListener("abort", onAbort);
  try {
    for (;;) {
      t.checkStopped();
      // A cancellation recorded by another process reaches this waiting Turn here.
      const cancellation = (await store.getTurnById(t.deps.storage, t.id))?.cancellation as { reason?: string } | null | undefined;
      if (cancellation) t.cancel(cancellation.reason);
      t.checkStopped();
      const part = await t.recorder.refresh(ordinal);
      if (done(part)) return part;
      const remaining = deadline !== undefined ? deadline - t.deps.now() : undefined;
      if (remaining !== undefined && remaining <= 0) return false;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => ((wake = undefined), resolve()), Math.min(t.deps.pollMs, remaining ?? t.deps.pollMs));
        wake = () => {
          wake = undefined;
          clearTimeout(timer);
          resolve();
        };
      });
    }
  } finally {
    unsubscribe();
    t.signal.removeEventListener("abort", onAbort);
  }
}

/** Asks the user the tool's questions and waits for the answers; a dismissal rejects. */
export async function askQuestions(t: RunningTurn, ordinal: number, questions: readonly Question[]): Promise<string[][]> {
  const part = t.recorder.part(ordinal) as ToolTurnPart;
  const requestedAt = t.deps.now();
  const request = { id: randomUUID(), sessionId: t.sessionId, turnId: t.id, toolId: part.toolId, toolCallId: part.toolCallId, questions: [...questions] };
  t.recorder.set(ordinal, { ...part, question: { state: "pending", request, requestedAt } });
  await t.recorder.commit([{ type: "turn.question.asked", data: { ...toolFields(part), request, requestedAt } }]);
  const settled = (await waitForPart(t, ordinal, (candidate) => candidate.type === "tool" && candidate.question !== undefined && candidate.question.state !== "pending", undefined)) as ToolTurnPart;
  if (settled.question?.state === "answered") return settled.question.answers;
  throw new QuestionDismissedError();
}
