// How Turns end: completed (text, tool rounds, reasoning and refusals, usage), failed on
// non-retryable provider errors, retried provider errors, every limit the config can drive, and
// cancellation (pending, running, finished). Real hosts, real storage, real SDK paths: what only
// the API drives runs on the Node host and on the Worker host in workerd (tests/support/hosts.ts).
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { TurnStreamEvent } from "../../clients/index.js";
import { RESPONSE_CONTENT_LIMIT } from "../../services/providers/wire.js";
import { HOSTS, startModelHost, type ModelHost } from "../support/hosts.js";
import { startModelHarness, testProviderConfig, type ModelHarness, type ModelHarnessOptions } from "../support/model.js";
import { cancel, getTurn, holdReplies, queue, runToEnd, seen, steer, waitForTurnEvent } from "./helpers.js";

const harnesses: ModelHarness[] = [];
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.close();
});

async function start(options: ModelHarnessOptions = {}): Promise<ModelHarness> {
  const h = await startModelHarness(options);
  harnesses.push(h);
  return h;
}

const ofType = <K extends TurnStreamEvent["type"]>(events: TurnStreamEvent[], type: K) =>
  events.filter((event): event is Extract<TurnStreamEvent, { type: K }> => event.type === type);

let host: ModelHost;

describe.each(HOSTS)("on the %s host", (kind) => {
  beforeAll(async () => {
    host = await startModelHost(kind);
  }, 60_000);
  afterAll(async () => {
    await host?.close();
  });

  describe("completed Turns", () => {
    it("completes with the model's text, its usage on the Turn and on one turn.usage event", async () => {
      const h = host.fresh();
      h.model.enqueue({ events: [{ type: "text", text: "Hello there, world." }], usage: { promptTokens: 40, completionTokens: 6 } });
      const sessionId = await h.createSession();
      const { turnId } = await queue(h, sessionId, "Say hello");
      const { events, turn } = await runToEnd(h, sessionId, turnId);
      expect(turn.phase).toBe("completed");
      expect(turn.outcome).toEqual({ kind: "completed", turnId, text: "Hello there, world." });
      expect(turn.parts).toEqual([{ type: "text", id: expect.any(String), assistantMessageIndex: 0, text: "Hello there, world." }]);
      expect(turn.usage).toEqual({ promptTokens: 40, completionTokens: 6, totalTokens: 46 });
      expect(turn.startedAt).toBeGreaterThanOrEqual(turn.acceptedAt);
      expect(turn.completedAt).toBeGreaterThanOrEqual(turn.startedAt!);
      expect(turn.steering.gate).toBe("closed");
      expect(ofType(events, "turn.started")).toEqual([expect.objectContaining({ model: "test/scripted" })]);
      expect(ofType(events, "turn.usage").map((event) => event.usage)).toEqual([{ promptTokens: 40, completionTokens: 6, totalTokens: 46 }]);
      expect(h.model.requests).toHaveLength(1);
    });

    it("records reasoning, text and refusal parts; the outcome text has text and refusals, no reasoning", async () => {
      const h = host.fresh();
      h.model.enqueue({
        events: [
          { type: "reasoning", text: "The user wants something I should not do." },
          { type: "text", text: "Let me be clear. " },
          { type: "refusal", text: "I can't help with that." },
        ],
        usage: { promptTokens: 20, completionTokens: 30, reasoningTokens: 12 },
      });
      const sessionId = await h.createSession();
      const { turnId } = await queue(h, sessionId, "Do the bad thing");
      const { turn } = await runToEnd(h, sessionId, turnId);
      expect(turn.phase).toBe("completed");
      expect(turn.parts.map((part) => part.type)).toEqual(["reasoning", "text", "refusal"]);
      const [reasoning, visible, refusal] = turn.parts as [Extract<typeof turn.parts[number], { type: "reasoning" }>, { text: string }, { text: string }];
      expect(reasoning.text).toBe("The user wants something I should not do.");
      expect(reasoning.startedAt).toBeTypeOf("number");
      expect(reasoning.completedAt).toBeGreaterThanOrEqual(reasoning.startedAt!);
      expect(visible.text).toBe("Let me be clear. ");
      expect(refusal.text).toBe("I can't help with that.");
      expect(turn.outcome).toEqual({ kind: "completed", turnId, text: "Let me be clear. I can't help with that." });
      expect(turn.usage).toEqual({ promptTokens: 20, completionTokens: 30, totalTokens: 50, reasoningCompletionTokens: 12 });
    });
  });

  describe("failed Turns and retries", () => {
    it.each([
      [400, "provider_bad_request"],
      [401, "provider_auth"],
    ])("a provider %i fails the Turn at once with %s", async (status, code) => {
      const h = host.fresh();
      h.model.enqueue({ error: { status } });
      const sessionId = await h.createSession();
      const { turnId } = await queue(h, sessionId, "Hello");
      const { turn } = await runToEnd(h, sessionId, turnId);
      expect(turn.phase).toBe("failed");
      expect(turn.outcome).toMatchObject({ kind: "failed", turnId, fault: { code } });
      expect(h.model.requests).toHaveLength(1);
    });

    it("fails a response that streams more than RESPONSE_CONTENT_LIMIT characters as provider_too_large, keeping what came before, never retried", async () => {
      const h = host.fresh();
      // Each event within the 1 MiB event bound; together past 8 Mi characters, and the model would go on.
      const piece = "z".repeat(1_000_000);
      h.model.enqueue({ events: Array.from({ length: 40 }, () => ({ type: "text" as const, text: piece })) }, { events: [{ type: "text", text: "never" }] });
      const sessionId = await h.createSession();
      const { turnId } = await queue(h, sessionId, "Hello");
      const { turn } = await runToEnd(h, sessionId, turnId);
      expect(turn.phase).toBe("failed");
      expect(turn.outcome).toMatchObject({ kind: "failed", turnId, fault: { code: "provider_too_large", message: expect.stringContaining(`exceeds ${RESPONSE_CONTENT_LIMIT} characters of content`) } });
      expect(h.model.requests).toHaveLength(1);
      const kept = turn.parts.reduce((sum, part) => sum + ("text" in part ? part.text.length : 0), 0);
      expect(kept).toBeGreaterThan(0);
      expect(kept).toBeLessThanOrEqual(RESPONSE_CONTENT_LIMIT);
    });

    it("retries an attempt the provider rejected with 500 before output, then completes", async () => {
      const h = host.fresh();
      h.model.enqueue({ error: { status: 500 } }, { events: [{ type: "text", text: "Recovered." }] });
      const sessionId = await h.createSession();
      const { turnId } = await queue(h, sessionId, "Hello");
      const { turn } = await runToEnd(h, sessionId, turnId);
      expect(turn.outcome).toEqual({ kind: "completed", turnId, text: "Recovered." });
      expect(h.model.requests).toHaveLength(2);
      expect(h.model.requests[1]!.body).toEqual(h.model.requests[0]!.body);
    });

    it.each([
      ["a 429 with retry-after", { error: { status: 429, headers: { "retry-after": "0" } } }],
      ["a 503", { error: { status: 503 } }],
      ["a connection dropped before any response", { events: [{ type: "drop" as const }] }],
    ])("retries %s and completes", async (_name, rejected) => {
      const h = host.fresh();
      h.model.enqueue(rejected, { events: [{ type: "text", text: "Second time lucky." }] });
      const sessionId = await h.createSession();
      const { turnId } = await queue(h, sessionId, "Hello");
      const { turn } = await runToEnd(h, sessionId, turnId);
      expect(turn.outcome).toEqual({ kind: "completed", turnId, text: "Second time lucky." });
      expect(h.model.requests).toHaveLength(2);
    });

    it("does not retry an attempt that failed after output (a dropped stream)", async () => {
      const h = host.fresh();
      h.model.enqueue({ events: [{ type: "text", text: "Partial answer" }, { type: "drop" }] }, { events: [{ type: "text", text: "never" }] });
      const sessionId = await h.createSession();
      const { turnId } = await queue(h, sessionId, "Hello");
      const { turn } = await runToEnd(h, sessionId, turnId);
      expect(turn.phase).toBe("failed");
      expect(turn.outcome).toMatchObject({ kind: "failed", fault: { code: expect.stringMatching(/^provider_/) } });
      expect(h.model.requests).toHaveLength(1);
      // The text streamed before the cut is kept.
      expect(turn.parts).toEqual([expect.objectContaining({ type: "text", text: "Partial answer" })]);
    });
  });

  describe("approval.timeoutMs (Node config approval.timeoutMs, Worker HARNESS_APPROVAL_TIMEOUT_MS)", () => {
    let timed: ModelHost;
    beforeAll(async () => {
      timed = await startModelHost(kind, { approvalTimeoutMs: 300 });
    }, 60_000);
    afterAll(async () => {
      await timed?.close();
    });

    it("an unanswered permission request (a .env read asks) ends the Turn as approval_wait", async () => {
      const h = timed.fresh();
      h.model.enqueue({ events: [{ type: "tool_call", name: "read", arguments: { filePath: "never-read.env" } }] });
      const sessionId = await h.createSession();
      const { turnId } = await queue(h, sessionId, "Read the env file");
      const { events, turn } = await runToEnd(h, sessionId, turnId);
      expect(turn.outcome).toMatchObject({ kind: "limit_reached", limit: { name: "approval_wait", origin: "configured", value: 300, unit: "milliseconds" } });
      expect(ofType(events, "turn.approval.requested")).toHaveLength(1);
      expect(ofType(events, "turn.approval.resolved")).toEqual([expect.objectContaining({ decision: "deny", source: "timeout" })]);
      const tool = turn.parts.find((part) => part.type === "tool")!;
      expect(tool).toMatchObject({ state: "denied", fault: { code: "approval_timeout" }, approval: { state: "resolved", decision: "deny", source: "timeout" } });
      expect(h.model.requests).toHaveLength(1);
    });
  });

  describe("cancelled Turns", () => {
    it("cancels a pending Turn queued behind a running one; it never reaches the model", async () => {
      const h = host.fresh();
      h.model.enqueue({ hang: true });
      const sessionId = await h.createSession();
      const first = await queue(h, sessionId, "First");
      const second = await queue(h, sessionId, "Second");
      await h.model.waitForRequest(1);
      expect((await getTurn(h, sessionId, second.turnId)).phase).toBe("pending");
      const cancelled = await cancel(h, sessionId, second.turnId, "not needed");
      expect(cancelled.phase).toBe("cancelled");
      expect(cancelled.outcome).toEqual({ kind: "cancelled", turnId: second.turnId, reason: "not needed" });
      expect(cancelled.cancellation).toEqual({ reason: "not needed", requestedAt: expect.any(Number) });
      expect(cancelled.startedAt).toBeUndefined();
      // Like every settled Turn, it accepts no steering input.
      expect(cancelled.steering.gate).toBe("closed");
      expect((await getTurn(h, sessionId, first.turnId)).phase).toBe("running");
      const { events } = await runToEnd(h, sessionId, second.turnId);
      expect(events.map((event) => event.type)).toEqual(["turn.snapshot", "turn.finished"]);
      await cancel(h, sessionId, first.turnId);
      await runToEnd(h, sessionId, first.turnId);
      expect(h.model.requests).toHaveLength(1);
    });

    it("cancels a running Turn during a hanging model call with its reason", async () => {
      const h = host.fresh();
      h.model.enqueue({ hang: true });
      const sessionId = await h.createSession();
      const { turnId } = await queue(h, sessionId, "Hello");
      await h.model.waitForRequest(1);
      const recorded = await cancel(h, sessionId, turnId, "changed my mind");
      expect(recorded.cancellation).toEqual({ reason: "changed my mind", requestedAt: expect.any(Number) });
      const { turn } = await runToEnd(h, sessionId, turnId);
      expect(turn.phase).toBe("cancelled");
      expect(turn.outcome).toEqual({ kind: "cancelled", turnId, reason: "changed my mind" });
      expect(turn.steering.gate).toBe("closed");
      expect(h.model.requests).toHaveLength(1);
    });

    it("cancel is idempotent: on a finished Turn it returns the Turn unchanged", async () => {
      const h = host.fresh();
      h.model.enqueue({ events: [{ type: "text", text: "Done." }] });
      const sessionId = await h.createSession();
      const { turnId } = await queue(h, sessionId, "Hello");
      const { turn } = await runToEnd(h, sessionId, turnId);
      const again = await cancel(h, sessionId, turnId, "too late");
      expect(again).toEqual(turn);
      expect(await cancel(h, sessionId, turnId)).toEqual(turn);
    });

    it("a second cancel of a running Turn keeps the first request", async () => {
      const h = host.fresh();
      h.model.enqueue({ hang: true });
      const sessionId = await h.createSession();
      const { turnId } = await queue(h, sessionId, "Hello");
      await h.model.waitForRequest(1);
      await cancel(h, sessionId, turnId, "first");
      await cancel(h, sessionId, turnId, "second");
      const finished = await waitForTurnEvent(h, sessionId, turnId, "turn.finished");
      expect(finished.outcome).toEqual({ kind: "cancelled", turnId, reason: "first" });
    });
  });
});

