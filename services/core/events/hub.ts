// The in-process activity hub. Durable changes are committed first and then announced
// here, so watchers re-read storage after their cursor; live content deltas (never stored
// as events) travel only here. Watchers in another process learn of changes by their idle
// re-read, which also recovers a missed wake.
import { EventEmitter } from "node:events";

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

  constructor() {
    // Every watcher subscribes; the count is bounded by open connections, not a leak.
    this.emitter.setMaxListeners(0);
  }

  /** Announces a committed change of `sessionId` on `server`. */
  changed(server: string, sessionId: string): void {
    this.emitter.emit(`session:${sessionId}`);
    this.emitter.emit(`server:${server}`);
  }

  /**
   * Announces that work may be claimable: a Turn was admitted, or a pending one was cancelled.
   * Separate from `changed` so streamed progress does not wake the scheduler on every commit.
   */
  workAvailable(): void {
    this.emitter.emit("work");
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
