// The Turn runner of one host process. It claims work (one running Turn per Session,
// queued Turns in sequence order) with this instance as owner and a renewed lease, runs each
// Turn's loop, and settles work whose owner is gone as failed with `process_lost` — so
// accepted work is never lost and never run twice.
import { randomUUID } from "node:crypto";
import { isAbsolute, resolve } from "node:path";
import type { Steer, ToolTurnPart, TurnOutcome, TurnPart } from "../../../generated/client/types.gen.js";
import type { ModelMessage } from "../../providers/index.js";
import { getSessionById, turns as store, type NewTurnEvent, type StorageHandle, type TurnRow } from "../../storage/index.js";
import type { HookPipeline } from "../../plugins/hooks.js";
import type { ToolRegistry } from "../../tools/index.js";
import type { ActivityHub } from "../events/hub.js";
import { TurnExecution } from "./loop.js";
import type { ModelGateway } from "./gateway.js";
import { closeToolPart } from "./settle.js";

export interface TurnRunnerOptions {
  readonly storage: StorageHandle;
  readonly hub: ActivityHub;
  readonly gateway: ModelGateway;
  readonly tools: ToolRegistry;
  readonly hooks: HookPipeline;
  /** Session workdirs resolve against this root. */
  readonly serverRoot: string;
  /** `contentFlushMillis`: longest wait before streamed content is committed. */
  readonly flushMs?: number;
  /** How long a claim lives without renewal. */
  readonly leaseMs?: number;
  /** Idle re-read interval while waiting for replies. */
  readonly pollMs?: number;
  readonly processId?: number;
  readonly now?: () => number;
  readonly artifactsDirectory?: (workdir: string) => string;
}

export const DEFAULT_LEASE_MS = 30_000;
export const DEFAULT_FLUSH_MS = 100;

