// The tool calls of one model step. They are prepared and authorized one at a time in the
// model's order — parse, look up among the tools this request offered, validate, the
// `tool.execute.before` hooks, the permission projections, approval — and then every approved
// call runs concurrently. A call that fails before it runs (unknown tool, bad input, a projector
// that throws) fails only itself; a denied check fails the Turn with `tool_denied` and the tool
// never runs. Results reach the transcript in the model's order.
import { randomUUID } from "node:crypto";
import type { CodeModeToolOrigin, Fault, ToolActivity, ToolResult, ToolTurnPart } from "../../../generated/client/types.gen.js";
import { isHookFailure } from "../../plugins/hooks.js";
import type { ToolResultMessage } from "../../providers/index.js";
// The tools' contract modules, not services/tools/index.ts: that index brings the Node tools
// (shell, read, write) into every host's import graph, the Worker's included.
import {
  ToolFailure,
  isToolFailure,
  type AnyToolDefinition,
  type CodeModeCallRequest,
  type CodeModeCapability,
  type PermissionProjection,
  type ToolContext,
  type ToolFailureCode,
  type ToolOutput,
} from "../../tools/tool.js";
import { validateToolInput } from "../../tools/validate.js";
import { askQuestions, authorize } from "./approvals.js";
import { dispatchToolCall } from "./dispatch.js";
import { attachNestedInstructions } from "./nested-instructions.js";
import { sessionResources } from "./session-resources.js";
import type { ModelToolCall } from "./model-call.js";
import { toolFields, type RunningTurn } from "./running.js";
import { StopSignal, fault } from "./stop.js";


/** A call ready to run: its part, tool, final input and the projections that authorized it. */
interface ApprovedCall {
  readonly kind: "approved";
  readonly call: ModelToolCall;
  readonly ordinal: number;
  readonly tool: AnyToolDefinition;
  readonly input: unknown;
  readonly projections: PermissionProjection[];
  readonly signal: AbortSignal;
  /** A CodeMode script's call. */
  readonly inner?: boolean;
}

/** A call settled before it could run; the model sees `message`. */
interface SettledCall {
  readonly kind: "settled";
  readonly message: ToolResultMessage;
  readonly fault: Fault;
}

/** A call's end: what the model sees, and the tool's output (absent when the call failed). */
interface CallEnd {
  readonly message: ToolResultMessage;
  readonly output?: ToolOutput;
  readonly fault?: Fault;
}

/** Runs one model step's tool calls; resolves with their results in the model's order. */
export async function runToolCalls(t: RunningTurn, calls: readonly ModelToolCall[], offered: ReadonlyMap<string, AnyToolDefinition>): Promise<ToolResultMessage[]> {
  const prepared: (ApprovedCall | SettledCall)[] = [];
  for (const call of calls) {
    t.checkStopped();
    prepared.push(await prepare(t, call, offered));
  }
  const runs = prepared.map((entry) => (entry.kind === "settled" ? Promise.resolve(entry.message) : execute(t, entry, offered).then((end) => end.message)));
  // Wait for every call (a stop aborts them all through the signal) before the Turn settles.
  const results = await Promise.allSettled(runs);
  // The step's results reach the transcript next: what they attached is visible there from now on.
  t.pendingInstructions.clear();
  const rejected = results.find((result): result is PromiseRejectedResult => result.status === "rejected");
  if (rejected) throw rejected.reason;
  return results.map((result) => (result as PromiseFulfilledResult<ToolResultMessage>).value);
}

/**
 * One tool call a CodeMode script made: prepared, authorized and run exactly as a direct call
 * (its own part, with origin `codemode`), except that a denial rejects inside the script with
 * `tool_denied` instead of failing the Turn. `directOnly` tools and `execute` itself are refused.
 */
export async function runCodeModeCall(t: RunningTurn, parentToolCallId: string, request: CodeModeCallRequest, offered: ReadonlyMap<string, AnyToolDefinition>): Promise<ToolOutput> {
  const tool = offered.get(request.toolId);
  if (!tool || tool.directOnly || tool.id === "execute") throw new ToolFailure("invalid_input", `${JSON.stringify(request.toolId)} cannot be called from a script.`);
  const call: ModelToolCall = { id: `${parentToolCallId}:${request.ordinal}`, name: request.toolId, arguments: JSON.stringify(request.input ?? {}) };
  const origin: CodeModeToolOrigin = { kind: "codemode", parentToolCallId, ordinal: request.ordinal };
  const prepared = await prepare(t, call, offered, { origin, signal: request.signal });
  const end: CallEnd = prepared.kind === "settled" ? prepared : await execute(t, prepared, offered);
  if (end.output) return end.output;
  const failed = end.fault ?? fault("tool_error", `The ${request.toolId} call failed.`);
  throw new ToolFailure(failed.code as ToolFailureCode, failed.message);
}

/** A CodeMode call's part origin and the signal that ends it when its script does. */
interface Inner {
  readonly origin: CodeModeToolOrigin;
  readonly signal: AbortSignal;
}

