// Steering: input admitted into the running Turn is promoted as one `steering` part before the
// next model request (the model sees it), replays by steerId, and is refused (409) for a Turn
// that is not running or no longer steerable; undelivered steers say why. On the Node host and on
// the Worker host in workerd (tests/support/hosts.ts); what needs the disk or a config key is Node-only.
import { randomUUID } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { SteeringTurnPart, TurnStreamEvent } from "../../clients/index.js";
import { failure, ok } from "../support/calls.js";
import { HOSTS, startModelHost, type ModelHost } from "../support/hosts.js";
import { startModelHarness, type ModelHarness } from "../support/model.js";
import { cancel, getTurn, holdReplies, queue, replyPermission, runToEnd, seen, steer, steerFailure, submitCall, text, waitForTurnEvent } from "./helpers.js";

let h: ModelHost;

const ofType = <K extends TurnStreamEvent["type"]>(events: TurnStreamEvent[], type: K) =>
  events.filter((event): event is Extract<TurnStreamEvent, { type: K }> => event.type === type);
const done = (words: string) => ({ events: [{ type: "text" as const, text: words }] });

describe.each(HOSTS)("on the %s host", (kind) => {
  beforeAll(async () => {
    h = await startModelHost(kind);
  }, 60_000);
  afterAll(async () => {
    await h?.close();
  });
  afterEach(() => {
    h.model.reply(() => ({ events: [{ type: "text", text: "unscripted" }] }));
  });

  describe("steering a running Turn", () => {
    it("promotes a steer as a steering part before the next model request, which sees it", async () => {
      const before = h.model.requests.length;
      const model = holdReplies(h, (_request, index) => done(index === 1 ? "First answer." : "Answer with the steer."));
      const sessionId = await h.createSession();
      const { turnId } = await queue(h, sessionId, "Start something");
      await model.held(1);
      const receipt = await steer(h, sessionId, turnId, "Also mention STEER-A1.");
      expect(receipt).toMatchObject({ delivery: "steer", sessionId, turnId, sequence: 2, attribution: { clientId: "test-client" } });
      expect((await getTurn(h, sessionId, turnId)).steering.steers).toEqual([expect.objectContaining({ steerId: receipt.steerId, state: { state: "accepted" } })]);
      model.release(1);
      await model.held(2);
      expect(seen(h.model.requests[before])).not.toContain("STEER-A1");
      expect(seen(h.model.requests[before + 1])).toContain("STEER-A1");
      model.release(2);
      const { events, turn } = await runToEnd(h, sessionId, turnId);
      expect(turn.outcome).toEqual({ kind: "completed", turnId, text: "Answer with the steer." });
      expect(turn.parts.map((part) => part.type)).toEqual(["text", "steering", "text"]);
      const part = turn.parts[1] as SteeringTurnPart;
      expect(part).toMatchObject({ batch: 1, steers: [{ steerId: receipt.steerId, sequence: 2, prompt: text("Also mention STEER-A1.") }] });
      expect(turn.steering).toMatchObject({ gate: "closed", promotedBatchCount: 1 });
      expect(turn.steering.steers).toEqual([expect.objectContaining({ steerId: receipt.steerId, state: { state: "promoted", batch: 1, promotedAt: part.promotedAt } })]);
      expect(ofType(events, "turn.steered")).toEqual([expect.objectContaining({ part })]);
    });


    it("promotes every steer waiting at a boundary as one batch", async () => {
      const model = holdReplies(h, (_request, index) => done(`answer ${index}`));
      const sessionId = await h.createSession();
      const { turnId } = await queue(h, sessionId, "Go");
      await model.held(1);
      const a = await steer(h, sessionId, turnId, "steer one");
      const b = await steer(h, sessionId, turnId, "steer two");
      model.release(1);
      await model.held(2);
      model.release(2);
      const { turn } = await runToEnd(h, sessionId, turnId);
      const batches = turn.parts.filter((part): part is SteeringTurnPart => part.type === "steering");
      expect(batches).toHaveLength(1);
      expect(batches[0]!.steers.map((s) => s.steerId)).toEqual([a.steerId, b.steerId]);
      expect(turn.steering.promotedBatchCount).toBe(1);
    });
  });

  describe("steering while a permission request holds the Turn", () => {
    it("promotes a steer that arrived while a .env read waited for its reply, after the tool result", async () => {
      // The file, written by a Turn through the `write` tool, exists on either host's workspace.
      h.model.enqueue({ events: [{ type: "tool_call", name: "write", arguments: { filePath: "steer.env", content: "STEER_NOTE=env-words\n" } }] }, done("Seeded."));
      const seeding = await h.createSession();
      await runToEnd(h, seeding, (await queue(h, seeding, "Seed")).turnId);
      const before = h.model.requests.length;
      h.model.enqueue({ events: [{ type: "tool_call", name: "read", arguments: { filePath: "steer.env" } }] }, done("Both handled."));
      const sessionId = await h.createSession();
      const { turnId } = await queue(h, sessionId, "Read the env file");
      const asked = await waitForTurnEvent(h, sessionId, turnId, "turn.approval.requested");
      expect(asked.request).toMatchObject({ action: "read", resources: ["steer.env"] });
      const receipt = await steer(h, sessionId, turnId, "And then STEER-E5.");
      await ok(replyPermission(h, sessionId, asked.request.id, "once"));
      const { turn } = await runToEnd(h, sessionId, turnId);
      expect(turn.outcome).toMatchObject({ kind: "completed", text: "Both handled." });
      expect(turn.parts.map((part) => part.type)).toEqual(["tool", "steering", "text"]);
      const body = seen(h.model.requests[before + 1]);
      expect(body).toContain("STEER-E5");
      expect(body.indexOf("env-words")).toBeLessThan(body.indexOf("STEER-E5"));
      expect(turn.steering.steers[0]).toMatchObject({ steerId: receipt.steerId, state: { state: "promoted", batch: 1 } });
    });
  });

  describe("steering while the Turn finishes", () => {
    it("never leaves an accepted steer behind: each one is promoted in exactly one batch", async () => {
      h.model.reply(() => done("ok"));
      const before = h.model.requests.length;
      const sessionId = await h.createSession();
      const { turnId } = await queue(h, sessionId, "Go");
      await waitForTurnEvent(h, sessionId, turnId, "turn.started");
      const accepted: string[] = [];
      for (let index = 0; index < 40; index++) {
        const result = await submitCall(h, sessionId, { delivery: "steer", steerId: randomUUID(), expectedTurnId: turnId, prompt: text(`steer ${index}`) });
        if (result.response.status !== 202) break; // the Turn finished first
        accepted.push((result.data as { receipt: { steerId: string } }).receipt.steerId);
      }
      const { turn } = await runToEnd(h, sessionId, turnId);
      expect(turn.phase).toBe("completed");
      expect(turn.steering.steers.map((entry) => entry.steerId)).toEqual(accepted);
      expect(turn.steering.steers.every((entry) => entry.state.state === "promoted")).toBe(true);
      const batches = turn.parts.filter((part): part is SteeringTurnPart => part.type === "steering");
      expect(batches.map((batch) => batch.batch)).toEqual(batches.map((_batch, index) => index + 1));
      expect(batches.flatMap((batch) => batch.steers.map((entry) => entry.steerId))).toEqual(accepted);
      expect(turn.steering.promotedBatchCount).toBe(batches.length);
      // One model request per batch, plus the first.
      expect(h.model.requests.length - before).toBe(batches.length + 1);
      expect(await steerFailure(h, sessionId, turnId, "after the end")).toMatchObject({ status: 409, body: { _tag: "TurnNotActiveError" } });
    });
  });

  describe("steer admission", () => {
    it("replays the same steer to the same receipt; different content is a 409 SteerConflictError", async () => {
      const model = holdReplies(h, () => done("ok"));
      const sessionId = await h.createSession();
      const { turnId } = await queue(h, sessionId, "Go");
      await model.held(1);
      const steerId = randomUUID();
      const body = { delivery: "steer", steerId, expectedTurnId: turnId, prompt: text("exactly this") };
      const first = await ok(submitCall(h, sessionId, body));
      expect(await ok(submitCall(h, sessionId, body))).toEqual(first);
      expect(await failure(submitCall(h, sessionId, { ...body, prompt: text("something else") }))).toMatchObject({ status: 409, body: { _tag: "SteerConflictError" } });
      expect((await getTurn(h, sessionId, turnId)).steering.steers).toHaveLength(1);
      model.release(1);
      await model.held(2);
      model.release(2);
      await runToEnd(h, sessionId, turnId);
      // A replay after promotion still answers the original receipt.
      expect(await ok(submitCall(h, sessionId, body))).toEqual(first);
    });

    it("refuses a steer for a pending, an unknown or a finished Turn with 409 TurnNotActiveError", async () => {
      const model = holdReplies(h, () => done("ok"));
      const sessionId = await h.createSession();
      const running = await queue(h, sessionId, "running");
      const pending = await queue(h, sessionId, "pending");
      await model.held(1);
      expect(await steerFailure(h, sessionId, pending.turnId, "to the queued one")).toMatchObject({ status: 409, body: { _tag: "TurnNotActiveError" } });
      expect(await steerFailure(h, sessionId, randomUUID(), "to nobody")).toMatchObject({ status: 409, body: { _tag: "TurnNotActiveError" } });
      // A Turn of another Session is not this Session's running Turn.
      const other = await h.createSession();
      expect(await steerFailure(h, other, running.turnId, "cross-session")).toMatchObject({ status: 409, body: { _tag: "TurnNotActiveError" } });
      model.release(1);
      await runToEnd(h, sessionId, running.turnId);
      expect((await getTurn(h, sessionId, running.turnId)).steering.gate).toBe("closed");
      expect(await steerFailure(h, sessionId, running.turnId, "too late")).toMatchObject({ status: 409, body: { _tag: "TurnNotActiveError" } });
      await model.held(2);
      model.release(2);
      await runToEnd(h, sessionId, pending.turnId);
      expect((await getTurn(h, sessionId, running.turnId)).steering.steers).toEqual([]);
    });

    it("marks a steer that never reached the model undelivered with turn_cancelled when the Turn is cancelled", async () => {
      h.model.enqueue({ hang: true });
      const expected = h.model.requests.length + 1;
      const sessionId = await h.createSession();
      const { turnId } = await queue(h, sessionId, "Hang");
      await h.model.waitForRequest(expected);
      const receipt = await steer(h, sessionId, turnId, "never delivered");
      await cancel(h, sessionId, turnId, "stop");
      const { turn } = await runToEnd(h, sessionId, turnId);
      expect(turn.phase).toBe("cancelled");
      expect(turn.steering.gate).toBe("closed");
      expect(turn.steering.steers).toEqual([
        expect.objectContaining({ steerId: receipt.steerId, state: { state: "undelivered", reason: "turn_cancelled", undeliveredAt: expect.any(Number) } }),
      ]);
      expect(turn.parts.filter((part) => part.type === "steering")).toEqual([]);
    });
  });
});

