// History pages, source reads, search and interactions over a real harness (libSQL file, the
// scripted test model through the real SDK paths), through the generated client.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sdk, type HistoryPage, type HistorySourceChunk, type HistoryStreamEvent, type SearchPage } from "../../clients/index.js";
import { historyRows } from "../../services/storage/index.js";
import { failure, ok } from "../support/calls.js";
import { startModelHarness, type ModelHarness } from "../support/model.js";
import { openSse, queue, runToEnd, server, waitForTurnEvent } from "../turns/helpers.js";
import { appendEntry, forkCall } from "../history/helpers.js";

let h: ModelHarness;
beforeAll(async () => {
  h = await startModelHarness();
});
afterAll(async () => {
  await h.close();
});

const page = (sessionId: string, query: Record<string, string> = {}): Promise<HistoryPage> => ok(sdk.history_({ client: h.api.client, path: { server, sessionId }, query }));
const find = (sessionId: string, query: Record<string, string>): Promise<SearchPage> =>
  ok(sdk.search({ client: h.api.client, path: { server, sessionId }, query: { caseSensitive: "false", wholeWord: "false", ...query } as never }));

async function answered(sessionId: string, prompt: string, answer: string): Promise<string> {
  h.model.enqueue({ events: [{ type: "text", text: answer }] });
  const { turnId } = await queue(h, sessionId, prompt);
  await runToEnd(h, sessionId, turnId);
  return turnId;
}

/** Every row of the history through `through`, following nextAfter with `limit`. */
async function allRows(sessionId: string, limit: number, through?: number) {
  const rows = [];
  let query: Record<string, string> = { limit: String(limit), ...(through !== undefined ? { through: String(through) } : {}) };
  for (;;) {
    const result = await page(sessionId, query);
    rows.push(...result.rows);
    if (!result.nextAfter) return { rows, through: result.through };
    query = { limit: String(limit), through: String(result.through), afterSourceSequence: String(result.nextAfter.sourceSequence), afterItemIndex: String(result.nextAfter.itemIndex) };
  }
}

