// Sub-agents through the `task` tool in real Turns: the child Session (lineage, agent, workdir,
// inherited model and deny rules), the result envelope and `childSessionId` activity, continuing
// a child by `task_id`, the depth limit, descendant approvals (listed on the parent, a reply to
// the parent forwarded to the child), cancellation reaching the child, and detaching a waiting
// call to the background (its result arrives as a queued parent Turn).
import { afterEach, describe, expect, it } from "vitest";
import { sdk, type ServerStreamEvent, type Session, type ToolTurnPart, type Turn } from "../../clients/index.js";
import type { RecordedRequest } from "../../tools/test-model/index.js";
import { failure, ok } from "../support/calls.js";
import { startModelHarness, type ModelHarness } from "../support/model.js";
import { getTurn, listTurns, openSse, queue, replyPermission, runToEnd, server } from "../turns/helpers.js";

type ChatBody = { messages: { role: string; content: unknown }[]; tools?: { function: { name: string; description: string } }[] };
const toolsOf = (request: RecordedRequest | undefined): string[] => ((request!.body as ChatBody).tools ?? []).map((tool) => tool.function.name);
const systemOf = (request: RecordedRequest | undefined): string =>
  (request!.body as ChatBody).messages
    .filter((message) => message.role === "system" || message.role === "developer")
    .map((message) => String(message.content))
    .join("\n");
const say = (words: string) => ({ events: [{ type: "text" as const, text: words }] });
const call = (name: string, args: Record<string, unknown>) => ({ events: [{ type: "tool_call" as const, name, arguments: args }] });
const task = (subagent_type: string, prompt: string, extra: Record<string, unknown> = {}) => call("task", { description: "Look around", prompt, subagent_type, ...extra });
const toolParts = (turn: Turn) => turn.parts.filter((part): part is ToolTurnPart => part.type === "tool");
const resultText = (part: ToolTurnPart | undefined): string => String((part?.canonicalResult as { value?: unknown } | undefined)?.value ?? "");

let h: ModelHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const children = async (sessionId: string): Promise<Session[]> => (await ok(sdk.listSessionChildren({ client: h!.api.client, path: { server, sessionId } }))).sessions;

/** The server stream from now on, read until `predicate` holds. */
async function serverEvents() {
  const stream = await openSse<ServerStreamEvent>(h!.fetch, h!.api.baseUrl, `/v1/servers/${server}/events`);
  return { until: (predicate: (event: ServerStreamEvent) => boolean, what: string) => stream.until(predicate, what), close: () => stream.close() };
}