async function prepare(t: RunningTurn, call: ModelToolCall, offered: ReadonlyMap<string, AnyToolDefinition>, inner?: Inner): Promise<ApprovedCall | SettledCall> {
  let input: unknown;
  let parseError: string | undefined;
  try {
    input = call.arguments.trim() === "" ? {} : JSON.parse(call.arguments);
  } catch (error) {
    parseError = error instanceof Error ? error.message : "invalid JSON";
  }
  const base: ToolTurnPart = {
    type: "tool",
    id: randomUUID(),
    toolCallId: call.id,
    toolId: call.name,
    ...(inner ? { origin: inner.origin } : {}),
    assistantMessageIndex: t.messageIndex,
    input: parseError === undefined ? input : call.arguments,
    ...(parseError !== undefined ? { modelInput: call.arguments } : {}),
    state: "requested",
    approval: { state: "none" },
    requestedAt: t.deps.now(),
  };
  const ordinal = t.recorder.add(base);
  await t.recorder.commit([{ type: "turn.tool.requested", data: { ...toolFields(base), part: base } }]);
  const settle = async (toolFault: Fault): Promise<SettledCall> => ({ kind: "settled", message: await failCall(t, ordinal, call, toolFault), fault: toolFault });

  const tool = offered.get(call.name);
  if (!tool) return settle(fault("unknown_tool", `There is no tool named ${JSON.stringify(call.name)}`));
  if (parseError !== undefined) return settle(fault("invalid_input", `The arguments are not valid JSON: ${parseError}`));
  const validated = validateToolInput(tool, input);
  if (!validated.ok) return settle(validated.failure.toFault());

  const before = await t.hooks
    .trigger("tool.execute.before", { turnId: t.id, toolId: tool.id, toolCallId: call.id, input: validated.input }, (replacement) => {
      const checked = validateToolInput(tool, replacement);
      return checked.ok ? { ok: true, input: checked.input } : { ok: false, failure: checked.failure };
    })
    .catch((error: unknown) => {
      throw hookStop(error);
    });
  if (before.kind === "invalid") return settle(isToolFailure(before.failure) ? before.failure.toFault() : fault("invalid_input", "Tool input validation failed."));
  if (before.input !== validated.input) {
    t.recorder.set(ordinal, { ...(t.recorder.part(ordinal) as ToolTurnPart), input: before.input, modelInput: validated.input });
  }

  const signal = inner ? AbortSignal.any([t.signal, inner.signal]) : t.signal;
  const permissionContext = { workdir: t.workdir, sessionId: t.sessionId, turnId: t.id, toolCallId: call.id, signal };
  let projections: PermissionProjection[];
  try {
    // A plugin tool's projector may be async (services/plugins wraps it and checks the result).
    projections = await tool.permissions(before.input, permissionContext);
  } catch (error) {
    return settle(isToolFailure(error) ? error.toFault() : fault("tool_error", "The tool could not check its permissions"));
  }
  for (const projection of projections) {
    const denial = await authorize(t, ordinal, projection, before.approval);
    if (!denial) continue;
    const message = await failCall(t, ordinal, call, denial.fault, "denied");
    const denied = fault("tool_denied", `The ${tool.id} call was denied: ${denial.fault.message}`);
    // A denied script call rejects inside the script; a denied direct call ends the Turn. The tool never runs.
    if (inner) return { kind: "settled", message, fault: denied };
    throw new StopSignal({ kind: "failed", fault: denied });
  }
  return { kind: "approved", call, ordinal, tool, input: before.input, projections, signal, ...(inner ? { inner: true } : {}) };
}

