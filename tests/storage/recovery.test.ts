// Recovery can never brick a host. A lost Turn with 10,000 unfinished tool calls (the state a
// host killed mid-script leaves) is settled in one pass — its 10,000 closed calls, 10,001 events
// and 10,001 history rows each written in chunks — where the old single statements made every
// start die on "too many SQL variables". And a lost Turn whose settlement the database refuses
// (a trigger here stands in for any statement SQLite rejects) is settled failed with the safe
// code `settlement_failed` instead: the `serve` starts, every other Session is served, and no
// later start meets that Turn again.
import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { createZeClient, sdk, type Turn } from "../../clients/index.js";
import { createHarness, type Harness } from "../../services/host/harness.js";
import { ok } from "../support/calls.js";
import { assertBuilt } from "../support/cli.js";
import { contractFetch } from "../support/contract.js";
import { startModelHarness, type ModelHarness } from "../support/model.js";
import { createSession, getTurn, processResources, queue, runToEnd, server, type Api } from "../turns/helpers.js";
import { rawClient } from "./helpers.js";

/** A process id that just ended: a claim stamped with it belongs to a process that is gone. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", "0"]);
  return child.pid!;
}

const toolParts = (turn: Turn) => turn.parts.filter((part) => part.type === "tool");

describe("recovery of a lost Turn with 10,000 unfinished tool calls", () => {
  let h: ModelHarness | undefined;
  let second: Harness | undefined;
  afterEach(async () => {
    await second?.close();
    second = undefined;
    await h?.close();
    h = undefined;
  });

  it("settles it process_lost in one pass, publishes it, and the Session goes on", async () => {
    h = await startModelHarness();
    writeFileSync(join(h.home.root, "a.txt"), "a\n");
    const sessionId = await h.createSession();
    h.model.enqueue({ events: [{ type: "tool_call", name: "read", arguments: { filePath: "a.txt" } }] }, { events: [{ type: "text", text: "read it" }] });
    const template = (await runToEnd(h, sessionId, (await queue(h, sessionId, "read a.txt")).turnId)).turn;
    const database = join(h.home.dir, "test.db");
    await h.harness.close();

    // What a host killed while 10,000 calls were in flight leaves behind: a running Turn whose
    // owner is gone, with 10,000 requested tool calls.
    const lostTurnId = randomUUID();
    const client = rawClient(database);
    const columns = (await client.execute("SELECT name FROM pragma_table_info('turn')")).rows.map((row) => String(row["name"]));
    const replaced: Record<string, string> = {
      id: "?1",
      sequence: "(SELECT next_sequence FROM session WHERE id = turn.session_id)",
      history_revision: "(SELECT history_revision + 1 FROM session WHERE id = turn.session_id)",
      request: "json_set(request, '$.turnId', ?1)",
      phase: "'running'",
      outcome: "NULL",
      completed_at: "NULL",
      steering_gate: "'open'",
      owner_instance: "'a-host-that-is-gone'",
      owner_process_id: "?3",
      lease_expires_at: "0",
    };
    await client.batch(
      [
        { sql: `INSERT INTO turn (${columns.join(", ")}) SELECT ${columns.map((column) => replaced[column] ?? column).join(", ")} FROM turn WHERE id = ?2`, args: [lostTurnId, template.id, deadPid()] },
        { sql: "UPDATE session SET next_sequence = next_sequence + 1, history_revision = history_revision + 1 WHERE id = ?", args: [sessionId] },
        {
          sql: `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 9999)
                INSERT INTO turn_part (turn_id, ordinal, data)
                SELECT ?1, i, json_remove(json_set(p.data, '$.id', printf('%08x-0000-4000-8000-000000000000', i), '$.toolCallId', 'call-' || i, '$.state', 'requested'), '$.completedAt', '$.canonicalResult')
                FROM n, turn_part p WHERE p.turn_id = ?2 AND json_extract(p.data, '$.type') = 'tool'`,
          args: [lostTurnId, template.id],
        },
      ],
      "write",
    );
    client.close();

    second = await createHarness({ serverRoot: h.home.root, env: h.home.env, database });
    const fetch = contractFetch(second.fetch);
    const api: Api = { fetch, api: createZeClient({ baseUrl: "http://localhost", fetch }) };
    const lost = await getTurn(api, sessionId, lostTurnId);
    expect(lost).toMatchObject({ phase: "failed", outcome: { kind: "failed", fault: { code: "process_lost" } } });
    expect(toolParts(lost)).toHaveLength(10_000);
    expect(toolParts(lost).every((part) => part.state === "failed" && part.fault?.code === "process_lost")).toBe(true);
    // Published: the prompt and the 10,000 calls (item indexes 0 … 10,000), nothing after.
    const tail = await ok(sdk.history_({ client: api.api.client, path: { server, sessionId }, query: { afterSourceSequence: "2", afterItemIndex: "9998" } }));
    expect(tail.rows.map((row) => [row.position.sourceSequence, row.position.itemIndex, row.kind, row.tool?.state])).toEqual([
      [2, 9999, "tool", "failed"],
      [2, 10_000, "tool", "failed"],
    ]);
    expect(tail.nextAfter).toBeNull();

    h.model.enqueue({ events: [{ type: "text", text: "still here" }] });
    const next = await runToEnd(api, sessionId, (await queue(api, sessionId, "go on")).turnId);
    expect(next.turn.outcome).toMatchObject({ kind: "completed", text: "still here" });
  });
});

describe("a running Turn whose settlement the database refuses", () => {
  let h: ModelHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it("settles failed settlement_failed instead of dying unsettled; the host goes on", async () => {
    h = await startModelHarness();
    writeFileSync(join(h.home.root, "a.txt"), "a\n");
    const sessionId = await h.createSession();
    const turnId = randomUUID();
    const client = rawClient(join(h.home.dir, "test.db"));
    await client.execute(
      `CREATE TRIGGER test_refuse_settlement BEFORE INSERT ON history_row WHEN NEW.turn_id = '${turnId}' AND NEW.kind <> 'prompt' BEGIN SELECT RAISE(ABORT, 'too many SQL variables'); END`,
    );
    client.close();
    h.model.enqueue({ events: [{ type: "tool_call", name: "read", arguments: { filePath: "a.txt" } }] }, { events: [{ type: "text", text: "never published" }] });
    await queue(h, sessionId, "read a.txt", { turnId });
    const { turn, events } = await runToEnd(h, sessionId, turnId);
    expect(turn).toMatchObject({ phase: "failed", outcome: { kind: "failed", turnId, fault: { code: "settlement_failed" } } });
    expect(events.filter((event) => event.type === "turn.finished")).toHaveLength(1);
    const rows = await ok(sdk.history_({ client: h.api.client, path: { server, sessionId } }));
    expect(rows.rows.map((row) => [row.turnId, row.kind])).toEqual([[turnId, "prompt"]]);

    h.model.enqueue({ events: [{ type: "text", text: "the next one" }] });
    expect((await runToEnd(h, sessionId, (await queue(h, sessionId, "next")).turnId)).turn.outcome).toMatchObject({ kind: "completed", text: "the next one" });
  });
});

describe("recovery of a lost Turn whose settlement the database refuses", () => {
  beforeAll(() => {
    assertBuilt();
  });
  const { setup, serve } = processResources("ze-unsettleable-");

  it("settles it failed settlement_failed; the serve starts, serves every Session, and never meets it again", async () => {
    const { home, model, database } = await setup();
    writeFileSync(join(home.root, "a.txt"), "a\n");
    model.enqueue(
      { events: [{ type: "text", text: "the other Session answered" }] },
      { events: [{ type: "tool_call", name: "read", arguments: { filePath: "a.txt" } }] },
      { hang: true },
    );
    const first = await serve(home, model, database);
    const other = await createSession(first);
    await runToEnd(first, other, (await queue(first, other, "hello")).turnId);
    const sessionId = await createSession(first);
    const { turnId } = await queue(first, sessionId, "read a.txt, then hang");
    await model.waitForRequest(3);
    expect(toolParts(await getTurn(first, sessionId, turnId))).toEqual([expect.objectContaining({ toolId: "read", state: "completed" })]);
    await first.process.stop("SIGKILL");

    // Any statement of its full settlement past the prompt row is refused, as SQLite refused the
    // 12-values-per-row INSERT of a long Turn.
    const client = rawClient(database);
    await client.execute({
      sql: `CREATE TRIGGER test_refuse_settlement BEFORE INSERT ON history_row WHEN NEW.turn_id = '${turnId}' AND NEW.kind <> 'prompt' BEGIN SELECT RAISE(ABORT, 'too many SQL variables'); END`,
      args: [],
    });
    client.close();

    const second = await serve(home, model, database);
    const settled = await getTurn(second, sessionId, turnId);
    expect(settled).toMatchObject({ phase: "failed", steering: { gate: "closed" }, outcome: { kind: "failed", turnId, fault: { code: "settlement_failed" } } });
    expect(JSON.stringify(settled.outcome)).not.toContain("SQL");
    const rows = await ok(sdk.history_({ client: second.api.client, path: { server, sessionId } }));
    expect(rows.rows.map((row) => [row.turnId, row.kind])).toEqual([[turnId, "prompt"]]);
    // Exactly one outcome on its stream.
    const stream = await runToEnd(second, sessionId, turnId);
    expect(stream.events.filter((event) => event.type === "turn.finished")).toHaveLength(1);

    // Every Session is served: the other one, this one, a new one.
    model.enqueue({ events: [{ type: "text", text: "other again" }] }, { events: [{ type: "text", text: "this again" }] }, { events: [{ type: "text", text: "a new one" }] });
    expect((await runToEnd(second, other, (await queue(second, other, "again")).turnId)).turn.outcome).toMatchObject({ kind: "completed", text: "other again" });
    expect((await runToEnd(second, sessionId, (await queue(second, sessionId, "again")).turnId)).turn.outcome).toMatchObject({ kind: "completed", text: "this again" });
    const fresh = await createSession(second);
    expect((await runToEnd(second, fresh, (await queue(second, fresh, "hi")).turnId)).turn.outcome).toMatchObject({ kind: "completed", text: "a new one" });
    await second.process.stop();

    // A later start finds nothing left to recover.
    const third = await serve(home, model, database);
    expect(await getTurn(third, sessionId, turnId)).toMatchObject({ phase: "failed", outcome: { fault: { code: "settlement_failed" } } });
  });
});
