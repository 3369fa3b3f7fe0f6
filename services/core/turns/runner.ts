// Longer than ~400 lines on purpose: claiming, launching, lease upkeep and crash recovery all read
// and write the same ownership state (adopted Sessions, running executions, the lease), and
// splitting them would pass that state around instead of keeping its rules in one place.
// The Turn runner of one host process. It runs only the Turns it owns: an embedded host
// (`scope: "owned"`) the Sessions it operates on — it holds their runner lease while it runs —
// and a server (`scope: "unowned"`) every Session no other live host holds. It claims work (one
// running Turn per Session, queued Turns in sequence order) with this instance as owner and a
// renewed lease, usually in the admission's own transaction; runs each Turn's loop; and settles
// work whose owner is gone as failed with `process_lost`, so accepted work is never lost and
// never run twice. A graceful stop ends only Turns this host may end: a server's (the reference's
// `service stop` ends running Turns), or an embedded host's own admissions; a Turn an embedded
// host merely claimed from another client is waited for, never failed.
import { randomUUID } from "node:crypto";
import { resolve } from "node:path";
import type { Steer, ToolTurnPart, TurnOutcome, TurnPart } from "../../../generated/client/types.gen.js";
import { absoluteWorkdir } from "../../contract/paths.js";
import type { HookPipeline } from "../../plugins/hooks.js";
import type { ModelMessage } from "../../providers/index.js";
import { compactions, getSessionById, isRetryableStorageError, turns as store, type AdmissionClaim, type NewTurnEvent, type SessionRow, type StorageHandle, type TurnRow } from "../../storage/index.js";
import type { ToolRegistry } from "../../tools/index.js";
import { CompactionWorker } from "../compaction/worker.js";
import type { ActivityHub } from "../events/hub.js";
import { HistoryCache, turnHistoryTarget } from "../history/assemble.js";
import type { TurnEnvironment } from "./environment.js";
import type { ModelGateway } from "./gateway.js";
import { TurnExecution } from "./loop.js";
import { closeToolPart, settleUnrecorded } from "./settle.js";
import type { TurnWorkspaceObserver } from "../rewind/service.js";
import { processAlive } from "../../contract/process.js";
import { DEFAULT_LEASE_MS } from "../../contract/lease.js";
import type { ToolDispatchLifecycle } from "./dispatch.js";
import { unrefTimer } from "../../contract/timers.js";

/** Which Sessions a runner runs: those it operates on (embedded), or those no other live host holds (a server). */
export type RunnerScope = "owned" | "unowned";

export interface TurnRunnerOptions {
  readonly storage: StorageHandle;
  readonly hub: ActivityHub;
  readonly gateway: ModelGateway;
  readonly tools: ToolRegistry;
  readonly hooks: HookPipeline;
  /** Agents, Skills and sub-agents, handed to every Turn. */
  readonly environment: TurnEnvironment;
  /** Session workdirs resolve against this root. */
  readonly serverRoot: string;
  readonly scope: RunnerScope;
  /** `contentFlushMillis`: longest wait before streamed content is committed. */
  readonly flushMs?: number;
  /** How long a claim lives without renewal. */
  readonly leaseMs?: number;
  /** Idle re-read interval while waiting for replies, and for work admitted by other processes. */
  readonly pollMs?: number;
  readonly processId?: number;
  readonly now?: () => number;
  readonly artifactsDirectory?: (workdir: string) => string;
  /** Records each Turn's workdir before and after it runs (Turn patches and rewind, services/core/rewind). */
  readonly workspace?: TurnWorkspaceObserver;
  /** An embedder's custody of every approved tool call (dispatch.ts). */
  readonly toolDispatch?: ToolDispatchLifecycle;
}

export { DEFAULT_LEASE_MS } from "../../contract/lease.js";
export const DEFAULT_FLUSH_MS = 100;

/** Resolves after the work already queued (promise jobs, next ticks, the I/O callbacks of this loop turn) has run. */
const afterPendingWork = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Runner instances alive in this process: a claim by one of them is not lost (several hosts may share a process). */
const liveInstances = new Set<string>();