/** Runs one approved call to its result (a tool failure fails only the call). */
async function execute(t: RunningTurn, approved: ApprovedCall, offered: ReadonlyMap<string, AnyToolDefinition>): Promise<CallEnd> {
  const { call, ordinal, tool } = approved;
  let checkpoint = 0;
  let activityTimer: NodeJS.Timeout | undefined;
  let pendingActivity: ToolActivity | undefined;
  const publishActivity = (): void => {
    activityTimer = undefined;
    if (!pendingActivity) return;
    const activity = pendingActivity;
    pendingActivity = undefined;
    const current = t.recorder.part(ordinal) as ToolTurnPart;
    t.recorder.set(ordinal, { ...current, activity });
    void t.recorder.commit([{ type: "turn.tool.activity", data: { ...toolFields(current), activity } }]).catch(() => {});
  };
  const stopActivity = (): void => {
    if (activityTimer) clearTimeout(activityTimer);
    publishActivity();
  };
  const context: ToolContext = {
    workdir: t.workdir,
    sessionId: t.sessionId,
    turnId: t.id,
    toolCallId: call.id,
    signal: approved.signal,
    artifactsDirectory: t.deps.artifactsDirectory(t.workdir),
    permissions: approved.projections,
    reportActivity: (update) => {
      checkpoint += 1;
      pendingActivity = { ...update, checkpoint, updatedAt: t.deps.now() } as ToolActivity;
      if (t.deps.flushMs <= 0) publishActivity();
      else activityTimer ??= setTimeout(publishActivity, t.deps.flushMs);
    },
    askQuestion: (questions) => askQuestions(t, ordinal, questions),
    ...(t.subagents ? { subagents: t.subagents } : {}),
    ...(t.skills ? { skills: t.skills } : {}),
    ...(tool.id === "execute" ? { codemode: codemodeCapability(t, call.id, offered) } : {}),
    ...(tool.id === "shell" && t.deps.environment.terminals ? { terminals: t.deps.environment.terminals.forCall({ server: t.server, sessionId: t.sessionId, turnId: t.id, toolCallId: call.id }) } : {}),
    sessionResources: sessionResources(t),
    ...(t.deps.beforeWrite ? { recordBeforeWrite: (path: string) => t.deps.beforeWrite!({ id: t.id, sessionId: t.sessionId }, t.workdir, path) } : {}),
  };
  // No tool touches the workdir before its state before the Turn is recorded.
  await t.deps.workspaceRecorded;
  let output: ToolOutput;
  try {
    // An embedder's custody of the approved call (dispatch.ts), when its port is given.
    const dispatch = t.deps.toolDispatch;
    output = dispatch
      ? await dispatchToolCall(dispatch, {
          server: t.server,
          sessionId: t.sessionId,
          turnId: t.id,
          toolCallId: call.id,
          toolId: tool.id,
          input: approved.input,
          permissions: approved.projections,
          fromScript: approved.inner === true,
          signal: approved.signal,
          run: () => tool.execute(approved.input, context),
        })
      : await tool.execute(approved.input, context);
  } catch (error) {
    stopActivity();
    t.checkStopped();
    const toolFault = isToolFailure(error) ? error.toFault() : fault("tool_error", "The tool failed unexpectedly");
    const message = await failCall(t, ordinal, call, toolFault);
    await after(t, approved, false, { error: toolFault.message });
    return { message, fault: toolFault };
  }
  stopActivity();
  // A result that arrives after the Turn stopped is discarded: the call counts as interrupted.
  t.checkStopped();
  const nested = tool.discoversWorkspaceInstructions && output.instructionTarget ? await attachNestedInstructions(t, call.id, output.instructionTarget, output.result).catch(() => undefined) : undefined;
  t.checkStopped();
  const current = t.recorder.part(ordinal) as ToolTurnPart;
  const completed: ToolTurnPart = {
    ...current,
    state: "completed",
    canonicalResult: output.result,
    completedAt: t.deps.now(),
    ...(output.artifact ? { artifact: output.artifact } : {}),
    ...(nested ? { instructions: nested.sources } : {}),
    ...(output.execution ? { execution: output.execution } : {}),
  };
  t.recorder.set(ordinal, completed);
  await t.recorder.commit([{ type: "turn.tool.completed", data: { ...toolFields(completed), ok: true, part: completed } }]);
  await after(t, approved, true, output.result.value);
  return { message: { role: "tool", toolCallId: call.id, toolName: call.name, result: nested?.result ?? output.result, isError: false }, output };
}

/** What an `execute` call's scripts reach: the tools this request offered, called through Core. */
function codemodeCapability(t: RunningTurn, parentToolCallId: string, offered: ReadonlyMap<string, AnyToolDefinition>): CodeModeCapability {
  return {
    tools: () => [...offered.values()].filter((tool) => !tool.directOnly && tool.id !== "execute"),
    call: (request) => runCodeModeCall(t, parentToolCallId, request, offered),
  };
}

/** `tool.execute.after`, once the call's completion is recorded. */
async function after(t: RunningTurn, approved: ApprovedCall, ok: boolean, result: unknown): Promise<void> {
  if (!t.hooks.has("tool.execute.after")) return;
  await t.hooks
    .trigger("tool.execute.after", { turnId: t.id, toolId: approved.tool.id, toolCallId: approved.call.id, input: approved.input, ok, result })
    .catch((error: unknown) => {
      throw hookStop(error);
    });
}

/** Settles the call at `ordinal` as failed (or denied) and answers the model with the fault. */
async function failCall(t: RunningTurn, ordinal: number, call: ModelToolCall, toolFault: Fault, state: "failed" | "denied" = "failed"): Promise<ToolResultMessage> {
  const current = t.recorder.part(ordinal) as ToolTurnPart;
  const settled: ToolTurnPart = { ...current, state, fault: toolFault, completedAt: t.deps.now() };
  t.recorder.set(ordinal, settled);
  await t.recorder.commit([{ type: "turn.tool.completed", data: { ...toolFields(settled), ok: false, part: settled } }]);
  const result: ToolResult = { format: "text", value: `Error (${toolFault.code}): ${toolFault.message}` };
  return { role: "tool", toolCallId: call.id, toolName: call.name, result, isError: true };
}

/** A hook failure as the Turn's stop (`runtime_failed`); any other error passes through. */
export function hookStop(error: unknown): unknown {
  return isHookFailure(error) ? new StopSignal({ kind: "failed", fault: fault(error.code, error.message) }) : error;
}
