// The server object's recovery alarm (worker/alarm.ts), driven directly: armed by admissions,
// re-armed while work is due and disarmed when nothing is; a failing drain backs off 60 s, 2 m,
// 4 m … up to 30 min, is quarantined after 10 consecutive failures with the error's name only,
// and a new admission re-arms it with a fresh budget. The storage is the alarm's own interface
// over a Map (the Durable Object key-value calls it uses); workerd runs it in turns.test.ts.
import { describe, expect, it } from "vitest";
import { backoffMs, QUARANTINE_AFTER, RecoveryAlarm, type AlarmStorage } from "../../worker/alarm.js";

class MapStorage implements AlarmStorage {
  readonly values = new Map<string, unknown>();
  alarm: number | null = null;
  async getAlarm(): Promise<number | null> {
    return this.alarm;
  }
  async setAlarm(time: number): Promise<void> {
    this.alarm = time;
  }
  async deleteAlarm(): Promise<void> {
    this.alarm = null;
  }
  async get<T>(key: string): Promise<T | undefined> {
    return this.values.get(key) as T | undefined;
  }
  async put<T>(key: string, value: T): Promise<void> {
    this.values.set(key, structuredClone(value));
  }
}

function setup(recover: () => Promise<void>, due = true) {
  let now = 1_000_000;
  const storage = new MapStorage();
  const lines: string[] = [];
  const state = { due };
  const alarm = new RecoveryAlarm({ storage, recover, due: async () => state.due, intervalMs: 500, now: () => now, log: (line) => lines.push(line) });
  /** Fires the armed alarm: the clock moves to its time, then `alarm()` runs as the platform would. */
  const fire = async (): Promise<void> => {
    expect(storage.alarm).not.toBeNull();
    now = Math.max(now, storage.alarm!);
    storage.alarm = null;
    await alarm.alarm();
  };
  return { storage, alarm, fire, lines, state, at: () => now };
}

describe("the recovery alarm", () => {
  it("is armed by an admission, re-armed while work is due, and disarms itself when nothing is", async () => {
    let drains = 0;
    const t = setup(async () => void drains++);
    t.alarm.admitted();
    await t.alarm.settled();
    expect(t.storage.alarm).toBe(t.at() + 500);
    await t.fire();
    expect(drains).toBe(1);
    expect(t.storage.alarm).toBe(t.at() + 500);
    t.state.due = false;
    await t.fire();
    expect(drains).toBe(2);
    expect(t.storage.alarm).toBeNull();
  });

  it("backs a failing drain off 60 s, 2 m, 4 m … capped at 30 min, without failing the alarm", async () => {
    expect([1, 2, 3, 4, 5, 6, 7].map(backoffMs)).toEqual([60_000, 120_000, 240_000, 480_000, 960_000, 1_800_000, 1_800_000]);
    const secret = "sk-do-not-log-me";
    const t = setup(async () => {
      throw new TypeError(`bad row ${secret}`);
    });
    t.alarm.admitted();
    await t.alarm.settled();
    const waits: number[] = [];
    for (let failure = 1; failure <= 3; failure++) {
      await t.fire();
      waits.push(t.storage.alarm! - t.at());
    }
    expect(waits).toEqual([60_000, 120_000, 240_000]);
    expect(t.lines.join("\n")).toContain("TypeError");
    expect(t.lines.join("\n")).not.toContain(secret);
  });

  it("does not run a backed-off drain on an earlier wake", async () => {
    let drains = 0;
    const t = setup(async () => {
      drains++;
      throw new Error("still broken");
    });
    t.alarm.admitted();
    await t.alarm.settled();
    await t.fire();
    const retryAt = t.storage.alarm!;
    // Something else woke the alarm early: the drain waits for its time.
    t.storage.alarm = t.at() + 10;
    await t.fire();
    expect(drains).toBe(1);
    expect(t.storage.alarm).toBe(retryAt);
  });

  it("quarantines after 10 consecutive failures with the error's name only, and a new admission re-arms it", async () => {
    let failing = true;
    let drains = 0;
    const t = setup(async () => {
      drains++;
      if (failing) throw Object.assign(new Error("value 'secret' is invalid"), { _tag: "StorageSchemaDrifted" });
    });
    t.alarm.admitted();
    await t.alarm.settled();
    for (let failure = 1; failure <= QUARANTINE_AFTER; failure++) await t.fire();
    expect(drains).toBe(QUARANTINE_AFTER);
    expect(t.storage.alarm).toBeNull();
    const quarantined = await t.alarm.quarantineState();
    expect(quarantined).toEqual({ revision: 1, failures: QUARANTINE_AFTER, error: "StorageSchemaDrifted", quarantined_at: t.at() });
    expect(JSON.stringify([...t.storage.values])).not.toContain("secret");

    // A new admission: a fresh budget, armed again; the quarantine record stays for operators.
    failing = false;
    t.alarm.admitted();
    await t.alarm.settled();
    expect(t.storage.alarm).toBe(t.at() + 500);
    await t.fire();
    expect(drains).toBe(QUARANTINE_AFTER + 1);
    expect(await t.alarm.quarantineState()).toEqual(quarantined);
  });
});
