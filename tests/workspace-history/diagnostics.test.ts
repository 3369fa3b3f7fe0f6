// Diagnostics and context over a real harness and the scripted test model: a retried 503 is a
// model-step failure, a final 400 also an execution failure; neither carries the provider body.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sdk, type DiagnosticsStreamEvent } from "../../clients/index.js";
import { failure, ok } from "../support/calls.js";
import { startModelHarness, type ModelHarness } from "../support/model.js";
import { openSse, queue, runToEnd, server, waitForTurnEvent } from "../turns/helpers.js";
import { diagnostics } from "../../services/storage/index.js";
import { forkCall } from "../history/helpers.js";
import { randomUUID } from "node:crypto";

let h: ModelHarness;
beforeAll(async () => {
  h = await startModelHarness();
});
afterAll(async () => {
  await h.close();
});

const SECRET = "provider-body-secret-4711";

describe("diagnostics", () => {
  it("pages execution and model-step failures newest first under a fence, without provider bodies, and the watch announces each revision", async () => {
    const sessionId = await h.createSession();
    const path = `/v1/servers/${server}/sessions/${sessionId}/diagnostics/events`;
    const stream = await openSse<DiagnosticsStreamEvent>(h.fetch, h.api.baseUrl, path);
    expect((await stream.next())!.data).toMatchObject({ type: "diagnostics.revision", revision: 0 });
    const errorBody = { error: { message: SECRET, type: "server_error" } };
    h.model.enqueue({ error: { status: 503, body: errorBody } }, { error: { status: 400, body: errorBody } });
    const { turnId } = await queue(h, sessionId, "fail please");
    const { turn } = await runToEnd(h, sessionId, turnId);
    expect(turn.phase).toBe("failed");
    await stream.until((event) => event.type === "diagnostics.revision" && event.revision === 3, "revision 3");
    stream.close();

    const page = await ok(sdk.diagnostics({ client: h.api.client, path: { server, sessionId } }));
    expect(page.through).toBe(3);
    expect(page.diagnostics.map((item) => [item.sequence, item.kind, item.attempt ?? null, item.turnId])).toEqual([
      [3, "execution", null, turnId],
      [2, "model_step", 2, turnId],
      [1, "model_step", 1, turnId],
    ]);
    expect(page.diagnostics[0]!.cause.code).toMatch(/^provider_/);
    expect(page.diagnostics[0]!.eventRevision).toBe(turn.revision);
    expect(JSON.stringify(page)).not.toContain(SECRET);

    // Pages of one under the same fence, then a later failure stays out of them.
    const first = await ok(sdk.diagnostics({ client: h.api.client, path: { server, sessionId }, query: { limit: "2" } }));
    expect(first.nextBefore).toBe(2);
    h.model.enqueue({ error: { status: 400 } });
    const later = await queue(h, sessionId, "fail again");
    await runToEnd(h, sessionId, later.turnId);
    const rest = await ok(sdk.diagnostics({ client: h.api.client, path: { server, sessionId }, query: { limit: "2", through: "3", beforeSequence: "2" } }));
    expect(rest.diagnostics.map((item) => item.sequence)).toEqual([1]);
    expect(rest.nextBefore).toBeNull();
    expect((await ok(sdk.diagnostics({ client: h.api.client, path: { server, sessionId } }))).through).toBe(5);

    // A fork does not inherit its source's failures.
    const forked = randomUUID();
    await ok(forkCall(h, sessionId, forked));
    expect((await ok(sdk.diagnostics({ client: h.api.client, path: { server, sessionId: forked } }))).diagnostics).toEqual([]);
  });

  it("refuses bad input", async () => {
    const sessionId = await h.createSession();
    expect(await failure(sdk.diagnostics({ client: h.api.client, path: { server, sessionId }, query: { through: "1" } }))).toMatchObject({ status: 400 });
    expect(await failure(sdk.diagnostics({ client: h.api.client, path: { server, sessionId }, query: { beforeSequence: "0" } }))).toMatchObject({ status: 400 });
    expect(await failure(sdk.diagnostics({ client: h.api.client, path: { server, sessionId: randomUUID() } }))).toMatchObject({ status: 404 });
    expect(await failure(sdk.context({ client: h.api.client, path: { server, sessionId }, query: { through: "1" } }))).toMatchObject({ status: 400 });
    expect(await failure(sdk.context({ client: h.api.client, path: { server, sessionId }, query: { through: "x" } }))).toMatchObject({ status: 400 });
    expect(await failure(sdk.context({ client: h.api.client, path: { server, sessionId: randomUUID() } }))).toMatchObject({ status: 404 });
    const watch = await h.fetch(new Request(new URL(`/v1/servers/${server}/sessions/${randomUUID()}/diagnostics/events`, h.api.baseUrl)));
    expect(watch.status).toBe(404);
  });
});

