// One multiplexed Durable Object alarm (the reference's "Embedding in a host Durable Object" and
// "Recovery backoff and quarantine"): a Durable Object has a single alarm, and a
// `WorkerHarnessHost` shares it between Harness recovery (worker/alarm.ts's RecoveryAlarm) and
// the host's own participants (`registerAlarmParticipant(id, run)` + `setParticipantDue(id, at)`).
//
// - Each user of the alarm owns a slot: the time it wants to be woken, kept in the object's
//   key-value storage (`harness:alarm_slots`) so it survives eviction and restarts. The platform
//   alarm is always armed at the earliest slot (or deleted when none is left).
// - Recovery's slot is the one RecoveryAlarm arms and re-arms through `recoveryStorage()`, an
//   `AlarmStorage` whose alarm methods address the slot instead of the platform alarm.
// - `alarm()` runs recovery only when its slot is due — an earlier participant wake never runs a
//   backed-off drain — then every registered participant whose slot is due (its slot is cleared
//   before it runs, so it may set itself due again). RecoveryAlarm records a failing drain
//   (backoff, quarantine) and returns normally, so a recorded failure still lets participants run
//   and the alarm succeeds. An unexpected failure (of recovery's bookkeeping or of a participant)
//   still lets the others run, re-arms for what is left, then fails the alarm.
// - A participant's slot whose `run` is not registered yet (the object woke for another reason)
//   is kept and not armed; `registerAlarmParticipant` arms it. Recovery's slot is armed only once
//   recovery is composed (a host that refused its configuration runs none).
import type { AlarmStorage } from "./alarm.js";

export const ALARM_SLOTS_KEY = "harness:alarm_slots";
/** Recovery's slot (participant ids must differ from it). */
export const RECOVERY_SLOT = "harness:recovery";

/** What the coordinator needs of the object's storage: the platform alarm and key-value storage. */
export type CoordinatorStorage = AlarmStorage & { delete?(key: string): Promise<boolean> };

export type AlarmParticipant = () => Promise<void> | void;

type Slots = Record<string, number>;

export class HostAlarmCoordinator {
  readonly #storage: CoordinatorStorage;
  readonly #now: () => number;
  readonly #participants = new Map<string, AlarmParticipant>();
  /** Recovery's alarm handler (RecoveryAlarm.alarm), once composed. */
  #recovery: (() => Promise<void>) | undefined;
  /** Slot writes run one after another (read-modify-write of one storage value). */
  #chain: Promise<unknown> = Promise.resolve();

  constructor(storage: CoordinatorStorage, now: () => number = Date.now) {
    this.#storage = storage;
    this.#now = now;
  }

  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.#chain.then(fn, fn);
    this.#chain = next.catch(() => {});
    return next;
  }

  async #slots(): Promise<Slots> {
    return { ...((await this.#storage.get<Slots>(ALARM_SLOTS_KEY)) ?? {}) };
  }

  /** Arms the platform alarm at the earliest slot that something registered will serve. */
  async #arm(slots: Slots): Promise<void> {
    let earliest: number | undefined;
    for (const [id, at] of Object.entries(slots)) {
      if (id === RECOVERY_SLOT ? this.#recovery === undefined : !this.#participants.has(id)) continue;
      if (earliest === undefined || at < earliest) earliest = at;
    }
    if (earliest === undefined) {
      if ((await this.#storage.getAlarm()) !== null) await this.#storage.deleteAlarm();
      return;
    }
    // Set even when unchanged: local workerd restores a stored alarm without scheduling it after a restart.
    await this.#storage.setAlarm(earliest);
  }

  #write(update: (slots: Slots) => void): Promise<void> {
    return this.#serial(async () => {
      const slots = await this.#slots();
      update(slots);
      await this.#storage.put<Slots>(ALARM_SLOTS_KEY, slots);
      await this.#arm(slots);
    });
  }

  /** Clears slot `id` if it still holds `at`; true when this call cleared it. */
  #take(id: string, at: number): Promise<boolean> {
    return this.#serial(async () => {
      const slots = await this.#slots();
      if (slots[id] !== at) return false;
      delete slots[id];
      await this.#storage.put<Slots>(ALARM_SLOTS_KEY, slots);
      return true;
    });
  }

  /** The AlarmStorage RecoveryAlarm is given: its alarm is recovery's slot; its key-value storage is the object's. */
  recoveryStorage(): AlarmStorage {
    const storage = this.#storage;
    return {
      getAlarm: async () => (await this.#slots())[RECOVERY_SLOT] ?? null,
      setAlarm: (at) =>
        this.#write((slots) => {
          slots[RECOVERY_SLOT] = at;
        }),
      deleteAlarm: () =>
        this.#write((slots) => {
          delete slots[RECOVERY_SLOT];
        }),
      get: (key) => storage.get(key),
      put: (key, value) => storage.put(key, value),
    };
  }

  /** Recovery's handler: run from `alarm()` when its slot is due. */
  setRecovery(run: () => Promise<void>): void {
    this.#recovery = run;
  }

  registerAlarmParticipant(id: string, run: AlarmParticipant): Promise<void> {
    if (id === RECOVERY_SLOT) throw new TypeError(`alarm participant id ${JSON.stringify(id)} is reserved for Harness recovery`);
    this.#participants.set(id, run);
    // A slot stored before this wake is armed now that something serves it.
    return this.#serial(async () => this.#arm(await this.#slots()));
  }

  /** Wakes participant `id` at `at` (epoch ms); `null` clears its slot. */
  setParticipantDue(id: string, at: number | null): Promise<void> {
    if (id === RECOVERY_SLOT) throw new TypeError(`alarm participant id ${JSON.stringify(id)} is reserved for Harness recovery`);
    if (at !== null && !Number.isFinite(at)) throw new TypeError("setParticipantDue: the due time must be a finite epoch millisecond value or null");
    return this.#write((slots) => {
      if (at === null) delete slots[id];
      else slots[id] = at;
    });
  }

  /** When each slot is due (operators and tests). */
  async due(): Promise<Readonly<Slots>> {
    await this.#chain;
    return this.#slots();
  }

  /** Re-arms the platform alarm from the stored slots (at wake). */
  rearm(): Promise<void> {
    return this.#serial(async () => this.#arm(await this.#slots()));
  }

  /** The Durable Object's `alarm()`: recovery when its slot is due, then every due participant. */
  async alarm(): Promise<void> {
    await this.#chain;
    const now = this.#now();
    const slots = await this.#slots();
    let failure: { readonly error: unknown } | undefined;
    const recoveryAt = slots[RECOVERY_SLOT];
    // Cleared first: RecoveryAlarm re-arms its slot while work is due (or backs off).
    if (recoveryAt !== undefined && recoveryAt <= now && this.#recovery !== undefined && (await this.#take(RECOVERY_SLOT, recoveryAt))) {
      try {
        await this.#recovery();
      } catch (error) {
        failure ??= { error };
      }
    }
    for (const [id, at] of Object.entries(slots)) {
      const run = this.#participants.get(id);
      if (id === RECOVERY_SLOT || run === undefined || at > now) continue;
      // Taken before it runs (so it may set itself due again); a concurrent alarm() that took it runs it instead.
      if (!(await this.#take(id, at))) continue;
      try {
        await run();
      } catch (error) {
        failure ??= { error };
      }
    }
    await this.rearm();
    if (failure !== undefined) throw failure.error;
  }
}