describe("history pages", () => {
  it("publishes a settled Turn's rows at one event, entries at their own, and pages under a fixed fence", async () => {
    const sessionId = await h.createSession();
    expect(await page(sessionId)).toEqual({ sessionId, through: 0, rows: [], nextAfter: null });
    const entry = await appendEntry(h, sessionId, "outside note");
    h.model.enqueue(
      { events: [{ type: "text", text: "Let me look." }, { type: "tool_call", name: "read", arguments: { filePath: "missing.txt" } }] },
      { events: [{ type: "text", text: "It is missing." }] },
    );
    const { turnId } = await queue(h, sessionId, "read missing.txt");
    await runToEnd(h, sessionId, turnId);

    const first = await allRows(sessionId, 2);
    expect(first.through).toBe(2);
    expect(first.rows.map((row) => [row.position.sourceSequence, row.position.itemIndex, row.role, row.kind, row.body.text])).toEqual([
      [1, 0, "user", "entry", "outside note"],
      [2, 0, "user", "prompt", "read missing.txt"],
      [2, 1, "assistant", "text", "Let me look."],
      [2, 2, "tool", "tool", expect.any(String)],
      [2, 3, "assistant", "text", "It is missing."],
    ]);
    expect(first.rows[0]!.entryId).toBe(entry.entryId);
    const tool = first.rows[3]!;
    expect(tool.turnId).toBe(turnId);
    expect(tool.tool).toMatchObject({ toolId: "read", state: "failed", internal: false });
    expect(JSON.parse(tool.toolInput!.text)).toEqual({ filePath: "missing.txt" });

    // A later Turn is invisible under the old fence, and visible under the new one.
    await answered(sessionId, "again", "done");
    const old = await allRows(sessionId, 3, 2);
    expect(old.rows).toEqual(first.rows);
    const current = await allRows(sessionId, 100);
    expect(current.through).toBe(3);
    expect(current.rows.slice(-2).map((row) => row.body.text)).toEqual(["again", "done"]);

    // Event and row anchors open a page at the addressed row.
    expect((await page(sessionId, { eventSequence: "2", limit: "1" })).rows[0]!.position).toEqual({ sourceSequence: 2, itemIndex: 0 });
    const anchored = await page(sessionId, { rowSourceSequence: "2", rowItemIndex: "2", rowField: "toolInput", limit: "2", through: "2" });
    expect(anchored.rows.map((row) => row.position.itemIndex)).toEqual([2, 3]);
    expect(anchored.nextAfter).toBeNull();
  });

  it("hides internal tool rows from pages, but reveals one a page is anchored on", async () => {
    const sessionId = await h.createSession();
    const base = { turnId: null, entryId: null, partId: null, thinking: null, toolInput: "{}", createdAt: 1 } as const;
    await h.harness.storage.transaction((tx) =>
      historyRows.publishRows(tx, sessionId, [
        { ...base, role: "user", kind: "prompt", hidden: false, body: "run a script", tool: null, toolInput: null },
        { ...base, role: "tool", kind: "tool", hidden: true, body: "nested secret", tool: { toolId: "read", toolCallId: "c1", state: "completed", internal: true } },
        { ...base, role: "tool", kind: "tool", hidden: true, body: "second nested", tool: { toolId: "read", toolCallId: "c2", state: "completed", internal: true } },
        { ...base, role: "assistant", kind: "text", hidden: false, body: "finished", tool: null, toolInput: null },
      ]),
    );
    expect((await page(sessionId)).rows.map((row) => row.body.text)).toEqual(["run a script", "finished"]);
    const hits = await find(sessionId, { query: "nested secret" });
    expect(hits.hits.map((hit) => [hit.position, hit.field])).toEqual([[{ sourceSequence: 1, itemIndex: 1 }, "body"]]);
    const opened = await page(sessionId, { rowSourceSequence: "1", rowItemIndex: "1", rowField: "body" });
    // The targeted internal row is revealed; the next hidden row stays hidden.
    expect(opened.rows.map((row) => row.body.text)).toEqual(["nested secret", "finished"]);
    expect(opened.rows[0]!.tool?.internal).toBe(true);
  });

  it("carries a field's first 16 KiB inline and reads the rest in byte chunks that never split a character", async () => {
    const sessionId = await h.createSession();
    const long = "αβγ😀".repeat(3000) + "end"; // 2+2+2+4 bytes per repeat: 30,003 bytes
    await appendEntry(h, sessionId, long);
    const [row] = (await page(sessionId)).rows;
    expect(row!.body.byteLength).toBe(Buffer.byteLength(long));
    expect(row!.body.complete).toBe(false);
    expect(Buffer.byteLength(row!.body.text)).toBeLessThanOrEqual(16 * 1024);
    expect(long.startsWith(row!.body.text)).toBe(true);
    let text = "";
    let afterByte: number | null = 0;
    while (afterByte !== null) {
      const chunk: HistorySourceChunk = await ok(sdk.readHistorySource({ client: h.api.client, path: { server, sessionId }, query: { sourceSequence: "1", itemIndex: "0", field: "body", afterByte: String(afterByte) } }));
      expect(chunk.byteOffset).toBe(afterByte);
      text += chunk.text;
      afterByte = chunk.nextByte;
    }
    expect(text).toBe(long);
    const inside = await failure(sdk.readHistorySource({ client: h.api.client, path: { server, sessionId }, query: { sourceSequence: "1", itemIndex: "0", field: "body", afterByte: "1" } }));
    expect(inside).toMatchObject({ status: 400, body: { _tag: "ValidationError", message: expect.stringContaining("inside a character") } });
  });
});

