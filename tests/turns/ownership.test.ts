// Who runs a Turn when several hosts share one database: an embedded host (runner scope
// `owned`, as `--embedded` commands run) runs only the Sessions it operates on, holding their
// runner lease; a `serve` runs the rest. Proven with real `serve` processes and in-process
// embedded hosts on one file database: every accepted Turn completes exactly once, and no host
// fails or runs another's work.
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { createZeClient, sdk, type Turn, type TurnStreamEvent } from "../../clients/index.js";
import { createHarness, type Harness } from "../../services/host/harness.js";
import { openDatabase, turns } from "../../services/storage/index.js";
import { ok } from "../support/calls.js";
import { assertBuilt } from "../support/cli.js";
import type { TempHome } from "../support/harness.js";
import { createSession, getTurn, holdReplies, processResources, queue, runToEnd, server, type Api } from "./helpers.js";
import type { TestModel } from "../../tools/test-model/index.js";

beforeAll(() => {
  assertBuilt();
});

const { cleanups, setup, serve } = processResources("ze-turn-owners-", () => ({}));

/** An embedded host as `--embedded` commands open it: in-process, runner scope `owned`. */
async function embedded(home: TempHome, database: string): Promise<Api & { harness: Harness }> {
  const harness = await createHarness({ serverRoot: home.root, env: home.env, database, runnerScope: "owned" });
  cleanups.push(() => harness.close());
  return { harness, api: createZeClient({ baseUrl: "http://localhost", fetch: harness.fetch }), fetch: harness.fetch };
}

/** The text of the last user message the model was sent. */
const promptOf = (body: { messages?: { role: string; content: unknown }[] }): string => {
  const last = [...(body.messages ?? [])].reverse().find((message) => message.role === "user");
  return typeof last?.content === "string" ? last.content : JSON.stringify(last?.content ?? "");
};

/** Answers each request with `ran: <its prompt>`. */
const answerWithPrompt = (model: TestModel): void =>
  model.reply((request) => ({ events: [{ type: "text", text: `ran: ${promptOf(request.body)}` }] }));

const startedCount = (events: readonly TurnStreamEvent[]): number => events.filter((event) => event.type === "turn.started").length;

