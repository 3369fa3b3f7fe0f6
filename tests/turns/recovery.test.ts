// Crash recovery over real processes: a `serve` running a Turn is SIGKILLed mid model call; a
// new `serve` on the same database settles that Turn as failed (`process_lost`), marks its
// accepted steer undelivered, and runs the Turn queued behind it exactly once; a lost Turn whose
// workdir state before it was left unmarked gets its empty patch from that recovery.
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { TurnStreamEvent } from "../../clients/index.js";
import { assertBuilt } from "../support/cli.js";
import { sdk } from "../../clients/index.js";
import { ok } from "../support/calls.js";
import { createSession, getTurn, processResources, queue, runToEnd, server, steer, watchTurn } from "./helpers.js";

beforeAll(() => {
  assertBuilt();
});

const { setup, serve } = processResources("ze-turn-crash-");

describe("a serve process killed mid-Turn", () => {
  it("settles the lost Turn as failed process_lost in the next process and runs the queued Turn once", async () => {
    const { home, model, database } = await setup();
    model.enqueue({ hang: true }, { events: [{ type: "text", text: "The queued Turn ran." }] });

    const first = await serve(home, model, database);
    const sessionId = await createSession(first);
    const lost = await queue(first, sessionId, "This one hangs");
    const queued = await queue(first, sessionId, "This one waits");
    await model.waitForRequest(1);
    expect((await getTurn(first, sessionId, lost.turnId)).phase).toBe("running");
    const accepted = await steer(first, sessionId, lost.turnId, "a steer that will never arrive");
    expect((await getTurn(first, sessionId, queued.turnId)).phase).toBe("pending");

    // A watcher on the first process sees its connection end when the process dies.
    const doomed = await watchTurn(first, sessionId, lost.turnId, null);
    expect((await doomed.next())?.data.type).toBe("turn.snapshot");
    expect(await first.process.stop("SIGKILL")).toBeNull();
    await expect(doomed.rest()).rejects.toThrow();

    const second = await serve(home, model, database);
    // Resume the Turn stream on the new process from the last revision seen before the crash.
    const resumed = await watchTurn(second, sessionId, lost.turnId, Number(doomed.messages.at(-1)!.id));
    const events = (await resumed.rest()) as TurnStreamEvent[];
    const finished = events.filter((event): event is Extract<TurnStreamEvent, { type: "turn.finished" }> => event.type === "turn.finished");
    expect(finished).toHaveLength(1);
    expect(finished[0]!.outcome).toMatchObject({ kind: "failed", turnId: lost.turnId, fault: { code: "process_lost" } });

    const settled = await getTurn(second, sessionId, lost.turnId);
    expect(settled.phase).toBe("failed");
    expect(settled.steering.gate).toBe("closed");
    expect(settled.steering.steers).toEqual([
      expect.objectContaining({ steerId: accepted.steerId, state: { state: "undelivered", reason: "process_lost", undeliveredAt: expect.any(Number) } }),
    ]);

    const { turn } = await runToEnd(second, sessionId, queued.turnId);
    expect(turn.outcome).toEqual({ kind: "completed", turnId: queued.turnId, text: "The queued Turn ran." });
    // Never run twice: one request for the lost Turn, one for the queued Turn.
    expect(model.requests).toHaveLength(2);
    expect(JSON.stringify(model.requests[1]!.body)).toContain("This one waits");
    // The undelivered steer never reached any model request.
    expect(JSON.stringify(model.requests[1]!.body)).not.toContain("a steer that will never arrive");
  });

  it("gives a Turn lost before its workdir state was marked its empty patch, so its rewind is not refused", async () => {
    // Outside a repository ("tools" recording) with nothing pending, a Turn's state before it is
    // the Session's unchanged manifest, left unmarked until a file tool writes; its settlement
    // writes its empty patch. The crash keeps the settlement from running: recovery writes it.
    const { home, model, database } = await setup();
    model.enqueue({ events: [{ type: "text", text: "First answer." }] }, { hang: true });
    const first = await serve(home, model, database);
    const sessionId = await createSession(first);
    const answered = await queue(first, sessionId, "Answer");
    await runToEnd(first, sessionId, answered.turnId);
    const lost = await queue(first, sessionId, "This one hangs");
    await model.waitForRequest(2);
    expect((await getTurn(first, sessionId, lost.turnId)).phase).toBe("running");
    expect(await first.process.stop("SIGKILL")).toBeNull();

    const second = await serve(home, model, database);
    const { turn } = await runToEnd(second, sessionId, lost.turnId);
    expect(turn.outcome).toMatchObject({ kind: "failed", fault: { code: "process_lost" } });
    const page = await ok(sdk.readPatch({ client: second.api.client, path: { server, sessionId, turnId: lost.turnId } }));
    expect(page.patch).toMatchObject({ turnId: lost.turnId, files: [], size: 0 });
    const { rewind } = await ok(sdk.rewindTurn({ client: second.api.client, path: { server, sessionId, turnId: lost.turnId }, body: {} }));
    expect(rewind).toMatchObject({ turnId: lost.turnId, turnIds: [lost.turnId], restored: [] });
  });

  it("settles a Turn lost while waiting on a permission request, failing its pending tool call", async () => {
    const { home, model, database } = await setup();
    const outside = join(home.dir, "elsewhere.txt");
    model.enqueue({ events: [{ type: "tool_call", name: "read", arguments: { filePath: outside } }] });
    const first = await serve(home, model, database);
    const sessionId = await createSession(first);
    const { turnId } = await queue(first, sessionId, "Read elsewhere");
    const stream = await watchTurn(first, sessionId, turnId, 0);
    await stream.until((event) => event.type === "turn.approval.requested", "the permission request");
    stream.close();
    await first.process.stop("SIGKILL");

    const second = await serve(home, model, database);
    const { events, turn } = await runToEnd(second, sessionId, turnId);
    expect(turn.outcome).toMatchObject({ kind: "failed", fault: { code: "process_lost" } });
    const tool = turn.parts.find((part) => part.type === "tool");
    expect(tool).toMatchObject({ state: "failed", fault: { code: "process_lost" } });
    expect(events.filter((event) => event.type === "turn.tool.completed")).toEqual([expect.objectContaining({ ok: false, part: tool })]);
    expect(model.requests).toHaveLength(1);
  });
});