describe("search", () => {
  it("matches literally, folds case by Unicode simple case folding without normalization, and honours whole words", async () => {
    const sessionId = await h.createSession();
    await appendEntry(h, sessionId, "ΣΊΣΥΦΟΣ pushed the stone; σίσυφος again"); // 1
    await appendEntry(h, sessionId, "Kelvin: 300 \u212A and 5 k"); // 2 (U+212A KELVIN SIGN)
    await appendEntry(h, sessionId, "café cafe\u0301 cafe_x cafe\u200Dx cafe-x CAFE"); // 3
    await appendEntry(h, sessionId, "straße STRASSE"); // 4
    const hits = async (query: string, options: Record<string, string> = {}) =>
      (await find(sessionId, { query, ...options })).hits.map((hit) => [hit.position.sourceSequence, hit.byteOffset, hit.byteLength]);

    // Σ, σ and final ς fold together, and so do Ί and ί.
    expect(await hits("σίσυφος")).toEqual([
      [1, 0, 14],
      [1, 33, 14],
    ]);
    expect(await hits("σίσυφος", { caseSensitive: "true" })).toEqual([[1, 33, 14]]);
    // No normalization: ί precomposed does not match ι followed by a combining acute.
    expect(await hits("σι\u0301συφος")).toEqual([]);
    // K, k and the Kelvin sign fold together.
    expect(await hits("k")).toEqual([
      [2, 0, 1],
      [2, 12, 3],
      [2, 20 + 2, 1],
    ]);
    // Simple folding never maps ß to ss.
    expect(await hits("strasse")).toEqual([[4, 8, 7]]);
    // Whole words: a combining mark, a connector and a join control all touch the word.
    expect(await hits("cafe", { wholeWord: "true" })).toEqual([
      [3, 29, 4],
      [3, 36, 4],
    ]);
    expect(await hits("café", { wholeWord: "true" })).toEqual([[3, 0, 5]]);
    // Short queries (under three characters) are scanned, not indexed, with the same rules.
    expect(await hits("5 k", { wholeWord: "true" })).toEqual([[2, 20, 3]]);
    expect(await hits("5 ", { wholeWord: "true" })).toEqual([]);
    // ſ (long s) folds to s.
    expect(await hits("ſtraſſe")).toEqual([[4, 8, 7]]);
    expect(await hits("ſtraſſe", { caseSensitive: "true" })).toEqual([]);
  });

  it("pages under a fixed fence, including pages without hits, and resumes inside a field after the bytes already read", async () => {
    const sessionId = await h.createSession();
    // 300 rows that contain the trigram candidate but never the whole word, then the word.
    for (let i = 0; i < 300; i += 1) await appendEntry(h, sessionId, `needles ${i}`);
    await appendEntry(h, sessionId, "needle one needle two needle three");
    const through = (await page(sessionId)).through;
    await appendEntry(h, sessionId, "needle after the fence");
    const pages: SearchPage[] = [];
    let query: Record<string, string> = { query: "needle", wholeWord: "true", limit: "2", through: String(through) };
    for (;;) {
      const result = await find(sessionId, query);
      pages.push(result);
      expect(result.through).toBe(through);
      if (!result.nextAfter) break;
      const next = result.nextAfter;
      query = { ...query, afterSourceSequence: String(next.position.sourceSequence), afterItemIndex: String(next.position.itemIndex), afterField: next.field, afterByte: String(next.byteOffset) };
    }
    expect(pages[0]!.hits).toEqual([]);
    expect(pages[0]!.nextAfter).not.toBeNull();
    const all = pages.flatMap((result) => result.hits);
    expect(all.map((hit) => [hit.position.sourceSequence, hit.byteOffset])).toEqual([
      [301, 0],
      [301, 11],
      [301, 22],
    ]);
    expect(all.every((hit) => hit.field === "body" && hit.kind === "entry")).toBe(true);
    // The hit opens a source read at exactly the match.
    const hit = all[1]!;
    const chunk = await ok(sdk.readHistorySource({ client: h.api.client, path: { server, sessionId }, query: { sourceSequence: "301", itemIndex: "0", field: hit.field, afterByte: String(hit.byteOffset), through: String(through) } }));
    expect(chunk.text.slice(0, 10)).toBe("needle two");
  });

  it("searches every Session of the server, newest first", async () => {
    const a = await h.createSession();
    const b = await h.createSession();
    await appendEntry(h, a, "zyxwv in a");
    await appendEntry(h, b, "zyxwv in b");
    await appendEntry(h, a, "ZYXWV again in a");
    const result = await ok(sdk.searchServer({ client: h.api.client, path: { server }, query: { query: "zyxwv", caseSensitive: "false", wholeWord: "true" } }));
    expect(result.hits.map((hit) => [hit.sessionId, hit.preview])).toEqual([
      [a, "ZYXWV again in a"],
      [b, "zyxwv in b"],
      [a, "zyxwv in a"],
    ]);
    expect(result.nextAfter).toBeNull();
    const paged = await ok(sdk.searchServer({ client: h.api.client, path: { server }, query: { query: "zyxwv", caseSensitive: "false", wholeWord: "true", limit: "1", through: String(result.through) } }));
    const next = paged.nextAfter!;
    const rest = await ok(
      sdk.searchServer({
        client: h.api.client,
        path: { server },
        query: {
          query: "zyxwv",
          caseSensitive: "false",
          wholeWord: "true",
          through: String(result.through),
          afterSessionId: next.sessionId,
          afterSourceSequence: String(next.position.sourceSequence),
          afterItemIndex: String(next.position.itemIndex),
          afterField: next.field,
          afterByte: String(next.byteOffset),
        },
      }),
    );
    expect([...paged.hits, ...rest.hits]).toEqual(result.hits);
  });
});