describe("the task tool", () => {
  it("runs the prompt in a child Session pinned to the agent and answers with its result envelope", async () => {
    h = await startModelHarness({ config: { permissions: [{ action: "webfetch", resource: "*", effect: "deny" }] } });
    h.model.enqueue(task("explore", "Find the entry point"), say("It is src/main.ts."), say("The child says src/main.ts."));
    const sessionId = await h.createSession({ defaultModel: "test/scripted" });
    const { turnId } = await queue(h, sessionId, "Where does it start?");
    const { turn, events } = await runToEnd(h, sessionId, turnId);
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "The child says src/main.ts." });

    const [child, ...others] = await children(sessionId);
    expect(others).toEqual([]);
    const parentSession = (await ok(sdk.getSession({ client: h.api.client, path: { server, sessionId } }))).session;
    expect(child).toMatchObject({ spawnedFrom: { parentSessionId: sessionId }, agent: "explore", workdir: parentSession.workdir, projectId: parentSession.projectId, defaultModel: "test/scripted" });
    expect(child!.title).toBe("Look around (@explore subagent)");
    // The parent's deny rule travels with the child.
    expect(child!.configuration.permissions).toContainEqual({ action: "webfetch", resource: "*", effect: "deny" });

    const part = toolParts(turn)[0]!;
    expect(part).toMatchObject({ toolId: "task", state: "completed", activity: { childSessionId: child!.id } });
    expect(resultText(part)).toBe(`task_id: ${child!.id} (for resuming to continue this task if needed)\n\n<task_result>\nIt is src/main.ts.\n</task_result>`);
    expect(events.some((event) => event.type === "turn.tool.activity" && event.activity.childSessionId === child!.id)).toBe(true);

    const childTurns = (await listTurns(h, child!.id)).turns.map((entry) => entry.turn);
    expect(childTurns).toHaveLength(1);
    expect(childTurns[0]).toMatchObject({ request: { agent: "explore", prompt: [{ type: "text", text: "Find the entry point" }] }, outcome: { kind: "completed", text: "It is src/main.ts." } });
    // The child's request: explore's instructions and read-only tools; no task (children cannot delegate by default).
    const childRequest = h.model.requests[1];
    expect(toolsOf(childRequest)).toEqual(["read", "shell", "execute"]);
    expect(systemOf(childRequest)).toMatch(/explor|read-only|search/i);
    // The task tool's description lists the agents it can spawn.
    const description = (h.model.requests[0]!.body as ChatBody).tools!.find((tool) => tool.function.name === "task")!.function.description;
    expect(description).toContain("- explore:");
    expect(description).toContain("- general:");
    expect(description).not.toContain("- build:");
  });

  it("continues the same child with task_id", async () => {
    h = await startModelHarness();
    h.model.enqueue(task("general", "Count to one"), say("one"), say("first done"));
    const sessionId = await h.createSession();
    await runToEnd(h, sessionId, (await queue(h, sessionId, "start")).turnId);
    const [child] = await children(sessionId);
    h.model.enqueue(task("general", "Now two", { task_id: child!.id }), say("two"), say("second done"));
    const { turn } = await runToEnd(h, sessionId, (await queue(h, sessionId, "continue")).turnId);
    expect(await children(sessionId)).toHaveLength(1);
    expect(resultText(toolParts(turn)[0])).toContain("<task_result>\ntwo\n</task_result>");
    // The child's second Turn saw its first one.
    expect(JSON.stringify(h.model.requests[4]!.body)).toContain("Count to one");
  });

  it("fails the call (not the Turn) for an unknown agent, a primary-only agent, a foreign task_id and the depth limit", async () => {
    h = await startModelHarness({ config: { agents: { general: { permissions: [{ action: "task", resource: "*", effect: "allow" }] } } } });
    const sessionId = await h.createSession();
    h.model.enqueue(
      call("task", { description: "a", prompt: "p", subagent_type: "nobody" }),
      call("task", { description: "b", prompt: "p", subagent_type: "plan" }),
      call("task", { description: "c", prompt: "p", subagent_type: "general", task_id: sessionId }),
      // A child that tries to start its own sub-agent: maxDepth is 1.
      task("general", "delegate further"),
      call("task", { description: "deeper", prompt: "p", subagent_type: "general" }),
      say("could not go deeper"),
      say("all four reported"),
    );
    const { turn } = await runToEnd(h, sessionId, (await queue(h, sessionId, "try")).turnId);
    const parts = toolParts(turn);
    expect(parts.map((part) => [part.state, part.fault?.code])).toEqual([
      ["failed", "unknown_agent"],
      ["failed", "unknown_agent"],
      ["failed", "invalid_input"],
      ["completed", undefined],
    ]);
    const [child] = await children(sessionId);
    const childTurn = (await listTurns(h, child!.id)).turns[0]!.turn;
    expect(toolParts(childTurn)[0]).toMatchObject({ state: "failed", fault: { code: "subagent_depth" } });
    expect(await children(child!.id)).toEqual([]);
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "all four reported" });
  });
});

