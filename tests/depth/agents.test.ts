// Agents inside real Turns: the catalog a Session sees, the agent a Turn runs (prompt → Session →
// default), what an agent changes in the model request (instructions, tools, rules, model), the
// typed refusals, and a Session pinned to an agent the host no longer has.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { sdk, type ToolTurnPart } from "../../clients/index.js";
import type { RecordedRequest } from "../../tools/test-model/index.js";
import { failure, ok } from "../support/calls.js";
import { startHarness } from "../support/harness.js";
import { TEST_MODEL, startModelHarness, testProviderConfig, writeGlobalConfig, type ModelHarness } from "../support/model.js";
import { queue, runToEnd, server } from "../turns/helpers.js";

type ChatBody = { model: string; messages: { role: string; content: unknown }[]; tools?: { function: { name: string; description: string } }[] };
const body = (request: RecordedRequest | undefined): ChatBody => request!.body as ChatBody;
const systemOf = (request: RecordedRequest | undefined): string =>
  body(request)
    .messages.filter((message) => message.role === "system" || message.role === "developer")
    .map((message) => (typeof message.content === "string" ? message.content : JSON.stringify(message.content)))
    .join("\n");
const toolsOf = (request: RecordedRequest | undefined): string[] => (body(request).tools ?? []).map((tool) => tool.function.name);
const done = (words = "Done.") => ({ events: [{ type: "text" as const, text: words }] });

let h: ModelHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe("the agent catalog", () => {
  it("lists the built-in, configured and Markdown agents with the default", async () => {
    h = await startModelHarness({
      config: {
        defaultAgent: "writer",
        agents: { writer: { description: "Writes documentation", mode: "primary", system: "Write clear docs." }, build: { description: "Our build agent" } },
      },
    });
    // The Markdown directory is read at startup: add the file, then start a second host on the same home.
    const home = h.home;
    const dir = join(home.env["XDG_DATA_HOME"]!, "ze-harness", "agents", "team");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "reviewer.md"), "---\ndescription: Reviews changes\nmode: subagent\n---\n\nReview the diff.\n");
    const restarted = await startHarness({}, home);
    try {
      await ok(sdk.createSession({ client: restarted.api.client, path: { server, sessionId: "00000000-0000-4000-8000-0000000000a1" }, body: {} }));
      const listed = await ok(sdk.sessionAgents({ client: restarted.api.client, path: { server, sessionId: "00000000-0000-4000-8000-0000000000a1" } }));
      expect(listed.defaultAgent).toBe("writer");
      expect(listed.agents.map((agent) => [agent.id, agent.mode])).toEqual([
        ["build", "primary"],
        ["explore", "subagent"],
        ["general", "subagent"],
        ["plan", "primary"],
        ["team/reviewer", "subagent"],
        ["writer", "primary"],
      ]);
      expect(listed.agents.find((agent) => agent.id === "writer")).toMatchObject({ displayName: "writer", description: "Writes documentation", origin: "host" });
      expect(listed.agents.find((agent) => agent.id === "team/reviewer")).toMatchObject({ description: "Reviews changes" });
    } finally {
      await restarted.close();
    }
  });

  it("answers 404 for the agents of a Session that does not exist", async () => {
    h = await startModelHarness();
    const missing = await failure(sdk.sessionAgents({ client: h.api.client, path: { server, sessionId: "00000000-0000-4000-8000-0000000000a2" } }));
    expect(missing).toMatchObject({ status: 404, body: { _tag: "NotFoundError" } });
  });
});

