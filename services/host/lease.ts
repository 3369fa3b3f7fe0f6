// The host's claim lease (docs/scale.md "The lease rules"): how long a host that stopped
// answering keeps its Turns and terminals before another host sharing the database settles them.
import type { HarnessOptions } from "./harness.js";

/** The option, else `ZE_HARNESS_LEASE_MS`, else undefined (each user's default, 30 s). */
export function hostLeaseMs(options: Pick<HarnessOptions, "leaseMs" | "env">): number | undefined {
  if (options.leaseMs !== undefined) return options.leaseMs;
  const raw = options.env["ZE_HARNESS_LEASE_MS"];
  if (raw === undefined || raw === "") return undefined;
  const leaseMs = Number(raw);
  if (!Number.isInteger(leaseMs) || leaseMs < 300 || leaseMs > 3_600_000) {
    throw Object.assign(new Error(`ZE_HARNESS_LEASE_MS must be a whole number of milliseconds from 300 to 3600000, not ${JSON.stringify(raw)}`), { _tag: "ConfigInvalid" });
  }
  return leaseMs;
}
