// The Turn runner's compaction side: it claims a Session's next manual compaction when that is
// the Session's oldest pending work and nothing of the Session runs, runs it, renews its lease,
// applies cancellations recorded by other processes, stops it on shutdown, and settles
// compactions whose owner is gone (or whose Turn no longer runs) as failed `process_lost`.
import type { CompactionOutcome, HistoryVisibility } from "../../../generated/client/types.gen.js";
import { compactions as store, type CompactionRow, type StorageHandle } from "../../storage/index.js";
import type { ModelGateway } from "../turns/gateway.js";
import { fault, type Stop } from "../turns/stop.js";
import { executeCompaction, interruptCompaction } from "./execute.js";

export interface CompactionWorkerOptions {
  readonly storage: StorageHandle;
  readonly gateway: ModelGateway;
  readonly now: () => number;
  readonly instance: string;
  readonly processId: number;
  readonly leaseMs: number;
  /** A compaction this worker ran settled: work queued behind it may start. */
  readonly onSettled: () => void;
}

export class CompactionWorker {
  private readonly executions = new Map<string, { readonly sessionId: string; readonly controller: AbortController; readonly done: Promise<void> }>();

  constructor(private readonly options: CompactionWorkerOptions) {}

  /** Claims and starts the Session's next manual compaction when it is due; true when one started. */
  async claim(sessionId: string, lease: boolean): Promise<boolean> {
    const startedAt = this.options.now();
    const row = await store.claimNextCompaction(this.options.storage, sessionId, {
      ownerProcessId: this.options.processId,
      ownerInstance: this.options.instance,
      leaseExpiresAt: startedAt + this.options.leaseMs,
      startedAt,
      lease,
    });
    if (!row) return false;
    this.launch(row);
    return true;
  }

  private launch(row: CompactionRow): void {
    const controller = new AbortController();
    const visibility = (row.request as { visibility?: HistoryVisibility }).visibility;
    const done = executeCompaction(
      { storage: this.options.storage, gateway: this.options.gateway, now: this.options.now, instance: this.options.instance },
      { row, target: { sessionId: row.sessionId, revision: row.historyRevision, visibility }, signal: controller.signal },
    )
      .then(() => undefined)
      .finally(() => {
        this.executions.delete(row.id);
        this.options.onSettled();
      });
    this.executions.set(row.id, { sessionId: row.sessionId, controller, done });
  }

  /** Keeps this worker's claims alive and applies cancellations recorded elsewhere (also for compactions inside this host's Turns). */
  async maintain(): Promise<void> {
    const leaseExpiresAt = this.options.now() + this.options.leaseMs;
    for (const [id, { controller }] of this.executions) {
      if (!(await store.renewCompactionLease(this.options.storage, id, this.options.instance, leaseExpiresAt))) controller.abort({ kind: "lost" } satisfies Stop);
    }
    for (const row of await store.runningCompactions(this.options.storage)) {
      if (row.ownerInstance !== this.options.instance || row.cancellation === null) continue;
      const reason = (row.cancellation as { reason?: string }).reason;
      interruptCompaction(row.id, reason !== undefined ? { kind: "cancelled", reason } : { kind: "cancelled" });
    }
  }

  /**
   * Settles running compactions nobody runs any more: a manual one whose owner is `gone`, an
   * automatic one whose Turn no longer runs under the same owner.
   */
  async recover(gone: (row: CompactionRow) => boolean): Promise<void> {
    const now = this.options.now();
    for (const row of await store.runningCompactions(this.options.storage)) {
      if (this.executions.has(row.id)) continue;
      const lost = row.turnId !== null ? !row.turnRunning : gone(row);
      if (!lost) continue;
      const outcome: CompactionOutcome = { kind: "failed", fault: fault("process_lost", "The process running this compaction stopped before it finished") };
      const settled = await store.changeCompaction(this.options.storage, row.id, {
        patch: { phase: "failed", outcome, completedAt: now },
        expectPhases: ["running"],
        ...(row.ownerInstance !== null ? { expectOwner: row.ownerInstance } : {}),
      });
      if (settled && row.turnId === null) this.options.onSettled();
    }
  }

  /** Stops the compactions of deleted Sessions (their rows are gone; nothing is written). */
  abandonSessions(sessionIds: ReadonlySet<string>): void {
    for (const { sessionId, controller } of this.executions.values()) if (sessionIds.has(sessionId)) controller.abort({ kind: "lost" } satisfies Stop);
  }

  /** Ends the running compactions (`shutdown`) when this host may, and waits for all of them. */
  async stop(end: boolean): Promise<void> {
    if (end) for (const { controller } of this.executions.values()) controller.abort({ kind: "shutdown" } satisfies Stop);
    await Promise.all([...this.executions.values()].map(({ done }) => done));
  }

  /** Waits for a compaction this worker runs to settle (tests and one-shot commands). */
  async settled(id: string): Promise<void> {
    await this.executions.get(id)?.done;
  }
}