describe("Turns on a database shared by several hosts", () => {
  it("an embedded host leaves a stopped serve's queued Turns alone; the next serve runs them once", async () => {
    const { home, model, database } = await setup();
    const held = holdReplies({ model }, (request) => ({ events: [{ type: "text", text: `ran: ${promptOf(request.body)}` }] }));
    const first = await serve(home, model, database);
    const sessionA = await createSession(first);
    const running = await queue(first, sessionA, "a-one");
    await held.held(1);
    const waiting = [await queue(first, sessionA, "a-two"), await queue(first, sessionA, "a-three")];
    // A graceful stop ends the serve's own running Turn; the queued ones stay queued.
    expect(await first.process.stop("SIGTERM")).toBe(0);
    held.release(1);

    answerWithPrompt(model);
    const local = await embedded(home, database);
    const sessionB = await createSession(local);
    const mine = await queue(local, sessionB, "b-one");
    expect((await runToEnd(local, sessionB, mine.turnId)).turn.outcome).toMatchObject({ kind: "completed", text: "ran: b-one" });
    await local.harness.close();
    // The embedded host neither ran nor failed the serve's queued Turns: they wait, untouched.
    const reopened = await embedded(home, database);
    for (const receipt of waiting) expect((await getTurn(reopened, sessionA, receipt.turnId)).phase).toBe("pending");
    await reopened.harness.close();
    expect(model.requests.map((request) => promptOf(request.body))).toEqual(["a-one", "b-one"]);

    const second = await serve(home, model, database);
    expect((await getTurn(second, sessionA, running.turnId)).outcome).toMatchObject({ kind: "failed", fault: { code: "host_shutdown" } });
    for (const [index, receipt] of waiting.entries()) {
      const { events, turn } = await runToEnd(second, sessionA, receipt.turnId);
      expect(turn.outcome).toMatchObject({ kind: "completed", text: `ran: a-${index === 0 ? "two" : "three"}` });
      expect(startedCount(events)).toBe(1);
    }
    const prompts = model.requests.map((request) => promptOf(request.body));
    for (const prompt of ["a-two", "a-three", "b-one"]) expect(prompts.filter((seen) => seen === prompt)).toHaveLength(1);
  });

  it("ten embedded hosts beside a live serve: each runs its own Turn, the serve its own, every Turn exactly once", async () => {
    const { home, model, database } = await setup();
    answerWithPrompt(model);
    const live = await serve(home, model, database);
    const hosts = await Promise.all(Array.from({ length: 10 }, () => embedded(home, database)));
    const served = await createSession(live);
    const runs = await Promise.all(
      hosts.map(async (host, index) => {
        const sessionId = await createSession(host);
        const receipt = await queue(host, sessionId, `embedded-${index}`);
        return { host, sessionId, turnId: receipt.turnId, prompt: `embedded-${index}` };
      }),
    );
    const servedTurn = await queue(live, served, "served-one");
    const finished: Turn[] = [];
    for (const run of runs) {
      const { events, turn } = await runToEnd(run.host, run.sessionId, run.turnId);
      expect(turn.outcome).toMatchObject({ kind: "completed", text: `ran: ${run.prompt}` });
      expect(startedCount(events)).toBe(1);
      finished.push(turn);
    }
    expect((await runToEnd(live, served, servedTurn.turnId)).turn.outcome).toMatchObject({ kind: "completed", text: "ran: served-one" });
    for (const host of hosts) await host.harness.close();

    // Each embedded Turn ran in this process, never in the serve; the serve's Turn in the serve.
    const storage = await openDatabase({ url: database, stateDirectory: join(home.dir, "data") });
    try {
      for (const run of runs) expect((await turns.getTurnById(storage, run.turnId))?.ownerProcessId).toBe(process.pid);
      expect((await turns.getTurnById(storage, servedTurn.turnId))?.ownerProcessId).toBe(live.process.child.pid);
    } finally {
      await storage.close();
    }
    const prompts = model.requests.map((request) => promptOf(request.body));
    for (const prompt of [...runs.map((run) => run.prompt), "served-one"]) expect(prompts.filter((seen) => seen === prompt)).toHaveLength(1);
  });

  it("a serve leaves a Session alone while an embedded host holds it, and takes it over once the host is gone", async () => {
    const { home, model, database } = await setup();
    answerWithPrompt(model);
    const local = await embedded(home, database);
    const sessionId = await createSession(local);
    expect((await runToEnd(local, sessionId, (await queue(local, sessionId, "held-one")).turnId)).turn.phase).toBe("completed");

    const live = await serve(home, model, database);
    // Admitted through the serve while the embedded host holds the Session: the embedded host runs it.
    const through = await queue(live, sessionId, "through-the-serve");
    const { turn } = await runToEnd(live, sessionId, through.turnId);
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "ran: through-the-serve" });
    const storage = await openDatabase({ url: database, stateDirectory: join(home.dir, "data") });
    try {
      expect((await turns.getTurnById(storage, through.turnId))?.ownerProcessId).toBe(process.pid);
      // The embedded host exits: its lease is released and the serve runs the Session's next Turn.
      await local.harness.close();
      const after = await queue(live, sessionId, "after-the-host");
      expect((await runToEnd(live, sessionId, after.turnId)).turn.outcome).toMatchObject({ kind: "completed", text: "ran: after-the-host" });
      expect((await turns.getTurnById(storage, after.turnId))?.ownerProcessId).toBe(live.process.child.pid);
    } finally {
      await storage.close();
    }
  });

  it("an embedded host's graceful stop never fails a Turn it claimed from another client", async () => {
    const { home, model, database } = await setup();
    const held = holdReplies({ model }, (request) => ({ events: [{ type: "text", text: `ran: ${promptOf(request.body)}` }] }));
    const local = await embedded(home, database);
    const sessionId = await createSession(local);
    const mine = await queue(local, sessionId, "mine");
    await held.held(1);
    held.release(1);
    expect((await runToEnd(local, sessionId, mine.turnId)).turn.phase).toBe("completed");
    // Another client (a second embedded host) queues a Turn in the Session the first host holds:
    // the first host runs it.
    const other = await embedded(home, database);
    const foreign = await ok(
      sdk.submitPrompt({
        client: other.api.client,
        path: { server, sessionId },
        headers: { "x-ze-harness-client-id": "other" },
        body: { delivery: "queue", turnId: randomUUID(), prompt: [{ type: "text", text: "foreign" }] },
      }),
    );
    await held.held(2);
    // The first host stops while that Turn runs: it waits for it instead of failing it.
    const stopping = local.harness.close();
    held.release(2);
    await stopping;
    const turnId = foreign.receipt.turnId;
    expect((await getTurn(other, sessionId, turnId)).outcome).toMatchObject({ kind: "completed", text: "ran: foreign" });
  });
});