// Node only: the file the tools wrote is read back from the disk.
describe("completed Turns (Node host)", () => {
  it("runs several tool rounds (write, edit, read) and sums usage over the model requests", async () => {
    const h = await start();
    h.model.enqueue(
      { events: [{ type: "tool_call", name: "write", arguments: { filePath: "notes/a.txt", content: "alpha\n" } }], usage: { promptTokens: 100, completionTokens: 10 } },
      { events: [{ type: "tool_call", name: "edit", arguments: { filePath: "notes/a.txt", oldString: "alpha", newString: "beta" } }], usage: { promptTokens: 200, completionTokens: 20 } },
      { events: [{ type: "text", text: "Reading back." }, { type: "tool_call", name: "read", arguments: { filePath: "notes/a.txt" } }], usage: { promptTokens: 300, completionTokens: 30, cachedPromptTokens: 50 } },
      { events: [{ type: "text", text: "The file says beta." }], usage: { promptTokens: 400, completionTokens: 40 } },
    );
    const sessionId = await h.createSession();
    const { turnId } = await queue(h, sessionId, "Write, edit and read a file");
    const { events, turn } = await runToEnd(h, sessionId, turnId);
    expect(turn.outcome).toEqual({ kind: "completed", turnId, text: "The file says beta." });
    expect(readFileSync(join(h.home.root, "notes", "a.txt"), "utf8")).toBe("beta\n");
    const tools = turn.parts.filter((part) => part.type === "tool");
    expect(tools.map((part) => [part.toolId, part.state, part.assistantMessageIndex])).toEqual([
      ["write", "completed", 0],
      ["edit", "completed", 1],
      ["read", "completed", 2],
    ]);
    expect(turn.parts.map((part) => part.type)).toEqual(["tool", "tool", "text", "tool", "text"]);
    // Each later request carried the earlier tool results.
    expect(h.model.requests).toHaveLength(4);
    expect(seen(h.model.requests[3])).toContain("beta");
    // Usage: one non-cumulative event per attempt, the Turn holds the sum.
    expect(ofType(events, "turn.usage").map((event) => event.usage.totalTokens)).toEqual([110, 220, 330, 440]);
    expect(turn.usage).toEqual({ promptTokens: 1000, completionTokens: 100, totalTokens: 1100, cachedPromptTokens: 50 });
    expect(ofType(events, "turn.tool.completed").map((event) => [event.toolId, event.ok])).toEqual([
      ["write", true],
      ["edit", true],
      ["read", true],
    ]);
    // No approvals were needed inside the workdir.
    expect(ofType(events, "turn.approval.requested")).toEqual([]);
  });

});