// Node only: the tool reads a disk file outside the workdir (external_directory asks); the Worker has no disk.
describe("steering while a permission request holds the Turn (Node host)", () => {
  let disk: ModelHarness;
  beforeAll(async () => {
    disk = await startModelHarness();
  });
  afterAll(async () => {
    await disk?.close();
  });

  it("promotes a steer that arrived while a permission request held the Turn, after the tool result", async () => {
    const outside = join(disk.home.dir, "steer-outside");
    mkdirSync(outside, { recursive: true });
    writeFileSync(join(outside, "f.txt"), "outside file\n");
    const before = disk.model.requests.length;
    disk.model.enqueue({ events: [{ type: "tool_call", name: "read", arguments: { filePath: join(outside, "f.txt") } }] }, done("Both handled."));
    const sessionId = await disk.createSession();
    const { turnId } = await queue(disk, sessionId, "Read the file");
    const asked = await waitForTurnEvent(disk, sessionId, turnId, "turn.approval.requested");
    const receipt = await steer(disk, sessionId, turnId, "And then STEER-B2.");
    await ok(replyPermission(disk, sessionId, asked.request.id, "once"));
    const { turn } = await runToEnd(disk, sessionId, turnId);
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "Both handled." });
    expect(turn.parts.map((part) => part.type)).toEqual(["tool", "steering", "text"]);
    const body = seen(disk.model.requests[before + 1]);
    expect(body).toContain("STEER-B2");
    expect(body.indexOf("outside file")).toBeLessThan(body.indexOf("STEER-B2"));
    expect(turn.steering.steers[0]).toMatchObject({ steerId: receipt.steerId, state: { state: "promoted", batch: 1 } });
  });
});

