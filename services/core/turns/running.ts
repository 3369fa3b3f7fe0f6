// The state one running Turn shares across its loop, model calls, tool calls, approvals,
// steering and settlement: what it runs with (deps, policy, workdir), its durable record, its
// model-visible transcript, and how it is stopped. The first stop wins; everything that waits
// listens to `signal`.
import type { PromptPart, ToolTurnPart, TurnPart, TurnPolicy, TurnUsage } from "../../../generated/client/types.gen.js";
import type { HookPipeline } from "../../plugins/hooks.js";
import type { ModelMessage, UserContentPart } from "../../providers/index.js";
import type { SessionRow, StorageHandle, StorageTransaction, TurnRow } from "../../storage/index.js";
import type { SkillCapability, SubagentCapability, ToolRegistry } from "../../tools/index.js";
import type { AgentCatalog } from "../../workspace/agents.js";
import type { ActivityHub } from "../events/hub.js";
import type { TurnEnvironment, TurnExtensions } from "./environment.js";
import type { ModelGateway } from "./gateway.js";
import { referenceText, type ReferenceTextPart } from "./content.js";
import type { ToolDispatchLifecycle } from "./dispatch.js";
import { TurnRecorder } from "./recorder.js";
import { StopSignal, type Stop } from "./stop.js";

/** The fields every tool event of a Turn carries to name its tool call. */
export const toolFields = (part: ToolTurnPart) => ({ partId: part.id, toolId: part.toolId, toolCallId: part.toolCallId });

export interface TurnDeps {
  readonly storage: StorageHandle;
  readonly hub: ActivityHub;
  readonly gateway: ModelGateway;
  readonly tools: ToolRegistry;
  readonly hooks: HookPipeline;
  /** Agents, Skills and sub-agents. */
  readonly environment: TurnEnvironment;
  /** This host instance: the claim's owner. */
  readonly instance: string;
  readonly flushMs: number;
  readonly now: () => number;
  /** Where tool artifacts go for a workdir. */
  readonly artifactsDirectory: (workdir: string) => string;
  /** Interval of the idle re-read while waiting on a reply. */
  readonly pollMs: number;
  /**
   * Resolves once the workdir's state before this Turn is recorded (Turn patches and rewind):
   * recorded while the first model request runs, and awaited before any tool can write.
   */
  readonly workspaceRecorded?: Promise<void>;
  /** The Turn took its project lease (or failed to): its workdir recording starts (see `workspaceRecorded`). */
  readonly leased?: () => void;
  /** Turn recording's settlement record: the empty patch's time for the settling UPDATE (when known without a capture) and a rider of its transaction. */
  readonly workspaceSettle?: () => { readonly emptyPatchAt: number; readonly within: (tx: StorageTransaction) => Promise<void> } | undefined;
  /** Turn recording's write hook: file tools record a path's content before they write it. */
  readonly beforeWrite?: (turn: { readonly id: string; readonly sessionId: string }, workdir: string, path: string) => Promise<void>;
  /**
   * Resolves once the Turn's admission is durable, for a Turn started at its admission's COMMIT:
   * awaited before anything leaves the process (hooks, tools, the model request).
   */
  readonly admissionDurable?: Promise<void>;
  /** Aborts when the host stops: writes waiting for disk space give up, and the Turn is left to the next start's recovery. */
  readonly hostStopping?: AbortSignal;
  /** An embedder's custody of every approved tool call (dispatch.ts); absent: calls run directly. */
  readonly toolDispatch?: ToolDispatchLifecycle;
}

/**
 * The model-visible form of prompt content: a content reference is named, not resolved, in a text
 * part marked with its `reference` (an embedder's resolver replaces it at request time: content.ts).
 */
export function userContent(prompt: readonly PromptPart[]): UserContentPart[] {
  return prompt.map((part): UserContentPart => {
    if (part.type === "text") return part;
    if (part.type === "image") return part;
    const marked: ReferenceTextPart = { type: "text", text: referenceText(part.reference), reference: part.reference };
    return marked;
  });
}

export class RunningTurn {
  private readonly controller = new AbortController();
  private stopValue: Stop | undefined;
  readonly recorder: TurnRecorder;
  /** This Turn's messages (the prompt, answers, tool results, steering), after `history`. */
  readonly transcript: ModelMessage[] = [];
  /** Index of the assistant message being produced. */
  messageIndex = 0;
  /** Model requests prepared so far (`model.request.before`'s `iteration`). */
  iteration = 0;
  usage: TurnUsage | undefined;
  promotedBatches: number;
  readonly policy: TurnPolicy;
  readonly server: string;
  /** What the Turn's `skill` and `task` calls reach (set when the Turn is set up). */
  skills: SkillCapability | undefined = undefined;
  subagents: SubagentCapability | undefined = undefined;
  /**
   * The tools, hooks and agents of the plugin generation the Turn leased (the host's defaults
   * until `loop.ts` takes the lease): fixed for the whole Turn, whatever a reload does meanwhile.
   */
  tools: ToolRegistry;
  hooks: HookPipeline;
  agents: AgentCatalog;
  /** The Turn's lease (its project's Skills, MCP offer and CodeMode setting), once taken. */
  extensions: TurnExtensions | undefined = undefined;
  /** Nested AGENTS.md files attached by this model step's calls, before their results reach the transcript. */
  readonly pendingInstructions = new Set<string>();

  constructor(
    readonly deps: TurnDeps,
    readonly row: TurnRow,
    readonly session: SessionRow,
    readonly workdir: string,
    /** Earlier Turns' transcripts: the history this Turn's requests start with. */
    readonly history: readonly ModelMessage[],
    existingParts: readonly TurnPart[],
  ) {
    this.policy = row.policy as TurnPolicy;
    this.tools = deps.tools;
    this.hooks = deps.hooks;
    this.agents = deps.environment.agents;
    this.server = session.server;
    this.promotedBatches = row.promotedBatchCount;
    this.recorder = new TurnRecorder({
      storage: deps.storage,
      hub: deps.hub,
      server: session.server,
      sessionId: row.sessionId,
      turnId: row.id,
      owner: deps.instance,
      flushMs: deps.flushMs,
      now: deps.now,
      revision: row.revision,
      activityCursor: row.activityCursor,
      parts: existingParts,
      onLost: () => this.interrupt({ kind: "lost" }),
      onCancellation: (reason) => this.cancel(reason),
      isLost: () => this.stopValue?.kind === "lost",
      waitUntil: [this.controller.signal, deps.hostStopping],
    });
  }

  get id(): string {
    return this.row.id;
  }

  get sessionId(): string {
    return this.row.sessionId;
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get stopped(): Stop | undefined {
    return this.stopValue;
  }

  /** Stops the Turn from outside (cancellation, shutdown, lost claim). The first stop wins. */
  interrupt(stop: Stop): void {
    if (this.stopValue) return;
    this.stopValue = stop;
    this.controller.abort(new StopSignal(stop));
  }

  cancel(reason?: string): void {
    this.interrupt(reason !== undefined ? { kind: "cancelled", reason } : { kind: "cancelled" });
  }

  /** Resolves once the Turn's admission is durable (at once for a Turn started after that). */
  admitted(): Promise<void> {
    return this.deps.admissionDurable ?? Promise.resolve();
  }

  /** Throws the stop once the Turn was stopped. */
  checkStopped(): void {
    if (this.stopValue) throw new StopSignal(this.stopValue);
  }
}