describe("history watch and interactions", () => {
  it("streams queue, pending interactions and rows; respond answers once; a reconnect resumes after the last row", async () => {
    const sessionId = await h.createSession({ permissions: [{ action: "read", resource: "*", effect: "ask" }] });
    await appendEntry(h, sessionId, "before the watch");
    const path = `/v1/servers/${server}/sessions/${sessionId}/history/events`;
    const stream = await openSse<HistoryStreamEvent>(h.fetch, h.api.baseUrl, path);
    const start = await stream.until((event) => event.type === "history.cursor", "history.cursor");
    void start;
    h.model.enqueue({ events: [{ type: "tool_call", name: "read", arguments: { filePath: "x.txt" } }] }, { events: [{ type: "text", text: "read it" }] });
    const { turnId } = await queue(h, sessionId, "please read");
    const asked = await waitForTurnEvent(h, sessionId, turnId, "turn.approval.requested");
    const requestId = asked.request.id;
    const pending = await stream.until((event) => event.type === "history.interactions" && event.interactions.length === 1, "pending interaction");
    expect(pending).toMatchObject({ type: "history.interactions", interactions: [{ kind: "permission", state: "pending", requestId, turnId, toolId: "read" }] });
    expect((await ok(sdk.pendingInteractions({ client: h.api.client, path: { server, sessionId } }))).interactions.map((item) => item.requestId)).toEqual([requestId]);
    expect((await ok(sdk.interaction({ client: h.api.client, path: { server, sessionId, requestId } }))).interaction.permission?.id).toBe(requestId);

    const wrongKind = await failure(sdk.respond({ client: h.api.client, path: { server, sessionId, requestId }, body: { kind: "dismiss" } }));
    expect(wrongKind).toMatchObject({ status: 400, body: { _tag: "ValidationError" } });
    const answered = await ok(sdk.respond({ client: h.api.client, path: { server, sessionId, requestId }, body: { kind: "permission", reply: "once" } }));
    expect(answered.interaction).toMatchObject({ requestId, state: "resolved" });
    // A lost response is recovered by the original identity: the exact same answer replays the
    // original receipt, a different one is refused, and reading the interaction shows the outcome.
    const replay = await ok(sdk.respond({ client: h.api.client, path: { server, sessionId, requestId }, body: { kind: "permission", reply: "once" } }));
    expect(replay.interaction).toEqual(answered.interaction);
    expect((await failure(sdk.respond({ client: h.api.client, path: { server, sessionId, requestId }, body: { kind: "permission", reply: "reject" } }))).status).toBe(409);
    expect((await ok(sdk.interaction({ client: h.api.client, path: { server, sessionId, requestId } }))).interaction.state).toBe("resolved");
    await runToEnd(h, sessionId, turnId);
    // Still the original receipt after the Turn settled.
    const late = await ok(sdk.respond({ client: h.api.client, path: { server, sessionId, requestId }, body: { kind: "permission", reply: "once" } }));
    expect(late).toMatchObject({ interaction: answered.interaction, turn: { id: turnId, phase: "completed" } });

    const rows = await stream.until((event) => event.type === "history.rows" && event.rows.some((row) => row.body.text === "read it"), "the Turn's rows");
    if (rows.type !== "history.rows") throw new Error("unreachable");
    expect(rows.nextAfter.sourceSequence).toBe(2);
    stream.close();

    // Resume from the first event's position: only what follows it.
    const resumed = await openSse<HistoryStreamEvent>(h.fetch, h.api.baseUrl, path, { "last-event-id": "1.0" });
    const again = await resumed.until((event) => event.type === "history.rows", "rows after 1.0");
    if (again.type !== "history.rows") throw new Error("unreachable");
    expect(again.rows[0]!.position).toEqual({ sourceSequence: 2, itemIndex: 0 });
    resumed.close();
  });
});

