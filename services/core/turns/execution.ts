// One running Turn: the model ↔ tool loop. It builds each model request (system prompt,
// AGENTS.md, history, tools), streams the answer into parts (committed at most every
// `contentFlushMillis`, with live deltas in between), runs tool calls through permissions,
// approvals and questions, promotes steering input at model boundaries, and settles exactly
// one outcome. Every change is a durable commit guarded by this process's claim.
import { randomUUID } from "node:crypto";
import type {
  Fault,
  PermissionRequest,
  PromptPart,
  Question,
  Steer,
  SteeringTurnPart,
  ToolActivity,
  ToolResult,
  ToolTurnPart,
  TurnLimit,
  TurnOutcome,
  TurnPart,
  TurnPolicy,
  TurnUsage,
} from "../../../generated/client/types.gen.js";
import type { ModelStreamEvent, ModelTool } from "../../providers/index.js";
import { AssistantMessageBuilder, type AssistantMessage, type ModelMessage, type ToolResultMessage, type UserContentPart } from "../../providers/index.js";
import { isProviderFailure } from "../../providers/index.js";
import { listSavedPermissions, turns as store, type NewTurnEvent, type SessionRow, type StorageHandle, type TurnPatch, type TurnRow } from "../../storage/index.js";
import {
  QuestionDismissedError,
  isToolFailure,
  validateToolInput,
  type AnyToolDefinition,
  type PermissionProjection,
  type ToolActivityUpdate,
  type ToolContext,
  type ToolOutput,
} from "../../tools/index.js";
import type { ActivityHub } from "../events/hub.js";
import { evaluateProjection } from "../permissions/index.js";
import type { ModelGateway } from "./gateway.js";
import { closeToolPart } from "./settle.js";
import { readWorkspaceInstructions } from "../../workspace/instructions.js";

export interface ExecutionDeps {
  readonly storage: StorageHandle;
  readonly hub: ActivityHub;
  readonly gateway: ModelGateway;
  readonly tools: Readonly<Record<string, AnyToolDefinition>>;
  /** This host instance: the claim's owner. */
  readonly instance: string;
  readonly flushMs: number;
  readonly now: () => number;
  /** Where tool artifacts go for a workdir. */
  readonly artifactsDirectory: (workdir: string) => string;
  /** Interval of the idle re-read while waiting on a reply. */
  readonly pollMs: number;
}

/** Why a Turn stops before the model finishes. */
type Stop =
  | { readonly kind: "cancelled"; readonly reason?: string }
  | { readonly kind: "limit"; readonly limit: TurnLimit; readonly diagnostic: { code: string; message: string } }
  | { readonly kind: "failed"; readonly fault: Fault }
  | { readonly kind: "shutdown" }
  | { readonly kind: "lost" };

class StopSignal extends Error {
  constructor(readonly stop: Stop) {
    super(stop.kind);
  }
}

const fault = (code: string, message: string, providerCode?: string): Fault => ({
  code: code.slice(0, 128),
  message: message.slice(0, 4096),
  ...(providerCode !== undefined ? { providerCode: providerCode.slice(0, 128) } : {}),
});

function userContent(prompt: readonly PromptPart[]): UserContentPart[] {
  return prompt.map((part): UserContentPart => {
    if (part.type === "text") return part;
    if (part.type === "image") return part;
    return { type: "text", text: `[content reference: ${part.reference}]` };
  });
}

const finite = (limit: { kind: string; value?: number }): number | undefined => (limit.kind === "finite" ? limit.value : undefined);

export class TurnExecution {
  private readonly controller = new AbortController();
  private stop: Stop | undefined;
  private readonly parts: TurnPart[];
  private readonly dirty = new Set<number>();
  private readonly transcript: ModelMessage[] = [];
  private messageIndex = 0;
  private openContent: { kind: "text" | "reasoning" | "refusal"; ordinal: number } | undefined;
  private flushTimer: NodeJS.Timeout | undefined;
  private writes: Promise<void> = Promise.resolve();
  private revision: number;
  private activityCursor: number;
  private usage: TurnUsage | undefined;
  private promotedBatches: number;
  private readonly policy: TurnPolicy;
  private readonly workdir: string;
  private readonly server: string;
  private readonly timers: NodeJS.Timeout[] = [];

  constructor(
    private readonly deps: ExecutionDeps,
    private readonly turn: TurnRow,
    private readonly session: SessionRow,
    workdir: string,
    private readonly history: readonly ModelMessage[],
    existingParts: readonly TurnPart[],
  ) {
    this.parts = [...existingParts];
    this.revision = turn.revision;
    this.activityCursor = turn.activityCursor;
    this.policy = turn.policy as TurnPolicy;
    this.workdir = workdir;
    this.server = session.server;
    this.promotedBatches = turn.promotedBatchCount;
  }

  get id(): string {
    return this.turn.id;
  }

