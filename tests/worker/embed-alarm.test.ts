// WorkerHarnessHost's one multiplexed alarm (worker/host-alarm.ts) over an in-memory stand-in of
// a Durable Object's alarm and key-value storage, driven with RecoveryAlarm as the host composes
// it: recovery runs only when its own slot is due, a participant runs when its slot is due, a
// recorded recovery failure still lets participants run and the alarm succeed, an unexpected
// participant failure fails the alarm after the others ran and re-armed, and a slot whose
// participant is not registered yet is armed only once it is. (The same coordinator runs in
// workerd in tests/worker/embed.test.ts.)
import { describe, expect, it } from "vitest";
import { RecoveryAlarm, RECOVERY_KEY, FIRST_BACKOFF_MS, type AlarmStorage } from "../../worker/alarm.js";
import { ALARM_SLOTS_KEY, HostAlarmCoordinator, RECOVERY_SLOT } from "../../worker/host-alarm.js";

class MemoryStorage implements AlarmStorage {
  readonly values = new Map<string, unknown>();
  alarm: number | null = null;
  async getAlarm(): Promise<number | null> {
    return this.alarm;
  }
  async setAlarm(at: number): Promise<void> {
    this.alarm = at;
  }
  async deleteAlarm(): Promise<void> {
    this.alarm = null;
  }
  async get<T>(key: string): Promise<T | undefined> {
    return structuredClone(this.values.get(key)) as T | undefined;
  }
  async put<T>(key: string, value: T): Promise<void> {
    this.values.set(key, structuredClone(value));
  }
}

function compose(options: { recover?: () => Promise<void>; due?: () => Promise<boolean> } = {}) {
  let now = 1_000_000;
  const storage = new MemoryStorage();
  const coordinator = new HostAlarmCoordinator(storage, () => now);
  const drains: number[] = [];
  const recovery = new RecoveryAlarm({
    storage: coordinator.recoveryStorage(),
    intervalMs: 1_000,
    now: () => now,
    recover: options.recover ?? (async () => void drains.push(now)),
    due: options.due ?? (async () => false),
  });
  coordinator.setRecovery(() => recovery.alarm());
  return { storage, coordinator, recovery, drains, at: (time: number) => (now = time), now: () => now };
}

describe("WorkerHarnessHost's multiplexed alarm", () => {
  it("arms the platform alarm at the earliest slot and runs only what is due", async () => {
    const { storage, coordinator, recovery, drains, at, now } = compose();
    const runs: number[] = [];
    await coordinator.registerAlarmParticipant("host.sync", () => void runs.push(now()));
    recovery.admitted();
    await recovery.settled();
    const start = now();
    expect(storage.alarm).toBe(start + 1_000);
    await coordinator.setParticipantDue("host.sync", start + 500);
    expect(storage.alarm).toBe(start + 500);
    expect(await coordinator.due()).toEqual({ [RECOVERY_SLOT]: start + 1_000, "host.sync": start + 500 });

    // The participant's wake does not run recovery, whose slot is later.
    at(start + 500);
    await coordinator.alarm();
    expect(runs).toEqual([start + 500]);
    expect(drains).toEqual([]);
    expect(storage.alarm).toBe(start + 1_000);

    at(start + 1_000);
    await coordinator.alarm();
    expect(drains).toEqual([start + 1_000]);
    expect(runs).toHaveLength(1);
    // Nothing is due any more (no open work): the platform alarm is off.
    expect(await coordinator.due()).toEqual({});
    expect(storage.alarm).toBeNull();
  });

  it("lets participants run after a recorded recovery failure, then succeeds with the retry backed off", async () => {
    const failure = Object.assign(new Error("poisoned row: secret-value"), { _tag: "StorageCorrupt" });
    const { storage, coordinator, recovery, at, now } = compose({
      recover: async () => {
        throw failure;
      },
      due: async () => true,
    });
    const runs: string[] = [];
    await coordinator.registerAlarmParticipant("host.sync", () => void runs.push("sync"));
    recovery.admitted();
    await recovery.settled();
    const start = now();
    await coordinator.setParticipantDue("host.sync", start + 1_000);

    at(start + 1_000);
    await expect(coordinator.alarm()).resolves.toBeUndefined();
    expect(runs).toEqual(["sync"]);
    expect(await storage.get(RECOVERY_KEY)).toMatchObject({ failures: 1, retryAt: start + 1_000 + FIRST_BACKOFF_MS });
    expect(storage.alarm).toBe(start + 1_000 + FIRST_BACKOFF_MS);

    // An earlier participant wake does not run the backed-off drain.
    await coordinator.setParticipantDue("host.sync", start + 2_000);
    at(start + 2_000);
    await coordinator.alarm();
    expect(runs).toEqual(["sync", "sync"]);
    expect(await storage.get(RECOVERY_KEY)).toMatchObject({ failures: 1 });
  });

  it("fails the alarm on an unexpected participant failure after the others ran, re-armed for what is left", async () => {
    const { storage, coordinator, at, now } = compose();
    const runs: string[] = [];
    await coordinator.registerAlarmParticipant("a", () => {
      runs.push("a");
      throw new Error("participant a broke");
    });
    await coordinator.registerAlarmParticipant("b", async () => {
      runs.push("b");
      // A participant may set itself due again while it runs.
      await coordinator.setParticipantDue("b", now() + 5_000);
    });
    const start = now();
    await coordinator.setParticipantDue("a", start + 10);
    await coordinator.setParticipantDue("b", start + 10);
    at(start + 10);
    await expect(coordinator.alarm()).rejects.toThrow("participant a broke");
    expect(runs.sort()).toEqual(["a", "b"]);
    expect(await coordinator.due()).toEqual({ b: start + 5_010 });
    expect(storage.alarm).toBe(start + 5_010);
  });

  it("keeps a stored slot unarmed until its participant is registered, and refuses recovery's id", async () => {
    const first = compose();
    await first.coordinator.registerAlarmParticipant("later", () => undefined);
    await first.coordinator.setParticipantDue("later", first.now() + 100);
    // A new instance over the same storage (the object restarted): nothing registered yet.
    const storage = first.storage;
    storage.alarm = null;
    const coordinator = new HostAlarmCoordinator(storage, first.now);
    await coordinator.rearm();
    expect(storage.alarm).toBeNull();
    expect(await storage.get(ALARM_SLOTS_KEY)).toEqual({ later: first.now() + 100 });
    let ran = 0;
    await coordinator.registerAlarmParticipant("later", () => void ran++);
    expect(storage.alarm).toBe(first.now() + 100);
    first.at(first.now() + 100);
    await coordinator.alarm();
    expect(ran).toBe(1);
    expect(() => coordinator.setParticipantDue(RECOVERY_SLOT, 1)).toThrow(TypeError);
    expect(() => coordinator.registerAlarmParticipant(RECOVERY_SLOT, () => undefined)).toThrow(TypeError);
  });

  it("runs a due participant once when two alarm() calls overlap", async () => {
    const { coordinator, at, now } = compose();
    let ran = 0;
    await coordinator.registerAlarmParticipant("once", () => void ran++);
    await coordinator.setParticipantDue("once", now());
    at(now() + 1);
    await Promise.all([coordinator.alarm(), coordinator.alarm()]);
    expect(ran).toBe(1);
  });
});
