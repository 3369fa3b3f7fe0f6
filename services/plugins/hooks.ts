// The hook pipeline: awaited handlers at the reference's hook points (`turn.before`,
// `model.request.before`, `tool.execute.before`, `tool.execute.after`). The Turn loop calls
// `trigger(name, input)` at each point; handlers run one at a time in registration order (host
// hooks first, then Session hooks, once plugins register them). A throw fails the Turn with
// `runtime_failed`, worded by a thrown plugin error's `publicMessage` or a generic message.
// Empty until plugins fill it: an empty pipeline costs one Map lookup per point. A plugin
// generation builds its own frozen pipeline; `HookPipeline.combine` joins the embedding host's,
// the host generation's and a Session overlay's for one Turn.
import type { PromptPart } from "../../generated/client/types.gen.js";
import type { ModelMessage } from "../providers/index.js";

/** Input to `turn.before`. Read-only. */
export interface TurnBeforeInput {
  readonly turnId: string;
  readonly prompt: readonly PromptPart[];
  readonly model: { readonly providerId: string; readonly modelId: string };
}

/** Input to `model.request.before`. Read-only. */
export interface ModelRequestBeforeInput {
  readonly turnId: string;
  readonly providerId: string;
  readonly modelId: string;
  /** Zero-based index of this request within the Turn; counts requests prepared but not sent. */
  readonly iteration: number;
  /** The Session's system prompt, when one is set (not the other instructions Core adds). */
  readonly systemPrompt?: string;
  /** The conversation messages Core will send. */
  readonly messages: readonly ModelMessage[];
}

/** Input to `tool.execute.before`. */
export interface ToolExecuteBeforeInput {
  readonly turnId: string;
  readonly toolId: string;
  readonly toolCallId: string;
  /** Validated against the tool's `inputSchema`; an earlier hook's replacement when it made one. */
  readonly input: unknown;
}

export type ToolApprovalDecision = "allow" | "deny";

/** What a `tool.execute.before` handler may return; nothing leaves the call unchanged. */
export interface ToolExecuteBeforeResult {
  /** Replacement input (used whenever the property is present), validated again. */
  readonly input?: unknown;
  /** `deny` refuses every check of the call; `allow` approves checks that would otherwise ask. */
  readonly approval?: ToolApprovalDecision | undefined;
}

/** Input to `tool.execute.after`. */
export interface ToolExecuteAfterInput extends ToolExecuteBeforeInput {
  readonly ok: boolean;
  /** What the model sees: a string, a JSON value, or `{ error }` for a failed call. */
  readonly result: unknown;
}

export interface HookHandlers {
  readonly "turn.before": (input: TurnBeforeInput) => Promise<void>;
  readonly "model.request.before": (input: ModelRequestBeforeInput) => Promise<void>;
  readonly "tool.execute.before": (input: ToolExecuteBeforeInput) => Promise<void | ToolExecuteBeforeResult>;
  readonly "tool.execute.after": (input: ToolExecuteAfterInput) => Promise<void>;
}

export type HookName = keyof HookHandlers;

export const HOOK_NAMES: readonly HookName[] = ["turn.before", "model.request.before", "tool.execute.before", "tool.execute.after"];

/** A hook failed: the Turn fails with this fault. */
export class HookFailure extends Error {
  readonly _tag = "HookFailure" as const;
  readonly code = "runtime_failed" as const;
  constructor(
    readonly hook: HookName,
    message: string,
  ) {
    super(message);
    this.name = "HookFailure";
  }
}

export const isHookFailure = (value: unknown): value is HookFailure =>
  typeof value === "object" && value !== null && (value as { _tag?: unknown })._tag === "HookFailure";

const GENERIC_MESSAGE = "A plugin hook failed.";

/** The safe message of a thrown value: a non-blank `publicMessage` (trimmed, ≤ 4,096 characters), or a generic one. */
function publicMessageOf(error: unknown): string {
  const publicMessage = (error as { publicMessage?: unknown } | null)?.publicMessage;
  if (typeof publicMessage === "string" && publicMessage.trim() !== "") return publicMessage.trim().slice(0, 4096);
  return GENERIC_MESSAGE;
}