/** True while a process with this pid exists (EPERM means it exists but is not ours). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

export class TurnRunner {
  /** This host instance: a claim names it, so a restarted process with a reused pid is still "gone". */
  readonly instance = randomUUID();
  private readonly executions = new Map<string, { execution: TurnExecution; done: Promise<void> }>();
  private readonly processId: number;
  private readonly leaseMs: number;
  private readonly now: () => number;
  private scheduling = false;
  private scheduleAgain = false;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;
  /** Scheduling and maintenance passes under way; `stop` waits for them before closing. */
  private readonly passes = new Set<Promise<void>>();

  constructor(private readonly options: TurnRunnerOptions) {
    this.processId = options.processId ?? process.pid;
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.now = options.now ?? Date.now;
  }

  /** Settles lost work, starts queued work, and keeps doing so as work arrives. */
  async start(): Promise<void> {
    await this.recover();
    this.unsubscribe = this.options.hub.onWork(() => void this.track(this.schedule()));
    const tick = Math.max(50, Math.floor(this.leaseMs / 3));
    this.timer = setInterval(() => void this.track(this.maintain()), tick);
    this.timer.unref();
    await this.schedule();
  }

  /** Ends every running Turn (settled as failed: host_shutdown) and stops taking work. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    if (this.timer) clearInterval(this.timer);
    // A pass may be claiming and launching a Turn right now: let it finish, then stop that Turn too.
    await Promise.all([...this.passes]);
    for (const { execution } of this.executions.values()) execution.interrupt({ kind: "shutdown" });
    await Promise.all([...this.executions.values()].map(({ done }) => done));
  }

  private track(pass: Promise<void>): Promise<void> {
    const settled = pass.catch(() => {});
    this.passes.add(settled);
    void settled.then(() => this.passes.delete(settled));
    return settled;
  }

  /** Asks the local execution of `turnId` to stop as cancelled (no-op when it runs elsewhere). */
  interrupt(turnId: string, reason?: string): void {
    this.executions.get(turnId)?.execution.cancel(reason);
  }

  /** Stops local executions of deleted Sessions; their rows are gone, so nothing is written. */
  abandonSessions(sessionIds: readonly string[]): void {
    const deleted = new Set(sessionIds);
    for (const { execution } of this.executions.values()) if (deleted.has(execution.sessionId)) execution.interrupt({ kind: "lost" });
  }

  /** Waits for a Turn this runner is executing to settle (tests and one-shot runs). */
  async settled(turnId: string): Promise<void> {
    await this.executions.get(turnId)?.done;
  }

  private async maintain(): Promise<void> {
    if (this.stopped) return;
    try {
      const leaseExpiresAt = this.now() + this.leaseMs;
      for (const [turnId, { execution }] of this.executions) {
        const owned = await store.renewLease(this.options.storage, turnId, this.instance, leaseExpiresAt);
        if (!owned) execution.interrupt({ kind: "lost" });
        const row = await store.getTurnById(this.options.storage, turnId);
        const cancellation = row?.cancellation as { reason?: string } | null | undefined;
        if (cancellation) execution.cancel(cancellation.reason);
      }
      await this.recover();
      await this.schedule();
    } catch {
      // A busy database is retried on the next tick.
    }
  }

  /** Claims and launches the oldest pending Turn of every Session that has none running. */
  async schedule(): Promise<void> {
    if (this.stopped) return;
    if (this.scheduling) {
      this.scheduleAgain = true;
      return;
    }
    this.scheduling = true;
    try {
      do {
        this.scheduleAgain = false;
        const pending = await store.allTurnsInPhases(this.options.storage, ["pending"]);
        for (const sessionId of new Set(pending.map((row) => row.sessionId))) {
          if (this.stopped) return;
          const startedAt = this.now();
          const claimed = await store.claimNextTurn(
            this.options.storage,
            sessionId,
            { ownerProcessId: this.processId, ownerInstance: this.instance, leaseExpiresAt: startedAt + this.leaseMs, startedAt },
            (row) => [{ type: "turn.started", data: { model: row.model, startedAt } }],
          );
          if (claimed) await this.launch(claimed);
        }
      } while (this.scheduleAgain && !this.stopped);
    } finally {
      this.scheduling = false;
    }
  }

  private async launch(row: TurnRow): Promise<void> {
    const session = await getSessionById(this.options.storage, row.sessionId);
    if (!session) return;
    this.options.hub.changed(session.server, row.sessionId);
    const workdir = isAbsolute(session.workdir) ? session.workdir : resolve(this.options.serverRoot, session.workdir);
    const history = (await store.listTranscripts(this.options.storage, row.sessionId, row.sequence)).flat() as ModelMessage[];
    const parts = (await store.listParts(this.options.storage, [row.id])).map((part) => part.data as TurnPart);
    const execution = new TurnExecution(
      {
        storage: this.options.storage,
        hub: this.options.hub,
        gateway: this.options.gateway,
        tools: this.options.tools,
        hooks: this.options.hooks,
        instance: this.instance,
        flushMs: this.options.flushMs ?? DEFAULT_FLUSH_MS,
        now: this.now,
        artifactsDirectory: this.options.artifactsDirectory ?? ((dir) => resolve(dir, ".ze-harness", "tool-output")),
        pollMs: this.options.pollMs ?? 1000,
      },
      row,
      session,
      workdir,
      history,
      parts,
    );
    const done = execution.run().finally(() => {
      this.executions.delete(row.id);
      if (!this.stopped) void this.track(this.schedule());
    });
    this.executions.set(row.id, { execution, done });
  }

  private async serverOf(sessionId: string): Promise<string | undefined> {
    return (await getSessionById(this.options.storage, sessionId))?.server;
  }

  /**
   * Settles running Turns whose owner is gone (its process exited, its instance restarted, or its
   * lease ran out) as failed with `process_lost`, marking their accepted steers undelivered.
   */
  async recover(): Promise<void> {
    const now = this.now();
    for (const row of await store.allTurnsInPhases(this.options.storage, ["running"])) {
      if (this.executions.has(row.id)) continue;
      const owner = row.ownerProcessId;
      const gone =
        row.ownerInstance === null ||
        owner === null ||
        (owner === this.processId ? row.ownerInstance !== this.instance : !processAlive(owner)) ||
        (row.leaseExpiresAt ?? 0) < now;
      if (!gone) continue;
      await this.settleLost(row, now);
    }
  }

  private async settleLost(row: TurnRow, now: number): Promise<void> {
    const outcome: TurnOutcome = {
      kind: "failed",
      turnId: row.id,
      fault: { code: "process_lost", message: "The process running this Turn stopped before it finished" },
    };
    const settled = await this.options.storage.transaction(async (tx) => {
      const current = await store.getTurnById(tx, row.id);
      if (!current || current.phase !== "running" || current.ownerInstance !== row.ownerInstance) return false;
      const steers = (await store.listSteers(tx, [row.id])).map((steer) => steer.data as Steer).filter((steer) => steer.state.state === "accepted");
      await store.updateSteers(
        tx,
        steers.map((steer) => ({ steerId: steer.steerId, data: { ...steer, state: { state: "undelivered", reason: "process_lost", undeliveredAt: now } } })),
      );
      const parts: { ordinal: number; data: ToolTurnPart }[] = [];
      const settledTools: NewTurnEvent[] = [];
      for (const part of await store.listParts(tx, [row.id])) {
        const data = part.data as TurnPart;
        if (data.type !== "tool" || data.state !== "requested") continue;
        const closed = closeToolPart(data, { code: "process_lost", message: "The process running this tool call stopped" }, now);
        parts.push({ ordinal: part.ordinal, data: closed.part });
        settledTools.push(...closed.events);
      }
      await store.changeTurn(tx, row.id, {
        patch: { phase: "failed", outcome, completedAt: now, steeringGate: "closed" },
        parts,
        events: [...settledTools, { type: "turn.finished", data: { outcome, completedAt: now } }],
        expectPhases: ["running"],
      });
      return true;
    });
    if (settled) {
      const server = await this.serverOf(row.sessionId);
      if (server !== undefined) this.options.hub.changed(server, row.sessionId);
    }
  }
}