// Node only: steering.maxBatches is a config.json key; the Worker has no variable for it.
describe("steering limits", () => {
  let limited: ModelHarness;
  beforeAll(async () => {
    limited = await startModelHarness({ config: { steering: { maxBatches: { kind: "finite", value: 1 } } } });
  });
  afterAll(async () => {
    await limited.close();
  });

  it("closes the gate after the last allowed batch: later steers are 409 TurnNotSteerableError", async () => {
    const model = holdReplies(limited, (_request, index) => done(`answer ${index}`));
    const sessionId = await limited.createSession();
    const { turnId } = await queue(limited, sessionId, "Go");
    await model.held(1);
    await steer(limited, sessionId, turnId, "the only batch");
    model.release(1);
    await model.held(2);
    const turn = await getTurn(limited, sessionId, turnId);
    expect(turn.phase).toBe("running");
    expect(turn.steering).toMatchObject({ gate: "closed", promotedBatchCount: 1 });
    expect(await steerFailure(limited, sessionId, turnId, "one more")).toMatchObject({ status: 409, body: { _tag: "TurnNotSteerableError" } });
    model.release(2);
    expect((await runToEnd(limited, sessionId, turnId)).turn.outcome).toMatchObject({ kind: "completed", text: "answer 2" });
  });
});