export class TurnRunner {
  /** This host instance: a claim names it, so a restarted process with a reused pid is still "gone". */
  readonly instance = randomUUID();
  private readonly executions = new Map<string, { execution: TurnExecution; done: Promise<void> }>();
  /** Sessions this (embedded) host operates on: it runs their Turns and holds their runner lease. */
  private readonly adopted = new Set<string>();
  /** Turns admitted through this process: the ones a graceful stop may end. */
  private readonly admitted = new Set<string>();
  /**
   * Recent Sessions' history as of their last launch here: settled work never changes, and a
   * Session's work runs in sequence order, so the next launch reads only what was added since
   * (or from a newer checkpoint).
   */
  private readonly histories = new HistoryCache();
  /** Manual compactions: claimed and run in the Session's work order, like Turns. */
  private readonly compactions: CompactionWorker;
  private readonly processId: number;
  private readonly leaseMs: number;
  /** A libSQL server: hosts elsewhere share it, so owner loss is decided by the lease alone (see holderAlive). */
  private readonly leaseOnly: boolean;
  private readonly now: () => number;
  private scheduling = false;
  private scheduleAgain = false;
  /** Work may be waiting (an admission left pending, a cancellation, another process's work). */
  private workHint = true;
  private stopped = false;
  private timers: NodeJS.Timeout[] = [];
  private unsubscribe: (() => void) | undefined;
  /** Scheduling and maintenance passes under way; `stop` waits for them before closing. */
  private readonly passes = new Set<Promise<void>>();
  /** Aborted when the host stops (a Turn's writes stop waiting for disk space). */
  private readonly stopping = new AbortController();
  /** Lost Turns whose settlement, even the last-resort one, could not be written: not tried again by this process. */
  private readonly unsettleable = new Set<string>();

  constructor(private readonly options: TurnRunnerOptions) {
    this.processId = options.processId ?? process.pid;
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.leaseOnly = options.storage.location.kind === "remote";
    this.now = options.now ?? Date.now;
    this.compactions = new CompactionWorker({
      storage: options.storage,
      gateway: options.gateway,
      now: this.now,
      instance: this.instance,
      processId: this.processId,
      leaseMs: this.leaseMs,
      onSettled: () => {
        this.workHint = true;
        if (!this.stopped) void this.track(this.schedule());
      },
    });
  }

  /** Settles lost work, starts queued work, and keeps doing so as work arrives. */
  async start(): Promise<void> {
    liveInstances.add(this.instance);
    // A full disk (or a busy database) at start-up delays recovery to the next maintenance pass; the host starts.
    await this.recover().catch((error: unknown) => {
      if (!isRetryableStorageError(error)) throw error;
    });
    this.unsubscribe = this.options.hub.onWork(() => {
      this.workHint = true;
      void this.track(this.schedule());
    });
    const maintain = setInterval(() => void this.track(this.maintain()), Math.max(50, Math.floor(this.leaseMs / 3)));
    // Work admitted by other processes (into Sessions this host runs) is found by this re-read.
    const poll = setInterval(() => {
      this.workHint = true;
      void this.track(this.schedule());
    }, this.options.pollMs ?? 1000);
    for (const timer of [maintain, poll]) unrefTimer(timer);
    this.timers = [maintain, poll];
    if (this.options.scope === "unowned") await this.track(this.schedule());
  }

  /** Stops taking work, ends the running Turns it may end, waits for the rest, and releases its Sessions. */
  async stop(): Promise<void> {
    this.stopped = true;
    // Writes waiting for disk space give up: what they could not write is the next start's to recover.
    this.stopping.abort();
    this.unsubscribe?.();
    for (const timer of this.timers) clearInterval(timer);
    // A pass may be claiming and launching a Turn right now: let it finish, then stop that Turn too.
    await Promise.all([...this.passes]);
    for (const [turnId, { execution }] of this.executions) {
      if (this.options.scope === "unowned" || this.admitted.has(turnId)) execution.interrupt({ kind: "shutdown" });
    }
    await Promise.all([...this.executions.values()].map(({ done }) => done));
    await this.compactions.stop(this.options.scope === "unowned");
    if (this.adopted.size > 0) await store.releaseRunnerLeases(this.options.storage, this.instance).catch(() => {});
    liveInstances.delete(this.instance);
  }

  private track(pass: Promise<void>): Promise<void> {
    const settled = pass.catch(() => {});
    this.passes.add(settled);
    void settled.then(() => this.passes.delete(settled));
    return settled;
  }