describe("context", () => {
  it("reports the latest prepared Main request by role and tool schema, with estimates beside reported usage, pinnable with through", async () => {
    const sessionId = await h.createSession({ systemPrompt: "Be terse." });
    expect(await ok(sdk.context({ client: h.api.client, path: { server, sessionId } }))).toEqual({ sessionId, through: 0, request: null });
    h.model.enqueue(
      { events: [{ type: "tool_call", name: "read", arguments: { filePath: "nothing.txt" } }], usage: { promptTokens: 321, completionTokens: 5 } },
      { events: [{ type: "text", text: "done" }] },
    );
    const { turnId } = await queue(h, sessionId, "read nothing.txt");
    await runToEnd(h, sessionId, turnId);
    const latest = await ok(sdk.context({ client: h.api.client, path: { server, sessionId } }));
    expect(latest.through).toBe(2);
    const request = latest.request!;
    expect(request).toMatchObject({ sequence: 2, turnId, model: "test/scripted", turnPhase: "completed", estimator: "utf16-chars/4", contextUnits: 200000 });
    expect(request.groups.map((group) => [group.role, group.messages])).toEqual([
      ["system", 1],
      ["user", 1],
      ["assistant", 1],
      ["tool", 1],
    ]);
    expect(request.tools.map((tool) => tool.name)).toContain("read");
    const total = request.groups.reduce((sum, group) => sum + group.estimatedTokens, 0);
    expect(request.estimatedInputTokens).toBeGreaterThanOrEqual(total);
    expect(request.reportedInputTokens).toBeGreaterThan(0);
    const pinned = await ok(sdk.context({ client: h.api.client, path: { server, sessionId }, query: { through: "1" } }));
    expect(pinned.request).toMatchObject({ sequence: 1, reportedInputTokens: 321 });
    expect(pinned.request!.groups.map((group) => group.role)).toEqual(["system", "user"]);
    // Copied history is not a request the fork executed.
    const forked = randomUUID();
    await ok(forkCall(h, sessionId, forked));
    expect((await ok(sdk.context({ client: h.api.client, path: { server, sessionId: forked } }))).request).toBeNull();
  });

  it("includes the request of a Turn still running, and reports a missing measurement as null", async () => {
    const sessionId = await h.createSession({ permissions: [{ action: "read", resource: "*", effect: "ask" }] });
    h.model.enqueue({ events: [{ type: "tool_call", name: "read", arguments: { filePath: "held.txt" } }] });
    const { turnId } = await queue(h, sessionId, "wait for approval");
    await waitForTurnEvent(h, sessionId, turnId, "turn.approval.requested");
    const running = await ok(sdk.context({ client: h.api.client, path: { server, sessionId } }));
    expect(running.request).toMatchObject({ sequence: 1, turnId, turnPhase: "running", reportedInputTokens: expect.any(Number) });
    await ok(sdk.cancelTurn({ client: h.api.client, path: { server, sessionId, turnId }, body: {} }));

    // A request whose provider never reported usage (recorded directly, as a stream cut before its usage leaves it).
    await diagnostics.insertContext(h.harness.storage, { sessionId, turnId, model: "test/scripted", report: { groups: [], tools: [], estimatedInputTokens: 3, contextUnits: null }, preparedAt: 1 });
    const unmeasured = await ok(sdk.context({ client: h.api.client, path: { server, sessionId } }));
    expect(unmeasured.request).toMatchObject({ sequence: 2, reportedInputTokens: null, contextUnits: null, estimatedInputTokens: 3 });
  });
});
