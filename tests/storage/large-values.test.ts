// Values past Durable Object SQLite's 2 MB limit (services/storage/spill.ts), on both hosts from
// one source: a Turn whose model output is 3 MB of text, a tool call whose input is 2.4 MB, and a
// prompt and a conversation entry at the API's 1 MiB body limit complete on the Node host (libSQL
// file) and on the Worker host (Durable Object SQLite in workerd, which refuses any string or row
// over 2 MB). The values read back intact through GET turn, the history source, search, the Turn
// stream replayed from a cursor and the next Turn's model request; they survive a fork and a
// restart of the host on its persisted state; and deleting the Sessions leaves no `spilled_value`
// row behind. One host start (plus restarts) per kind. Then the spilling executor alone over a
// libSQL file: piece boundaries, marker-shaped input, freeing.
import { randomUUID } from "node:crypto";
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "libsql";
import type { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sdk, type HistorySourceChunk, type Turn, type TurnStreamEvent, type ZeClient } from "../../clients/index.js";
import { startServer } from "../../services/host/server.js";
import { startTestModel, type TestModel } from "../../tools/test-model/index.js";
// @ts-expect-error -- the deployment configuration is a plain .mjs module without types
import { workerOptions } from "../../worker/miniflare.config.mjs";
import { ok } from "../support/calls.js";
import { networkClient, networkFetch, tempHome } from "../support/harness.js";
import { HOSTS, nodeConfig, workerVariables, type HostKind } from "../support/hosts.js";
import { writeGlobalConfig } from "../support/model.js";
import { bundleOnce, miniflare } from "../worker/support.js";
import { getTurn, queue, runToEnd, server, watchTurn } from "../turns/helpers.js";
import { openDatabase, sessions, type StorageHandle } from "../../services/storage/index.js";
import { MARKER_HEAD, SPILL_BUDGET, SPILL_PIECE } from "../../services/storage/spill.js";
import { newSession } from "./helpers.js";

const ALLOW_ALL = [{ action: "*", resource: "*", effect: "allow" as const }];

/** A host that can be stopped and started again on its persisted state, with its database file readable while stopped. */
interface Host {
  api: ZeClient;
  readonly fetch: typeof networkFetch;
  readonly model: TestModel;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** The server database's file (read it while stopped: the Worker's is workerd's own). */
  database(): string;
  close(): Promise<void>;
}

async function startHost(kind: HostKind): Promise<Host> {
  const model = await startTestModel();
  // A context large enough for the 3 MB texts as history (the default 200,000 units is not).
  const options = { permissions: ALLOW_ALL, limits: { contextUnits: 20_000_000, outputUnits: 8192 } };
  if (kind === "node") {
    const home = tempHome("zh-large-node-");
    writeGlobalConfig(home, nodeConfig(model, options));
    const database = join(home.dir, "ze-harness.db");
    const open = () => startServer({ port: 0, hostname: "127.0.0.1", serverRoot: home.root, env: home.env, database });
    let running: Awaited<ReturnType<typeof open>> | undefined = await open();
    const host: Host = {
      api: networkClient(running.url),
      fetch: networkFetch,
      model,
      stop: async () => {
        await running?.close();
        running = undefined;
      },
      start: async () => {
        running = await open();
        host.api = networkClient(running.url);
      },
      database: () => database,
      close: async () => {
        await host.stop();
        home.cleanup();
        await model.close();
      },
    };
    return host;
  }
  const scriptPath = await bundleOnce("worker/index.ts");
  const persist = mkdtempSync(join(tmpdir(), "zh-large-worker-"));
  const open = async (): Promise<{ mf: Miniflare; url: string }> => {
    const mf: Miniflare = miniflare(scriptPath, workerOptions({ scriptPath, persist, port: 0, env: workerVariables(model, options) }));
    return { mf, url: (await mf.ready).origin };
  };
  let running: { mf: Miniflare; url: string } | undefined = await open();
  const host: Host = {
    api: networkClient(running.url),
    fetch: networkFetch,
    model,
    stop: async () => {
      await running?.mf.dispose();
      running = undefined;
    },
    start: async () => {
      running = await open();
      host.api = networkClient(running.url);
    },
    database: () => {
      const found: string[] = [];
      const walk = (dir: string): void => {
        for (const name of readdirSync(dir)) {
          const path = join(dir, name);
          if (statSync(path).isDirectory()) walk(path);
          else if (name.endsWith(".sqlite") && dir.includes("HarnessServerObject")) found.push(path);
        }
      };
      walk(persist);
      if (found.length !== 1) throw new Error(`expected one server database, found ${JSON.stringify(found)}`);
      return found[0]!;
    },
    close: async () => {
      await host.stop();
      rmSync(persist, { recursive: true, force: true });
      await model.close();
    },
  };
  return host;
}