describe("fork receipts", () => {
  it("locate a published fork by its original identity, also after the source is deleted, and publish the copied history", async () => {
    const sessionId = await h.createSession();
    await answered(sessionId, "fork me", "forked answer");
    const forkedSessionId = randomUUID();
    expect(await ok(sdk.forkReceipt({ client: h.api.client, path: { server, sessionId, forkedSessionId } }))).toEqual({ receipt: null });
    const forked = (await ok(forkCall(h, sessionId, forkedSessionId))).session;
    const receipt = await ok(sdk.forkReceipt({ client: h.api.client, path: { server, sessionId, forkedSessionId } }));
    expect(receipt).toEqual({ receipt: { sourceSessionId: sessionId, forkedSessionId, session: forked } });
    // Another source does not own it.
    expect((await ok(sdk.forkReceipt({ client: h.api.client, path: { server, sessionId: randomUUID(), forkedSessionId } }))).receipt).toBeNull();
    expect((await page(forkedSessionId)).rows.map((row) => row.body.text)).toEqual(["fork me", "forked answer"]);
    await ok(sdk.deleteSession({ client: h.api.client, path: { server, sessionId } }));
    expect((await ok(sdk.forkReceipt({ client: h.api.client, path: { server, sessionId, forkedSessionId } }))).receipt?.session.id).toBe(forkedSessionId);
  });
});

