// `session history`, `session search`, `session diagnostics` and `session context` through the
// built binary, embedded against one database file. Run `npm run build` first.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { ContextResponse, DiagnosticsPage, HistoryPage, SearchPage, Session } from "../../clients/index.js";
import { startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { assertBuilt, runCli, succeeded, type CliOptions } from "../support/cli.js";
import { tempHome, type TempHome } from "../support/harness.js";
import { TEST_MODEL, testProviderConfig, writeGlobalConfig } from "../support/model.js";

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

let model: TestModel;
let home: TempHome;
let options: CliOptions;

beforeAll(async () => {
  assertBuilt();
  model = await startTestModel();
  home = tempHome("ze-cli-wshistory-");
  writeGlobalConfig(home, { model: TEST_MODEL, providers: testProviderConfig(model) });
  options = { env: { ...home.env, ZE_HARNESS_DB: join(home.dir, "cli.db") }, cwd: home.root };
});
afterAll(async () => {
  await model?.close();
  home?.cleanup();
});

const cli = (args: readonly string[]) => runCli(["--embedded", ...args], options);

describe("session history / search / diagnostics / context", () => {
  it("reads pages, searches with explicit options, and reports diagnostics and context as JSON", async () => {
    const session = await succeeded<Session>(cli(["session", "create"]));
    for (const text of ["Alpha note", "beta NOTE", "gamma notebook"]) expect((await cli(["session", "conversation", "append", session.id, text])).code).toBe(0);
    model.enqueue({ events: [{ type: "text", text: "A note answer." }] });
    expect(await cli(["run", "--session", session.id, "Write a note"])).toMatchObject({ code: 0, stdout: "A note answer.\n" });

    const first = await succeeded<HistoryPage>(cli(["session", "history", session.id, "--limit", "2"]));
    expect(first.rows.map((row) => row.body.text)).toEqual(["Alpha note", "beta NOTE"]);
    expect(first.nextAfter).toEqual({ sourceSequence: 2, itemIndex: 0 });
    const rest = await succeeded<HistoryPage>(cli(["session", "history", session.id, "--through", String(first.through), "--after", "2.0"]));
    expect(rest.rows.map((row) => [row.kind, row.body.text])).toEqual([
      ["entry", "gamma notebook"],
      ["prompt", "Write a note"],
      ["text", "A note answer."],
    ]);
    expect((await succeeded<HistoryPage>(cli(["session", "history", session.id, "--row", "4.1"]))).rows[0]!.body.text).toBe("A note answer.");

    const words = await succeeded<SearchPage>(cli(["session", "search", session.id, "note", "--whole-word", "--all"]));
    expect(words.hits.map((hit) => hit.preview)).toEqual(["Alpha note", "beta NOTE", "Write a note", "A note answer."]);
    const exact = await succeeded<SearchPage>(cli(["session", "search", session.id, "NOTE", "--case-sensitive"]));
    expect(exact.hits.map((hit) => hit.position)).toEqual([{ sourceSequence: 2, itemIndex: 0 }]);
    const paged = await succeeded<SearchPage>(cli(["session", "search", session.id, "note", "--limit", "1"]));
    expect(paged.nextAfter).not.toBeNull();
    const cursor = `${paged.nextAfter!.position.sourceSequence}.${paged.nextAfter!.position.itemIndex}:${paged.nextAfter!.field}:${paged.nextAfter!.byteOffset}`;
    const next = await succeeded<SearchPage>(cli(["session", "search", session.id, "note", "--limit", "1", "--after", cursor]));
    expect(next.hits[0]!.preview).toBe("beta NOTE");

    const diagnostics = await succeeded<DiagnosticsPage>(cli(["session", "diagnostics", session.id]));
    expect(diagnostics).toEqual({ sessionId: session.id, through: 0, diagnostics: [], nextBefore: null });
    const context = await succeeded<ContextResponse>(cli(["session", "context", session.id]));
    expect(context.request).toMatchObject({ sequence: 1, turnPhase: "completed", model: TEST_MODEL });
    expect(context.request!.groups.find((group) => group.role === "user")?.messages).toBe(4);
  });

  it("refuses malformed positions and cursors as usage errors, and server refusals as typed errors", async () => {
    const session = await succeeded<Session>(cli(["session", "create"]));
    const badAfter = await cli(["session", "history", session.id, "--after", "two"]);
    expect(badAfter.code).toBe(2);
    expect(badAfter.stderr).toMatch(/--after must be SOURCE_SEQUENCE.ITEM_INDEX/);
    expect((await cli(["session", "search", session.id, "x", "--after", "1.0:title:0"])).code).toBe(2);
    const past = await cli(["session", "history", session.id, "--through", "4"]);
    expect(past.code).toBe(1);
    expect(past.stderr).toMatch(/^error: ValidationError: .*through/);
    expect((await cli(["session", "context", session.id, "--through", "1"])).stderr).toMatch(/^error: ValidationError: /);
  });
});
