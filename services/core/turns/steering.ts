// Steering: input accepted for the running Turn is promoted as one batch at the next model
// boundary — recorded as a steering part, appended to the transcript as a user message, and
// counted against the policy's steering-batch limit (the gate closes at the last batch).
import { randomUUID } from "node:crypto";
import type { Steer, SteeringTurnPart } from "../../../generated/client/types.gen.js";
import { turns as store } from "../../storage/index.js";
import { userContent, type RunningTurn } from "./running.js";
import { finite, limitReached } from "./stop.js";

/** The Turn's accepted (not yet promoted) steering input, oldest first. */
export async function acceptedSteers(t: RunningTurn): Promise<Steer[]> {
  return (await store.listSteers(t.deps.storage, [t.id])).map((row) => row.data as Steer).filter((steer) => steer.state.state === "accepted");
}

/**
 * Promotes accepted steering input as one batch before the next model request. Before the first
 * request nothing is read: steering input needs a running Turn, and whatever was accepted in the
 * moment since the claim is promoted at the next boundary (the completion refuses to close a
 * Turn while any waits).
 */
export async function promoteSteers(t: RunningTurn): Promise<void> {
  if (t.iteration === 0) return;
  const accepted = await acceptedSteers(t);
  if (accepted.length === 0) return;
  const maxBatches = finite(t.policy.steering.maxBatches);
  if (maxBatches !== undefined && t.promotedBatches >= maxBatches) {
    throw limitReached("steering_batches", t.policy.steering.maxBatches, maxBatches, "batches", `The Turn already took in ${maxBatches} steering batch(es)`);
  }
  const batch = t.promotedBatches + 1;
  const promotedAt = t.deps.now();
  const part: SteeringTurnPart = {
    type: "steering",
    id: randomUUID(),
    batch,
    promotedAt,
    steers: accepted.map((steer) => ({ steerId: steer.steerId, sequence: steer.sequence, prompt: steer.prompt, attribution: steer.attribution, acceptedAt: steer.acceptedAt })),
  };
  t.recorder.closeContent();
  t.recorder.add(part);
  t.transcript.push({ role: "user", content: accepted.flatMap((steer) => userContent(steer.prompt)) });
  t.promotedBatches = batch;
  await store.updateSteers(
    t.deps.storage,
    accepted.map((steer) => ({ steerId: steer.steerId, data: { ...steer, state: { state: "promoted", batch, promotedAt } } })),
  );
  await t.recorder.commit([{ type: "turn.steered", data: { part } }], {
    promotedBatchCount: batch,
    ...(maxBatches !== undefined && batch >= maxBatches ? { steeringGate: "closed" as const } : {}),
  });
}
