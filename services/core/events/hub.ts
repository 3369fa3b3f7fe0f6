// The in-process activity hub. Durable changes are committed first and then announced
// here, so watchers re-read storage after their cursor; live content deltas (never stored
// as events) travel only here. Watchers in another process learn of changes by their idle
// re-read, which also recovers a missed wake.
import { EventEmitter } from "node:events";
import type { TurnEventRow } from "../../storage/index.js";

/** A live content delta of a running Turn (text, reasoning or refusal). */
export interface LiveDelta {
  readonly sessionId: string;
  readonly turnId: string;
  readonly kind: "text" | "reasoning" | "refusal";
  readonly partId: string;
  readonly assistantMessageIndex: number;
  readonly offset: number;
  readonly delta: string;
  /** The Turn revision the delta builds on. */
  readonly revision: number;
  /** The Session activity cursor of the durable activity the delta follows. */
  readonly activityCursor: number;
}

export class ActivityHub {
  private readonly emitter = new EventEmitter();

  /**
   * @param defer runs an announcement once the caller's storage transaction commits (at once
   *   outside one): watchers must never be woken for a change that may still roll back.
   */
  constructor(private readonly defer: (announce: () => void) => void = (announce) => announce()) {
    // Every watcher subscribes; the count is bounded by open connections, not a leak.
    this.emitter.setMaxListeners(0);
  }

  /** Announces a committed change of `sessionId` on `server`. */
  changed(server: string, sessionId: string): void {
    this.defer(() => {
      this.emitter.emit(`session:${sessionId}`);
      this.emitter.emit(`server:${server}`);
    });
  }

  /** Announces committed deletions: streams of these Sessions end. */
  deleted(server: string, sessionIds: readonly string[]): void {
    this.defer(() => {
      for (const sessionId of sessionIds) {
        this.emitter.emit(`deleted:${sessionId}`);
        this.emitter.emit(`session:${sessionId}`);
      }
      this.emitter.emit(`server:${server}`);
    });
  }

  onDeleted(sessionId: string, listener: () => void): () => void {
    return this.on(`deleted:${sessionId}`, listener);
  }

  /**
   * Announces that work may be claimable: a Turn was admitted, or a pending one was cancelled.
   * Separate from `changed` so streamed progress does not wake the scheduler on every commit.
   */
  workAvailable(): void {
    this.defer(() => this.emitter.emit("work"));
  }

  /** Durable Turn events just committed (in cursor order): watchers in this process take them as they are. */
  turnEvents(rows: readonly TurnEventRow[]): void {
    const bySession = new Map<string, TurnEventRow[]>();
    for (const row of rows) {
      const list = bySession.get(row.sessionId) ?? [];
      list.push(row);
      bySession.set(row.sessionId, list);
    }
    for (const [sessionId, list] of bySession) this.emitter.emit(`events:${sessionId}`, list);
  }

  onTurnEvents(sessionId: string, listener: (rows: readonly TurnEventRow[]) => void): () => void {
    return this.on(`events:${sessionId}`, listener as (...args: unknown[]) => void);
  }

  delta(delta: LiveDelta): void {
    this.emitter.emit(`delta:${delta.sessionId}`, delta);
  }

  onSession(sessionId: string, listener: () => void): () => void {
    return this.on(`session:${sessionId}`, listener);
  }

  onServer(server: string, listener: () => void): () => void {
    return this.on(`server:${server}`, listener);
  }

  onDelta(sessionId: string, listener: (delta: LiveDelta) => void): () => void {
    return this.on(`delta:${sessionId}`, listener as (...args: unknown[]) => void);
  }

  /** Work may be claimable (see `workAvailable`). */
  onWork(listener: () => void): () => void {
    return this.on("work", listener);
  }

  private on(event: string, listener: (...args: unknown[]) => void): () => void {
    this.emitter.on(event, listener);
    return () => this.emitter.off(event, listener);
  }
}