/** Counts rows of the stopped host's database. */
function count(host: Host, sql: string): number {
  const database = new Database(host.database(), { readonly: true });
  try {
    return (database.prepare(sql).get() as { n: number }).n;
  } finally {
    database.close();
  }
}

/** `size` characters of words, a marker word at the start, and, past the first 1 MiB, some multi-byte text. */
function largeText(size: number, tag: string): string {
  const word = `${tag} ${"w".repeat(990)} ✓ café 𝄞 `;
  return word.repeat(Math.ceil(size / word.length)).slice(0, size).trimEnd();
}

/**
 * Checks a history row's body through the history source route against `expected`: its byte
 * length, its first chunk, and its last 100,000 characters read from a byte offset (each read
 * loads the whole row, so two reads rather than one per 64 KiB chunk).
 */
async function expectSource(h: Host, sessionId: string, position: { sourceSequence: number; itemIndex: number }, expected: string): Promise<void> {
  const read = async (afterByte: number): Promise<HistorySourceChunk> => {
    const query = { sourceSequence: String(position.sourceSequence), itemIndex: String(position.itemIndex), field: "body", afterByte: String(afterByte) };
    return ok(sdk.readHistorySource({ client: h.api.client, path: { server, sessionId }, query }));
  };
  const first = await read(0);
  expect(first.byteLength).toBe(Buffer.byteLength(expected));
  expect(first.text.length).toBeGreaterThan(1000);
  expect(expected.startsWith(first.text)).toBe(true);
  let cut = expected.length - 100_000;
  if (/[\udc00-\udfff]/.test(expected[cut]!)) cut -= 1; // not inside a surrogate pair
  let tail = "";
  for (let afterByte: number | null = Buffer.byteLength(expected.slice(0, cut)); afterByte !== null; ) {
    const chunk = await read(afterByte);
    tail += chunk.text;
    afterByte = chunk.nextByte;
  }
  expect(tail === expected.slice(cut), `the body's last ${expected.length - cut} characters`).toBe(true);
}

const textOf = (turn: Turn): string =>
  turn.outcome?.kind === "completed" ? (turn.outcome as { text?: string }).text ?? "" : `not completed: ${JSON.stringify(turn.outcome).slice(0, 300)}`;

