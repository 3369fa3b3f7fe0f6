// The hook pipeline inside real Turns (an embedding host's own hooks, passed to createHarness):
// `turn.before`, `model.request.before`, `tool.execute.before` (input replacement, allow, deny)
// and `tool.execute.after`, and a throwing hook failing the Turn with `runtime_failed`.
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ToolTurnPart, TurnStreamEvent } from "../../clients/index.js";
import { HookPipeline, type HookHandlers, type HookName } from "../../services/plugins/hooks.js";
import { startModelHarness, type ModelHarness } from "../support/model.js";
import { queue, runToEnd, seen } from "./helpers.js";

const hooks = new HookPipeline();
let registered: (() => void)[] = [];
const on = <N extends HookName>(name: N, handler: HookHandlers[N]): void => void registered.push(hooks.register(name, handler));

let h: ModelHarness;
let outside: string;
beforeAll(async () => {
  h = await startModelHarness({ harness: { hooks } });
  outside = join(h.home.dir, "outside");
  mkdirSync(outside);
  writeFileSync(join(outside, "note.txt"), "OUTSIDE-91c2\n");
  writeFileSync(join(h.home.root, "a.txt"), "ALPHA-file\n");
  writeFileSync(join(h.home.root, "b.txt"), "BRAVO-file\n");
});
afterAll(async () => {
  await h.close();
});
afterEach(() => {
  for (const unregister of registered) unregister();
  registered = [];
  h.model.reply(() => ({ events: [{ type: "text", text: "unscripted" }] }));
});

const readCall = (filePath: string) => ({ type: "tool_call" as const, name: "read", arguments: { filePath } });
const done = (words = "Done.") => ({ events: [{ type: "text" as const, text: words }] });
const tools = (parts: readonly { type: string }[]) => parts.filter((part): part is ToolTurnPart => part.type === "tool");
const ofType = <K extends TurnStreamEvent["type"]>(events: TurnStreamEvent[], type: K) =>
  events.filter((event): event is Extract<TurnStreamEvent, { type: K }> => event.type === type);

