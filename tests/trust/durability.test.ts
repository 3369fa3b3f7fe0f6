// Durability under kill -9, bounded for CI: a real `serve` on a libSQL file is killed at seeded
// random points (a model request arriving mid-Turn, a prompt just acknowledged) while prompts
// queue on several Sessions, then restarted on the same file. Every acknowledged Turn settles
// exactly once (one `turn.finished`), none is sent to the model twice, a submit whose answer was
// lost either never happened or settled too, and `PRAGMA integrity_check` is ok at the end.
import { createClient } from "@libsql/client";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { startTestModel } from "../../tools/test-model/index.js";
import { assertBuilt } from "../support/cli.js";
import { tempHome } from "../support/harness.js";
import { seededRandom } from "../support/random.js";
import { createSession, listTurns, runToEnd, serveWithModel, submitCall, text, type ServedModel } from "../turns/helpers.js";

vi.setConfig({ testTimeout: 180_000 });

const ROUNDS = 6;
const SESSIONS = 3;
const PROMPTS_PER_ROUND = 8;
const MARKER = /durable-marker-([0-9a-f-]{36})/g;

describe("kill -9 at random points", () => {
  it("every acknowledged Turn settles exactly once, none runs twice, and the database stays intact", async () => {
    assertBuilt();
    const random = seededRandom(Number(process.env["ZE_DURABILITY_SEED"] ?? 20261202));
    const home = tempHome("ze-durable-");
    const model = await startTestModel();
    const database = join(home.dir, "durable.db");
    // Each answer streams over a few scripted pauses, so kills land inside Turns as well as between them.
    model.reply(() => ({ events: [{ type: "text", text: "Working on it" }, { type: "delay", ms: Math.floor(random() * 40) }, { type: "text", text: "done." }] }));
    let served: ServedModel | undefined;
    try {
      served = await serveWithModel(home, model, database);
      const sessions: string[] = [];
      for (let index = 0; index < SESSIONS; index++) sessions.push(await createSession(served));
      const acknowledged = new Map<string, string>(); // turnId → sessionId
      const unacknowledged = new Map<string, string>();

      for (let round = 0; round < ROUNDS; round++) {
        const current = served;
        // Where this round's kill lands: on a model request, or right after an acknowledgement.
        const onRequest = random() < 0.6;
        const killAt = 1 + Math.floor(random() * PROMPTS_PER_ROUND);
        const base = model.requests.length;
        let killed = false;
        const kill = (): void => {
          if (killed) return;
          killed = true;
          current.process.child.kill("SIGKILL");
        };
        if (onRequest) void model.waitForRequest(base + killAt).then(kill);
        for (let index = 0; index < PROMPTS_PER_ROUND && !killed; index++) {
          const sessionId = sessions[Math.floor(random() * SESSIONS)]!;
          const turnId = crypto.randomUUID();
          const body = { delivery: "queue", turnId, prompt: text(`durable-marker-${turnId}`) };
          const answer = await submitCall(current, sessionId, body).catch(() => undefined);
          if (answer?.response?.status === 202) acknowledged.set(turnId, sessionId);
          else unacknowledged.set(turnId, sessionId);
          if (!onRequest && index + 1 === killAt) kill();
        }
        kill();
        await current.process.stop("SIGKILL");
        served = await serveWithModel(home, model, database);
      }

      // After the last restart every Turn settles: queued ones run, interrupted ones are settled failed.
      const finished = new Map<string, string>();
      for (const [turnId, sessionId] of acknowledged) {
        const { turn } = await runToEnd(served, sessionId, turnId);
        finished.set(turnId, turn.phase);
        expect(["completed", "failed"]).toContain(turn.phase);
      }
      // A submit whose answer was lost: not there at all, or there and settled like the others.
      for (const sessionId of sessions) {
        const listed = await listTurns(served, sessionId, { limit: "200" });
        for (const { turn } of listed.turns) {
          expect(acknowledged.has(turn.id) || unacknowledged.has(turn.id)).toBe(true);
          if (!acknowledged.has(turn.id)) await runToEnd(served, sessionId, turn.id);
        }
      }
      // None ran twice: the model saw each Turn's prompt as the newest one in at most one request.
      const sent = new Map<string, number>();
      for (const request of model.requests) {
        const markers = [...JSON.stringify(request.body).matchAll(MARKER)];
        const newest = markers.at(-1)?.[1];
        if (newest !== undefined) sent.set(newest, (sent.get(newest) ?? 0) + 1);
      }
      for (const [turnId, count] of sent) expect(count, `model requests for Turn ${turnId}`).toBe(1);
      for (const [turnId, status] of finished) if (status === "completed") expect(sent.get(turnId), `completed Turn ${turnId}`).toBe(1);
      expect(acknowledged.size).toBeGreaterThan(ROUNDS);

      await served.process.stop("SIGKILL");
      served = undefined;
      const client = createClient({ url: `file:${database}` });
      try {
        const integrity = await client.execute("PRAGMA integrity_check");
        expect(integrity.rows.map((row) => row[0])).toEqual(["ok"]);
      } finally {
        client.close();
      }
    } finally {
      await served?.process.stop("SIGKILL");
      await model.close();
      home.cleanup();
    }
  });
});
