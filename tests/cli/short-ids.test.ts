// Short ids through the built binary: a unique prefix (8+ hex digits) of a Session, Turn or
// request id works wherever the full id does; ambiguity and no match are one line naming what
// the user typed; the TUI's -s takes a prefix too (in a real PTY).
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { Session, SessionTurnsResponse, Turn } from "../../clients/index.js";
import { startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { assertBuilt, runCli, scriptByPrompt, succeeded, type CliOptions } from "../support/cli.js";
import { tempHome, type TempHome } from "../support/harness.js";
import { TEST_MODEL, testProviderConfig, writeGlobalConfig } from "../support/model.js";
import { startPty } from "../support/pty.js";

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

let model: TestModel;
let script: ReturnType<typeof scriptByPrompt>;
let home: TempHome;
let options: CliOptions;
// Two Sessions that share their first 8 hex digits, a third that does not.
const twinA = "0beb6619-0000-4000-8000-00000000000a";
const twinB = "0beb6619-1111-4000-8000-00000000000b";
const single = "5ca1ab1e-2222-4000-8000-00000000000c";
let turn: Turn;

const cli = (args: readonly string[]) => runCli(["--embedded", ...args], options);

beforeAll(async () => {
  assertBuilt();
  model = await startTestModel();
  script = scriptByPrompt(model);
  home = tempHome("ze-cli-short-ids-");
  writeGlobalConfig(home, { model: TEST_MODEL, providers: testProviderConfig(model) });
  options = { env: home.env, cwd: home.root };
  for (const id of [twinA, twinB, single]) await succeeded(cli(["session", "create", "--session", id]));
  script("Short ids please", { events: [{ type: "text", text: "Hello." }] });
  expect((await cli(["run", "--session", "5ca1ab1e", "Short ids please"])).code).toBe(0);
  const page = await succeeded<SessionTurnsResponse>(cli(["turn", "list", single]));
  turn = page.turns[0]!.turn;
});
afterAll(async () => {
  await model?.close();
  home?.cleanup();
});

describe("short ids", () => {
  it("a unique Session prefix works as SESSION_ID and as --session (run continued the Session)", async () => {
    expect(turn.sessionId).toBe(single);
    const shown = await succeeded<Session>(cli(["session", "show", "5ca1ab1e"]));
    expect(shown.id).toBe(single);
    // Longer prefixes, upper case and the UUID's hyphens are fine too.
    expect((await succeeded<Session>(cli(["session", "show", "5CA1AB1E-22"]))).id).toBe(single);
    expect((await succeeded<Session>(cli(["session", "show", "0beb6619-1"]))).id).toBe(twinB);
  });

  it("a Turn prefix resolves within its (prefixed) Session", async () => {
    const shown = await succeeded<Turn>(cli(["turn", "show", "5ca1ab1e", turn.id.slice(0, 10)]));
    expect(shown.id).toBe(turn.id);
  });

  it("session fork --turn takes a Turn id prefix; up to 7 digits stay a sequence", async () => {
    const forked = await succeeded<Session>(cli(["session", "fork", "5ca1ab1e", "--turn", turn.id.slice(0, 8)]));
    expect(forked.forkedFrom).toMatchObject({ parentSessionId: single, turnId: turn.id });
    const bySequence = await succeeded<Session>(cli(["session", "fork", "5ca1ab1e", "--turn", "1"]));
    expect(bySequence.forkedFrom).toEqual(forked.forkedFrom);
  });

  it("an ambiguous prefix is one line listing the matches, and nothing happens", async () => {
    const result = await cli(["session", "delete", "0beb6619"]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toBe(`error: ConflictError: "0beb6619" matches 2 Sessions: ${twinA}, ${twinB}; type more of the id\n`);
    expect((await succeeded<Session>(cli(["session", "show", twinA]))).id).toBe(twinA);
  });

  it("an unknown prefix names what the user typed", async () => {
    const result = await cli(["session", "show", "deadbeef"]);
    expect(result).toMatchObject({ code: 1, stdout: "", stderr: 'error: NotFoundError: no Session id starts with "deadbeef"\n' });
    const turnResult = await cli(["turn", "cancel", single, "deadbeef"]);
    expect(turnResult.stderr).toBe('error: NotFoundError: no Turn id starts with "deadbeef"\n');
    const request = await cli(["permission", "reply", single, "deadbeef", "once"]);
    expect(request.stderr).toBe('error: NotFoundError: no pending permission request id starts with "deadbeef"\n');
    const question = await cli(["question", "reject", single, "deadbeef"]);
    expect(question.stderr).toBe('error: NotFoundError: no pending question id starts with "deadbeef"\n');
  });

  it("a value that is no id and no prefix is a usage error naming it (exit 2), not oclif's parse wording", async () => {
    for (const args of [["session", "show", "0beb66"], ["turn", "show", single, "xyz"], ["run", "--session", "nothex!!", "hi"]]) {
      const result = await cli(args);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/^error: "[^"]+" is not a (Session|Turn) id \(a UUID, or a unique prefix of 8 or more hex digits\)\n$/);
      expect(result.stderr).not.toContain("Parsing");
    }
  });

  it("the TUI's -s takes a prefix: an unknown one is one line naming it, never a flag the user did not type", async () => {
    const pty = startPty(["--embedded", "-s", "deadbeef"], { env: home.env, cwd: home.root });
    const exited = await pty.exited;
    expect(exited.exitCode).toBe(1);
    expect(pty.screen()).toContain('error: NotFoundError: no Session id starts with "deadbeef"');
    expect(pty.screen()).not.toContain("--resume");
  });

  it("the TUI's -s with a unique prefix opens that Session", async () => {
    const pty = startPty(["--embedded", "-s", "5ca1ab1e"], { env: home.env, cwd: home.root });
    try {
      await pty.waitFor(/Short ids please/, 30_000);
    } finally {
      pty.kill();
    }
  });

  it("the TUI's Ctrl+X O takes a prefix too, and an ambiguous one names the matches", async () => {
    const pty = startPty(["--embedded"], { env: home.env, cwd: home.root });
    try {
      await pty.waitFor(/Ctrl\+X O/, 30_000);
      // Ctrl+X, then O, each its own key press; then the id once the field is open.
      const open = async (): Promise<void> => {
        pty.write("\x18");
        await pty.waitFor(/Ctrl\+X then:/, 30_000);
        pty.write("o");
        await pty.waitFor(/Open a Session/, 30_000);
      };
      await open();
      pty.write("0beb6619");
      await pty.waitFor(/0beb6619/, 30_000);
      pty.write("\r");
      await pty.waitFor(/matches 2 Sessions/, 30_000);
      // The field stays open with what was typed: clear it and type more of an id.
      pty.write("\x7f".repeat(8));
      await pty.waitFor(/Session ID \(a UUID or 8\+ hex digits of one\)/, 30_000);
      pty.write("5ca1ab1e");
      await pty.waitFor(/5ca1ab1e/, 30_000);
      pty.write("\r");
      await pty.waitFor(/Short ids please/, 30_000);
    } finally {
      pty.kill();
    }
  });
});
