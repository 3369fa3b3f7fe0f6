// The history commands through the built binary, embedded against one database file:
// `session conversation append` (argument and stdin), `session fork` and `compaction
// list|show|start|cancel`. Run `npm run build` first.
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { AppendConversationReceipt, Compaction, ContextCompactionReceipt, Session, SessionCompactionsResponse, SessionTurnsResponse } from "../../clients/index.js";
import { startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { assertBuilt, jsonOf, embedded, runCli, succeeded, type CliOptions } from "../support/cli.js";
import { tempHome, type TempHome } from "../support/harness.js";
import { TEST_MODEL, testProviderConfig, writeGlobalConfig } from "../support/model.js";
import { seen } from "../turns/helpers.js";
import { isSummaryRequest, replyWithSummaries } from "./helpers.js";

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

let model: TestModel;
let home: TempHome;
let options: CliOptions;

beforeAll(async () => {
  assertBuilt();
  model = await startTestModel();
  replyWithSummaries(model, { overview: "The CLI summary.", keyFacts: ["appended context"] }, "cli answer");
  home = tempHome("ze-cli-history-");
  writeGlobalConfig(home, { model: TEST_MODEL, providers: testProviderConfig(model) });
  options = { env: { ...home.env, ZE_HARNESS_DB: join(home.dir, "cli.db") }, cwd: home.root };
});
afterAll(async () => {
  await model?.close();
  home?.cleanup();
});

// Every command here runs embedded.
const cli = (args: readonly string[], input?: string) => runCli(embedded(args), { ...options, ...(input !== undefined ? { input } : {}) });

describe("session conversation append", () => {
  it("appends TEXT or stdin as entries the next Turn sees, replays by --entry, and refuses conflicts and empty text", async () => {
    const session = await succeeded<Session>(cli(["session", "create"]));
    const first = await succeeded<AppendConversationReceipt>(cli(["session", "conversation", "append", session.id, "Remember the blue button."]));
    expect(first).toMatchObject({ sessionId: session.id, historyRevision: 1, attribution: { clientId: expect.any(String) } });
    const entryId = randomUUID();
    const piped = await succeeded<AppendConversationReceipt>(cli(["session", "conversation", "append", session.id, "-", "--entry", entryId, "--author", "ada"], "From a file.\n"));
    expect(piped).toMatchObject({ entryId, historyRevision: 2, attribution: { authorId: "ada" } });
    expect(await succeeded(cli(["session", "conversation", "append", session.id, "-", "--entry", entryId, "--author", "ada"], "From a file.\n"))).toEqual(piped);
    const conflict = await cli(["session", "conversation", "append", session.id, "Other text", "--entry", entryId]);
    expect(conflict.code).toBe(1);
    expect(conflict.stderr).toMatch(/^error: ConflictError: /);
    const empty = await cli(["session", "conversation", "append", session.id, "-"], "  \n");
    expect(empty.code).toBe(2);
    expect((await cli(["session", "conversation", "append", session.id, "x", "--entry", "nope"])).code).toBe(2);
    // Nothing ran: no Turn, no model call; the next Turn sees both entries first.
    expect((await succeeded<SessionTurnsResponse>(cli(["turn", "list", session.id]))).turns).toEqual([]);
    const before = model.requests.length;
    expect(await cli(["run", "--session", session.id, "What should I remember?"])).toMatchObject({ code: 0, stdout: "cli answer\n" });
    expect(model.requests.length).toBe(before + 1);
    expect(seen(model.requests.at(-1))).toContain("Remember the blue button.");
    expect(seen(model.requests.at(-1))).toContain("From a file.");
  });
});

describe("session fork", () => {
  it("forks all settled history or before --turn ID|SEQUENCE into --session, and names what it cannot find", async () => {
    const session = await succeeded<Session>(cli(["session", "create", "--model", TEST_MODEL, "--system-prompt", "Be brief."]));
    for (const prompt of ["first prompt", "second prompt"]) expect((await cli(["run", "--session", session.id, prompt])).code).toBe(0);
    const turns = (await succeeded<SessionTurnsResponse>(cli(["turn", "list", session.id]))).turns.map((state) => state.turn);
    const all = await succeeded<Session>(cli(["session", "fork", session.id]));
    expect(all).toMatchObject({ forkedFrom: { parentSessionId: session.id }, systemPrompt: "Be brief.", defaultModel: TEST_MODEL, workdir: session.workdir, nextSequence: 3 });
    const target = randomUUID();
    const bySequence = await succeeded<Session>(cli(["session", "fork", session.id, "--turn", "2", "--session", target]));
    expect(bySequence).toMatchObject({ id: target, forkedFrom: { parentSessionId: session.id, turnId: turns[1]!.id }, nextSequence: 2 });
    // The same fork again replays; the Turn's id names the same boundary.
    expect(await succeeded(cli(["session", "fork", session.id, "--turn", turns[1]!.id, "--session", target]))).toEqual(bySequence);
    expect((await succeeded<SessionTurnsResponse>(cli(["turn", "list", target]))).turns).toHaveLength(1);
    const missing = await cli(["session", "fork", session.id, "--turn", "9"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^error: NotFoundError: .*sequence 9/);
    expect((await cli(["session", "fork", session.id, "--turn", "first"])).code).toBe(2);
    const taken = await cli(["session", "fork", session.id, "--session", target]);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toMatch(/^error: ConflictError: /);
  });
});

describe("compaction", () => {
  it("start runs a manual compaction and prints it settled; list and show read it; cancel stops a detached one", async () => {
    const session = await succeeded<Session>(cli(["session", "create"]));
    expect((await cli(["run", "--session", session.id, "tell me about the parser"])).code).toBe(0);
    const before = model.requests.length;
    const compactionId = randomUUID();
    const started = await succeeded<Compaction>(cli(["compaction", "start", session.id, "--compaction", compactionId]));
    expect(started).toMatchObject({ id: compactionId, phase: "completed", trigger: { kind: "manual" }, outcome: { kind: "completed", checkpoint: { throughHistoryRevision: 1 } } });
    expect(model.requests.slice(before).map(isSummaryRequest)).toEqual([true]);
    expect(await succeeded(cli(["compaction", "show", session.id, compactionId]))).toEqual(started);
    const page = await succeeded<SessionCompactionsResponse>(cli(["compaction", "list", session.id]));
    expect(page.compactions.map((state) => [state.sequence, state.ordinal, state.compaction.id])).toEqual([[2, 1, compactionId]]);
    expect((await succeeded<SessionCompactionsResponse>(cli(["compaction", "list", session.id, "--after", "2:1"]))).compactions).toEqual([]);
    expect((await cli(["compaction", "list", session.id, "--after", "two"])).code).toBe(2);
    // The next Turn starts from the summary.
    expect((await cli(["run", "--session", session.id, "and now?"])).code).toBe(0);
    expect(seen(model.requests.at(-1))).toContain("The CLI summary.");
    // Detached, an embedded start leaves the compaction pending (no host runs the Session), so it can be cancelled.
    const receipt = await succeeded<ContextCompactionReceipt>(cli(["compaction", "start", session.id, "--detach"]));
    expect(receipt).toMatchObject({ delivery: "compaction", sessionId: session.id, sequence: 4 });
    const cancelled = await succeeded<Compaction>(cli(["compaction", "cancel", session.id, receipt.compactionId, "--reason", "not needed"]));
    expect(cancelled).toMatchObject({ phase: "cancelled", outcome: { kind: "cancelled", reason: "not needed" } });
    // A settled compaction is printed unchanged.
    expect(await succeeded(cli(["compaction", "cancel", session.id, compactionId]))).toEqual(started);
    const unknown = await cli(["compaction", "show", session.id, randomUUID()]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^error: NotFoundError: /);
    expect(jsonOf(await cli(["compaction", "list", session.id])).compactions).toHaveLength(2);
  });
});