describe.each(HOSTS)("values over 2 MB on the %s host", (kind) => {
  let h: Host;
  const answer = largeText(3 * 1024 * 1024, "zebracorn");
  // 2.4 MB: the scripted model streams arguments in three pieces and a provider refuses one streamed event over 1 MiB.
  const toolInput = largeText(2_400_000, "quokkafile");
  const prompt = largeText(1_000_000, "axolotlprompt");
  let sessionId: string;
  let turnId: string;
  let toolTurnId: string;
  let promptTurnId: string;
  let forkedSessionId: string;

  beforeAll(async () => {
    h = await startHost(kind);
  }, 120_000);
  afterAll(async () => {
    await h?.close();
  });

  it("a Turn that answers 3 MB completes and reads back whole: GET turn, history, search, the Turn stream from a cursor, the next request", async () => {
    h.model.enqueue({ events: [{ type: "text", text: answer }] });
    sessionId = randomUUID();
    await ok(sdk.createSession({ client: h.api.client, path: { server, sessionId }, body: {} }));
    ({ turnId } = await queue(h, sessionId, "Say a lot"));
    const { events, turn } = await runToEnd(h, sessionId, turnId);
    expect(turn.outcome?.kind).toBe("completed");
    expect(textOf(turn) === answer, `outcome text of ${textOf(turn).length} characters`).toBe(true);
    expect(JSON.stringify(turn.parts).includes(JSON.stringify(answer).slice(1, -1))).toBe(true);

    // The durable events replayed after a cursor: from the revision before the finish.
    const finished = events.find((event) => event.type === "turn.finished")!;
    const replay = await (await watchTurn(h, sessionId, turnId, finished.revision - 1)).rest();
    expect(replay.map((event) => event.type)).toEqual(["turn.snapshot", "turn.finished"]);
    expect(JSON.stringify(replay[1]).includes(JSON.stringify(answer).slice(1, -1))).toBe(true);
    const whole = await (await watchTurn(h, sessionId, turnId, 0)).rest();
    const snapshot = whole[0] as Extract<TurnStreamEvent, { type: "turn.snapshot" }>;
    expect(JSON.stringify(snapshot).includes(JSON.stringify(answer).slice(1, -1))).toBe(true);

    // History: the answer's row (its first 16 KiB inline, the rest read by byte ranges).
    const page = await ok(sdk.history_({ client: h.api.client, path: { server, sessionId } }));
    const row = page.rows.find((candidate) => candidate.turnId === turnId && candidate.kind === "text")!;
    await expectSource(h, sessionId, row.position, answer);
    // Search finds the answer's words (its first 256 Ki characters are indexed).
    const found = await ok(sdk.search({ client: h.api.client, path: { server, sessionId }, query: { query: "zebracorn", caseSensitive: "false", wholeWord: "false" } }));
    expect(JSON.stringify(found)).toContain(turnId);

    // The next Turn's model request carries the whole answer as history.
    h.model.enqueue({ events: [{ type: "text", text: "again" }] });
    const next = await queue(h, sessionId, "And again");
    const again = (await runToEnd(h, sessionId, next.turnId)).turn;
    expect(again.outcome?.kind, JSON.stringify(again.outcome).slice(0, 600)).toBe("completed");
    expect(JSON.stringify(h.model.requests.at(-1)?.body).includes(JSON.stringify(answer).slice(1, -1))).toBe(true);
  }, 120_000);

  it("a tool call with 2.4 MB of input, a prompt and a conversation entry at the 1 MiB body limit complete, their values whole", async () => {
    h.model.enqueue({ events: [{ type: "tool_call", id: "call-big", name: "write", arguments: { filePath: "big.txt", content: toolInput } }] });
    h.model.enqueue({ events: [{ type: "text", text: "written" }] });
    ({ turnId: toolTurnId } = await queue(h, sessionId, "Write it"));
    const { turn } = await runToEnd(h, sessionId, toolTurnId);
    expect(turn.outcome?.kind, JSON.stringify(turn.outcome).slice(0, 400)).toBe("completed");
    const tool = turn.parts.find((part) => part.type === "tool") as { input?: unknown } | undefined;
    expect((tool?.input as { content?: string } | undefined)?.content === toolInput, "the tool part's input is whole").toBe(true);

    h.model.enqueue({ events: [{ type: "text", text: "read it" }] });
    ({ turnId: promptTurnId } = await queue(h, sessionId, prompt));
    const { turn: prompted } = await runToEnd(h, sessionId, promptTurnId);
    expect(prompted.outcome?.kind).toBe("completed");
    expect(JSON.stringify(prompted.request.prompt).includes(JSON.stringify(prompt).slice(1, -1))).toBe(true);
    expect(JSON.stringify(h.model.requests.at(-1)?.body).includes(JSON.stringify(prompt).slice(1, -1))).toBe(true);

    // A conversation entry at the body limit too.
    const entry = largeText(1_000_000, "narwhalentry");
    const entryId = randomUUID();
    await ok(
      sdk.appendConversation({
        client: h.api.client,
        path: { server, sessionId },
        headers: { "x-ze-harness-client-id": "large-values" },
        body: { entryId, content: [{ type: "text", text: entry }] },
      }),
    );
    const page = await ok(sdk.history_({ client: h.api.client, path: { server, sessionId } }));
    const row = page.rows.find((candidate) => candidate.entryId === entryId)!;
    await expectSource(h, sessionId, row.position, entry);
  }, 120_000);

  it("survives a fork and a restart of the host, and deleting the Sessions frees every piece", async () => {
    forkedSessionId = randomUUID();
    const fork = await ok(sdk.forkSession({ client: h.api.client, path: { server, sessionId, forkedSessionId }, body: {} as never }));
    expect(JSON.stringify(fork)).toContain(forkedSessionId);

    await h.stop();
    // Only a Durable Object spills by size (its SQLite refuses a value over 2 MB); libSQL keeps each value in its row.
    if (kind === "worker") expect(count(h, "SELECT count(*) AS n FROM spilled_value")).toBeGreaterThan(0);
    else expect(count(h, "SELECT count(*) AS n FROM spilled_value")).toBe(0);
    await h.start();

    expect(textOf(await getTurn(h, sessionId, turnId)) === answer).toBe(true);
    const forkedTurns = await ok(sdk.listSessionTurns({ client: h.api.client, path: { server, sessionId: forkedSessionId } }));
    const copies = forkedTurns.turns.map((state) => state.turn);
    expect(copies.some((turn) => textOf(turn) === answer), `a forked Turn answers the 3 MB text (${copies.length} Turns)`).toBe(true);
    const copy = copies.find((turn) => textOf(turn) === answer)!;
    const replayed = await (await watchTurn(h, forkedSessionId, copy.id, 0)).rest();
    expect(JSON.stringify(replayed[0]).includes(JSON.stringify(answer).slice(1, -1))).toBe(true);

    await ok(sdk.deleteSession({ client: h.api.client, path: { server, sessionId: forkedSessionId } }));
    await ok(sdk.deleteSession({ client: h.api.client, path: { server, sessionId } }));
    await h.stop();
    expect(count(h, "SELECT count(*) AS n FROM spilled_value")).toBe(0);
    expect(count(h, "SELECT count(*) AS n FROM turn")).toBe(0);
    await h.start();
  }, 180_000);
});