describe("bad input", () => {
  it("answers a typed 400 or 404 on every operation and changes nothing", async () => {
    const sessionId = await h.createSession();
    await appendEntry(h, sessionId, "one");
    const missing = randomUUID();
    const c = h.api.client;
    const p = { server, sessionId };
    const bad = async (call: Promise<{ error?: unknown }>, status: number, message?: RegExp) => {
      const result = await failure(call as never);
      expect(result.status).toBe(status);
      if (message) expect(result.body.message).toMatch(message);
    };
    await bad(sdk.history_({ client: c, path: { server, sessionId: missing } }), 404);
    await bad(sdk.history_({ client: c, path: p, query: { through: "9" } }), 400, /through: 9 is past/);
    await bad(sdk.history_({ client: c, path: p, query: { limit: "0" } }), 400, /limit/);
    await bad(sdk.history_({ client: c, path: p, query: { afterItemIndex: "1" } }), 400, /requires query.afterSourceSequence/);
    await bad(sdk.history_({ client: c, path: p, query: { afterSourceSequence: "1", eventSequence: "1" } }), 400, /at most one/);
    await bad(sdk.history_({ client: c, path: p, query: { rowSourceSequence: "1", rowItemIndex: "5" } }), 400, /no row 1.5/);
    await bad(sdk.history_({ client: c, path: p, query: { rowSourceSequence: "1", rowItemIndex: "0", rowField: "thinking" } }), 400, /no thinking field/);
    await bad(sdk.history_({ client: c, path: p, query: { rowSourceSequence: "1", rowItemIndex: "0", rowField: "title" } }), 400, /rowField/);
    await bad(sdk.history_({ client: c, path: p, query: { eventSequence: "x" } }), 400, /eventSequence/);
    await bad(sdk.readHistorySource({ client: c, path: p, query: { sourceSequence: "1", itemIndex: "0", field: "body", afterByte: "99" } }), 400, /past the end/);
    await bad(sdk.readHistorySource({ client: c, path: p, query: { sourceSequence: "0", itemIndex: "0", field: "body" } }), 400, /sourceSequence/);
    await bad(sdk.readHistorySource({ client: c, path: { server, sessionId: missing }, query: { sourceSequence: "1", itemIndex: "0", field: "body" } }), 404);
    const q = { caseSensitive: "false", wholeWord: "false" } as const;
    await bad(sdk.search({ client: c, path: p, query: { ...q, query: "" } }), 400);
    await bad(sdk.search({ client: c, path: p, query: { ...q, query: "x".repeat(1025) } }), 400, /at most 1024/);
    await bad(sdk.search({ client: c, path: p, query: { query: "one", caseSensitive: "yes", wholeWord: "false" } as never }), 400);
    await bad(sdk.search({ client: c, path: p, query: { ...q, query: "one", afterSourceSequence: "1" } }), 400, /together/);
    await bad(sdk.search({ client: c, path: p, query: { ...q, query: "one", afterSourceSequence: "1", afterItemIndex: "0", afterField: "body", afterByte: "2000" } }), 400, /afterByte/);
    await bad(sdk.search({ client: c, path: p, query: { ...q, query: "one", through: "5" } }), 400, /through/);
    await bad(sdk.search({ client: c, path: { server, sessionId: missing }, query: { ...q, query: "one" } }), 404);
    await bad(sdk.searchServer({ client: c, path: { server }, query: { ...q, query: "one", afterSessionId: sessionId } }), 400, /afterSessionId/);
    await bad(sdk.pendingInteractions({ client: c, path: { server, sessionId: missing } }), 404);
    await bad(sdk.interaction({ client: c, path: { ...p, requestId: missing } }), 404);
    await bad(sdk.respond({ client: c, path: { ...p, requestId: missing }, body: { kind: "permission", reply: "once" } }), 404);
    await bad(sdk.respond({ client: c, path: { ...p, requestId: missing }, body: { kind: "nope" } as never }), 400);
    const receipt = await h.fetch(new Request(new URL(`/v1/servers/${server}/sessions/${sessionId}/forks/not-a-uuid`, h.api.baseUrl)));
    expect(receipt.status).toBe(400);
    const watch = await h.fetch(new Request(new URL(`/v1/servers/${server}/sessions/${sessionId}/history/events`, h.api.baseUrl), { headers: { "last-event-id": "x" } }));
    expect(watch.status).toBe(400);
    const past = await h.fetch(new Request(new URL(`/v1/servers/${server}/sessions/${sessionId}/history/events?afterSourceSequence=7`, h.api.baseUrl)));
    expect(past.status).toBe(400);
    // Nothing changed.
    expect((await page(sessionId)).rows.map((row) => row.body.text)).toEqual(["one"]);
  });
});
