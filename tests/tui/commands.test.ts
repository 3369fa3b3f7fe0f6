// Slash commands with their suggestion menu, the Ctrl+X leader bindings, and the pickers
// (session, model then effort, agent, fork), with model-preferences.json.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sdk, unwrap } from "../../clients/index.js";
import { testProviderConfig } from "../support/model.js";
import { KEY, tuiPerTest } from "./support.js";

const { harness, open } = tuiPerTest({
  config: (model) => {
    const providers = testProviderConfig(model) as { test: { definition: { models: Record<string, unknown> } } };
    providers.test.definition.models["thinker"] = {
      displayName: "Thinker",
      limits: { contextUnits: 100000, outputUnits: 4096 },
      capabilities: { reasoning: true, reasoningEfforts: ["low", "high"] },
    };
    return { providers };
  },
});

const turnsOf = async (sessionId: string) =>
  (await unwrap(sdk.listSessionTurns({ client: harness().api.client, path: { server: "local", sessionId } }))).turns.map((state) => state.turn);

describe("suggestions", () => {
  it("the opening screen lists only the commands that work before the first prompt", async () => {
    const tui = await open();
    await tui.press("/");
    const frame = await tui.waitFor(/\/exit/);
    for (const name of ["/new", "/queue", "/sessions", "/models", "/effort", "/skills", "/exit"]) expect(frame).toContain(name);
    for (const name of ["/steer", "/agents", "/fork", "/subagents", "/back"]) expect(frame).not.toContain(name);
  });

  it("filters as you type, ↓ moves, Tab completes, Esc hides the menu", async () => {
    const tui = await open();
    await tui.press("/", "s");
    let frame = await tui.waitFor(/› \/sessions/);
    expect(frame).toContain("/skills");
    expect(frame).not.toContain("/models");
    await tui.press(KEY.down, KEY.tab);
    frame = await tui.waitFor(/│ \/skills /);
    for (let count = 0; count < "/skills ".length; count++) await tui.press(KEY.backspace);
    await tui.press("/", "m");
    await tui.waitFor(/› \/models/);
    await tui.press(KEY.escape);
    frame = await tui.waitFor(/Enter send/);
    expect(frame).not.toContain("› /models");
  });

  it("a command that needs a Session says so on the opening screen", async () => {
    const tui = await open();
    await tui.submit("/steer now");
    await tui.waitFor(/\/steer needs a Session: send a prompt first/);
  });

  it("an unknown command is named", async () => {
    const tui = await open();
    await tui.submit("/frobnicate");
    await tui.waitFor(/unknown command \/frobnicate/);
  });
});

