// Inline permission requests (Allow once / Allow always / Reject, Esc rejects) and questions
// (options with ↑/↓ and Enter, a typed answer, Esc dismisses), answered through the server.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sdk, unwrap, type ToolTurnPart } from "../../clients/index.js";
import { KEY, tuiPerTest, type Tui } from "./support.js";

const { harness, open } = tuiPerTest();

function outsideNote(): string {
  const outside = join(harness().home.dir, "outside");
  mkdirSync(outside, { recursive: true });
  writeFileSync(join(outside, "note.txt"), "the outside note");
  return join(outside, "note.txt");
}

async function toolPart(tui: Tui): Promise<ToolTurnPart> {
  const h = harness();
  const sessionId = tui.controller.sessionId!;
  const { turns } = await unwrap(sdk.listSessionTurns({ client: h.api.client, path: { server: "local", sessionId } }));
  return turns[turns.length - 1]!.turn.parts.find((part): part is ToolTurnPart => part.type === "tool")!;
}

const question = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({ questions: [{ question: "Which colour should the button be?", header: "Colour", options: [{ label: "Blue", description: "Calm" }, { label: "Red", description: "Loud" }], ...extra }] });

describe("permission requests", () => {
  it("appear inline with the status row saying approval is required; Enter on Allow once runs the tool", async () => {
    const note = outsideNote();
    const tui = await open();
    await tui.submit(`@call read {"filePath":"${note}"}\n@then Read the outside note.`);
    const asked = await tui.waitFor(/Allow once[\s\S]*Allow always[\s\S]*Reject/);
    expect(asked).toMatch(/Permission: external_directory/);
    expect(asked).toContain("Approval required");
    await tui.press(KEY.enter);
    await tui.waitFor(/Read the outside note\.[\s\S]*test\/scripted · \d/);
    expect((await toolPart(tui)).approval).toMatchObject({ state: "resolved", decision: "allow", reply: "once" });
  });

  it("→ then Enter replies Allow always", async () => {
    const note = outsideNote();
    const tui = await open();
    await tui.submit(`@call read {"filePath":"${note}"}\n@then Done reading.`);
    await tui.waitFor(/Allow always/);
    await tui.press(KEY.right, KEY.enter);
    await tui.waitFor(/Done reading\.[\s\S]*test\/scripted · \d/);
    expect((await toolPart(tui)).approval).toMatchObject({ state: "resolved", decision: "allow", reply: "always" });
  });

  it("Esc rejects the open request", async () => {
    const note = outsideNote();
    const tui = await open();
    await tui.submit(`@call read {"filePath":"${note}"}\n@then Could not read it.`);
    await tui.waitFor(/Allow once/);
    await tui.press(KEY.escape);
    // A rejected call fails the Turn (the server's rule); the row and the footer say so.
    const frame = await tui.waitFor(/failed: tool_denied/);
    expect(frame).toMatch(/✗ read .*denied/);
    expect(frame).not.toContain("Allow once");
    expect((await toolPart(tui)).approval).toMatchObject({ state: "resolved", decision: "deny", reply: "reject" });
  });
});

describe("questions", () => {
  it("show the question and its options; ↓ and Enter answer with the second option", async () => {
    const tui = await open();
    await tui.submit(`@call question ${question()}\n@then Going with it.`);
    const asked = await tui.waitFor(/Response required/);
    expect(asked).toMatch(/Colour\s*│\s*\n│ Which colour should the button be\?/);
    expect(asked).toMatch(/› Blue — Calm/);
    await tui.press(KEY.down, KEY.enter);
    await tui.waitFor(/Going with it\.[\s\S]*test\/scripted · \d/);
    expect((await toolPart(tui)).question).toMatchObject({ state: "answered", answers: [["Red"]] });
  });

  it("a typed answer is sent as a custom answer", async () => {
    const tui = await open();
    await tui.submit(`@call question ${question()}\n@then Custom it is.`);
    await tui.waitFor(/Response required/);
    await tui.press("Green", KEY.enter);
    await tui.waitFor(/Custom it is\./);
    expect((await toolPart(tui)).question).toMatchObject({ state: "answered", answers: [["Green"]] });
  });

  it("Esc dismisses the question", async () => {
    const tui = await open();
    await tui.submit(`@call question ${question()}\n@then Dismissed.`);
    await tui.waitFor(/Response required/);
    await tui.press(KEY.escape);
    await tui.waitFor(/Dismissed\.[\s\S]*test\/scripted · \d/);
    expect((await toolPart(tui)).question).toMatchObject({ state: "dismissed" });
  });
});