// The spilling executor itself, over a real libSQL file: what the host tests cannot reach.
describe("the spilling executor (libSQL file)", () => {
  let handle: StorageHandle;
  let path: string;
  const insert = (id: string, content: string) =>
    handle.transaction((tx) =>
      tx.sql.run("INSERT INTO conversation_entry (id, session_id, history_revision, content, attribution, accepted_at, request_hash) VALUES (?, 's1', ?, ?, NULL, 1, 'h')", [
        id,
        Number(id.slice(1)),
        content,
      ]),
    );
  const content = async (id: string) => (await handle.reader().sql.get<{ content: string }>("SELECT content FROM conversation_entry WHERE id = ?", [id]))?.content;
  /** What is stored, bypassing the executor. */
  const raw = (sql: string) => {
    const database = new Database(path, { readonly: true });
    try {
      return database.prepare(sql).all() as Record<string, unknown>[];
    } finally {
      database.close();
    }
  };
  const pieceCount = () => Number(raw("SELECT count(*) AS n FROM spilled_value")[0]!["n"]);

  let directory: string;

  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), "zh-spill-"));
    path = join(directory, "spill.db");
    handle = await openDatabase({ url: path, stateDirectory: directory, spillBudget: SPILL_BUDGET });
    await sessions.insertSession(handle, newSession("s1"));
  });
  afterAll(async () => {
    await handle?.close();
    rmSync(directory, { recursive: true, force: true });
  });

  it("splits a value past the budget into pieces that never part a surrogate pair, and reads it back whole", async () => {
    // A musical symbol (two UTF-16 units) straddles the first piece's end.
    const value = `${"a".repeat(SPILL_PIECE - 1)}𝄞${"b".repeat(SPILL_BUDGET - SPILL_PIECE)}`;
    await insert("e1", value);
    const stored = raw("SELECT content FROM conversation_entry WHERE id = 'e1'")[0]!["content"] as string;
    expect(stored.startsWith(MARKER_HEAD)).toBe(true);
    expect(stored.length).toBeLessThan(64);
    const pieces = raw("SELECT ordinal, data FROM spilled_value ORDER BY ordinal") as { ordinal: number; data: string }[];
    expect(pieces.map((piece) => piece.ordinal)).toEqual([0, 1, 2]);
    expect(pieces[0]!.data).toBe("a".repeat(SPILL_PIECE - 1));
    expect(pieces.map((piece) => piece.data).join("")).toBe(value);
    expect(await content("e1")).toBe(value);
  });

  it("stores a small value that looks like a marker as itself, never as the value it names; a read binds it unchanged", async () => {
    const stored = raw("SELECT content FROM conversation_entry WHERE id = 'e1'")[0]!["content"] as string;
    await insert("e2", stored);
    expect(await content("e2")).toBe(stored);
    expect(raw("SELECT content FROM conversation_entry WHERE id = 'e2'")[0]!["content"]).not.toBe(stored);
    // A read binds it as itself and writes nothing: it matches the marker stored for e1, not a value.
    const pieces = raw("SELECT count(*) AS n FROM spilled_value")[0]!["n"];
    expect(await handle.reader().sql.all("SELECT id FROM conversation_entry WHERE content = ?", [stored])).toEqual([{ id: "e1" }]);
    expect(raw("SELECT count(*) AS n FROM spilled_value")[0]!["n"]).toBe(pieces);
    await insert("e3", "small");
    expect(raw("SELECT content FROM conversation_entry WHERE id = 'e3'")[0]!["content"]).toBe("small");
  });

  it("frees a value's pieces when it is replaced, when its row goes (a Session, the server), and when a statement wrote nothing", async () => {
    const before = pieceCount();
    expect(before).toBe(3 + 1);
    const big = "c".repeat(3 * SPILL_PIECE + 1); // four pieces
    // A guarded UPDATE that matches no row: the pieces it wrote first are deleted again.
    await handle.transaction((tx) => tx.sql.run("UPDATE conversation_entry SET content = ? WHERE id = 'none'", [big]));
    expect(pieceCount()).toBe(before);
    await handle.transaction((tx) => tx.sql.run("UPDATE conversation_entry SET content = ? WHERE id = 'e1'", [big]));
    expect(pieceCount()).toBe(before - 3 + 4);
    expect(await content("e1")).toBe(big);
    await handle.transaction((tx) => tx.sql.run("UPDATE conversation_entry SET content = 'short' WHERE id = 'e1'"));
    expect(pieceCount()).toBe(before - 3);
    await sessions.deleteSession(handle, "local", "s1", 2);
    expect(raw("SELECT count(*) AS n FROM conversation_entry")[0]!["n"]).toBe(0);
    expect(pieceCount()).toBe(0);
    // Deleting the server frees what its Sessions held.
    await sessions.insertSession(handle, newSession("s9"));
    await handle.transaction((tx) =>
      tx.sql.run("INSERT INTO conversation_entry (id, session_id, history_revision, content, attribution, accepted_at, request_hash) VALUES ('e9', 's9', 1, ?, NULL, 1, 'h')", [big]),
    );
    expect(pieceCount()).toBe(4);
    expect(await sessions.deleteServer(handle, "local", 3)).toEqual(["s9"]);
    expect(pieceCount()).toBe(0);
  });
});