  /** The claim an admission in this process makes for `sessionId` (undefined once stopped). */
  admissionClaim(sessionId: string): AdmissionClaim | undefined {
    if (this.stopped) return undefined;
    if (this.options.scope === "owned") this.adopted.add(sessionId);
    const startedAt = this.now();
    return {
      ownerProcessId: this.processId,
      ownerInstance: this.instance,
      leaseExpiresAt: startedAt + this.leaseMs,
      startedAt,
      lease: this.options.scope === "owned",
      started: (row) => [{ type: "turn.started", data: { model: row.model, startedAt } }],
    };
  }

  /** A Turn admitted in this process: run it when the admission claimed it, else remember the work. */
  onAdmitted(turn: TurnRow, session: SessionRow, claimed: boolean): void {
    this.admitted.add(turn.id);
    if (claimed && !this.stopped) {
      this.options.hub.changed(session.server, turn.sessionId);
      void this.track(this.launch(turn, session, true));
    } else {
      this.workHint = true;
    }
  }

  /** A Turn its admission claimed here, started at the admission's COMMIT (see AdmissionRunner.launchAdmitted). */
  launchAdmitted(turn: TurnRow, session: SessionRow, durable: Promise<void>): boolean {
    if (this.stopped) return false;
    this.admitted.add(turn.id);
    void this.track(this.launch(turn, session, true, durable));
    return true;
  }

  /** A Session this embedded host operates on (created, or addressed by a command). */
  adopt(sessionId: string): void {
    if (this.options.scope === "owned" && !this.stopped) this.adopted.add(sessionId);
  }

  /** The Turns running in this host right now (on a server, what a graceful stop would end). */
  running(): { readonly sessionId: string; readonly turnId: string }[] {
    return [...this.executions.entries()].map(([turnId, { execution }]) => ({ sessionId: execution.sessionId, turnId }));
  }

  /** Asks the local execution of `turnId` to stop as cancelled (no-op when it runs elsewhere). */
  interrupt(turnId: string, reason?: string): void {
    this.executions.get(turnId)?.execution.cancel(reason);
  }

  /** Stops local executions of deleted Sessions; their rows are gone, so nothing is written. */
  abandonSessions(sessionIds: readonly string[]): void {
    const deleted = new Set(sessionIds);
    for (const id of deleted) {
      this.adopted.delete(id);
      this.histories.delete(id);
    }
    for (const { execution } of this.executions.values()) if (deleted.has(execution.sessionId)) execution.interrupt({ kind: "lost" });
    this.compactions.abandonSessions(deleted);
  }

  /** Waits for a Turn this runner is executing to settle (tests and one-shot runs). */
  async settled(turnId: string): Promise<void> {
    await this.executions.get(turnId)?.done;
  }

