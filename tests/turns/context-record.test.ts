// A prepared Main request's context record rides its Turn's change inside the change's own UPDATE
// (`turn.prepared_request`; a trigger inserts the `session_context` row under the Session's next
// sequence): each request is recorded exactly once, in order across Turns and steps, with the
// input tokens its provider reported, as the context API reports it. Real Turns on a real libSQL
// file with the scripted model.
import { afterEach, describe, expect, it } from "vitest";
import { sdk } from "../../clients/index.js";
import { ok } from "../support/calls.js";
import { startModelHarness, type ModelHarness } from "../support/model.js";

const server = "local";
let h: ModelHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function run(harness: ModelHarness, sessionId: string, text: string): Promise<string> {
  const turnId = await harness.submit(sessionId, text);
  expect((await harness.finish(sessionId, turnId)).turn.phase).toBe("completed");
  await harness.harness.runner!.settled(turnId);
  return turnId;
}

describe("the context record of a prepared request", () => {
  it("is recorded once per request, in order, with its reported usage, by the change that carries it", async () => {
    h = await startModelHarness();
    const sessionId = await h.createSession();
    h.model.enqueue({ events: [{ type: "text", text: "one" }], usage: { promptTokens: 111, completionTokens: 1 } });
    const first = await run(h, sessionId, "first");
    h.model.enqueue(
      { events: [{ type: "tool_call", name: "read", arguments: { filePath: "nothing.txt" } }], usage: { promptTokens: 222, completionTokens: 1 } },
      { events: [{ type: "text", text: "two" }], usage: { promptTokens: 333, completionTokens: 1 } },
    );
    const second = await run(h, sessionId, "second");

    const recorded = await h.harness.storage
      .reader()
      .sql.all<{ sequence: number; turn_id: string; reported_input_tokens: number | null }>("SELECT sequence, turn_id, reported_input_tokens FROM session_context WHERE session_id = ? ORDER BY sequence", [sessionId]);
    expect(recorded.map((row) => [row.sequence, row.turn_id, row.reported_input_tokens])).toEqual([
      [1, first, 111],
      [2, second, 222],
      [3, second, 333],
    ]);
    const latest = await ok(sdk.context({ client: h.api.client, path: { server, sessionId } }));
    expect(latest).toMatchObject({ through: 3, request: { sequence: 3, turnId: second, turnPhase: "completed", reportedInputTokens: 333 } });
    const pinned = await ok(sdk.context({ client: h.api.client, path: { server, sessionId }, query: { through: "1" } }));
    expect(pinned.request).toMatchObject({ sequence: 1, turnId: first, model: "test/scripted", reportedInputTokens: 111 });
    expect(pinned.request!.groups.map((group) => group.role)).toEqual(["system", "user"]);
    // The Turn keeps its latest request as staged; the context API reads session_context.
    const staged = await h.harness.storage.reader().sql.get<{ prepared_request: string }>("SELECT prepared_request FROM turn WHERE id = ?", [second]);
    expect(JSON.parse(staged!.prepared_request)).toMatchObject({ model: "test/scripted", reportedInputTokens: 333 });
  });
});
