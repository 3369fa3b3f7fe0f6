// Sub-agents: what a parent Turn's `task` call does. Each call runs one prompt to completion in a
// child Session pinned to the named agent — a new child (the parent's workdir, the parent Turn's
// model as its default, the parent's deny rules, the parent link), or the earlier child its
// `task_id` names — and answers with the child Turn's final text. The child Turn is admitted
// through the ordinary TurnService (so its policy, model and agent resolve like any Turn's) and
// runs on this host's runner; the call waits on the committed `turn.finished` event.
//
// A stopped parent (cancelled, shut down) cancels the child Turn it waits on, so cancellation
// reaches down the whole chain. `promote(sessionId)` detaches the Session's waiting calls: they
// answer at once that the work moved to the background, and when each child finishes its result
// arrives as a new queued Turn of the parent Session.
import { randomUUID } from "node:crypto";
import type { PromptPart, TurnOutcome, TurnPolicy } from "../../../generated/client/types.gen.js";
import { isFailure } from "../../contract/failure.js";
import { unrefTimer } from "../../contract/timers.js";
import { getSession, getSessionById, turns as store, type SessionRow, type StorageHandle, type TurnRow } from "../../storage/index.js";
import type { SubagentCapability } from "../../tools/index.js";
import { ToolFailure } from "../../tools/tool.js";
import type { AgentCatalog } from "../../workspace/agents.js";
import type { ActivityHub } from "../events/hub.js";
import type { SessionService } from "../sessions.js";
import { inheritedDenies } from "../turns/agents.js";
import { isTerminal } from "../turns/codec.js";
import type { SubagentHost } from "../turns/environment.js";
import type { TurnService } from "../turns/service.js";
import { finite } from "../turns/stop.js";

/** The client id child Turns and background results are attributed to. */
export const SUBAGENT_CLIENT_ID = "ze-harness/subagent";

const MAX_TITLE = 100;

export interface SubagentsOptions {
  readonly storage: StorageHandle;
  readonly hub: ActivityHub;
  /** The host's current agents (a plugin reload replaces them). */
  readonly agents: () => AgentCatalog;
  /** Re-read interval while waiting (a child Turn another process runs is not pushed here). */
  readonly pollMs?: number;
}

/** The services a call drives; bound after construction (they are built after the runner). */
export interface SubagentServices {
  readonly sessions: SessionService;
  readonly turns: TurnService;
}

type RunRequest = Parameters<SubagentCapability["run"]>[0];
type RunResult = Awaited<ReturnType<SubagentCapability["run"]>>;

interface Parent {
  readonly server: string;
  readonly sessionId: string;
  readonly turnId: string;
  readonly model: string;
  /** The parent Turn's agents (its project's); absent, the host's. */
  readonly agents?: AgentCatalog | undefined;
}

/** A call waiting in the foreground; `detach` answers it as moved to the background. */
interface ForegroundWait {
  detach(): void;
}

export class Subagents implements SubagentHost {
  private services: SubagentServices | undefined;
  /** Waiting calls by parent Session. */
  private readonly foreground = new Map<string, Set<ForegroundWait>>();

  constructor(private readonly options: SubagentsOptions) {}

  attach(services: SubagentServices): void {
    this.services = services;
  }

  forTurn(parent: Parent): SubagentCapability {
    return { run: (request) => this.run(parent, request) };
  }

  /** Detaches the Session's waiting `task` calls; true when there was one. */
  promote(sessionId: string): boolean {
    const waits = this.foreground.get(sessionId);
    if (!waits || waits.size === 0) return false;
    for (const wait of [...waits]) wait.detach();
    return true;
  }

  /** True while a call of `sessionId` waits in the foreground. */
  hasForeground(sessionId: string): boolean {
    return (this.foreground.get(sessionId)?.size ?? 0) > 0;
  }

  private async run(parent: Parent, request: RunRequest): Promise<RunResult> {
    const services = this.services;
    if (!services) throw new ToolFailure("subagent_failed", "Sub-agents are not available on this host.");
    const agents = parent.agents ?? this.options.agents();
    const agent = agents.spawnable(request.agent);
    if (!agent) {
      const available = agents.subagents().map((candidate) => candidate.id).join(", ") || "none";
      throw new ToolFailure("unknown_agent", `There is no sub-agent ${JSON.stringify(request.agent)} (available: ${available}).`);
    }
    const [session, turn] = await Promise.all([getSessionById(this.options.storage, parent.sessionId), store.getTurnById(this.options.storage, parent.turnId)]);
    if (!session || !turn) throw new ToolFailure("subagent_failed", "The parent Session no longer exists.");
    const policy = turn.policy as TurnPolicy;
    const depth = (await this.depthOf(session)) + 1;
    const maxDepth = finite(policy.subagents.maxDepth);
    if (maxDepth !== undefined && depth > maxDepth) {
      throw new ToolFailure("subagent_depth", `Sub-agents may nest ${maxDepth} level(s) deep (subagents.maxDepth); this call would start level ${depth}.`);
    }
    const child = request.taskId !== undefined ? await this.existingChild(parent, request.taskId, agent.id) : await this.spawn(services, parent, agent.id, request.description, policy);
    request.onChild(child.id);
    const turnId = randomUUID();
    try {
      await services.turns.submit(parent.server, child.id, SUBAGENT_CLIENT_ID, { delivery: "queue", turnId, prompt: [{ type: "text", text: request.prompt }] });
    } catch (error) {
      throw new ToolFailure("subagent_failed", `The sub-agent's prompt was refused: ${isFailure(error) ? error.message : "unexpected error"} (task_id: ${child.id}).`);
    }
    const settled = await this.wait(parent, child.id, turnId, request.signal, true);
    if (settled === "background") {
      void this.deliverLater(services, parent, child.id, turnId, request.description).catch(() => {});
      return { childSessionId: child.id, text: "", background: true };
    }
    return { childSessionId: child.id, text: resultText(settled, child.id) };
  }

