// The opening screen and the conversation view: a prompt starts a Session in the client's
// directory, the answer streams, reasoning and tool rows, the footer under a settled Turn,
// the header, Esc cancelling, history on resume.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sdk, unwrap } from "../../clients/index.js";
import { KEY, tuiPerTest } from "./support.js";

const { harness, open } = tuiPerTest();

describe("the opening screen", () => {
  it("has one input; Enter starts a Session in the client's directory and submits the prompt", async () => {
    const h = harness();
    const directory = join(h.home.root, "project");
    mkdirSync(directory);
    const tui = await open({ directory });
    expect(tui.frame()).toContain("Ask anything");
    await tui.submit("@say Hello from the scripted model.");
    const frame = await tui.waitFor(/test\/scripted · \d/);
    expect(frame).toContain("› you @say Hello from the scripted model.");
    expect(frame).toContain("Hello from the scripted model.");
    const sessionId = tui.controller.sessionId!;
    const { session } = await unwrap(sdk.getSession({ client: h.api.client, path: { server: "local", sessionId } }));
    expect(session.workdir).toBe(directory);
    expect(session.systemPrompt).toMatch(/Ze/);
  });

  it("without a client directory (--no-workdir) the Session uses the server root", async () => {
    const h = harness();
    const tui = await open({ directory: undefined, noDirectory: true });
    await tui.submit("@say Rooted.");
    await tui.waitFor(/Rooted\.[\s\S]*test\/scripted · \d/);
    const { session } = await unwrap(sdk.getSession({ client: h.api.client, path: { server: "local", sessionId: tui.controller.sessionId! } }));
    expect(session.workdir).toBe("."); // the server root, stored relative to itself
  });

  it("a client directory that cannot be used falls back to the server root and says so", async () => {
    const h = harness();
    const missing = join(h.home.dir, "does-not-exist");
    const tui = await open({ directory: missing });
    await tui.submit("@say Fell back.");
    await tui.waitFor(/Fell back\.[\s\S]*test\/scripted · \d/);
    expect(tui.frame()).toContain("cannot be used");
    expect(tui.frame()).toContain("this Session uses the server root");
    const { session } = await unwrap(sdk.getSession({ client: h.api.client, path: { server: "local", sessionId: tui.controller.sessionId! } }));
    expect(session.workdir).toBe("."); // the server root, stored relative to itself
  });

  it("streams the answer: text appears before the Turn settles", async () => {
    const h = harness();
    h.model.enqueue({ events: [{ type: "text", text: "first half" }, { type: "delay", ms: 400 }, { type: "text", text: " second half" }] });
    const tui = await open();
    await tui.submit("stream please");
    const partial = await tui.waitFor(/first half/);
    // The same frame can hold the whole answer only once the delay passed; a partial frame exists.
    expect(tui.frames().some((frame) => frame.includes("first half") && !frame.includes("second half"))).toBe(true);
    expect(partial).toContain("first half");
    await tui.waitFor(/first half second half[\s\S]*test\/scripted · \d/);
  });

  it("opens an existing Session by id with Ctrl+X O and shows its history", async () => {
    const h = harness();
    const sessionId = await h.createSession();
    const turnId = await h.submit(sessionId, "@say Earlier answer.");
    await h.finish(sessionId, turnId);
    const tui = await open();
    await tui.press(KEY.ctrlX, "o");
    await tui.waitFor(/Open a Session/);
    await tui.press(sessionId, KEY.enter);
    const frame = await tui.waitFor(/Earlier answer\./);
    // Another client (the test's, id "test") wrote it: its short id instead of `you`.
    expect(frame).toContain("› test @say Earlier answer.");
    expect(frame).toContain(sessionId.slice(0, 8));
  });

  it("an id that is no UUID is refused with a clear message", async () => {
    const tui = await open();
    await tui.press(KEY.ctrlX, "o", "not-a-session", KEY.enter);
    await tui.waitFor(/"not-a-session" is not a Session id/);
  });
});

describe("the conversation view", () => {
  it("shows reasoning collapsed with its duration and first line, and Ctrl+X T expands it", async () => {
    const h = harness();
    h.model.enqueue({ events: [{ type: "reasoning", text: "Consider the options carefully.\nSecond thought line." }, { type: "text", text: "Decided." }] });
    const tui = await open();
    await tui.submit("think first");
    const frame = await tui.waitFor(/Decided\.[\s\S]*test\/scripted · \d/);
    expect(frame).toMatch(/▸ Thought( for \d[\d.]*m?s)? · Consider the options carefully\./);
    expect(frame).not.toContain("Second thought line.");
    await tui.press(KEY.ctrlX, "t");
    await tui.waitFor(/▾ Thought[\s\S]*Second thought line\./);
  });

  it("shows a tool call with its output under it; long output is collapsed to three lines", async () => {
    const h = harness();
    writeFileSync(join(h.home.root, "notes.txt"), ["one", "two", "three", "four", "five", "six"].join("\n"));
    const tui = await open();
    await tui.submit('@call read {"filePath":"notes.txt"}\n@then I read the notes.');
    const frame = await tui.waitFor(/I read the notes\.[\s\S]*test\/scripted · \d/);
    expect(frame).toMatch(/✓ read notes\.txt/);
    expect(frame).toMatch(/more lines? \(Ctrl\+X T\)/);
    expect(frame).not.toMatch(/six/);
    await tui.press(KEY.ctrlX, "t");
    await tui.waitFor(/six/);
  });

  it("the header names the model, the agent and the context use once a Turn reports usage", async () => {
    const h = harness();
    h.model.enqueue({ events: [{ type: "text", text: "Counted." }], usage: { promptTokens: 20_000, completionTokens: 10 } });
    const tui = await open();
    await tui.submit("count the tokens");
    const frame = await tui.waitFor(/Counted\.[\s\S]*test\/scripted · \d/);
    expect(frame).toMatch(/test\/scripted · \w+ · \d[\d.]*K \(\d+%\)/);
  });

  it("Esc cancels the running Turn", async () => {
    const h = harness();
    h.model.enqueue({ hang: true });
    const tui = await open();
    await tui.submit("never answers");
    await tui.waitFor(/working/);
    await tui.press(KEY.escape);
    const frame = await tui.waitFor(/cancelled/);
    expect(frame).toMatch(/cancelled: cancelled from the TUI/);
  });

  it("resuming a Session shows its history, and a later prompt continues it", async () => {
    const h = harness();
    const sessionId = await h.createSession();
    await h.finish(sessionId, await h.submit(sessionId, "@say The first answer."));
    const tui = await open({ sessionId });
    await tui.waitFor(/The first answer\./);
    await tui.submit("@say The second answer.");
    await tui.waitFor(/The second answer\.[\s\S]*test\/scripted · \d/);
    const { turns } = await unwrap(sdk.listSessionTurns({ client: h.api.client, path: { server: "local", sessionId } }));
    expect(turns.map((state) => state.turn.sequence)).toEqual([1, 2]);
  });
});