describe("hook points", () => {
  it("turn.before runs once with the prompt and model; model.request.before once per request with its iteration and messages", async () => {
    const calls: { name: string; input: unknown }[] = [];
    on("turn.before", async (input) => void calls.push({ name: "turn.before", input }));
    on("model.request.before", async (input) => void calls.push({ name: "model.request.before", input }));
    h.model.enqueue({ events: [readCall("a.txt")] }, done("Read."));
    const sessionId = await h.createSession({ systemPrompt: "Be brief." });
    const { turnId } = await queue(h, sessionId, "Read a.txt");
    const { turn } = await runToEnd(h, sessionId, turnId);
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "Read." });
    expect(calls.map((call) => call.name)).toEqual(["turn.before", "model.request.before", "model.request.before"]);
    expect(calls[0]!.input).toEqual({ turnId, prompt: [{ type: "text", text: "Read a.txt" }], model: { providerId: "test", modelId: "scripted" } });
    expect(calls[1]!.input).toMatchObject({ turnId, providerId: "test", modelId: "scripted", iteration: 0, systemPrompt: "Be brief." });
    expect(calls[2]!.input).toMatchObject({ iteration: 1 });
    // The second request's messages carry the tool result the model is about to see.
    expect(JSON.stringify((calls[2]!.input as { messages: unknown[] }).messages)).toContain("ALPHA-file");
  });

  it("tool.execute.before sees validated input and may replace it; tool.execute.after sees the settled result", async () => {
    const before: unknown[] = [];
    const after: unknown[] = [];
    on("tool.execute.before", async (input) => {
      before.push(input);
      return { input: { filePath: "b.txt" } };
    });
    on("tool.execute.after", async (input) => void after.push(input));
    const start = h.model.requests.length;
    h.model.enqueue({ events: [readCall("a.txt")] }, done());
    const sessionId = await h.createSession();
    const { turnId } = await queue(h, sessionId, "Read a.txt");
    const { turn } = await runToEnd(h, sessionId, turnId);
    const [part] = tools(turn.parts);
    expect(before).toEqual([{ turnId, toolId: "read", toolCallId: part!.toolCallId, input: { filePath: "a.txt" } }]);
    expect(part).toMatchObject({ state: "completed", input: { filePath: "b.txt" }, modelInput: { filePath: "a.txt" } });
    expect(seen(h.model.requests[start + 1])).toContain("BRAVO-file");
    expect(seen(h.model.requests[start + 1])).not.toContain("ALPHA-file");
    expect(after).toEqual([{ turnId, toolId: "read", toolCallId: part!.toolCallId, input: { filePath: "b.txt" }, ok: true, result: expect.stringContaining("BRAVO-file") }]);
  });

  it("an invalid replacement fails only the call with an input validation error; tool.execute.after does not run", async () => {
    const after: unknown[] = [];
    on("tool.execute.before", async () => ({ input: { filePath: 42 } }));
    on("tool.execute.after", async (input) => void after.push(input));
    h.model.enqueue({ events: [readCall("a.txt")] }, done("Carried on."));
    const sessionId = await h.createSession();
    const { turnId } = await queue(h, sessionId, "Read a.txt");
    const { turn } = await runToEnd(h, sessionId, turnId);
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "Carried on." });
    expect(tools(turn.parts)[0]).toMatchObject({ state: "failed", fault: { code: "invalid_input" } });
    expect(after).toEqual([]);
  });

  it("`allow` answers a check that would ask (source hook), without a permission request", async () => {
    on("tool.execute.before", async () => ({ approval: "allow" }));
    h.model.enqueue({ events: [readCall(join(outside, "note.txt"))] }, done("Allowed."));
    const sessionId = await h.createSession();
    const { turnId } = await queue(h, sessionId, "Read the outside note");
    const { events, turn } = await runToEnd(h, sessionId, turnId);
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "Allowed." });
    expect(ofType(events, "turn.approval.requested")).toEqual([]);
    expect(ofType(events, "turn.approval.resolved")).toEqual([expect.objectContaining({ decision: "allow", source: "hook" })]);
    expect(tools(turn.parts)[0]).toMatchObject({ state: "completed", approval: { state: "resolved", decision: "allow", source: "hook" } });
  });

  it("`deny` from any hook refuses even a check the rules allow: the Turn fails tool_denied and the tool never runs", async () => {
    on("tool.execute.before", async () => ({ approval: "allow" }));
    on("tool.execute.before", async () => ({ approval: "deny" }));
    const start = h.model.requests.length;
    h.model.enqueue({ events: [{ type: "tool_call", name: "write", arguments: { filePath: "never.txt", content: "x" } }] });
    const sessionId = await h.createSession();
    const { turnId } = await queue(h, sessionId, "Write a file");
    const { events, turn } = await runToEnd(h, sessionId, turnId);
    expect(turn.outcome).toMatchObject({ kind: "failed", fault: { code: "tool_denied" } });
    expect(ofType(events, "turn.approval.resolved")).toEqual([expect.objectContaining({ decision: "deny", source: "hook" })]);
    expect(tools(turn.parts)[0]).toMatchObject({ state: "denied" });
    expect(h.model.requests.length).toBe(start + 1);
    expect(existsSync(join(h.home.root, "never.txt"))).toBe(false);
  });

  it("a hook that throws fails the Turn with runtime_failed and its public message (or a generic one)", async () => {
    on("turn.before", async () => {
      throw Object.assign(new Error("internal detail: token=abc"), { publicMessage: "  The policy service is down.  " });
    });
    const sessionId = await h.createSession();
    const first = await queue(h, sessionId, "Hello");
    const { turn } = await runToEnd(h, sessionId, first.turnId);
    expect(turn.outcome).toEqual({ kind: "failed", turnId: first.turnId, fault: { code: "runtime_failed", message: "The policy service is down." } });
    for (const unregister of registered) unregister();
    on("model.request.before", async () => {
      throw new Error("secret stack detail");
    });
    const second = await queue(h, sessionId, "Hello again");
    const failed = (await runToEnd(h, sessionId, second.turnId)).turn;
    expect(failed.outcome).toMatchObject({ kind: "failed", fault: { code: "runtime_failed" } });
    expect(JSON.stringify(failed)).not.toContain("secret stack detail");
  });

  it("a non-object result from tool.execute.before fails the Turn", async () => {
    on("tool.execute.before", (async () => "yes") as unknown as HookHandlers["tool.execute.before"]);
    h.model.enqueue({ events: [readCall("a.txt")] });
    const sessionId = await h.createSession();
    const { turnId } = await queue(h, sessionId, "Read a.txt");
    const { turn } = await runToEnd(h, sessionId, turnId);
    expect(turn.outcome).toMatchObject({ kind: "failed", fault: { code: "runtime_failed" } });
  });
});