  /** How many spawned ancestors a Session has (0 for a top-level Session). */
  private async depthOf(session: SessionRow): Promise<number> {
    let depth = 0;
    let parentId = session.spawnedFromSessionId;
    while (parentId !== null) {
      depth += 1;
      parentId = (await getSessionById(this.options.storage, parentId))?.spawnedFromSessionId ?? null;
    }
    return depth;
  }

  private async existingChild(parent: Parent, taskId: string, agent: string): Promise<SessionRow> {
    const child = await getSession(this.options.storage, parent.server, taskId).catch(() => undefined);
    if (!child || child.spawnedFromSessionId !== parent.sessionId) throw new ToolFailure("invalid_input", `task_id ${JSON.stringify(taskId)} is not a sub-agent of this Session.`);
    if (child.agent !== agent) throw new ToolFailure("invalid_input", `task_id ${taskId} runs agent ${JSON.stringify(child.agent)}, not ${JSON.stringify(agent)}.`);
    return child;
  }

  private spawn(services: SubagentServices, parent: Parent, agent: string, description: string, policy: TurnPolicy): Promise<SessionRow> {
    return services.sessions.spawnChild(parent.server, parent.sessionId, {
      agent,
      defaultModel: parent.model,
      title: titleOf(description, agent),
      permissions: inheritedDenies(policy.permissions),
    });
  }

  /**
   * Waits for the child Turn to settle: the committed `turn.finished` pushed by this process, or
   * a re-read (the Turn may run in another process). A stopped parent cancels the child Turn.
   */
  private wait(parent: Parent, childId: string, turnId: string, signal: AbortSignal, foreground: boolean): Promise<TurnRow | "background"> {
    const { storage, hub } = this.options;
    return new Promise((resolve, reject) => {
      let done = false;
      const waits = this.foreground.get(parent.sessionId) ?? new Set<ForegroundWait>();
      if (foreground) this.foreground.set(parent.sessionId, waits);
      const finish = (settle: () => void): void => {
        if (done) return;
        done = true;
        off();
        clearInterval(timer);
        signal.removeEventListener("abort", onAbort);
        waits.delete(wait);
        if (foreground && waits.size === 0 && this.foreground.get(parent.sessionId) === waits) this.foreground.delete(parent.sessionId);
        settle();
      };
      const check = async (): Promise<void> => {
        const row = await store.getTurnById(storage, turnId).catch(() => undefined);
        if (row && isTerminal(row.phase)) finish(() => resolve(row));
        else if (!row && !(await getSessionById(storage, childId).catch(() => undefined))) finish(() => reject(new ToolFailure("subagent_failed", "The sub-agent Session was deleted.")));
      };
      const wait: ForegroundWait = { detach: () => finish(() => resolve("background")) };
      if (foreground) waits.add(wait);
      const off = hub.onTurnEvents(childId, (rows) => {
        if (rows.some((row) => row.turnId === turnId && row.type === "turn.finished")) void check();
      });
      const timer = setInterval(() => void check(), this.options.pollMs ?? 1000);
      unrefTimer(timer);
      const onAbort = (): void => {
        finish(() => reject(signal.reason));
        void this.services?.turns.cancel(parent.server, childId, turnId, "The parent Turn stopped").catch(() => {});
      };
      if (signal.aborted) return onAbort();
      signal.addEventListener("abort", onAbort, { once: true });
      void check();
    });
  }

  /** A detached child: when it settles, its result reaches the parent Session as a queued Turn. */
  private async deliverLater(services: SubagentServices, parent: Parent, childId: string, turnId: string, description: string): Promise<void> {
    const settled = await this.wait(parent, childId, turnId, new AbortController().signal, false).catch(() => undefined);
    if (!settled || settled === "background") return;
    let text: string;
    try {
      text = `task_id: ${childId}\n\n<task_result>\n${resultText(settled, childId)}\n</task_result>`;
    } catch (error) {
      text = `task_id: ${childId}\n\n${error instanceof Error ? error.message : "The sub-agent failed."}`;
    }
    const prompt: PromptPart[] = [{ type: "text", text: `The background task "${description}" finished.\n\n${text}` }];
    await services.turns.submit(parent.server, parent.sessionId, SUBAGENT_CLIENT_ID, { delivery: "queue", turnId: randomUUID(), prompt }).catch(() => {});
  }

}

/** The child Turn's answer, or the failure the parent's model sees. */
function resultText(turn: TurnRow, childId: string): string {
  const outcome = turn.outcome as TurnOutcome | null;
  if (outcome?.kind === "completed") return outcome.text;
  const why =
    outcome?.kind === "failed"
      ? `failed (${outcome.fault.code}): ${outcome.fault.message}`
      : outcome?.kind === "limit_reached"
        ? `stopped at a limit (${outcome.limit.name}): ${outcome.diagnostic.message}`
        : outcome?.kind === "cancelled"
          ? `was cancelled${outcome.reason !== undefined ? `: ${outcome.reason}` : ""}`
          : "did not finish";
  throw new ToolFailure("subagent_failed", `The sub-agent's Turn ${why} (task_id: ${childId}).`);
}

/** A child's title: its task description and agent, one line within the title limit. */
function titleOf(description: string, agent: string): string {
  const suffix = ` (@${agent} subagent)`;
  const line = description.replace(/\s+/g, " ").trim();
  const room = MAX_TITLE - suffix.length;
  return `${line.length > room ? `${line.slice(0, Math.max(1, room - 1)).trimEnd()}…` : line}${suffix}`.slice(0, MAX_TITLE);
}
