// One running Turn: the model ↔ tool loop. Each iteration promotes waiting steering input,
// asks the model (with the Turn's tools), and either runs the tool calls it made and goes on,
// or completes. Everything that can stop the Turn throws a StopSignal up to here, and the Turn
// settles exactly one outcome. The pieces live beside this file: model-call, tool-call,
// approvals, steering, recorder (commits and parts) and settle.
import { attachSink, modelParts } from "./observe.js";
import type { PromptPart } from "../../../generated/client/types.gen.js";
import type { ModelMessage } from "../../providers/index.js";
import type { SessionRow, TurnRow } from "../../storage/index.js";
import type { AnyToolDefinition } from "../../tools/index.js";
import { callModel } from "./model-call.js";
import { RunningTurn, userContent, type TurnDeps } from "./running.js";
import { complete, settleStopped } from "./settle.js";
import { setUpTurn } from "./setup.js";
import { promoteSteers } from "./steering.js";
import { StopSignal, fault, finite, limitReached, type Stop } from "./stop.js";
import type { TurnExtensions } from "./environment.js";
import { hookStop, runToolCalls } from "./tool-call.js";

export type { TurnDeps } from "./running.js";

/** `provider/model` as the hook inputs name it. */
function modelIdentity(model: string): { providerId: string; modelId: string } {
  const slash = model.indexOf("/");
  return slash < 0 ? { providerId: model, modelId: model } : { providerId: model.slice(0, slash), modelId: model.slice(slash + 1) };
}

export class TurnExecution {
  private readonly turn: RunningTurn;

  constructor(deps: TurnDeps, row: TurnRow, session: SessionRow, workdir: string, history: readonly ModelMessage[], existingParts: RunningTurn["recorder"]["all"]) {
    this.turn = new RunningTurn(deps, row, session, workdir, history, existingParts);
  }

  get id(): string {
    return this.turn.id;
  }

  get sessionId(): string {
    return this.turn.sessionId;
  }

  interrupt(stop: Stop): void {
    this.turn.interrupt(stop);
  }

  cancel(reason?: string): void {
    this.turn.cancel(reason);
  }

  /** Runs the Turn to its one outcome. Never throws. */
  async run(): Promise<void> {
    const t = this.turn;
    const timer = this.armTurnLimit();
    let extensions: TurnExtensions | undefined;
    let detach: (() => void) | undefined;
    try {
      extensions = await leaseExtensions(t).finally(() => t.deps.leased?.());
      // Subscribers see the Turn from its start: `turn.started` before the `turn.before` hooks.
      const sink = extensions?.observe?.(t.id);
      if (sink) {
        detach = attachSink(t.id, sink);
        sink.push({ type: "turn.started", turnId: t.id, model: modelParts(t.row.model) });
      }
      const request = t.row.request as { prompt: PromptPart[] };
      t.transcript.push({ role: "user", content: userContent(request.prompt) });
      const setup = await setUpTurn(t);
      t.skills = setup.skills;
      t.subagents = setup.offered.has("task") ? t.deps.environment.subagents?.forTurn({ server: t.server, sessionId: t.sessionId, turnId: t.id, model: t.row.model, agents: t.agents }) : undefined;
      const systemPrompt = t.session.systemPrompt ?? undefined;
      const model = modelIdentity(t.row.model);
      // Setup reads only: from here on the Turn acts outside the process, once its admission is durable.
      await t.admitted();
      if (t.hooks.has("turn.before")) await t.hooks.trigger("turn.before", { turnId: t.id, prompt: request.prompt, model }).catch(rethrowHook);
      if (setup.selectedSkills.length > 0 && t.messageIndex === 0) await this.loadSelectedSkills(setup.selectedSkills, setup.offered);
      for (;;) {
        t.checkStopped();
        await promoteSteers(t);
        const messages = [...t.history, ...t.transcript];
        if (t.hooks.has("model.request.before")) {
          await t.hooks
            .trigger("model.request.before", { turnId: t.id, ...model, iteration: t.iteration, ...(systemPrompt !== undefined ? { systemPrompt } : {}), messages })
            .catch(rethrowHook);
        }
        t.iteration += 1;
        // Each request offers the MCP tools of the servers connected at that moment.
        const { system, tools, offered } = setup.offer();
        const answer = await callModel(t, { system, messages, tools });
        t.transcript.push(answer.message);
        if (answer.toolCalls.length > 0) {
          await t.recorder.commit([], { messages: [...t.transcript] });
          t.transcript.push(...(await runToolCalls(t, answer.toolCalls, offered)));
          await t.recorder.commit([], { messages: [...t.transcript] });
          t.messageIndex += 1;
          continue;
        }
        // The model stopped: complete, unless steering input arrived meanwhile. The outcome's
        // visible text: text and refusals, no reasoning (the contract's CompletedTurnOutcome).
        const text = answer.message.content.map((part) => (part.type === "text" || part.type === "refusal" ? part.text : "")).join("");
        if (await complete(t, text)) return;
        t.messageIndex += 1;
      }
    } catch (error) {
      await settleStopped(t, error);
    } finally {
      if (timer) clearTimeout(timer);
      t.recorder.cancelFlush();
      detach?.();
      extensions?.release();
    }
  }

  /**
   * Skills the prompt selected load through the `skill` tool before the first model call, as if
   * the model had called it (authorized like any call), so the first request already carries them.
   */
  private async loadSelectedSkills(selected: readonly string[], offered: ReadonlyMap<string, AnyToolDefinition>): Promise<void> {
    const t = this.turn;
    const calls = selected.map((name, index) => ({ id: `skill_${t.id.slice(0, 8)}_${index + 1}`, name: "skill", arguments: JSON.stringify({ name }) }));
    t.transcript.push({ role: "assistant", content: calls.map((call) => ({ type: "tool_call" as const, ...call })) });
    await t.recorder.commit([], { messages: [...t.transcript] });
    t.transcript.push(...(await runToolCalls(t, calls, offered)));
    await t.recorder.commit([], { messages: [...t.transcript] });
    t.messageIndex += 1;
  }

  /** The Turn's elapsed-time limit, counted from when it started. */
  private armTurnLimit(): NodeJS.Timeout | undefined {
    const t = this.turn;
    const elapsed = finite(t.policy.timeouts.turnMs);
    if (elapsed === undefined) return undefined;
    const startedAt = t.row.startedAt ?? t.deps.now();
    const remaining = Math.max(0, startedAt + elapsed - t.deps.now());
    return setTimeout(() => {
      const { stop } = limitReached("turn_elapsed", t.policy.timeouts.turnMs, elapsed, "milliseconds", `The Turn ran longer than ${elapsed} ms`);
      t.interrupt(stop);
    }, remaining);
  }
}

/** Takes the Turn's plugin lease (its tools, hooks and agents); a Session overlay that cannot be built fails the Turn. */
async function leaseExtensions(t: RunningTurn): Promise<TurnExtensions | undefined> {
  const lease = t.deps.environment.lease;
  if (!lease) return undefined;
  let extensions: TurnExtensions;
  try {
    extensions = await lease(t.session);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const message = error instanceof Error && typeof code === "string" ? error.message : "The Session's plugins could not be loaded";
    throw new StopSignal({ kind: "failed", fault: fault(typeof code === "string" ? code : "session_plugin_unavailable", message) });
  }
  t.tools = extensions.tools;
  t.hooks = extensions.hooks;
  t.agents = extensions.agents;
  t.extensions = extensions;
  return extensions;
}

function rethrowHook(error: unknown): never {
  throw hookStop(error);
}
