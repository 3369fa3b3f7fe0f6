// A Turn with 10,000 tool calls — one CodeMode script holding 10,000 pending `read` calls, the
// most CodeMode allows — completes, is published to history (10,003 rows), is paged and searched,
// and a restart of the host on the same database file recovers nothing, serves it all again and
// runs the next Turn. Before its statements were chunked (services/storage/chunks.ts) the
// settlement bound 12 values per history row in one INSERT: at ≈ 2,731 calls SQLite refused it
// ("too many SQL variables"), the host died, and every later start died the same way.
// Measured on the 2-core machine: the Turn costs ≈ 13 s of CPU (≈ 12 s wall when the machine is
// idle, 26 s under a load of 8), and leaves a 27 MiB database file and a 13 MiB WAL.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { sdk, type HistoryPage, type SearchPage, type Turn } from "../../clients/index.js";
import { createHarness, type Harness } from "../../services/host/harness.js";
import { ok } from "../support/calls.js";
import { startModelHarness, type ModelHarness } from "../support/model.js";
import { createZeClient } from "../../clients/index.js";
import { contractFetch } from "../support/contract.js";
import { queue, runToEnd, server } from "../turns/helpers.js";

const CALLS = 10_000;
const NEEDLE = "needle-5c1e9a";

let h: ModelHarness | undefined;
let restarted: Harness | undefined;
afterEach(async () => {
  await restarted?.close();
  restarted = undefined;
  await h?.close();
  h = undefined;
});

/** Resolves when `harness`'s storage commits the `turn.finished` of `turnId` (the Turn's SSE snapshot of 10,000 parts is past the stream's 1 MiB event bound). */
function finished(harness: Harness, turnId: string): Promise<void> {
  return new Promise((resolve) => {
    const stop = harness.storage.onTurnEvents((rows) => {
      if (rows.some((row) => row.turnId === turnId && row.type === "turn.finished")) {
        stop();
        resolve();
      }
    });
  });
}

type Api = Pick<ModelHarness, "api" | "fetch">;
const getTurn = async (api: Api, sessionId: string, turnId: string): Promise<Turn> => (await ok(sdk.getTurn({ client: api.api.client, path: { server, sessionId, turnId } }))).turn;
const page = (api: Api, sessionId: string, query: Record<string, string> = {}): Promise<HistoryPage> => ok(sdk.history_({ client: api.api.client, path: { server, sessionId }, query }));
const find = (api: Api, sessionId: string, query: string): Promise<SearchPage> =>
  ok(sdk.search({ client: api.api.client, path: { server, sessionId }, query: { query, caseSensitive: "true", wholeWord: "false" } }));

/** What a reader sees of the long Turn: its parts, its visible history rows, the one search hit (an inner call's row, revealed by its position). */
async function observe(api: Api, sessionId: string, turnId: string) {
  const turn = await getTurn(api, sessionId, turnId);
  const visible = await page(api, sessionId);
  const hits = (await find(api, sessionId, NEEDLE)).hits;
  const revealed = hits[0] ? await page(api, sessionId, { rowSourceSequence: String(hits[0].position.sourceSequence), rowItemIndex: String(hits[0].position.itemIndex), limit: "1" }) : undefined;
  const inner = turn.parts.filter((part) => part.type === "tool" && part.origin?.kind === "codemode");
  return {
    phase: turn.phase,
    outcome: turn.outcome,
    parts: turn.parts.length,
    innerCompleted: inner.filter((part) => part.type === "tool" && part.state === "completed").length,
    visible: visible.rows.map((row) => [row.position.itemIndex, row.kind]),
    hits: hits.map((hit) => [hit.position.itemIndex, hit.field, hit.kind]),
    revealed: revealed?.rows.map((row) => [row.position.itemIndex, row.kind, row.tool?.internal, row.body.text.includes(NEEDLE)]),
  };
}

describe("a Turn with 10,000 tool calls", () => {
  it("completes, is published, paged and searched, and survives a restart of the host on the same database", { timeout: 240_000 }, async () => {
    h = await startModelHarness();
    writeFileSync(join(h.home.root, "a.txt"), "a\n");
    writeFileSync(join(h.home.root, "needle.txt"), `${NEEDLE}\n`);
    const code = `const p = []; for (let i = 1; i < ${CALLS}; i++) p.push(tools.read({ filePath: "a.txt" })); p.push(tools.read({ filePath: "needle.txt" })); return (await Promise.all(p)).length;`;
    h.model.enqueue({ events: [{ type: "tool_call", name: "execute", arguments: { code } }] }, { events: [{ type: "text", text: "read them all" }] });
    const sessionId = await h.createSession();
    const { turnId } = await queue(h, sessionId, "read a.txt ten thousand times");
    await finished(h.harness, turnId);

    const expected = {
      phase: "completed",
      outcome: { kind: "completed", turnId, text: "read them all" },
      parts: CALLS + 2,
      innerCompleted: CALLS,
      // The prompt, the execute call and the answer; the 10,000 inner calls are published hidden (item indexes 2 … 10,001).
      visible: [
        [0, "prompt"],
        [1, "tool"],
        [CALLS + 2, "text"],
      ],
      hits: [[CALLS + 1, "body", "tool"]],
      revealed: [[CALLS + 1, "tool", true, true]],
    };
    expect(await observe(h, sessionId, turnId)).toEqual(expected);

    // A restart on the same file: nothing to recover, everything readable, the Session goes on.
    const database = join(h.home.dir, "test.db");
    await h.harness.close();
    restarted = await createHarness({ serverRoot: h.home.root, env: h.home.env, database });
    const fetch = contractFetch(restarted.fetch);
    const again = { fetch, api: createZeClient({ baseUrl: "http://localhost", fetch }) };
    expect(await observe(again, sessionId, turnId)).toEqual(expected);
    h.model.enqueue({ events: [{ type: "text", text: "and then some" }] });
    const next = await runToEnd(again, sessionId, (await queue(again, sessionId, "anything else?")).turnId);
    expect(next.turn.outcome).toMatchObject({ kind: "completed", text: "and then some" });
    expect(JSON.stringify(h.model.requests.at(-1)!.body)).toContain(String(CALLS));
  });
});
