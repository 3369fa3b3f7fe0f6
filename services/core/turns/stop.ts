// Why a running Turn stops before the model finishes, and the small value helpers every part of
// the loop uses to say so: a `StopSignal` carries the stop up through whatever is running (model
// call, tool call, approval wait) to the settlement, which records exactly one outcome.
import type { Fault, TurnLimit } from "../../../generated/client/types.gen.js";

export type Stop =
  | { readonly kind: "cancelled"; readonly reason?: string }
  | { readonly kind: "limit"; readonly limit: TurnLimit; readonly diagnostic: { code: string; message: string } }
  | { readonly kind: "failed"; readonly fault: Fault }
  | { readonly kind: "shutdown" }
  /** Another owner took the claim (or the Session was deleted): nothing more is written. */
  | { readonly kind: "lost" };

export class StopSignal extends Error {
  constructor(readonly stop: Stop) {
    super(stop.kind);
  }
}

/** A contract `Fault`, its code and message cut to the contract's bounds. */
export const fault = (code: string, message: string, providerCode?: string): Fault => ({
  code: code.slice(0, 128),
  message: message.slice(0, 4096),
  ...(providerCode !== undefined ? { providerCode: providerCode.slice(0, 128) } : {}),
});

/** A policy limit's value when it is finite. */
export const finite = (limit: { kind: string; value?: number }): number | undefined => (limit.kind === "finite" ? limit.value : undefined);

/** The contract's origin of a reached limit (`absent` limits never stop a Turn, so they read as platform). */
export function limitOrigin(limit: { kind: string; origin?: string }): "configured" | "provider" | "platform" {
  return limit.origin === "configured" || limit.origin === "provider" ? limit.origin : "platform";
}

/** A stop at a limit of the policy. */
export function limitReached(
  name: TurnLimit["name"],
  configured: { kind: string; origin?: string },
  value: number,
  unit: TurnLimit["unit"],
  message: string,
): StopSignal {
  return new StopSignal({
    kind: "limit",
    limit: { name, origin: limitOrigin(configured), value, unit } as TurnLimit,
    diagnostic: { code: name, message: message.slice(0, 4096) },
  });
}