// Node only: these limits are config.json keys the Worker has no variables for (approval.timeoutMs
// has one: its host-neutral scenario is above; this one reads a disk file outside the workdir).
describe("limits", () => {
  const limitOf = (turn: Awaited<ReturnType<typeof getTurn>>) => {
    expect(turn.outcome?.kind).toBe("limit_reached");
    return turn.outcome as Extract<NonNullable<typeof turn.outcome>, { kind: "limit_reached" }>;
  };

  it("provider.maxAttempts: repeated 500s end as provider_attempts", async () => {
    const h = await start({ config: { provider: { maxAttempts: { kind: "finite", value: 2 } } } });
    h.model.enqueue({ error: { status: 500 } }, { error: { status: 503 } }, { events: [{ type: "text", text: "too late" }] });
    const sessionId = await h.createSession();
    const { turnId } = await queue(h, sessionId, "Hello");
    const { turn } = await runToEnd(h, sessionId, turnId);
    const outcome = limitOf(turn);
    expect(outcome.limit).toEqual({ name: "provider_attempts", origin: "configured", value: 2, unit: "attempts" });
    expect(outcome.diagnostic.code).toBe("provider_attempts");
    expect(turn.phase).toBe("failed");
    expect(h.model.requests).toHaveLength(2);
  });

  it("provider.attemptTimeoutMs: hanging attempts time out, are retried, and end as provider_attempt_timeout", async () => {
    const h = await start({ config: { provider: { maxAttempts: { kind: "finite", value: 2 }, attemptTimeoutMs: { kind: "finite", value: 250 } } } });
    h.model.enqueue({ hang: true }, { hang: true });
    const sessionId = await h.createSession();
    const { turnId } = await queue(h, sessionId, "Hello");
    const { turn } = await runToEnd(h, sessionId, turnId);
    expect(limitOf(turn).limit).toEqual({ name: "provider_attempt_timeout", origin: "configured", value: 250, unit: "milliseconds" });
    expect(h.model.requests).toHaveLength(2);
  });

  it("provider.elapsedMs: a model request past its elapsed budget ends as provider_elapsed", async () => {
    const h = await start({ config: { provider: { elapsedMs: { kind: "finite", value: 250 } } } });
    h.model.enqueue({ hang: true });
    const sessionId = await h.createSession();
    const { turnId } = await queue(h, sessionId, "Hello");
    const { turn } = await runToEnd(h, sessionId, turnId);
    expect(limitOf(turn).limit).toEqual({ name: "provider_elapsed", origin: "configured", value: 250, unit: "milliseconds" });
    expect(h.model.requests).toHaveLength(1);
  });

  it("timeouts.turnMs: a Turn whose model hangs ends as turn_elapsed", async () => {
    const h = await start({ config: { timeouts: { turnMs: { kind: "finite", value: 300 } } } });
    h.model.enqueue({ hang: true });
    const sessionId = await h.createSession();
    const { turnId } = await queue(h, sessionId, "Hello");
    const { turn } = await runToEnd(h, sessionId, turnId);
    const outcome = limitOf(turn);
    expect(outcome.limit).toEqual({ name: "turn_elapsed", origin: "configured", value: 300, unit: "milliseconds" });
    expect(turn.completedAt! - turn.startedAt!).toBeGreaterThanOrEqual(300);
    expect(turn.policy.timeouts.turnMs).toEqual({ kind: "finite", value: 300, origin: "configured" });
  });

  it("approval.timeoutMs: an unanswered permission request ends as approval_wait", async () => {
    const h = await start({ config: { approval: { timeoutMs: { kind: "finite", value: 300 } } } });
    const outside = join(h.home.dir, "outside");
    mkdirSync(outside);
    writeFileSync(join(outside, "x.txt"), "x");
    h.model.enqueue({ events: [{ type: "tool_call", name: "read", arguments: { filePath: join(outside, "x.txt") } }] });
    const sessionId = await h.createSession();
    const { turnId } = await queue(h, sessionId, "Read the outside file");
    const { events, turn } = await runToEnd(h, sessionId, turnId);
    expect(limitOf(turn).limit).toEqual({ name: "approval_wait", origin: "configured", value: 300, unit: "milliseconds" });
    expect(ofType(events, "turn.approval.requested")).toHaveLength(1);
    expect(ofType(events, "turn.approval.resolved")).toEqual([expect.objectContaining({ decision: "deny", source: "timeout" })]);
    const tool = turn.parts.find((part) => part.type === "tool")!;
    expect(tool.approval).toMatchObject({ state: "resolved", decision: "deny", source: "timeout" });
    expect(tool.state).toBe("denied");
    expect(tool.fault).toMatchObject({ code: "approval_timeout" });
    expect(ofType(events, "turn.tool.completed")).toEqual([expect.objectContaining({ ok: false, partId: tool.id })]);
    expect(h.model.requests).toHaveLength(1);
  });

  it("steering.maxBatches: steering past the batch limit ends as steering_batches", async () => {
    const h = await start({ config: { steering: { maxBatches: { kind: "finite", value: 0 } } } });
    const model = holdReplies(h, () => ({ events: [{ type: "text", text: "done" }] }));
    const sessionId = await h.createSession();
    const { turnId } = await queue(h, sessionId, "Hello");
    await model.held(1);
    const receipt = await steer(h, sessionId, turnId, "also this");
    model.release(1);
    const { turn } = await runToEnd(h, sessionId, turnId);
    expect(limitOf(turn).limit).toEqual({ name: "steering_batches", origin: "configured", value: 0, unit: "batches" });
    expect(turn.steering.steers).toEqual([
      expect.objectContaining({ steerId: receipt.steerId, state: { state: "undelivered", reason: "turn_failed", undeliveredAt: expect.any(Number) } }),
    ]);
    expect(h.model.requests).toHaveLength(1);
  });

  it("model_context: a request that cannot fit the model's context window is refused before any model call", async () => {
    const h = await start({ config: (model) => ({ providers: testProviderConfig(model, "chat", { contextUnits: 2000, outputUnits: 500 }) }) });
    const sessionId = await h.createSession();
    const { turnId } = await queue(h, sessionId, "Hello");
    const { turn } = await runToEnd(h, sessionId, turnId);
    const limit = limitOf(turn).limit;
    expect(limit).toMatchObject({ name: "model_context", value: 2000, unit: "model_units", outputReserveUnits: 500, safetyReserveUnits: 1024, availableInputUnits: 476 });
    expect((limit as { estimatedInputUnits: number }).estimatedInputUnits).toBeGreaterThan(476);
    expect(h.model.requests).toHaveLength(0);
  });
});

