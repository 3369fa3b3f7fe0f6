// The embedder's `toolDispatch` port (the reference's host custody "around final dispatch after
// Harness permission resolution"): every tool call the Turn has approved — after its hooks,
// input validation and permission asks, direct calls and CodeMode script calls alike — is handed
// to `ToolDispatchLifecycle.dispatch(lease)` instead of running straight away. The host may
//
// - wrap it: `return await lease.proceed()` runs the tool as Harness would (at most once) and
//   returns its outcome, around whatever the host does before and after;
// - refuse it: `{ kind: "refused", code?, message }` fails the call (state `failed`, fault
//   `tool_dispatch_refused`, the host's message: the model reads it) and the tool never runs;
// - run it itself: `{ kind: "result", result }` with a contract `ToolResult` completes the call
//   with that result, the tool never run by Harness.
//
// A `ToolDispatchError` thrown by the host fails the call as `tool_dispatch_failed` with its
// `code` and message; any other throw fails it with a generic message (it may hold secrets); a
// tool failure `proceed()` rejected with and the host rethrew stays the tool's own fault. Without
// the port, calls run as before.
import type { ToolResult } from "../../../generated/client/types.gen.js";
import { ToolFailure, isToolFailure, type PermissionProjection, type ToolOutput } from "../../tools/tool.js";

/** One approved tool call in the host's custody. */
export interface ToolDispatchLease {
  readonly server: string;
  readonly sessionId: string;
  readonly turnId: string;
  readonly toolCallId: string;
  /** The tool's id (`read`, `shell`, `<server>_<tool>` for MCP). */
  readonly toolId: string;
  /** The input the tool receives (after `tool.execute.before` hooks and validation). */
  readonly input: unknown;
  /** The permission projections the call was authorized under. */
  readonly permissions: readonly PermissionProjection[];
  /** Whether a CodeMode script made the call (inside `execute`). */
  readonly fromScript: boolean;
  /** Aborts when the call is abandoned (the Turn cancelled, interrupted or stopped). */
  readonly signal: AbortSignal;
  /**
   * Runs the call's own tool, as Harness does without custody; at most once. Rejects with the tool's
   * failure, or (running nothing) once `dispatch` has answered or the call was abandoned.
   */
  proceed(): Promise<ToolDispatchOutcome & { readonly kind: "result" }>;
}

/** What the host decided for one call. */
export type ToolDispatchOutcome =
  | { readonly kind: "result"; readonly result: ToolResult }
  | { readonly kind: "refused"; readonly code?: string; readonly message: string };

/** The embedder's port. */
export interface ToolDispatchLifecycle {
  dispatch(lease: ToolDispatchLease): Promise<ToolDispatchOutcome>;
}

/** A typed failure of the host's dispatch: fails the call as `tool_dispatch_failed` with `code`. */
export class ToolDispatchError extends Error {
  readonly _tag = "ToolDispatchError";
  override readonly name = "ToolDispatchError";
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** What the Turn loop hands over for one approved call (tool-call.ts). */
export interface DispatchCall extends Omit<ToolDispatchLease, "proceed"> {
  readonly run: () => Promise<ToolOutput>;
}

const CODE = /^[a-z][a-z0-9_.-]{0,63}$/;

function isToolResult(value: unknown): value is ToolResult {
  if (typeof value !== "object" || value === null) return false;
  const result = value as { format?: unknown; value?: unknown };
  if (result.format === "text") return typeof result.value === "string";
  if (result.format === "json") return result.value !== undefined;
  if (result.format === "content") return Array.isArray(result.value) && result.value.every((part: unknown) => typeof part === "object" && part !== null && typeof (part as { type?: unknown }).type === "string");
  return false;
}

/** Runs one approved call through the host's custody; resolves with the tool output, rejects with a ToolFailure. */
export async function dispatchToolCall(lifecycle: ToolDispatchLifecycle, call: DispatchCall): Promise<ToolOutput> {
  const { run, ...fields } = call;
  let ran: Promise<ToolOutput> | undefined;
  let output: ToolOutput | undefined;
  // The lease ends with the host's answer: a kept lease's proceed() after it (or after the call was
  // abandoned) runs nothing — the call is already settled, or its Turn stopped.
  let settled = false;
  const lease: ToolDispatchLease = {
    ...fields,
    proceed: async () => {
      if (ran === undefined && (settled || call.signal.aborted)) throw new ToolFailure("tool_dispatch_failed", "The tool call's dispatch lease has ended: nothing ran");
      ran ??= run();
      output = await ran;
      return { kind: "result", result: output.result };
    },
  };
  let outcome: ToolDispatchOutcome;
  try {
    outcome = await lifecycle.dispatch(lease);
  } catch (error) {
    settled = true;
    if (isToolFailure(error)) throw error;
    if (error instanceof ToolDispatchError || (error as { _tag?: unknown })?._tag === "ToolDispatchError") {
      const typed = error as ToolDispatchError;
      const code = typeof typed.code === "string" && CODE.test(typed.code) ? typed.code : "error";
      throw new ToolFailure("tool_dispatch_failed", `The host's tool dispatch failed (${code}): ${String(typed.message).slice(0, 2048)}`);
    }
    throw new ToolFailure("tool_dispatch_failed", "The host's tool dispatch failed");
  }
  settled = true;
  if (typeof outcome !== "object" || outcome === null) throw new ToolFailure("tool_dispatch_failed", "The host's tool dispatch returned no outcome");
  if (outcome.kind === "refused") {
    const code = typeof outcome.code === "string" && CODE.test(outcome.code) ? ` (${outcome.code})` : "";
    throw new ToolFailure("tool_dispatch_refused", `The host refused the ${call.toolId} call${code}: ${String(outcome.message ?? "").slice(0, 2048)}`);
  }
  if (outcome.kind !== "result" || !isToolResult(outcome.result)) throw new ToolFailure("tool_dispatch_failed", "The host's tool dispatch returned an unusable outcome");
  // The tool's own output (artifact, execution, nested instructions) when the host returned its result unchanged.
  if (output !== undefined && outcome.result === output.result) return output;
  return { result: outcome.result };
}

/** Why a `contentResolver` or `toolDispatch` option cannot be used (the embedder ports' shapes). */
export function embedderPortProblem(options: { readonly contentResolver?: unknown; readonly toolDispatch?: unknown }): string | undefined {
  const resolver = options.contentResolver as { resolve?: unknown } | undefined;
  if (resolver !== undefined && (typeof resolver !== "object" || resolver === null || typeof resolver.resolve !== "function")) return "contentResolver must be an object with a resolve(request) function";
  const dispatch = options.toolDispatch as { dispatch?: unknown } | undefined;
  if (dispatch !== undefined && (typeof dispatch !== "object" || dispatch === null || typeof dispatch.dispatch !== "function")) return "toolDispatch must be an object with a dispatch(lease) function";
  return undefined;
}