describe("descendant approvals and cancellation", () => {
  it("lists a child's pending approval on the parent, forwards the parent's reply, and the parent finishes", async () => {
    h = await startModelHarness({ config: { permissions: [{ action: "shell", resource: "touch *", effect: "ask" }] } });
    const sessionId = await h.createSession();
    h.model.enqueue(task("general", "make the file"), call("shell", { command: "touch made.txt" }), say("made it"), say("the child made it"));
    const events = await serverEvents();
    const { turnId } = await queue(h, sessionId, "go");
    const asked = (await events.until((event) => event.type === "session.turn.approval.requested" && event.sessionId !== sessionId, "the child's approval")) as Extract<ServerStreamEvent, { type: "session.turn.approval.requested" }>;
    events.close();
    const pending = await ok(sdk.listDescendantPendingApprovals({ client: h.api.client, path: { server, sessionId } }));
    expect(pending.approvals).toHaveLength(1);
    expect(pending.approvals[0]).toMatchObject({ agent: "general", request: { id: asked.request.id, sessionId: asked.sessionId, action: "shell" } });
    // Replied through the parent: forwarded to the child that owns it.
    const replied = await ok(replyPermission(h, sessionId, asked.request.id, "once"));
    expect(replied.turn.sessionId).toBe(asked.sessionId);
    const { turn } = await runToEnd(h, sessionId, turnId);
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "the child made it" });
    expect((await ok(sdk.listDescendantPendingApprovals({ client: h.api.client, path: { server, sessionId } }))).approvals).toEqual([]);
    const unknown = await failure(replyPermission(h, sessionId, "00000000-0000-4000-8000-00000000dead", "once"));
    expect(unknown).toMatchObject({ status: 404, body: { _tag: "NotFoundError" } });
  });

  it("cancelling the parent Turn cancels the child Turn it waits on", async () => {
    h = await startModelHarness();
    const sessionId = await h.createSession();
    h.model.enqueue(task("general", "wait forever"), { hang: true });
    const events = await serverEvents();
    const { turnId } = await queue(h, sessionId, "go");
    const started = (await events.until((event) => event.type === "session.turn.started" && event.sessionId !== sessionId, "the child Turn")) as Extract<ServerStreamEvent, { type: "session.turn.started" }>;
    events.close();
    await h.model.waitForRequest(2);
    await ok(sdk.cancelTurn({ client: h.api.client, path: { server, sessionId, turnId }, body: { reason: "stop" } }));
    const parent = await runToEnd(h, sessionId, turnId);
    expect(parent.turn.outcome).toMatchObject({ kind: "cancelled" });
    const child = await runToEnd(h, started.sessionId, started.turnId);
    expect(child.turn.outcome).toMatchObject({ kind: "cancelled" });
  });
});

describe("background", () => {
  it("reports the capability, detaches a waiting call, and queues the child's result as a new parent Turn", async () => {
    h = await startModelHarness({ config: { permissions: [{ action: "shell", resource: "touch *", effect: "ask" }] } });
    const capabilities = await ok(sdk.capabilities({ client: h.api.client }));
    expect(capabilities.backgroundSubagents).toBe(true);
    const sessionId = await h.createSession();
    expect(await ok(sdk.promoteSessionBackground({ client: h.api.client, path: { server, sessionId } }))).toEqual({ promoted: false });
    const unknown = await failure(sdk.promoteSessionBackground({ client: h.api.client, path: { server, sessionId: "00000000-0000-4000-8000-0000000000d1" } }));
    expect(unknown).toMatchObject({ status: 404, body: { _tag: "NotFoundError" } });

    h.model.enqueue(task("general", "slow work"), call("shell", { command: "touch slow.txt" }), say("parent moves on"));
    const events = await serverEvents();
    const { turnId } = await queue(h, sessionId, "go");
    const asked = (await events.until((event) => event.type === "session.turn.approval.requested" && event.sessionId !== sessionId, "the child's approval")) as Extract<ServerStreamEvent, { type: "session.turn.approval.requested" }>;
    events.close();
    expect(await ok(sdk.promoteSessionBackground({ client: h.api.client, path: { server, sessionId } }))).toEqual({ promoted: true });
    const { turn } = await runToEnd(h, sessionId, turnId);
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "parent moves on" });
    expect(resultText(toolParts(turn)[0])).toContain("moved to the background");

    // The child finishes later; its result arrives as a queued parent Turn.
    h.model.enqueue(say("slow work done"), say("noted the background result"));
    await ok(replyPermission(h, asked.sessionId, asked.request.id, "once"));
    const next = await waitForSecondTurn(sessionId);
    const finished = await runToEnd(h, sessionId, next.id);
    expect(finished.turn.request.prompt[0]).toMatchObject({ type: "text", text: expect.stringContaining("<task_result>\nslow work done\n</task_result>") });
    expect(finished.turn.outcome).toMatchObject({ kind: "completed", text: "noted the background result" });
  });
});

/** The parent's second Turn, once the background result admitted it (watched on the Session's Turn list through the server stream). */
async function waitForSecondTurn(sessionId: string): Promise<Turn> {
  const existing = (await listTurns(h!, sessionId)).turns;
  if (existing.length >= 2) return existing[1]!.turn;
  const events = await serverEvents();
  try {
    const again = (await listTurns(h!, sessionId)).turns;
    if (again.length >= 2) return again[1]!.turn;
    const snapshot = (await events.until((event) => event.type === "session.turn.snapshot" && event.sessionId === sessionId && event.turn.sequence === 2, "the queued result Turn")) as Extract<ServerStreamEvent, { type: "session.turn.snapshot" }>;
    return getTurn(h!, sessionId, snapshot.turn.id);
  } finally {
    events.close();
  }
}
