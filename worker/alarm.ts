// The server object's recovery alarm ("Recovery backoff and quarantine", "Server lifecycle").
//
// - While Turns (or manual compactions) are admitted or running, the object keeps one alarm
//   armed `intervalMs` ahead: an admission arms it, each alarm re-arms it while work is due.
// - `alarm()` runs the runner's recovery (settles claims whose owner is gone — after an object
//   restart that is every claim of the previous instance — then claims pending work). When
//   nothing is due the alarm is not re-armed: an idle server costs nothing.
// - A failing recovery drain records its outcome before surfacing it: the first failure re-arms
//   after 60 s, then 2 m, 4 m, … up to 30 min; after 10 consecutive failures the revision moves
//   to the `recovery_quarantine` diagnostic record (revision, failures, error, quarantined_at)
//   and stops re-arming. The record and the log carry the error's name only, never its message.
//   A recorded failure does not fail the alarm (the retry is already scheduled durably), so the
//   platform never fast-retries it. A new admission after quarantine re-arms recovery with a
//   fresh failure budget; the quarantine record stays for operators (`quarantineState()`).
//
// The state lives in the object's key-value storage beside its SQLite database.

export interface AlarmStorage {
  getAlarm(): Promise<number | null>;
  setAlarm(scheduledTime: number): Promise<void>;
  deleteAlarm(): Promise<void>;
  get<T>(key: string): Promise<T | undefined>;
  put<T>(key: string, value: T): Promise<void>;
}

/** What is pending a recovery drain: its revision (bumped per admission) and its failure count. */
interface RecoveryState {
  readonly revision: number;
  readonly failures: number;
  /** When the backed-off drain is next due (absent: due at the next alarm). */
  readonly retryAt?: number;
  /** The revision was quarantined: no re-arming until a new admission. */
  readonly quarantined?: boolean;
}

export interface RecoveryQuarantine {
  readonly revision: number;
  readonly failures: number;
  /** The error's name (class or `_tag`), never its message. */
  readonly error: string;
  readonly quarantined_at: number;
}

export const RECOVERY_KEY = "harness:recovery";
export const QUARANTINE_KEY = "harness:recovery_quarantine";
export const FIRST_BACKOFF_MS = 60_000;
export const MAX_BACKOFF_MS = 30 * 60_000;
export const QUARANTINE_AFTER = 10;

/** The wait after `failures` consecutive failures: 60 s, 2 m, 4 m, … capped at 30 min. */
export function backoffMs(failures: number): number {
  return Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** Math.max(0, failures - 1));
}

/** The name an error is recorded under (its `_tag`, else its class name). */
export function errorName(error: unknown): string {
  const tag = (error as { _tag?: unknown } | null)?._tag;
  if (typeof tag === "string" && tag !== "") return tag;
  return error instanceof Error ? error.name : typeof error;
}

export interface RecoveryAlarmOptions {
  readonly storage: AlarmStorage;
  /** The drain: the runner's recovery and scheduling. */
  readonly recover: () => Promise<void>;
  /** Whether Turns or compactions are admitted or running (the alarm stays armed while so). */
  readonly due: () => Promise<boolean>;
  /** How far ahead the alarm is armed while work is due. */
  readonly intervalMs: number;
  readonly now?: () => number;
  /** One line per alarm outcome worth logging (error names only). */
  readonly log?: (line: string) => void;
}

export class RecoveryAlarm {
  readonly #options: RecoveryAlarmOptions;
  readonly #now: () => number;
  /** Admissions are told synchronously; their writes to the alarm state run one after another. */
  #arming: Promise<void> = Promise.resolve();

  constructor(options: RecoveryAlarmOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  async #state(): Promise<RecoveryState> {
    return (await this.#options.storage.get<RecoveryState>(RECOVERY_KEY)) ?? { revision: 0, failures: 0 };
  }

  /** A Turn was admitted: a new revision is pending, and the alarm is armed if it is not. */
  admitted(): void {
    this.#arming = this.#arming.then(() => this.#arm()).catch(() => {});
  }

  /** Waits for the arming admissions asked for (tests, and before the object answers). */
  settled(): Promise<void> {
    return this.#arming;
  }

  async #arm(): Promise<void> {
    const { storage } = this.#options;
    const state = await this.#state();
    // A new admission after quarantine starts a fresh failure budget.
    await storage.put<RecoveryState>(RECOVERY_KEY, { revision: state.revision + 1, failures: state.quarantined ? 0 : state.failures, ...(state.retryAt !== undefined && !state.quarantined ? { retryAt: state.retryAt } : {}) });
    const due = state.retryAt !== undefined && !state.quarantined ? state.retryAt : this.#now() + this.#options.intervalMs;
    const armed = await storage.getAlarm();
    if (armed === null || armed > due) await storage.setAlarm(due);
  }

  /** Also arms the alarm at wake when work is already due (a restarted object with open Turns). */
  async wake(): Promise<void> {
    const state = await this.#state();
    if (state.quarantined) return;
    const armed = await this.#options.storage.getAlarm();
    if (armed !== null) {
      // Set again, same time: local workerd restores an object's alarm from its storage without
      // scheduling it after a restart (the platform's scheduler needs no help; this is a no-op there).
      await this.#options.storage.setAlarm(armed);
      return;
    }
    // Due now: open work found at wake belongs to no running instance of this object.
    if (await this.#options.due()) await this.#options.storage.setAlarm(state.retryAt ?? this.#now());
  }

  /** The Durable Object's `alarm()`: the drain when due, its backoff when it fails, re-armed while work is due. */
  async alarm(): Promise<void> {
    const { storage } = this.#options;
    await this.#arming;
    const state = await this.#state();
    if (state.quarantined) return;
    const now = this.#now();
    if (state.retryAt !== undefined && now < state.retryAt) {
      // An earlier wake does not run a backed-off drain.
      await storage.setAlarm(state.retryAt);
      return;
    }
    try {
      await this.#options.recover();
    } catch (error) {
      const failures = state.failures + 1;
      const name = errorName(error);
      if (failures >= QUARANTINE_AFTER) {
        await storage.put<RecoveryQuarantine>(QUARANTINE_KEY, { revision: state.revision, failures, error: name, quarantined_at: now });
        await storage.put<RecoveryState>(RECOVERY_KEY, { revision: state.revision, failures, quarantined: true });
        this.#options.log?.(`recovery quarantined after ${failures} failures: ${name}`);
        return;
      }
      const retryAt = now + backoffMs(failures);
      await storage.put<RecoveryState>(RECOVERY_KEY, { revision: state.revision, failures, retryAt });
      await storage.setAlarm(retryAt);
      this.#options.log?.(`recovery failed (${failures}): ${name}; retried at ${new Date(retryAt).toISOString()}`);
      return;
    }
    if (state.failures > 0 || state.retryAt !== undefined) await storage.put<RecoveryState>(RECOVERY_KEY, { revision: state.revision, failures: 0 });
    // Self-disarming: re-armed only while Turns or compactions are admitted or running.
    if (await this.#options.due()) await storage.setAlarm(this.#now() + this.#options.intervalMs);
  }

  /** The last quarantined revision, for operators (read from inside the object). */
  quarantineState(): Promise<RecoveryQuarantine | undefined> {
    return this.#options.storage.get<RecoveryQuarantine>(QUARANTINE_KEY);
  }
}