describe("the agent a Turn runs", () => {
  it("runs the default agent (build, every tool) when nothing names one and records it on the Turn", async () => {
    h = await startModelHarness();
    h.model.enqueue(done());
    const sessionId = await h.createSession();
    const { turnId } = await queue(h, sessionId, "hi");
    const { turn } = await runToEnd(h, sessionId, turnId);
    expect(turn.request.agent).toBe("build");
    expect(toolsOf(h.model.requests[0])).toEqual(["read", "write", "edit", "shell", "webfetch", "question", "pause", "task", "execute"]);
  });

  it("plan: its instructions, no write or edit tool, read-only shell allowed, and its rules in the Turn's policy", async () => {
    h = await startModelHarness();
    writeFileSync(join(h.home.root, "notes.txt"), "plan me\n");
    h.model.enqueue({ events: [{ type: "tool_call", name: "shell", arguments: { command: "cat notes.txt" } }] }, done("Planned."));
    const sessionId = await h.createSession();
    const { turnId } = await queue(h, sessionId, "make a plan", { agent: "plan" });
    const { turn } = await runToEnd(h, sessionId, turnId);
    expect(turn.request.agent).toBe("plan");
    const tools = toolsOf(h.model.requests[0]);
    expect(tools).not.toContain("write");
    expect(tools).not.toContain("edit");
    expect(tools).toContain("read");
    expect(systemOf(h.model.requests[0])).toMatch(/plan/i);
    expect(turn.policy.permissions).toContainEqual({ action: "edit", resource: "*", effect: "deny" });
    // `cat` is on plan's read-only list: it ran without asking.
    const shell = turn.parts.find((part): part is ToolTurnPart => part.type === "tool");
    expect(shell).toMatchObject({ toolId: "shell", state: "completed", approval: { state: "none" } });
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "Planned." });
  });

  it("a configured agent's instructions, rules and model apply, after the Session's own system prompt rules", async () => {
    h = await startModelHarness({
      config: (model) => ({
        providers: {
          ...testProviderConfig(model),
          other: { definition: { displayName: "Other", baseURL: model.openaiBaseURL, protocol: "chat", authentication: { kind: "none" }, models: { m: { displayName: "M", limits: { contextUnits: 100000, outputUnits: 4096 } } } } },
        },
        agents: { writer: { description: "Writes docs", system: "WRITER-INSTRUCTIONS", model: "other/m", permissions: [{ action: "shell", resource: "*", effect: "deny" }] } },
      }),
    });
    h.model.enqueue(done());
    const sessionId = await h.createSession({ systemPrompt: "SESSION-PROMPT" });
    const { turnId } = await queue(h, sessionId, "write", { agent: "writer" });
    const { turn } = await runToEnd(h, sessionId, turnId);
    expect(turn.model).toBe("other/m");
    expect(body(h.model.requests[0]).model).toBe("m");
    const system = systemOf(h.model.requests[0]);
    expect(system.indexOf("WRITER-INSTRUCTIONS")).toBeGreaterThanOrEqual(0);
    expect(system.indexOf("SESSION-PROMPT")).toBeGreaterThan(system.indexOf("WRITER-INSTRUCTIONS"));
    expect(toolsOf(h.model.requests[0])).not.toContain("shell");
    // A model the prompt names still wins over the agent's.
    h.model.enqueue(done());
    const second = await queue(h, sessionId, "again", { agent: "writer", model: TEST_MODEL });
    expect((await runToEnd(h, sessionId, second.turnId)).turn.model).toBe(TEST_MODEL);
  });

  it("refuses an unknown agent, a sub-agent-only agent and a bad Session agent with typed errors, admitting nothing", async () => {
    h = await startModelHarness();
    const sessionId = await h.createSession();
    const turnId = "00000000-0000-4000-8000-0000000000b1";
    const submit = (agent: string) =>
      failure(sdk.submitPrompt({ client: h!.api.client, path: { server, sessionId }, headers: { "x-ze-harness-client-id": "t" }, body: { delivery: "queue", turnId, prompt: [{ type: "text", text: "x" }], agent } }));
    expect(await submit("nobody")).toMatchObject({ status: 400, body: { _tag: "ValidationError", message: expect.stringContaining("/agent: unknown agent \"nobody\"") } });
    expect(await submit("explore")).toMatchObject({ status: 400, body: { _tag: "ValidationError", message: expect.stringContaining("runs only as a sub-agent") } });
    const turns = await ok(sdk.listSessionTurns({ client: h.api.client, path: { server, sessionId } }));
    expect(turns.turns).toEqual([]);
    const created = await failure(sdk.createSession({ client: h.api.client, path: { server, sessionId: "00000000-0000-4000-8000-0000000000b2" }, body: { agent: "general" } }));
    expect(created).toMatchObject({ status: 400, body: { _tag: "ValidationError", message: expect.stringContaining("/agent") } });
    const absent = await failure(sdk.getSession({ client: h.api.client, path: { server, sessionId: "00000000-0000-4000-8000-0000000000b2" } }));
    expect(absent.status).toBe(404);
  });

  it("a Session created with an agent runs it; a prompt can still name another", async () => {
    h = await startModelHarness();
    h.model.enqueue(done(), done());
    const sessionId = await h.createSession({ agent: "plan" });
    const session = await ok(sdk.getSession({ client: h.api.client, path: { server, sessionId } }));
    expect(session.session.agent).toBe("plan");
    const first = await queue(h, sessionId, "one");
    expect((await runToEnd(h, sessionId, first.turnId)).turn.request.agent).toBe("plan");
    const second = await queue(h, sessionId, "two", { agent: "build" });
    expect((await runToEnd(h, sessionId, second.turnId)).turn.request.agent).toBe("build");
  });
});

describe("a Session pinned to a removed agent", () => {
  it("fails its next Turn explicitly with agent_unavailable", async () => {
    h = await startModelHarness({ config: { agents: { writer: { description: "Writes", system: "Write." } } } });
    const sessionId = await h.createSession({ agent: "writer" });
    const home = h.home;
    // Stop the host but keep its home (and database): the next host starts without `writer`.
    await h.harness.close();
    await h.model.close();
    h = undefined;
    const model = await (await import("../../tools/test-model/index.js")).startTestModel();
    writeGlobalConfig(home, { model: TEST_MODEL, providers: testProviderConfig(model) });
    const restarted = await startHarness({}, home);
    try {
      const { turnId } = await queue(restarted, sessionId, "still there?");
      const { turn } = await runToEnd(restarted, sessionId, turnId);
      expect(turn.outcome).toMatchObject({ kind: "failed", fault: { code: "agent_unavailable", message: expect.stringContaining("writer") } });
      expect(model.requests).toHaveLength(0);
    } finally {
      await restarted.close();
      await model.close();
    }
  });
});
