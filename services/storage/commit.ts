// Group commit: write transactions that queue up while one is committing run together in the
// next database transaction, each in its own savepoint, and share its one COMMIT (one fsync
// where there were many). Each still commits before it is acknowledged — its promise settles
// only after the shared COMMIT — and one that fails rolls back alone, to its savepoint. Work
// keeps its order; a batch holds work of one durability. A lone transaction runs as it always
// did: no savepoint, no extra statement.
import type { AsyncLocalStorage } from "node:async_hooks";
import type { Durability, StorageTransaction } from "./database.js";
import { mapBusy, toStorageError } from "./errors.js";
import type { Queue } from "./queue.js";
import type { TurnEventRow } from "./schema.js";

/** The open transaction (or savepoint) work runs in, found by reads and nested transactions. */
export interface ActiveTransaction {
  readonly tx: StorageTransaction;
  active: boolean;
  /** After-commit callbacks of the work (nested savepoints share them). */
  readonly committed: (() => void)[];
  /** Callbacks run at COMMIT, before the work is durable, given the promise of its durability. */
  readonly early: ((durable: Promise<void>) => void)[];
}

/** Runs one database write transaction (the handle's Writer). */
export type RunTransaction = <T>(fn: (tx: StorageTransaction) => Promise<T>, durability: Durability) => Promise<T>;

interface Work {
  readonly fn: (tx: StorageTransaction) => Promise<unknown>;
  readonly durability: Durability;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
  readonly committed: (() => void)[];
  readonly early: ((durable: Promise<void>) => void)[];
  events: readonly TurnEventRow[];
  outcome?: { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: unknown };
}

export class GroupCommitter {
  private readonly pending: Work[] = [];
  private draining = false;

  constructor(
    private readonly queue: Queue,
    private readonly run: RunTransaction,
    private readonly current: AsyncLocalStorage<ActiveTransaction>,
    /** Announces a committed piece of work: its events, then its after-commit callbacks. */
    private readonly announce: (events: readonly TurnEventRow[], committed: readonly (() => void)[]) => void,
    /**
     * Resolves once what was committed before the call is as durable as `durability` asks
     * (see wal-sync.ts). Runs after the write lock is released: the next batch commits meanwhile.
     */
    private readonly durable: (durability: Durability) => Promise<void> = () => Promise.resolve(),
  ) {}

  submit<T>(fn: (tx: StorageTransaction) => Promise<T>, durability: Durability): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ fn, durability, resolve: resolve as (value: unknown) => void, reject, committed: [], early: [], events: [] });
      if (!this.draining) void this.drain();
    });
  }

  /** Resolves when no work is queued or running. */
  get idle(): boolean {
    return !this.draining && this.pending.length === 0;
  }

  /**
   * Commits queued work batch by batch. Never rejects: every failure (a full disk at COMMIT, a
   * WAL sync that fails, a callback that throws) is the failure of the work it belongs to, so
   * nothing in the commit path is an unhandled rejection that would end the process.
   */
  private async drain(): Promise<void> {
    this.draining = true;
    try {
      while (this.pending.length > 0) {
        const durability = this.pending[0]!.durability;
        const batch: Work[] = [];
        while (this.pending[0]?.durability === durability) batch.push(this.pending.shift()!);
        try {
          const settle = await this.queue.run(() => this.commit(batch, durability));
          if (settle) {
            // Acknowledged (and announced) only once durable; the next batch does not wait for it.
            const durable = this.durable(durability);
            this.runEarly(batch, durable);
            durable.then(settle, (error: unknown) => {
              const failure = toStorageError(error);
              for (const work of batch) work.reject(failure);
            });
          }
        } catch (error) {
          for (const work of batch) work.reject(toStorageError(error));
        }
      }
    } finally {
      this.draining = false;
    }
  }

  /** The committed work's `early` callbacks, outside its async context (a throw is the callback's own). */
  private runEarly(batch: readonly Work[], durable: Promise<void>): void {
    const callbacks = batch.flatMap((work) => (work.outcome?.ok ? work.early : []));
    if (callbacks.length === 0) return;
    durable.catch(() => {});
    this.current.exit(() => {
      for (const callback of callbacks) {
        try {
          callback(durable);
        } catch {
          // the callback reports its own failures
        }
      }
    });
  }

  /** Runs `work` inside `tx` with its own frame (reads and nested transactions join it). */
  private async inFrame(work: Work, tx: StorageTransaction): Promise<unknown> {
    const frame: ActiveTransaction = { tx, active: true, committed: work.committed, early: work.early };
    try {
      const value = await this.current.run(frame, () => work.fn(tx));
      work.events = tx.events;
      return value;
    } finally {
      frame.active = false;
    }
  }

  /** Commits the batch; resolves with how to settle it once durable (undefined when nothing committed). */
  private async commit(batch: readonly Work[], durability: Durability): Promise<(() => void) | undefined> {
    try {
      await mapBusy(() =>
        this.run(async (tx) => {
          if (batch.length === 1) {
            // Alone: no savepoint; a failure rolls the whole transaction back.
            batch[0]!.outcome = { ok: true, value: await this.inFrame(batch[0]!, tx) };
            return;
          }
          for (const work of batch) {
            try {
              const value = await tx.transaction(async (nested) => this.inFrame(work, Object.assign(nested, { sql: tx.sql, events: [] as TurnEventRow[] }) as StorageTransaction));
              work.outcome = { ok: true, value };
            } catch (error) {
              work.outcome = { ok: false, error: toStorageError(error) };
              work.events = [];
            }
          }
        }, durability),
      );
    } catch (error) {
      // Nothing of the batch committed.
      for (const work of batch) work.reject(batch.length === 1 ? error : (work.outcome?.ok === false ? work.outcome.error : error));
      return undefined;
    }
    return () => {
      for (const work of batch) {
        const outcome = work.outcome!;
        if (!outcome.ok) {
          work.reject(outcome.error);
          continue;
        }
        // Outside the transaction's async context: what the announcements start reads committed
        // state. The work is committed whatever a listener does: a throw there is the listener's.
        try {
          this.current.exit(() => this.announce(work.events, work.committed));
        } catch {
          // announcements report their own failures
        }
        work.resolve(outcome.value);
      }
    };
  }
}