  get sessionId(): string {
    return this.turn.sessionId;
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Stops the Turn from outside (cancellation, shutdown, lost claim). The first stop wins. */
  interrupt(stop: Stop): void {
    if (this.stop) return;
    this.stop = stop;
    this.controller.abort(new StopSignal(stop));
  }

  cancel(reason?: string): void {
    this.interrupt(reason !== undefined ? { kind: "cancelled", reason } : { kind: "cancelled" });
  }

  private checkStopped(): void {
    if (this.stop) throw new StopSignal(this.stop);
  }

  // ---------------------------------------------------------------------------------------------
  // Commits

  /** Queues one durable change (dirty parts + patch + events) behind earlier ones. */
  private commit(events: NewTurnEvent[], patch?: TurnPatch): Promise<void> {
    const parts = [...this.dirty].sort((a, b) => a - b).map((ordinal) => ({ ordinal, data: this.parts[ordinal] }));
    this.dirty.clear();
    // Streamed content swept into another change (e.g. a `turn.usage`) is announced by a snapshot,
    // as a flush would: observers without live deltas (the server stream) see it only that way.
    const content = parts.some(({ data }) => data?.type === "text" || data?.type === "reasoning" || data?.type === "refusal");
    if (content && !events.some((event) => event.type === "turn.snapshot")) events = [{ type: "turn.snapshot", data: null }, ...events];
    const next = this.writes.then(async () => {
      if (this.stop?.kind === "lost") return;
      const result = await store.changeTurn(this.deps.storage, this.turn.id, {
        ...(patch ? { patch } : {}),
        parts,
        events,
        expectOwner: this.deps.instance,
        expectPhases: ["running"],
        // Progress is re-derivable: it survives a process crash; a power loss at worst settles
        // the Turn as process_lost. Claims and settlements stay fully synced.
        durability: "relaxed",
      });
      if (!result) {
        this.interrupt({ kind: "lost" });
        return;
      }
      this.revision = result.turn.revision;
      this.activityCursor = result.turn.activityCursor;
      if (result.turn.cancellation !== null && !this.stop) {
        const cancellation = result.turn.cancellation as { reason?: string };
        this.cancel(cancellation.reason);
      }
      this.deps.hub.changed(this.server, this.turn.sessionId);
    });
    this.writes = next.catch(() => {});
    return next;
  }

  private flushSoon(): void {
    if (this.deps.flushMs <= 0) {
      void this.commit([{ type: "turn.snapshot", data: null }]).catch(() => {});
      return;
    }
    if (this.flushTimer) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = undefined;
      if (this.dirty.size > 0) void this.commit([{ type: "turn.snapshot", data: null }]).catch(() => {});
    }, this.deps.flushMs);
  }

  private async flushNow(): Promise<void> {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (this.dirty.size > 0) await this.commit([{ type: "turn.snapshot", data: null }]);
    else await this.writes;
  }

  private addPart(part: TurnPart): number {
    this.parts.push(part);
    const ordinal = this.parts.length - 1;
    this.dirty.add(ordinal);
    return ordinal;
  }

  private setPart(ordinal: number, part: TurnPart): void {
    this.parts[ordinal] = part;
    this.dirty.add(ordinal);
  }

  /** Re-reads a part others may have changed (approval and question replies). */
  private async refreshPart(ordinal: number): Promise<TurnPart> {
    const rows = await store.listParts(this.deps.storage, [this.turn.id]);
    const row = rows.find((candidate) => candidate.ordinal === ordinal);
    if (row) this.parts[ordinal] = row.data as TurnPart;
    return this.parts[ordinal]!;
  }

  // ---------------------------------------------------------------------------------------------
  // Streamed content

  private closeContent(): void {
    const open = this.openContent;
    if (!open) return;
    const part = this.parts[open.ordinal]!;
    if (part.type === "reasoning" && part.completedAt === undefined) this.setPart(open.ordinal, { ...part, completedAt: this.deps.now() });
    this.openContent = undefined;
  }

  private appendContent(kind: "text" | "reasoning" | "refusal", text: string): void {
    if (text === "") return;
    if (this.openContent?.kind !== kind) {
      this.closeContent();
      const base = { id: randomUUID(), assistantMessageIndex: this.messageIndex, text: "" };
      const part: TurnPart = kind === "reasoning" ? { type: "reasoning", ...base, startedAt: this.deps.now() } : { type: kind, ...base };
      this.openContent = { kind, ordinal: this.addPart(part) };
    }
    const ordinal = this.openContent.ordinal;
    const part = this.parts[ordinal] as Extract<TurnPart, { text: string }>;
    const offset = part.text.length;
    this.setPart(ordinal, { ...part, text: part.text + text } as TurnPart);
    this.deps.hub.delta({
      sessionId: this.turn.sessionId,
      turnId: this.turn.id,
      kind,
      partId: part.id,
      assistantMessageIndex: part.assistantMessageIndex,
      offset,
      delta: text,
      revision: this.revision,
      activityCursor: this.activityCursor,
    });
    this.flushSoon();
  }

  // ---------------------------------------------------------------------------------------------
  // The loop

  /** Runs the Turn to its one outcome. Never throws. */
  async run(): Promise<void> {
    const elapsed = finite(this.policy.timeouts.turnMs);
    if (elapsed !== undefined) {
      const startedAt = this.turn.startedAt ?? this.deps.now();
      const remaining = Math.max(0, startedAt + elapsed - this.deps.now());
      this.timers.push(
        setTimeout(
          () =>
            this.interrupt({
              kind: "limit",
              limit: { name: "turn_elapsed", origin: limitOrigin(this.policy.timeouts.turnMs), value: elapsed, unit: "milliseconds" },
              diagnostic: { code: "turn_elapsed", message: `The Turn ran longer than ${elapsed} ms` },
            }),
          remaining,
        ),
      );
    }
    try {
      const request = this.turn.request as { prompt: PromptPart[]; reasoningEffort?: TurnRow["request"] };
      this.transcript.push({ role: "user", content: userContent(request.prompt) });
      const instructions = readWorkspaceInstructions(this.workdir);
      const system = [this.session.systemPrompt ?? undefined, instructions].filter((text): text is string => !!text).join("\n\n") || undefined;
      for (;;) {
        this.checkStopped();
        await this.promoteSteers();
        const answer = await this.callModel(system);
        this.transcript.push(answer.message);
        if (answer.toolCalls.length > 0) {
          await this.commit([], { messages: this.fullTranscriptForStorage() });
          for (const call of answer.toolCalls) {
            this.checkStopped();
            this.transcript.push(await this.runTool(call));
          }
          await this.commit([], { messages: this.fullTranscriptForStorage() });
          this.messageIndex += 1;
          continue;
        }
        // The model stopped: complete, unless steering input arrived meanwhile.
        // The outcome's visible text: text and refusals, no reasoning (the contract's CompletedTurnOutcome).
        const text = answer.message.content.map((part) => (part.type === "text" || part.type === "refusal" ? part.text : "")).join("");
        if (await this.complete(text)) return;
        this.messageIndex += 1;
      }
    } catch (error) {
      await this.settleStopped(error);
    } finally {
      for (const timer of this.timers) clearTimeout(timer);
      if (this.flushTimer) clearTimeout(this.flushTimer);
    }
  }

  private fullTranscriptForStorage(): unknown[] {
    return [...this.transcript];
  }

  private tools(): ModelTool[] {
    return Object.values(this.deps.tools).map((tool) => ({
      name: tool.id,
      description: tool.description,
      inputSchema: tool.inputSchema as ModelTool["inputSchema"],
    }));
  }

  /** One model request with the policy's retries: only attempts rejected before output retry. */
  private async callModel(system: string | undefined): Promise<{ message: AssistantMessage; toolCalls: { id: string; name: string; arguments: string }[] }> {
    const messages = [...this.history, ...this.transcript];
    const tools = this.tools();
    this.checkContext(system, messages, tools);
    const provider = this.policy.provider;
    const maxAttempts = finite(provider.maxAttempts);
    const attemptTimeout = finite(provider.attemptTimeoutMs);
    const elapsedLimit = finite(provider.elapsedMs);
    const started = this.deps.now();
    const request = this.turn.request as { reasoningEffort?: ModelCallEffort };
    for (let attempt = 1; ; attempt++) {
      this.checkStopped();
      const builder = new AssistantMessageBuilder();
      const toolCalls: { id: string; name: string; arguments: string }[] = [];
      let output = false;
      const attemptController = new AbortController();
      const onAbort = (): void => attemptController.abort(this.controller.signal.reason);
      this.controller.signal.addEventListener("abort", onAbort, { once: true });
      let timedOut = false;
      const budget = elapsedLimit !== undefined ? elapsedLimit - (this.deps.now() - started) : undefined;
      const deadline = [attemptTimeout, budget].filter((value): value is number => value !== undefined);
      const timeoutMs = deadline.length > 0 ? Math.max(1, Math.min(...deadline)) : undefined;
      const timer = timeoutMs !== undefined ? setTimeout(() => ((timedOut = true), attemptController.abort(new Error("attempt timeout"))), timeoutMs) : undefined;
      try {
        for await (const event of this.deps.gateway.stream({
          model: this.turn.model,
          ...(system !== undefined ? { system } : {}),
          messages,
          tools,
          ...(request.reasoningEffort !== undefined ? { reasoningEffort: request.reasoningEffort } : {}),
          signal: attemptController.signal,
          ...(timeoutMs !== undefined ? { timeoutMs } : {}),
        })) {
          if (attemptController.signal.aborted) break;
          output = this.handleEvent(event, builder, toolCalls) || output;
        }
        if (attemptController.signal.aborted) throw attemptController.signal.reason;
        this.closeContent();
        await this.flushNow();
        return { message: builder.message(), toolCalls };
      } catch (error) {
        this.closeContent();
        await this.flushNow().catch(() => {});
        this.checkStopped();
        const exhausted = maxAttempts !== undefined && attempt >= maxAttempts;
        const overElapsed = elapsedLimit !== undefined && this.deps.now() - started >= elapsedLimit;
        if (timedOut) {
          if (overElapsed) throw this.limit("provider_elapsed", provider.elapsedMs, elapsedLimit!, "milliseconds", "The model request ran out of its elapsed-time budget");
          if (output || exhausted) throw this.limit("provider_attempt_timeout", provider.attemptTimeoutMs, attemptTimeout!, "milliseconds", "A model request attempt timed out");
        } else {
          const failure = isProviderFailure(error) ? error : undefined;
          const retryable = failure ? failure.retryable && failure.beforeOutput && !output : false;
          if (!retryable) {
            const message = failure?.message ?? (error instanceof Error ? error.message : "The model request failed");
            throw new StopSignal({ kind: "failed", fault: fault(`provider_${failure?.kind ?? "error"}`, message, failure?.providerCode) });
          }
          if (overElapsed) throw this.limit("provider_elapsed", provider.elapsedMs, elapsedLimit!, "milliseconds", "The model request ran out of its elapsed-time budget");
          if (exhausted) throw this.limit("provider_attempts", provider.maxAttempts, maxAttempts!, "attempts", `The model request failed ${attempt} time(s): ${failure!.message}`);
        }
        await this.pace(attempt, isProviderFailure(error) ? error.retryAfterMs : undefined);
      } finally {
        if (timer) clearTimeout(timer);
        this.controller.signal.removeEventListener("abort", onAbort);
      }
    }
  }

  /** Applies one stream event; returns true when it was model output. */
  private handleEvent(event: ModelStreamEvent, builder: AssistantMessageBuilder, toolCalls: { id: string; name: string; arguments: string }[]): boolean {
    builder.add(event);
    switch (event.type) {
      case "text.delta":
        this.appendContent("text", event.text);
        return true;
      case "reasoning.delta":
        this.appendContent("reasoning", event.text);
        return true;
      case "refusal.delta":
        this.appendContent("refusal", event.text);
        return true;
      case "reasoning.end":
        if (this.openContent?.kind === "reasoning") this.closeContent();
        return true;
      case "tool_call":
        this.closeContent();
        toolCalls.push({ id: event.id, name: event.name, arguments: event.arguments });
        return true;
      case "usage":
        this.recordUsage(event);
        return false;
      case "finish":
        return false;
    }
  }

  private recordUsage(event: Extract<ModelStreamEvent, { type: "usage" }>): void {
    const attempt: TurnUsage = {
      promptTokens: event.promptTokens,
      completionTokens: event.completionTokens,
      totalTokens: event.promptTokens + event.completionTokens,
      // The contract's TurnUsage: the cached and reasoning counts are absent when zero.
      ...(event.cachedPromptTokens ? { cachedPromptTokens: event.cachedPromptTokens } : {}),
      ...(event.reasoningTokens ? { reasoningCompletionTokens: event.reasoningTokens } : {}),
    };
    const sum = (a: unknown, b: unknown): number => (typeof a === "number" ? a : 0) + (typeof b === "number" ? b : 0);
    const previous = this.usage;
    this.usage = previous
      ? {
          promptTokens: sum(previous.promptTokens, attempt.promptTokens),
          completionTokens: sum(previous.completionTokens, attempt.completionTokens),
          totalTokens: sum(previous.totalTokens, attempt.totalTokens),
          ...(previous.cachedPromptTokens !== undefined || attempt.cachedPromptTokens !== undefined
            ? { cachedPromptTokens: sum(previous.cachedPromptTokens, attempt.cachedPromptTokens) }
            : {}),
          ...(previous.reasoningCompletionTokens !== undefined || attempt.reasoningCompletionTokens !== undefined
            ? { reasoningCompletionTokens: sum(previous.reasoningCompletionTokens, attempt.reasoningCompletionTokens) }
            : {}),
        }
      : attempt;
    const context = this.deps.gateway.limits(this.turn.model)?.context;
    const contextUse = context !== undefined ? { model: this.turn.model, usedUnits: event.promptTokens + event.completionTokens, contextUnits: context } : undefined;
    void this.commit(
      [{ type: "turn.usage", data: { usage: attempt, ...(contextUse ? { contextUse } : {}) } }],
      { usage: this.usage, ...(contextUse ? { contextUse } : {}) },
    ).catch(() => {});
  }

  private async pace(attempt: number, retryAfterMs: number | undefined): Promise<void> {
    const pacing = this.policy.provider.pacing;
    let delay = 0;
    if (pacing.kind === "fixed") delay = pacing.delayMs;
    if (pacing.kind === "exponential") {
      delay = Math.min(pacing.maximumDelayMs, pacing.initialDelayMs * 2 ** (attempt - 1));
      if (pacing.jitter) delay = Math.round(delay / 2 + Math.random() * (delay / 2));
    }
    if (retryAfterMs !== undefined) delay = Math.max(delay, retryAfterMs);
    if (delay <= 0) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, delay);
      this.controller.signal.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
    });
  }

  private limit(name: "provider_elapsed" | "provider_attempt_timeout" | "provider_attempts", configured: { kind: string; origin?: string }, value: number, unit: "milliseconds" | "attempts", message: string): StopSignal {
    return new StopSignal({
      kind: "limit",
      limit: { name, origin: limitOrigin(configured), value, unit } as TurnLimit,
      diagnostic: { code: name, message: message.slice(0, 4096) },
    });
  }

  /** Refuses a request that cannot fit the model's context (estimated at 4 characters a unit). */
  private checkContext(system: string | undefined, messages: readonly ModelMessage[], tools: readonly ModelTool[]): void {
    const limits = this.deps.gateway.limits(this.turn.model);
    if (limits?.context === undefined) return;
    const estimated = Math.ceil((JSON.stringify(messages).length + (system?.length ?? 0) + JSON.stringify(tools).length) / 4);
    const outputReserve = Math.min(limits.output ?? 4096, limits.context);
    const safetyReserve = this.policy.context.safetyReserve.units;
    const available = Math.max(0, limits.context - outputReserve - safetyReserve);
    if (estimated <= available) return;
    throw new StopSignal({
      kind: "limit",
      limit: {
        name: "model_context",
        origin: "provider",
        value: limits.context,
        unit: "model_units",
        estimatedInputUnits: estimated,
        outputReserveUnits: outputReserve,
        safetyReserveUnits: safetyReserve,
        availableInputUnits: available,
        estimator: "utf16-chars/4",
      },
      diagnostic: { code: "model_context", message: `The request needs about ${estimated} units; ${available} are available` },
    });
  }

  // ---------------------------------------------------------------------------------------------
  // Steering

  /** Promotes accepted steering input as one batch before the next model request. */
  private async promoteSteers(): Promise<void> {
    const accepted = (await store.listSteers(this.deps.storage, [this.turn.id])).map((row) => row.data as Steer).filter((steer) => steer.state.state === "accepted");
    if (accepted.length === 0) return;
    const maxBatches = finite(this.policy.steering.maxBatches);
    if (maxBatches !== undefined && this.promotedBatches >= maxBatches) {
      throw new StopSignal({
        kind: "limit",
        limit: { name: "steering_batches", origin: limitOrigin(this.policy.steering.maxBatches), value: maxBatches, unit: "batches" },
        diagnostic: { code: "steering_batches", message: `The Turn already took in ${maxBatches} steering batch(es)` },
      });
    }
    const batch = this.promotedBatches + 1;
    const promotedAt = this.deps.now();
    const part: SteeringTurnPart = {
      type: "steering",
      id: randomUUID(),
      batch,
      promotedAt,
      steers: accepted.map((steer) => ({ steerId: steer.steerId, sequence: steer.sequence, prompt: steer.prompt, attribution: steer.attribution, acceptedAt: steer.acceptedAt })),
    };
    this.closeContent();
    this.addPart(part);
    this.transcript.push({ role: "user", content: accepted.flatMap((steer) => userContent(steer.prompt)) });
    this.promotedBatches = batch;
    await store.updateSteers(
      this.deps.storage,
      accepted.map((steer) => ({ steerId: steer.steerId, data: { ...steer, state: { state: "promoted", batch, promotedAt } } })),
    );
    await this.commit([{ type: "turn.steered", data: { part } }], {
      promotedBatchCount: batch,
      ...(maxBatches !== undefined && batch >= maxBatches ? { steeringGate: "closed" as const } : {}),
    });
  }

  // ---------------------------------------------------------------------------------------------
  // Tools

  private toolFields(part: ToolTurnPart) {
    return { partId: part.id, toolId: part.toolId, toolCallId: part.toolCallId };
  }

  private async runTool(call: { id: string; name: string; arguments: string }): Promise<ToolResultMessage> {
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
      assistantMessageIndex: this.messageIndex,
      input: parseError === undefined ? input : call.arguments,
      ...(parseError !== undefined ? { modelInput: call.arguments } : {}),
      state: "requested",
      approval: { state: "none" },
      requestedAt: this.deps.now(),
    };
    const ordinal = this.addPart(base);
    await this.commit([{ type: "turn.tool.requested", data: { ...this.toolFields(base), part: base } }]);

    const tool = this.deps.tools[call.name];
    if (!tool) return this.failTool(ordinal, call, fault("unknown_tool", `There is no tool named ${JSON.stringify(call.name)}`));
    if (parseError !== undefined) return this.failTool(ordinal, call, fault("invalid_input", `The arguments are not valid JSON: ${parseError}`));
    const validated = validateToolInput(tool, input);
    if (!validated.ok) return this.failTool(ordinal, call, validated.failure.toFault());

    const permissionContext = { workdir: this.workdir, sessionId: this.turn.sessionId, turnId: this.turn.id, toolCallId: call.id, signal: this.controller.signal };
    let projections: PermissionProjection[];
    try {
      projections = tool.permissions(validated.input, permissionContext);
    } catch (error) {
      return this.failTool(ordinal, call, isToolFailure(error) ? error.toFault() : fault("tool_error", "The tool could not check its permissions"));
    }
    for (const projection of projections) {
      const denied = await this.authorize(ordinal, projection);
      if (denied) return denied(call);
    }

    let checkpoint = 0;
    let activityTimer: NodeJS.Timeout | undefined;
    let pendingActivity: ToolActivity | undefined;
    const publishActivity = (): void => {
      activityTimer = undefined;
      if (!pendingActivity) return;
      const activity = pendingActivity;
      pendingActivity = undefined;
      const current = this.parts[ordinal] as ToolTurnPart;
      this.setPart(ordinal, { ...current, activity });
      void this.commit([{ type: "turn.tool.activity", data: { ...this.toolFields(current), activity } }]).catch(() => {});
    };
    const context: ToolContext = {
      ...permissionContext,
      artifactsDirectory: this.deps.artifactsDirectory(this.workdir),
      permissions: projections,
      reportActivity: (update: ToolActivityUpdate) => {
        checkpoint += 1;
        pendingActivity = { ...update, checkpoint, updatedAt: this.deps.now() } as ToolActivity;
        if (this.deps.flushMs <= 0) publishActivity();
        else activityTimer ??= setTimeout(publishActivity, this.deps.flushMs);
      },
      askQuestion: (questions: readonly Question[]) => this.ask(ordinal, questions),
    };
    let output: ToolOutput;
    try {
      output = await tool.execute(validated.input, context);
    } catch (error) {
      if (activityTimer) clearTimeout(activityTimer);
      publishActivity();
      this.checkStopped();
      const toolFault = isToolFailure(error) ? error.toFault() : fault("tool_error", "The tool failed unexpectedly");
      return this.failTool(ordinal, call, toolFault);
    }
    if (activityTimer) clearTimeout(activityTimer);
    publishActivity();
    const current = this.parts[ordinal] as ToolTurnPart;
    const completed: ToolTurnPart = {
      ...current,
      state: "completed",
      canonicalResult: output.result,
      completedAt: this.deps.now(),
      ...(output.artifact ? { artifact: output.artifact } : {}),
    };
    this.setPart(ordinal, completed);
    await this.commit([{ type: "turn.tool.completed", data: { ...this.toolFields(completed), ok: true, part: completed } }]);
    return { role: "tool", toolCallId: call.id, toolName: call.name, result: output.result, isError: false };
  }

  private async failTool(ordinal: number, call: { id: string; name: string }, toolFault: Fault, state: "failed" | "denied" = "failed"): Promise<ToolResultMessage> {
    const current = this.parts[ordinal] as ToolTurnPart;
    const settled: ToolTurnPart = { ...current, state, fault: toolFault, completedAt: this.deps.now() };
    this.setPart(ordinal, settled);
    await this.commit([{ type: "turn.tool.completed", data: { ...this.toolFields(settled), ok: false, part: settled } }]);
    const result: ToolResult = { format: "text", value: `Error (${toolFault.code}): ${toolFault.message}` };
    return { role: "tool", toolCallId: call.id, toolName: call.name, result, isError: true };
  }

  /** Authorizes one projection; returns a denial builder when it is refused. */
  private async authorize(ordinal: number, projection: PermissionProjection): Promise<((call: { id: string; name: string }) => Promise<ToolResultMessage>) | undefined> {
    const saved = await listSavedPermissions(this.deps.storage, this.turn.sessionId);
    const decision = evaluateProjection(projection, {
      server: this.policy.permissions,
      saved: saved.map((grant) => ({ action: grant.action, resource: grant.resource })),
      caseSensitive: this.policy.permissionMatching.caseSensitive,
    });
    const part = this.parts[ordinal] as ToolTurnPart;
    const request: PermissionRequest = {
      id: randomUUID(),
      sessionId: this.turn.sessionId,
      turnId: this.turn.id,
      toolId: part.toolId,
      toolCallId: part.toolCallId,
      action: projection.action,
      resources: [...projection.resources],
      ...(projection.save !== undefined ? { save: [...projection.save] } : {}),
      ...(projection.metadata !== undefined ? { metadata: projection.metadata } : {}),
    };
    if (decision.effect === "allow") {
      if (decision.resources.some((resource) => resource.decision.source === "saved")) {
        const now = this.deps.now();
        this.setPart(ordinal, { ...part, approval: { state: "resolved", request, requestedAt: now, resolvedAt: now, decision: "allow", source: "saved" } });
        await this.commit([{ type: "turn.approval.resolved", data: { ...this.toolFields(part), requestId: request.id, decision: "allow", source: "saved", resolvedAt: now } }]);
      }
      return undefined;
    }
    if (decision.effect === "deny") {
      const now = this.deps.now();
      this.setPart(ordinal, { ...part, approval: { state: "resolved", request, requestedAt: now, resolvedAt: now, decision: "deny", source: "config" } });
      await this.commit([{ type: "turn.approval.resolved", data: { ...this.toolFields(part), requestId: request.id, decision: "deny", source: "config", resolvedAt: now } }]);
      return (call) => this.failTool(ordinal, call, fault("permission_denied", `Permission denied by configuration: ${projection.action} ${projection.resources.join(", ")}`), "denied");
    }
    // Ask: a durable pending request, answered by replyPermission (or the approval timeout).
    const requestedAt = this.deps.now();
    this.setPart(ordinal, { ...part, approval: { state: "pending", request, requestedAt } });
    await this.commit([{ type: "turn.approval.requested", data: { ...this.toolFields(part), request, requestedAt } }]);
    const timeout = finite(this.policy.approval.timeoutMs);
    const settled = await this.waitForPart(ordinal, (candidate) => candidate.type === "tool" && candidate.approval.state === "resolved", timeout);
    if (!settled) {
      const now = this.deps.now();
      const current = this.parts[ordinal] as ToolTurnPart;
      const denied: ToolTurnPart = {
        ...current,
        state: "denied",
        fault: fault("approval_timeout", `No reply to the permission request within ${timeout} ms`),
        completedAt: now,
        approval: { state: "resolved", request, requestedAt, resolvedAt: now, decision: "deny", source: "timeout" },
      };
      this.setPart(ordinal, denied);
      await this.commit([
        { type: "turn.approval.resolved", data: { ...this.toolFields(current), requestId: request.id, decision: "deny", source: "timeout", resolvedAt: now } },
        { type: "turn.tool.completed", data: { ...this.toolFields(current), ok: false, part: denied } },
      ]);
      throw new StopSignal({
        kind: "limit",
        limit: { name: "approval_wait", origin: limitOrigin(this.policy.approval.timeoutMs), value: timeout!, unit: "milliseconds" },
        diagnostic: { code: "approval_wait", message: `No reply to the permission request within ${timeout} ms` },
      });
    }
    const resolved = (settled as ToolTurnPart).approval;
    if (resolved.state === "resolved" && resolved.decision === "deny") {
      const note = resolved.replyMessage !== undefined ? ` The user said: ${resolved.replyMessage}` : "";
      return (call) => this.failTool(ordinal, call, fault("permission_rejected", `The user rejected ${projection.action} ${projection.resources.join(", ")}.${note}`), "denied");
    }
    return undefined;
  }

  /** Waits until a part satisfies `done` (re-reading storage on each wake); false on timeout. */
  private async waitForPart(ordinal: number, done: (part: TurnPart) => boolean, timeoutMs: number | undefined): Promise<TurnPart | false> {
    const deadline = timeoutMs !== undefined ? this.deps.now() + timeoutMs : undefined;
    let wake: (() => void) | undefined;
    const unsubscribe = this.deps.hub.onSession(this.turn.sessionId, () => wake?.());
    const onAbort = (): void => wake?.();
    this.controller.signal.addEventListener("abort", onAbort);
    try {
      for (;;) {
        this.checkStopped();
        // A cancellation recorded by another process reaches this waiting Turn here.
        const cancellation = (await store.getTurnById(this.deps.storage, this.turn.id))?.cancellation as { reason?: string } | null | undefined;
        if (cancellation) this.cancel(cancellation.reason);
        this.checkStopped();
        const part = await this.refreshPart(ordinal);
        if (done(part)) return part;
        const remaining = deadline !== undefined ? deadline - this.deps.now() : undefined;
        if (remaining !== undefined && remaining <= 0) return false;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(() => ((wake = undefined), resolve()), Math.min(this.deps.pollMs, remaining ?? this.deps.pollMs));
          wake = () => {
            wake = undefined;
            clearTimeout(timer);
            resolve();
          };
        });
      }
    } finally {
      unsubscribe();
      this.controller.signal.removeEventListener("abort", onAbort);
    }
  }

  private async ask(ordinal: number, questions: readonly Question[]): Promise<string[][]> {
    const part = this.parts[ordinal] as ToolTurnPart;
    const requestedAt = this.deps.now();
    const request = { id: randomUUID(), sessionId: this.turn.sessionId, turnId: this.turn.id, toolId: part.toolId, toolCallId: part.toolCallId, questions: [...questions] };
    this.setPart(ordinal, { ...part, question: { state: "pending", request, requestedAt } });
    await this.commit([{ type: "turn.question.asked", data: { ...this.toolFields(part), request, requestedAt } }]);
    const settled = (await this.waitForPart(ordinal, (candidate) => candidate.type === "tool" && candidate.question !== undefined && candidate.question.state !== "pending", undefined)) as ToolTurnPart;
    if (settled.question?.state === "answered") return settled.question.answers;
    throw new QuestionDismissedError();
  }

  // ---------------------------------------------------------------------------------------------
  // Settlement

  /**
   * Completes the Turn unless steering input is waiting (then the loop continues). One
   * transaction: no steer can be accepted after the gate closes with the outcome.
   */
  private async complete(text: string): Promise<boolean> {
    await this.flushNow();
    const completedAt = this.deps.now();
    const outcome: TurnOutcome = { kind: "completed", turnId: this.turn.id, text };
    const done = await this.deps.storage.transaction(async (tx) => {
      const waiting = (await store.listSteers(tx, [this.turn.id])).some((row) => (row.data as Steer).state.state === "accepted");
      if (waiting) return false;
      const result = await store.changeTurn(tx, this.turn.id, {
        patch: { phase: "completed", outcome, completedAt, steeringGate: "closed", messages: this.fullTranscriptForStorage(), ...(this.usage ? { usage: this.usage } : {}) },
        events: [{ type: "turn.finished", data: { outcome, completedAt } }],
        expectOwner: this.deps.instance,
        expectPhases: ["running"],
      });
      if (!result) throw new StopSignal({ kind: "lost" });
      return true;
    });
    if (done) this.deps.hub.changed(this.server, this.turn.sessionId);
    return done;
  }

  private async settleStopped(error: unknown): Promise<void> {
    const stop: Stop =
      error instanceof StopSignal
        ? error.stop
        : this.stop ?? { kind: "failed", fault: fault("internal_error", error instanceof Error ? error.message : "The Turn failed unexpectedly") };
    if (stop.kind === "lost") return; // another owner settled it
    await this.flushNow().catch(() => {});
    const completedAt = this.deps.now();
    let phase: "cancelled" | "failed";
    let outcome: TurnOutcome;
    let undeliveredReason: "turn_cancelled" | "turn_failed";
    switch (stop.kind) {
      case "cancelled":
        phase = "cancelled";
        outcome = { kind: "cancelled", turnId: this.turn.id, ...(stop.reason !== undefined ? { reason: stop.reason } : {}) };
        undeliveredReason = "turn_cancelled";
        break;
      case "limit":
        phase = "failed";
        outcome = { kind: "limit_reached", turnId: this.turn.id, limit: stop.limit, diagnostic: stop.diagnostic };
        undeliveredReason = "turn_failed";
        break;
      case "shutdown":
        phase = "failed";
        outcome = { kind: "failed", turnId: this.turn.id, fault: fault("host_shutdown", "The server stopped while the Turn was running") };
        undeliveredReason = "turn_failed";
        break;
      case "failed":
        phase = "failed";
        outcome = { kind: "failed", turnId: this.turn.id, fault: stop.fault };
        undeliveredReason = "turn_failed";
        break;
    }
    // Tool calls that never finished fail as interrupted (each announced as settled, like any
    // other tool completion); the transcript answers every call.
    const interrupted: NewTurnEvent[] = [];
    for (const [ordinal, part] of this.parts.entries()) {
      if (part.type === "tool" && part.state === "requested") {
        const closed = closeToolPart(part, fault("interrupted", "The tool call was interrupted"), completedAt);
        this.setPart(ordinal, closed.part);
        interrupted.push(...closed.events);
      }
    }
    const answered = new Set(this.transcript.filter((message) => message.role === "tool").map((message) => (message as ToolResultMessage).toolCallId));
    for (const message of [...this.transcript]) {
      if (message.role !== "assistant") continue;
      for (const part of message.content) {
        if (part.type === "tool_call" && !answered.has(part.id)) {
          this.transcript.push({ role: "tool", toolCallId: part.id, toolName: part.name, result: { format: "text", value: "The tool call was interrupted." }, isError: true });
        }
      }
    }
    const parts = [...this.dirty].map((ordinal) => ({ ordinal, data: this.parts[ordinal] }));
    this.dirty.clear();
    await this.writes;
    await this.deps.storage.transaction(async (tx) => {
      const steers = (await store.listSteers(tx, [this.turn.id])).map((row) => row.data as Steer).filter((steer) => steer.state.state === "accepted");
      await store.updateSteers(
        tx,
        steers.map((steer) => ({ steerId: steer.steerId, data: { ...steer, state: { state: "undelivered", reason: undeliveredReason, undeliveredAt: completedAt } } })),
      );
      await store.changeTurn(tx, this.turn.id, {
        patch: { phase, outcome, completedAt, steeringGate: "closed", messages: this.fullTranscriptForStorage(), ...(this.usage ? { usage: this.usage } : {}) },
        parts,
        events: [...interrupted, { type: "turn.finished", data: { outcome, completedAt } }],
        expectOwner: this.deps.instance,
        expectPhases: ["running"],
      });
    });
    this.deps.hub.changed(this.server, this.turn.sessionId);
  }
}

type ModelCallEffort = NonNullable<import("./gateway.js").ModelCall["reasoningEffort"]>;

function limitOrigin(limit: { kind: string; origin?: string }): "configured" | "provider" | "platform" {
  return limit.origin === "configured" || limit.origin === "provider" ? limit.origin : "platform";
}