/** How `tool.execute.before` settled for one call. */
export type ToolBeforeOutcome =
  | { readonly kind: "proceed"; readonly input: unknown; readonly approval?: ToolApprovalDecision }
  /** A replacement input failed validation: the call fails with `failure`, later hooks are skipped. */
  | { readonly kind: "invalid"; readonly failure: unknown };

/** Validates a replacement input: the (possibly normalized) input, or the failure the call fails with. */
export type RevalidateInput = (input: unknown) => { readonly ok: true; readonly input: unknown } | { readonly ok: false; readonly failure: unknown };

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

export const isHookName = (name: unknown): name is HookName => typeof name === "string" && (HOOK_NAMES as readonly string[]).includes(name);

export class HookPipeline {
  private readonly handlers = new Map<HookName, ((input: never) => Promise<unknown>)[]>();
  private frozen = false;

  /**
   * One pipeline running every handler of `pipelines`, in their order (the embedding host's, then
   * the host plugin generation's, then a Session overlay's): what one Turn runs through. The
   * result is a snapshot: handlers registered on the inputs later are not in it.
   */
  static combine(...pipelines: readonly (HookPipeline | undefined)[]): HookPipeline {
    const combined = new HookPipeline();
    for (const pipeline of pipelines) {
      if (!pipeline) continue;
      for (const [name, list] of pipeline.handlers) for (const handler of list) combined.register(name, handler as HookHandlers[typeof name]);
    }
    return combined;
  }

  /** Refuses further registrations and removals (a plugin generation's pipeline is immutable). */
  freeze(): this {
    this.frozen = true;
    return this;
  }

  /** Adds a handler after the ones already registered; returns its removal. */
  register<N extends HookName>(name: N, handler: HookHandlers[N]): () => void {
    if (!HOOK_NAMES.includes(name)) throw new Error(`Unknown hook ${JSON.stringify(name)}`);
    if (this.frozen) throw new Error("This hook pipeline is frozen");
    const list = this.handlers.get(name) ?? [];
    list.push(handler as (input: never) => Promise<unknown>);
    this.handlers.set(name, list);
    return () => {
      if (this.frozen) throw new Error("This hook pipeline is frozen");
      const index = list.indexOf(handler as (input: never) => Promise<unknown>);
      if (index >= 0) list.splice(index, 1);
    };
  }

  has(name: HookName): boolean {
    return (this.handlers.get(name)?.length ?? 0) > 0;
  }

  /** Runs `tool.execute.before`: input replacements chain and are revalidated; `deny` from any handler wins. */
  trigger(name: "tool.execute.before", input: ToolExecuteBeforeInput, revalidate: RevalidateInput): Promise<ToolBeforeOutcome>;
  trigger(name: Exclude<HookName, "tool.execute.before">, input: Parameters<HookHandlers[typeof name]>[0]): Promise<void>;
  async trigger(name: HookName, input: unknown, revalidate?: RevalidateInput): Promise<ToolBeforeOutcome | void> {
    const list = this.handlers.get(name);
    if (name !== "tool.execute.before") {
      if (!list || list.length === 0) return;
      for (const handler of [...list]) await this.call(name, handler, input);
      return;
    }
    let current = input as ToolExecuteBeforeInput;
    let approval: ToolApprovalDecision | undefined;
    for (const handler of [...(list ?? [])]) {
      const result = await this.call(name, handler, current);
      if (result === undefined) continue;
      if (!isPlainObject(result)) throw new HookFailure(name, "A tool.execute.before hook returned a value that is not an object.");
      if ("approval" in result && result["approval"] !== undefined) {
        if (result["approval"] !== "allow" && result["approval"] !== "deny") {
          throw new HookFailure(name, "A tool.execute.before hook returned an approval other than allow or deny.");
        }
        approval = approval === "deny" ? "deny" : (result["approval"] as ToolApprovalDecision);
      }
      if ("input" in result) {
        const checked = revalidate!(result["input"]);
        if (!checked.ok) return { kind: "invalid", failure: checked.failure };
        current = { ...current, input: checked.input };
      }
    }
    return { kind: "proceed", input: current.input, ...(approval !== undefined ? { approval } : {}) };
  }

  private async call(name: HookName, handler: (input: never) => Promise<unknown>, input: unknown): Promise<unknown> {
    try {
      return await handler(input as never);
    } catch (error) {
      throw new HookFailure(name, publicMessageOf(error));
    }
  }
}
