// The workspace history operations over HTTP against a real `serve` process (the built binary),
// the test model in this process, through the generated client and its resumable watchers.
// Run `npm run build` first.
import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it, vi } from "vitest";
import { sdk, watchDiagnostics, watchHistory, type HistoryRow, type HistoryStreamEvent } from "../../clients/index.js";
import { startTestModel } from "../../tools/test-model/index.js";
import { assertBuilt } from "../support/cli.js";
import { ok } from "../support/calls.js";
import { tempHome } from "../support/harness.js";
import { createSession, queue, runToEnd, serveWithModel, server } from "../turns/helpers.js";
import { appendEntry, forkCall } from "../history/helpers.js";

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Runs `watchHistory` until `done` says so; returns the events and the position it resolved. */
async function watchUntil(served: Parameters<typeof createSession>[0], sessionId: string, after: { sourceSequence: number; itemIndex: number } | undefined, done: (events: HistoryStreamEvent[]) => boolean, act: () => Promise<void>) {
  const controller = new AbortController();
  const events: HistoryStreamEvent[] = [];
  let resolveDone!: () => void;
  const reached = new Promise<void>((resolve) => (resolveDone = resolve));
  const watching = watchHistory(served.api, {
    server,
    sessionId,
    after,
    signal: controller.signal,
    onEvent: (event) => {
      events.push(event);
      if (done(events)) resolveDone();
    },
  });
  await act();
  await reached;
  controller.abort();
  return { events, position: await watching };
}

const rowsOf = (events: HistoryStreamEvent[]): HistoryRow[] => events.flatMap((event) => (event.type === "history.rows" ? event.rows : []));

describe("workspace history over a real serve", () => {
  it("watches rows with a resumable client, searches one Session and the server, and a fork keeps the history", async () => {
    assertBuilt();
    const home = tempHome("ze-wshistory-serve-");
    cleanups.push(() => home.cleanup());
    const model = await startTestModel();
    cleanups.push(() => model.close());
    const served = await serveWithModel(home, model, `${home.dir}/serve.db`);
    cleanups.push(() => served.process.stop("SIGKILL"));
    const sessionId = await createSession(served);

    model.enqueue({ events: [{ type: "text", text: "Served answer about Ölflaschen." }] });
    const first = await watchUntil(served, sessionId, undefined, (events) => rowsOf(events).length >= 3, async () => {
      await appendEntry(served, sessionId, "served entry");
      const { turnId } = await queue(served, sessionId, "served prompt");
      await runToEnd(served, sessionId, turnId);
    });
    expect(first.events[0]?.type).toBe("history.queue");
    expect(rowsOf(first.events).map((row) => row.body.text)).toEqual(["served entry", "served prompt", "Served answer about Ölflaschen."]);
    expect(first.position).toEqual({ sourceSequence: 2, itemIndex: 1 });

    // A new watch from the last nextAfter delivers only what followed.
    const second = await watchUntil(served, sessionId, first.position, (events) => rowsOf(events).length >= 1, () => appendEntry(served, sessionId, "after reconnect").then(() => undefined));
    expect(rowsOf(second.events).map((row) => [row.position, row.body.text])).toEqual([[{ sourceSequence: 3, itemIndex: 0 }, "after reconnect"]]);

    const found = await ok(sdk.search({ client: served.api.client, path: { server, sessionId }, query: { query: "ÖLFLASCHEN", caseSensitive: "false", wholeWord: "true" } }));
    expect(found.hits.map((hit) => [hit.position, hit.field, hit.byteOffset])).toEqual([[{ sourceSequence: 2, itemIndex: 1 }, "body", 20]]);
    const other = await createSession(served);
    await appendEntry(served, other, "another Ölflaschen mention");
    const everywhere = await ok(sdk.searchServer({ client: served.api.client, path: { server }, query: { query: "ölflaschen", caseSensitive: "false", wholeWord: "false" } }));
    expect(everywhere.hits.map((hit) => hit.sessionId)).toEqual([other, sessionId]);

    const forkedId = randomUUID();
    await ok(forkCall(served, sessionId, forkedId));
    const forkedRows = await ok(sdk.history_({ client: served.api.client, path: { server, sessionId: forkedId } }));
    expect(forkedRows.rows.map((row) => row.body.text)).toEqual(["served entry", "served prompt", "Served answer about Ölflaschen.", "after reconnect"]);

    // The diagnostics watcher announces the current revision on subscription.
    const controller = new AbortController();
    const revisions: number[] = [];
    let seen!: () => void;
    const announced = new Promise<void>((resolve) => (seen = resolve));
    const watching = watchDiagnostics(served.api, { server, sessionId, signal: controller.signal, onRevision: (revision) => (revisions.push(revision), seen()) });
    await announced;
    controller.abort();
    await watching;
    expect(revisions).toEqual([0]);
  });
});