  /** Waits for a manual compaction this runner is executing to settle. */
  async compactionSettled(compactionId: string): Promise<void> {
    await this.compactions.settled(compactionId);
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
      await this.compactions.maintain();
      if (this.adopted.size > 0) {
        await store.holdRunnerLeases(this.options.storage, [...this.adopted], { ownerProcessId: this.processId, ownerInstance: this.instance, leaseExpiresAt, startedAt: this.now() });
      }
      await this.recover();
      this.workHint = true;
      await this.schedule();
    } catch {
      // A busy database is retried on the next tick.
    }
  }

  /** May this host run `sessionId`'s Turns now (taking the lease when an embedded host may)? */
  private async mayRun(session: { sessionId: string; runnerInstance: string | null; runnerProcessId: number | null; runnerLeaseExpiresAt: number | null }): Promise<boolean> {
    const now = this.now();
    const holder = session.runnerInstance;
    const live =
      holder !== null &&
      holder !== this.instance &&
      (session.runnerLeaseExpiresAt ?? 0) >= now &&
      (session.runnerProcessId === null || this.holderAlive(session.runnerProcessId, holder));
    if (this.options.scope === "unowned") {
      // A lease left by a host that is gone (or expired) no longer keeps a server away.
      if (holder !== null && holder !== this.instance && !live) await store.clearRunnerLease(this.options.storage, holder);
      return !live;
    }
    if (!this.adopted.has(session.sessionId)) return false;
    if (holder === this.instance) return true;
    if (live) return false;
    const held = await store.holdRunnerLeases(this.options.storage, [session.sessionId], { ownerProcessId: this.processId, ownerInstance: this.instance, leaseExpiresAt: now + this.leaseMs, startedAt: now });
    return held.length > 0;
  }

  /** Claims and launches the oldest pending Turn of every Session this host may run and that has none running. */
  async schedule(): Promise<void> {
    if (this.stopped || !this.workHint) return;
    if (this.options.scope === "owned" && this.adopted.size === 0) return;
    if (this.scheduling) {
      this.scheduleAgain = true;
      return;
    }
    this.scheduling = true;
    try {
      do {
        this.scheduleAgain = false;
        this.workHint = false;
        for (const session of await this.sessionsWithWork()) {
          if (this.stopped) return;
          if (!(await this.mayRun(session))) continue;
          const startedAt = this.now();
          const claimed = await store.claimNextTurn(
            this.options.storage,
            session.sessionId,
            { ownerProcessId: this.processId, ownerInstance: this.instance, leaseExpiresAt: startedAt + this.leaseMs, startedAt, lease: this.options.scope === "owned" },
            (row) => [{ type: "turn.started", data: { model: row.model, startedAt } }],
          );
          if (claimed) await this.launch(claimed);
          // A manual compaction admitted before every pending Turn runs first.
          else if (!(await this.compactions.claim(session.sessionId, this.options.scope === "owned"))) this.workHint = true; // still pending behind running work
        }
      } while (this.scheduleAgain && !this.stopped);
    } finally {
      this.scheduling = false;
    }
  }

  private async launch(row: TurnRow, known?: SessionRow, fresh = false, admissionDurable?: Promise<void>): Promise<void> {
    const session = known ?? (await getSessionById(this.options.storage, row.sessionId));
    if (!session) return;
    if (!known) this.options.hub.changed(session.server, row.sessionId);
    // A Turn claimed at its admission has no parts yet.
    const history = await this.history(row);
    const parts = fresh ? [] : (await store.listParts(this.options.storage, [row.id])).map((part) => part.data as TurnPart);
    const workdir = absoluteWorkdir(this.options.serverRoot, session.workdir);
    // Recorded once the Turn holds its project lease (`leased`): the recording's mode lookup then
    // answers the scope the Turn resolved at its start instead of looking for the files again.
    let leased!: () => void;
    const lease = new Promise<void>((resolve) => (leased = resolve));
    const observed = this.options.workspace;
    const workspaceRecorded = observed ? lease.then(() => observed.before(row, workdir)) : undefined;
    const execution = new TurnExecution(
      {
        ...(workspaceRecorded ? { workspaceRecorded, leased } : {}),
        ...(this.options.workspace ? { beforeWrite: this.options.workspace.beforeWrite, workspaceSettle: () => this.options.workspace?.settleWrite(row.id) } : {}),
        ...(admissionDurable ? { admissionDurable } : {}),
        hostStopping: this.stopping.signal,
        ...(this.options.toolDispatch ? { toolDispatch: this.options.toolDispatch } : {}),
        storage: this.options.storage,
        hub: this.options.hub,
        gateway: this.options.gateway,
        tools: this.options.tools,
        hooks: this.options.hooks,
        environment: this.options.environment,
        instance: this.instance,
        flushMs: this.options.flushMs ?? DEFAULT_FLUSH_MS,
        now: this.now,
        artifactsDirectory: this.options.artifactsDirectory ?? ((dir) => resolve(dir, ".ze-harness", "tool-output")),
        pollMs: this.options.pollMs ?? 1000,
      },
      row,
      session,
      absoluteWorkdir(this.options.serverRoot, session.workdir),
      history,
      parts,
    );
    // The workdir is recorded before the Turn's first tool can run (the scan overlaps the first
    // model request; tool calls await it through `workspaceRecorded`) and after its last settled —
    // once the settlement's announcements (turn.finished to watchers) have been written out, so
    // the capture's scan and statements never sit between a settled Turn and its watchers.
    const observer = this.options.workspace;
    const run = observer ? execution.run().finally(() => afterPendingWork().then(() => observer.after(row, workdir))) : execution.run();
    // Settled in every case: nothing a Turn (or its workdir capture) throws is an unhandled rejection.
    const done = run.catch(() => {}).finally(() => {
      this.executions.delete(row.id);
      this.admitted.delete(row.id);
      if (!this.stopped && this.workHint) void this.track(this.schedule());
    });
    this.executions.set(row.id, { execution, done });
  }

  /** The Turn's model-visible history (see services/core/history), from the cache plus what it lacks. */
  private async history(row: TurnRow): Promise<ModelMessage[]> {
    const target = turnHistoryTarget(row);
    if (!this.options.workspace) return this.histories.messages(this.options.storage, target);
    // Turns a rewind took back are hidden from every later Turn (read with the history, one statement).
    return (await this.histories.messagesUnlessRewound(this.options.storage, target)).messages;
  }

  /** Sessions with pending Turns or manual compactions (each once, oldest work first). */
  private async sessionsWithWork(): Promise<Awaited<ReturnType<typeof store.sessionsWithPendingTurns>>> {
    const [turns, pending] = await Promise.all([store.sessionsWithPendingTurns(this.options.storage), compactions.sessionsWithPendingCompactions(this.options.storage)]);
    const seen = new Set(turns.map((session) => session.sessionId));
    return [...turns, ...pending.filter((session) => !seen.has(session.sessionId))];
  }

  /**
   * Settles running Turns whose owner is gone (its process exited, its instance restarted, or its
   * lease ran out) as failed with `process_lost`, marking their accepted steers undelivered.
   */
  async recover(): Promise<void> {
    const now = this.now();
    for (const row of await store.allTurnsInPhases(this.options.storage, ["running"])) {
      if (this.executions.has(row.id) || this.unsettleable.has(row.id)) continue;
      if (!this.ownerGone(row, now)) continue;
      // One Turn that cannot be settled now (a full disk) never keeps the others — or the host — from going on.
      await this.settleLost(row, now).catch(() => {});
    }
    await this.compactions.recover((row) => this.ownerGone(row, now)).catch((error: unknown) => {
      if (!isRetryableStorageError(error)) throw error;
    });
  }

  /**
   * Whether the claim's owner is gone: its lease ran out, or — on a local database, whose hosts
   * share this machine's process table — its process exited or its instance restarted.
   */
  private ownerGone(row: { ownerInstance: string | null; ownerProcessId: number | null; leaseExpiresAt: number | null }, now: number): boolean {
    const owner = row.ownerProcessId;
    return row.ownerInstance === null || owner === null || !this.holderAlive(owner, row.ownerInstance) || (row.leaseExpiresAt ?? 0) < now;
  }

  /**
   * Whether the host instance `instance` in process `processId` may still be alive (its lease is
   * checked apart). A local database's hosts share this machine: an instance of this process is
   * alive while it runs, another process while its pid exists. A libSQL server's hosts may run on
   * other machines or in other PID namespaces, where a pid names nothing here (or, reused, some
   * unrelated process): only an instance of this very process is known; for the rest the lease
   * alone decides, so a host is never judged gone while it still renews its lease.
   */
  private holderAlive(processId: number, instance: string): boolean {
    if (liveInstances.has(instance)) return true;
    if (this.leaseOnly) return true;
    return processId === this.processId ? false : processAlive(processId);
  }

  /**
   * Settles a lost Turn as failed `process_lost`. A settlement that cannot be written (anything
   * but a full disk or a busy database, which the next pass tries again) is replaced by the
   * last-resort one (`settleUnrecorded`, failed `settlement_failed`); when even that cannot be
   * written the Turn is left alone for the rest of this process — recovery never loops on it.
   */
  private async settleLost(row: TurnRow, now: number): Promise<void> {
    let settled: boolean;
    try {
      settled = await this.settleLostFully(row, now);
    } catch (error) {
      if (isRetryableStorageError(error)) throw error;
      settled = await settleUnrecorded(this.options.storage, { turnId: row.id, ownerInstance: row.ownerInstance }, now, this.stopping.signal).catch((failure: unknown) => {
        if (!isRetryableStorageError(failure)) this.unsettleable.add(row.id);
        return false;
      });
    }
    if (settled) {
      const server = (await getSessionById(this.options.storage, row.sessionId))?.server;
      if (server !== undefined) this.options.hub.changed(server, row.sessionId);
      this.workHint = true;
    }
  }

  private async settleLostFully(row: TurnRow, now: number): Promise<boolean> {
    const outcome: TurnOutcome = {
      kind: "failed",
      turnId: row.id,
      fault: { code: "process_lost", message: "The process running this Turn stopped before it finished" },
    };
    // A Turn whose workdir state before it was left unmarked gets its patch here (see
    // services/core/rewind/recording.ts): the crash kept its own settlement from writing it.
    const session = this.options.workspace ? await getSessionById(this.options.storage, row.sessionId) : undefined;
    const repair = session ? await this.options.workspace?.repairLost(row, absoluteWorkdir(this.options.serverRoot, session.workdir)).catch(() => undefined) : undefined;
    return this.options.storage.transaction(async (tx) => {
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
        ...(repair ? { within: repair } : {}),
      });
      return true;
    });
  }
}