// Node only: a read of a disk path outside the workdir (it asks), and a shell command (a process).
describe("cancelled Turns (Node host)", () => {
  it("cancels a Turn waiting on a permission request; the tool call settles as interrupted on the stream", async () => {
    const h = await start();
    h.model.enqueue({ events: [{ type: "tool_call", name: "read", arguments: { filePath: join(h.home.dir, "elsewhere.txt") } }] });
    const sessionId = await h.createSession();
    const { turnId } = await queue(h, sessionId, "Read elsewhere");
    await waitForTurnEvent(h, sessionId, turnId, "turn.approval.requested");
    await cancel(h, sessionId, turnId, "never mind");
    const { events, turn } = await runToEnd(h, sessionId, turnId);
    expect(turn.outcome).toEqual({ kind: "cancelled", turnId, reason: "never mind" });
    const tool = turn.parts.find((part) => part.type === "tool")!;
    expect(tool).toMatchObject({ state: "failed", fault: { code: "interrupted" } });
    // The pending request does not outlive the Turn: it resolves as denied by the Turn's end.
    expect(tool.type === "tool" && tool.approval).toMatchObject({ state: "resolved", decision: "deny", source: "terminal" });
    expect(ofType(events, "turn.approval.resolved")).toEqual([expect.objectContaining({ decision: "deny", source: "terminal" })]);
    const completed = ofType(events, "turn.tool.completed");
    expect(completed).toEqual([expect.objectContaining({ ok: false, partId: tool.id, part: tool })]);
    expect(events.indexOf(completed[0]!)).toBe(events.length - 2);
    expect(h.model.requests).toHaveLength(1);
  });

  it("cancels a Turn while its shell tool runs: the command is stopped and the call settles as interrupted", async () => {
    const h = await start();
    h.model.enqueue({ events: [{ type: "tool_call", name: "shell", arguments: { command: "echo started; sleep 30" } }] });
    const sessionId = await h.createSession();
    const { turnId } = await queue(h, sessionId, "Run something slow");
    await waitForTurnEvent(h, sessionId, turnId, "turn.tool.activity");
    const cancelledAt = Date.now();
    await cancel(h, sessionId, turnId);
    const { events, turn } = await runToEnd(h, sessionId, turnId);
    expect(Date.now() - cancelledAt).toBeLessThan(10_000);
    expect(turn.phase).toBe("cancelled");
    expect(turn.outcome).toEqual({ kind: "cancelled", turnId });
    expect(turn.parts.find((part) => part.type === "tool")).toMatchObject({ toolId: "shell", state: "failed", fault: { code: "interrupted" } });
    expect(ofType(events, "turn.tool.completed")).toEqual([expect.objectContaining({ ok: false, toolId: "shell" })]);
  });

});