describe("Session commands", () => {
  it("/new TEXT starts a new Session with that prompt; the previous Session stays", async () => {
    const tui = await open();
    await tui.submit("@say In the first Session.");
    await tui.waitFor(/In the first Session\.[\s\S]*test\/scripted · \d/);
    const first = tui.controller.sessionId!;
    await tui.submit("/new @say In the second Session.");
    await tui.waitFor(/In the second Session\.[\s\S]*test\/scripted · \d/);
    const second = tui.controller.sessionId!;
    expect(second).not.toBe(first);
    expect((await turnsOf(first)).length).toBe(1);
    expect((await turnsOf(second)).length).toBe(1);
  });

  it("Ctrl+X N starts a new Session without a prompt", async () => {
    const tui = await open();
    await tui.submit("@say One.");
    await tui.waitFor(/One\.[\s\S]*test\/scripted · \d/);
    const first = tui.controller.sessionId!;
    await tui.press(KEY.ctrlX, "n");
    await tui.waitFor(new RegExp(`ze (?!${first.slice(0, 8)})[0-9a-f]{8}`));
    expect((await turnsOf(tui.controller.sessionId!)).length).toBe(0);
  });

  it("/queue creates a later Turn while one runs; /steer follows up on the running one", async () => {
    const h = harness();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    h.model.enqueue({ events: [{ type: "text", text: "Working on it." }, { type: "delay", ms: 50 }] });
    const tui = await open();
    // The first answer ends, but its Turn is kept running by a second, held model request.
    h.model.reply(async () => {
      await held;
      return { events: [{ type: "text", text: "Steered answer." }] };
    });
    await tui.submit("@call read {\"filePath\":\"missing.txt\"}");
    await tui.waitFor(/working/);
    await tui.submit("/queue @say Queued later.");
    await tui.submit("/steer also this");
    release();
    await tui.waitFor(/Queued later\.[\s\S]*test\/scripted · \d/);
    const turns = await turnsOf(tui.controller.sessionId!);
    expect(turns.length).toBe(2);
    expect(JSON.stringify(turns[0]!.parts)).toContain("also this");
  });

  it("/steer without a running Turn reports an error instead of queueing", async () => {
    const tui = await open();
    await tui.submit("@say Settled.");
    await tui.waitFor(/Settled\.[\s\S]*test\/scripted · \d/);
    await tui.submit("/steer more");
    await tui.waitFor(/\/steer needs a running Turn/);
    expect((await turnsOf(tui.controller.sessionId!)).length).toBe(1);
  });

  it("/sessions lists this project's Sessions newest first and switches on Enter", async () => {
    const h = harness();
    const older = await h.createSession({ workdir: h.home.root });
    await h.finish(older, await h.submit(older, "@say From the older Session."));
    const tui = await open();
    await tui.submit("@say From the newer Session.");
    await tui.waitFor(/From the newer Session\.[\s\S]*test\/scripted · \d/);
    await tui.submit("/sessions");
    const picker = await tui.waitFor(/Sessions[\s\S]*current/);
    const lines = picker.split("\n");
    const newer = lines.findIndex((line) => line.includes(tui.controller.sessionId!.slice(0, 8)) && line.includes("current"));
    const old = lines.findIndex((line) => line.includes(older.slice(0, 8)));
    expect(newer).toBeGreaterThan(-1);
    expect(old).toBeGreaterThan(newer);
    await tui.press(KEY.down, KEY.enter);
    await tui.waitFor(/From the older Session\./);
    expect(tui.controller.sessionId).toBe(older);
  });

  it("/fork opens the fork picker; Enter forks before that Turn and opens the fork with its prompt in the composer", async () => {
    const tui = await open();
    await tui.submit("@say Answer one.");
    await tui.waitFor(/Answer one\.[\s\S]*test\/scripted · \d/);
    await tui.submit("@say Answer two.");
    await tui.waitFor(/Answer two\.[\s\S]*test\/scripted · \d/);
    const original = tui.controller.sessionId!;
    await tui.submit("/fork");
    await tui.waitFor(/Fork before a Turn[\s\S]*› #2/);
    await tui.press(KEY.enter);
    await tui.waitFor(/forked before Turn #2/);
    const fork = tui.controller.sessionId!;
    expect(fork).not.toBe(original);
    expect(tui.frame()).toContain("@say Answer two.");
    const { session } = await unwrap(sdk.getSession({ client: harness().api.client, path: { server: "local", sessionId: fork } }));
    expect(session.forkedFrom?.parentSessionId).toBe(original);
  });

  it("/exit quits", async () => {
    const tui = await open();
    await tui.submit("/q");
    await tui.until(() => tui.controller.state.exited);
  });
});

describe("models, effort and agents", () => {
  // The catalog (`models`, then the Session's `sessionModels`) lists test/scripted (the
  // configured default, no reasoning) and test/thinker (effort levels low and high).
  it("the header names the catalog's default model; /models lists the catalog, Tab favorites, Enter then asks for the effort; all persist", async () => {
    const h = harness();
    const tui = await open();
    const opening = await tui.waitFor(/test\/scripted · default agent/);
    expect(opening).not.toContain("default model");
    await tui.submit("/models");
    const picker = await tui.waitFor(/Models[\s\S]*test\/thinker Thinker · effort low\/high/);
    expect(picker).toMatch(/› test\/scripted Scripted · default/);
    // A typed PROVIDER/MODEL the catalog does not list is offered as it is.
    await tui.press(..."other/model");
    await tui.waitFor(/› other\/model \(typed\)/);
    await tui.press(KEY.escape);
    await tui.submit("/models thinker");
    await tui.waitFor(/Models filter: thinker[\s\S]*› test\/thinker/);
    await tui.press(KEY.tab); // favorite
    await tui.waitFor(/★ test\/thinker Thinker · favorite/);
    await tui.press(KEY.enter);
    const efforts = await tui.waitFor(/Reasoning effort for test\/thinker[\s\S]*› default[\s\S]*high/);
    expect(efforts).not.toMatch(/medium|xhigh/);
    await tui.press(KEY.down, KEY.down, KEY.enter);
    await tui.waitFor(/test\/thinker \(high\) · default agent/);
    await tui.submit("@say Thought hard.");
    await tui.waitFor(/Thought hard\.[\s\S]*test\/thinker · \d/);
    const [turn] = await turnsOf(tui.controller.sessionId!);
    expect(turn!.model).toBe("test/thinker");
    expect(turn!.request.reasoningEffort).toBe("high");
    const preferences = JSON.parse(readFileSync(join(h.home.env["XDG_DATA_HOME"]!, "ze-harness", "model-preferences.json"), "utf8"));
    expect(preferences).toMatchObject({ favorites: ["test/thinker"], recent: ["test/thinker"], efforts: { "test/thinker": "high" } });
  });

  it("a remembered model is offered first in a later run, with its remembered effort", async () => {
    const first = await open();
    await first.submit("/models thinker");
    await first.waitFor(/› test\/thinker/);
    await first.press(KEY.enter);
    await first.waitFor(/Reasoning effort for test\/thinker/);
    await first.press(KEY.down, KEY.enter); // low
    await first.waitFor(/test\/thinker \(low\) · default agent/);
    first.unmount();
    const second = await open();
    await second.submit("/models");
    await second.waitFor(/Models[\s\S]*› test\/thinker Thinker · recent/);
    await second.press(KEY.enter);
    await second.waitFor(/Reasoning effort for test\/thinker/);
    await second.press(KEY.escape);
    await second.waitFor(/test\/thinker \(low\) · default agent/);
  });

  it("/effort takes an advertised level or default and refuses anything else; bare /effort opens the model's levels", async () => {
    const tui = await open();
    await tui.waitFor(/test\/scripted · default agent/);
    await tui.submit("/effort low");
    await tui.waitFor(/test\/scripted advertises no reasoning effort levels/);
    expect(tui.frame()).not.toContain("(low)");
    await tui.submit("/models thinker");
    await tui.waitFor(/› test\/thinker/);
    await tui.press(KEY.enter);
    await tui.waitFor(/Reasoning effort for test\/thinker/);
    await tui.press(KEY.escape);
    await tui.submit("/effort low");
    await tui.waitFor(/test\/thinker \(low\)/);
    await tui.submit("/effort max");
    await tui.waitFor(/test\/thinker advertises the effort levels low, high/);
    await tui.submit("/effort default");
    await tui.waitFor(/test\/thinker · default agent/);
    await tui.submit("/effort extreme");
    await tui.waitFor(/\/effort takes one of none, minimal, low, medium, high, xhigh, max or default/);
    await tui.submit("/effort");
    const picker = await tui.waitFor(/Reasoning effort for test\/thinker[\s\S]*› default/);
    expect(picker).not.toMatch(/minimal|medium/);
    await tui.press(KEY.down, KEY.down, KEY.enter);
    await tui.waitFor(/test\/thinker \(high\)/);
  });

  it("Ctrl+X E cycles the selected model's advertised levels, then back to default; the next Turn uses the level", async () => {
    const tui = await open();
    await tui.waitFor(/test\/scripted · default agent/);
    await tui.press(KEY.ctrlX, "e");
    await tui.waitFor(/test\/scripted advertises no reasoning effort levels/);
    await tui.submit("/models thinker");
    await tui.waitFor(/› test\/thinker/);
    await tui.press(KEY.enter);
    await tui.waitFor(/Reasoning effort for test\/thinker/);
    await tui.press(KEY.escape);
    await tui.press(KEY.ctrlX, "e");
    await tui.waitFor(/test\/thinker \(low\)/);
    await tui.press(KEY.ctrlX, "e");
    await tui.waitFor(/test\/thinker \(high\)/);
    await tui.press(KEY.ctrlX, "e");
    await tui.waitFor(/reasoning effort for test\/thinker: default/);
    expect(tui.frame()).toMatch(/test\/thinker · default agent/);
    await tui.press(KEY.ctrlX, "e");
    await tui.waitFor(/test\/thinker \(low\)/);
    await tui.submit("@say Cycled.");
    await tui.waitFor(/Cycled\.[\s\S]*test\/thinker · \d/);
    const [turn] = await turnsOf(tui.controller.sessionId!);
    expect(turn!.request.reasoningEffort).toBe("low");
  });

  it("/agents picks the agent for the next Turn; Tab cycles primary agents", async () => {
    const tui = await open();
    await tui.submit("@say Hi.");
    await tui.waitFor(/Hi\.[\s\S]*test\/scripted · \d/);
    await tui.submit("/agents plan");
    await tui.waitFor(/Agents[\s\S]*› plan/);
    await tui.press(KEY.enter);
    await tui.waitFor(/test\/scripted · plan/);
    await tui.submit("@say Planned.");
    await tui.waitFor(/Planned\.[\s\S]*test\/scripted · \d/);
    const turns = await turnsOf(tui.controller.sessionId!);
    expect(turns[1]!.request.agent).toBe("plan");
    await tui.press(KEY.tab);
    await tui.waitFor(/test\/scripted · (?!plan)\w+/);
  });
});

describe("tips and the shortcut panel", () => {
  it("Ctrl+Alt+O hides the first-run tips, and the next launch remembers it", async () => {
    const h = harness();
    const first = await open();
    expect(first.frame()).toContain("Ctrl+Alt+O hides tips");
    await first.press("\u001b\u000f");
    await first.waitFor(/first-run tips hidden/);
    expect(first.frame()).not.toContain("Ctrl+Alt+O hides tips");
    first.unmount();
    const preferences = JSON.parse(readFileSync(join(h.home.env["XDG_DATA_HOME"]!, "ze-harness", "model-preferences.json"), "utf8"));
    expect(preferences.hideTips).toBe(true);
    const second = await open();
    await second.waitFor(/Ask anything/);
    expect(second.frame()).not.toContain("Ctrl+Alt+O hides tips");
  });

  it("Ctrl+X shows the shortcut panel while the leader is pending; Ctrl+Alt+K pins it", async () => {
    const tui = await open();
    await tui.press(KEY.ctrlX);
    await tui.waitFor(/Ctrl\+X then: M model/);
    await tui.press(KEY.escape);
    await tui.waitFor(/Enter send/);
    await tui.press("\u001b\u000b");
    await tui.waitFor(/Ctrl\+X then: M model/);
    await tui.press("h", "i");
    const frame = await tui.waitFor(/│ hi/);
    expect(frame).toMatch(/Ctrl\+X then: M model/);
  });
});
