// `ze-harness acp` through the built binary, driven by the ACP SDK's own client over the child's
// stdio, against the scripted test model: initialize, sessions (new in a symlinked cwd, list,
// load with history replayed, resume, fork, close), streamed prompts, tool calls, permission
// requests answered with each option, questions as form elicitations, cancel, a second prompt
// while one runs, modes and config options — and stdout carrying nothing but JSON-RPC frames.
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { everythingHttp } from "../mcp/support.js";
import { assertBuilt, jsonOf, runCli, scriptByPrompt } from "../support/cli.js";
import { tempHome, type TempHome } from "../support/harness.js";
import { writeGlobalConfig } from "../support/model.js";
import { startAcp, textOf, type AcpProcess } from "./client.js";

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const EVERYTHING = join(import.meta.dirname, "..", "..", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");
const everything = (secret: string): acp.McpServer => ({ name: "everything", command: process.execPath, args: [EVERYTHING, "stdio"], env: [{ name: "ACP_SECRET", value: secret }] });

let model: TestModel;
let script: ReturnType<typeof scriptByPrompt>;
let home: TempHome;
/** The client's cwd: a symlink to `real`. */
let link: string;
let real: string;
let agent: AcpProcess;
const closed: AcpProcess[] = [];

const text = (value: string): acp.ContentBlock[] => [{ type: "text", text: value }];
const selected = (optionId: string): acp.RequestPermissionResponse => ({ outcome: { outcome: "selected", optionId } });

async function initialize(process_: AcpProcess, elicitation = true): Promise<acp.InitializeResponse> {
  return process_.agent.request("initialize", {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false, ...(elicitation ? { elicitation: { form: {} } } : {}) },
    clientInfo: { name: "ze-acp-test", version: "1.0.0" },
  });
}

const newSession = (process_: AcpProcess, cwd = link) => process_.agent.request("session/new", { cwd, mcpServers: [] });

/** Every stdout line is one JSON-RPC 2.0 message, and stdout ends at a line's end. */
function expectOnlyFrames(stdout: string): void {
  expect(stdout.length).toBeGreaterThan(0);
  expect(stdout.endsWith("\n")).toBe(true);
  for (const line of stdout.slice(0, -1).split("\n")) {
    const message = JSON.parse(line) as Record<string, unknown>;
    expect(message["jsonrpc"]).toBe("2.0");
    expect("method" in message || ("id" in message && ("result" in message || "error" in message))).toBe(true);
  }
}

beforeAll(async () => {
  assertBuilt();
  model = await startTestModel();
  script = scriptByPrompt(model);
  home = tempHome("ze-acp-");
  real = join(home.root, "project");
  mkdirSync(real, { recursive: true });
  link = join(home.dir, "project-link");
  symlinkSync(real, link);
  writeFileSync(join(real, "notes.txt"), "the notes say hello\n");
  writeFileSync(join(real, ".env"), "TOKEN=not-a-real-secret\n");
  writeGlobalConfig(home, {
    model: "test/scripted",
    providers: {
      test: {
        definition: {
          displayName: "Scripted test model",
          baseURL: model.openaiBaseURL,
          protocol: "chat",
          authentication: { kind: "none" },
          models: { scripted: { displayName: "Scripted", limits: { contextUnits: 200000, outputUnits: 8192 }, capabilities: { tools: true, reasoning: true } } },
        },
      },
    },
  });
  agent = startAcp({ env: home.env, cwd: home.root });
});

afterAll(async () => {
  await agent?.close();
  for (const process_ of closed) await process_.close();
  await model?.close();
  home?.cleanup();
});

describe("ze-harness acp", () => {
  let sessionId: string;

  it("initializes with its capabilities", async () => {
    const response = await initialize(agent);
    expect(response.protocolVersion).toBe(acp.PROTOCOL_VERSION);
    expect(response.agentInfo).toMatchObject({ name: "ze-harness" });
    expect(response.agentCapabilities).toMatchObject({
      loadSession: true,
      promptCapabilities: { image: true, embeddedContext: true },
      mcpCapabilities: { http: true, sse: false },
      sessionCapabilities: { list: {}, resume: {}, fork: {}, close: {} },
    });
  });

  it("creates a Session in the client's cwd with symlinks resolved, offering build and plan as modes", async () => {
    const response = await newSession(agent);
    sessionId = response.sessionId;
    expect(response.modes?.currentModeId).toBe("build");
    expect(response.modes?.availableModes.map((mode) => mode.id)).toEqual(expect.arrayContaining(["build", "plan"]));
    expect(response.modes?.availableModes.map((mode) => mode.id)).not.toContain("explore"); // a sub-agent only
    const effort = response.configOptions?.find((option) => option.id === "reasoning_effort");
    expect(effort).toMatchObject({ type: "select", category: "thought_level", currentValue: "default" });
    // The catalog names the host's default model and lists it among the choices.
    const modelOption = response.configOptions?.find((option) => option.id === "model");
    expect(modelOption).toMatchObject({ type: "select", category: "model", currentValue: "test/scripted" });
    expect(JSON.stringify(modelOption)).toContain('"value":"test/scripted"');
    const { sessions } = await agent.agent.request("session/list", {});
    expect(sessions.find((session) => session.sessionId === sessionId)?.cwd).toBe(real);
    // Its own database: acp.db in the state directory, not the daemon's.
    expect(existsSync(join(home.env["XDG_DATA_HOME"]!, "ze-harness", "acp.db"))).toBe(true);
    expect(existsSync(join(home.env["XDG_DATA_HOME"]!, "ze-harness", "ze-harness.db"))).toBe(false);
  });

  it("refuses a relative or missing cwd with invalid params and creates nothing", async () => {
    const before = (await agent.agent.request("session/list", {})).sessions.length;
    await expect(agent.agent.request("session/new", { cwd: "project", mcpServers: [] })).rejects.toMatchObject({ code: -32602, message: expect.stringMatching(/absolute/) });
    await expect(agent.agent.request("session/new", { cwd: join(home.dir, "missing"), mcpServers: [] })).rejects.toMatchObject({ code: -32602, message: expect.stringMatching(/does not exist/) });
    expect((await agent.agent.request("session/list", {})).sessions.length).toBe(before);
  });

  it("streams reasoning and text as updates before the prompt answers end_turn with usage", async () => {
    script("Greeting marker", {
      events: [
        { type: "reasoning", text: "The user greets me." },
        { type: "text", text: "Hello from Ze, streamed word by word." },
      ],
      usage: { promptTokens: 120, completionTokens: 30, reasoningTokens: 10 },
    });
    const from = agent.updates.length;
    const response = await agent.agent.request("session/prompt", { sessionId, prompt: text("Greeting marker: say hello") });
    expect(response.stopReason).toBe("end_turn");
    expect(response.usage).toMatchObject({ inputTokens: 120, outputTokens: 30, totalTokens: 150, thoughtTokens: 10 });
    const updates = agent.updatesOf(sessionId, from);
    const answer = updates.filter((update) => update.sessionUpdate === "agent_message_chunk").map(textOf).join("");
    const thought = updates.filter((update) => update.sessionUpdate === "agent_thought_chunk").map(textOf).join("");
    expect(answer).toBe("Hello from Ze, streamed word by word.");
    expect(thought).toBe("The user greets me.");
    expect(updates).toContainEqual(expect.objectContaining({ sessionUpdate: "usage_update", size: 200000 }));
    expect(updates).toContainEqual(expect.objectContaining({ sessionUpdate: "session_info_update", title: "Greeting marker: say hello" }));
    // The Turn ran the model the selector already showed: no selector change is announced.
    const configUpdate = updates.find((update) => update.sessionUpdate === "config_option_update") as acp.ConfigOptionUpdate | undefined;
    expect(configUpdate?.configOptions.find((option) => option.id === "model")?.currentValue ?? "test/scripted").toBe("test/scripted");
  });

  it("reports a tool call with its kind, location, status and content", async () => {
    script("Reading marker", { events: [{ type: "tool_call", name: "read", arguments: { filePath: "notes.txt" } }] }, { events: [{ type: "text", text: "The notes greet you." }] });
    const from = agent.updates.length;
    const response = await agent.agent.request("session/prompt", { sessionId, prompt: text("Reading marker: read the notes") });
    expect(response.stopReason).toBe("end_turn");
    const updates = agent.updatesOf(sessionId, from);
    const call = updates.find((update) => update.sessionUpdate === "tool_call") as acp.ToolCall & { sessionUpdate: "tool_call" };
    expect(call).toMatchObject({ title: "Read notes.txt", kind: "read", locations: [{ path: join(real, "notes.txt") }], rawInput: { filePath: "notes.txt" } });
    const last = updates.filter((update) => update.sessionUpdate === "tool_call_update" && update.toolCallId === call.toolCallId).at(-1) as acp.ToolCallUpdate;
    expect(last.status).toBe("completed");
    expect(JSON.stringify(last.content)).toContain("the notes say hello");
  });

  it("shows an edit as a diff and a shell command's output, each with its kind", async () => {
    writeFileSync(join(real, "greeting.txt"), "hello world\n");
    script(
      "Editing marker",
      {
        events: [{ type: "tool_call", name: "edit", arguments: { filePath: "greeting.txt", oldString: "hello world", newString: "hello Ze" } }],
      },
      // The shell call comes in the next model step: calls of one step run concurrently, and a
      // `cat` racing the edit's write could read the file mid-write.
      { events: [{ type: "tool_call", name: "shell", arguments: { command: "cat greeting.txt" } }] },
      { events: [{ type: "text", text: "Edited and shown." }] },
    );
    const from = agent.updates.length;
    expect((await agent.agent.request("session/prompt", { sessionId, prompt: text("Editing marker: change the greeting") })).stopReason).toBe("end_turn");
    const updates = agent.updatesOf(sessionId, from);
    const calls = updates.filter((update) => update.sessionUpdate === "tool_call") as acp.ToolCall[];
    const edit = calls.find((call) => call.kind === "edit")!;
    expect(edit).toMatchObject({ title: "Edit greeting.txt", locations: [{ path: join(real, "greeting.txt") }], content: [{ type: "diff", path: join(real, "greeting.txt"), oldText: "hello world", newText: "hello Ze" }] });
    const shell = calls.find((call) => call.kind === "execute")!;
    expect(shell.title).toBe("Run cat greeting.txt");
    const lastOf = (id: string) => updates.filter((update) => update.sessionUpdate === "tool_call_update" && update.toolCallId === id).at(-1) as acp.ToolCallUpdate;
    expect(lastOf(edit.toolCallId).status).toBe("completed");
    expect(lastOf(shell.toolCallId).status).toBe("completed");
    expect(JSON.stringify(lastOf(shell.toolCallId).content)).toContain("hello Ze");
  });

  it("asks permission with Allow once / Always allow in this session / Reject, and Allow once runs the tool", async () => {
    script("Once marker", { events: [{ type: "tool_call", name: "read", arguments: { filePath: ".env" } }] }, { events: [{ type: "text", text: "Read the env file once." }] });
    agent.onPermission = () => selected("once");
    const asked = agent.permissionRequests.length;
    const from = agent.updates.length;
    const response = await agent.agent.request("session/prompt", { sessionId, prompt: text("Once marker: read .env") });
    expect(response.stopReason).toBe("end_turn");
    const request = agent.permissionRequests[asked]!;
    expect(request.sessionId).toBe(sessionId);
    expect(request.options).toEqual([
      { optionId: "once", name: "Allow once", kind: "allow_once" },
      { optionId: "always", name: "Always allow in this session", kind: "allow_always" },
      { optionId: "reject", name: "Reject", kind: "reject_once" },
    ]);
    expect(request.toolCall).toMatchObject({ kind: "read", status: "pending" });
    const completed = agent.updatesOf(sessionId, from).filter((update) => update.sessionUpdate === "tool_call_update" && update.toolCallId === request.toolCall.toolCallId).at(-1) as acp.ToolCallUpdate;
    expect(completed.status).toBe("completed");
    expect(JSON.stringify(completed.content)).toContain("TOKEN=not-a-real-secret");
  });

  it("Always allow in this session saves a grant: the next read is not asked", async () => {
    script("Always marker", { events: [{ type: "tool_call", name: "read", arguments: { filePath: ".env" } }] }, { events: [{ type: "text", text: "Allowed always." }] });
    script("Again marker", { events: [{ type: "tool_call", name: "read", arguments: { filePath: ".env" } }] }, { events: [{ type: "text", text: "Read again." }] });
    agent.onPermission = () => selected("always");
    const asked = agent.permissionRequests.length;
    expect((await agent.agent.request("session/prompt", { sessionId, prompt: text("Always marker: read .env") })).stopReason).toBe("end_turn");
    expect(agent.permissionRequests.length).toBe(asked + 1);
    agent.onPermission = () => selected("reject");
    const from = agent.updates.length;
    expect((await agent.agent.request("session/prompt", { sessionId, prompt: text("Again marker: read .env") })).stopReason).toBe("end_turn");
    expect(agent.permissionRequests.length).toBe(asked + 1);
    expect(agent.updatesOf(sessionId, from)).toContainEqual(expect.objectContaining({ sessionUpdate: "tool_call_update", status: "completed" }));
  });

  it("Reject denies the call: the tool call fails and the tool never runs", async () => {
    const other = await newSession(agent);
    script("Reject marker", { events: [{ type: "tool_call", name: "read", arguments: { filePath: ".env" } }] });
    agent.onPermission = () => selected("reject");
    const asked = agent.permissionRequests.length;
    const from = agent.updates.length;
    const response = await agent.agent.request("session/prompt", { sessionId: other.sessionId, prompt: text("Reject marker: read .env") });
    expect(response.stopReason).toBe("end_turn");
    expect(agent.permissionRequests.length).toBe(asked + 1);
    const updates = agent.updatesOf(other.sessionId, from);
    const failed = updates.filter((update) => update.sessionUpdate === "tool_call_update").at(-1) as acp.ToolCallUpdate;
    expect(failed.status).toBe("failed");
    expect(JSON.stringify(updates)).not.toContain("TOKEN=not-a-real-secret");
  });

  it("asks a sub-agent's permission requests as well", async () => {
    const other = await newSession(agent);
    script("Delegate marker", { events: [{ type: "tool_call", name: "task", arguments: { description: "read env", subagent_type: "general", prompt: "Child marker: read the env file" } }] }, { events: [{ type: "text", text: "The sub-agent is done." }] });
    script("Child marker", { events: [{ type: "tool_call", name: "read", arguments: { filePath: ".env" } }] }, { events: [{ type: "text", text: "The child saw the token." }] });
    agent.onPermission = () => selected("once");
    const asked = agent.permissionRequests.length;
    const from = agent.updates.length;
    const response = await agent.agent.request("session/prompt", { sessionId: other.sessionId, prompt: text("Delegate marker: ask a sub-agent") });
    expect(response.stopReason).toBe("end_turn");
    expect(agent.permissionRequests.length).toBe(asked + 1);
    const request = agent.permissionRequests[asked]!;
    expect(request.sessionId).toBe(other.sessionId);
    expect(request.toolCall).toMatchObject({ kind: "read", status: "pending", title: expect.stringMatching(/^\[sub-agent general\] read .*\.env$/) });
    const updates = agent.updatesOf(other.sessionId, from);
    const task = updates.find((update) => update.sessionUpdate === "tool_call") as acp.ToolCall;
    expect(task).toMatchObject({ title: "Task: read env", kind: "think" });
    expect(updates.filter((update) => update.sessionUpdate === "tool_call_update" && update.toolCallId === task.toolCallId).at(-1)).toMatchObject({ status: "completed" });
  });

  it("asks a question as a form elicitation and replies with the chosen answer", async () => {
    const questions = [{ question: "Which colour should the button be?", header: "Colour", options: [{ label: "Red", description: "warm" }, { label: "Blue", description: "cool" }], custom: false }];
    script("Question marker", { events: [{ type: "tool_call", name: "question", arguments: { questions } }] }, { events: [{ type: "text", text: "Blue it is." }] });
    agent.onElicitation = () => ({ action: "accept", content: { answer_0: "Blue" } });
    const asked = agent.elicitations.length;
    const before = model.requests.length;
    const response = await agent.agent.request("session/prompt", { sessionId, prompt: text("Question marker: ask me") });
    expect(response.stopReason).toBe("end_turn");
    const form = agent.elicitations[asked]! as acp.CreateElicitationRequest & { mode: "form"; sessionId: string; requestedSchema: acp.ElicitationSchema };
    expect(form).toMatchObject({ mode: "form", sessionId, message: "Which colour should the button be?" });
    expect(form.requestedSchema.properties?.["answer_0"]).toMatchObject({ type: "string", title: "Colour", oneOf: [{ const: "Red", title: "Red" }, { const: "Blue", title: "Blue" }] });
    expect(form.requestedSchema.required).toEqual(["answer_0"]);
    // The tool result the model saw carries the answer.
    expect(JSON.stringify(model.requests.slice(before).at(-1)!.body)).toContain("Blue");
  });

  it("rejects a second prompt while a Turn runs, and cancel ends the running one as cancelled", async () => {
    script("Slow marker", { events: [{ type: "text", text: "Starting a long answer" }, { type: "delay", ms: 120_000 }, { type: "text", text: " that never ends." }] });
    const from = agent.updates.length;
    const running = agent.agent.request("session/prompt", { sessionId, prompt: text("Slow marker: take your time") });
    await agent.waitForUpdate((notification) => notification.sessionId === sessionId && notification.update.sessionUpdate === "agent_message_chunk" && textOf(notification.update).includes("Starting"), from);
    const second = await agent.agent.request("session/prompt", { sessionId, prompt: text("Are you done?") }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(second).toBeInstanceOf(acp.RequestError);
    expect((second as acp.RequestError).code).toBe(-32600);
    expect((second as acp.RequestError).message).toMatch(/already running/);
    await agent.agent.notify("session/cancel", { sessionId });
    expect((await running).stopReason).toBe("cancelled");
  });

  it("a prompt over the 1 MiB body bound is invalid params (the edge's 413 ValidationError), not an internal error", async () => {
    await expect(agent.agent.request("session/prompt", { sessionId, prompt: text("x".repeat(1024 * 1024 + 1)) })).rejects.toMatchObject({ code: -32602, message: expect.stringMatching(/1048576-byte limit/) });
  });

  it("switches modes and config options: the next Turn runs plan with the chosen effort and model", async () => {
    await agent.agent.request("session/set_mode", { sessionId, modeId: "plan" });
    await expect(agent.agent.request("session/set_mode", { sessionId, modeId: "explore" })).rejects.toMatchObject({ code: -32602 });
    const effort = await agent.agent.request("session/set_config_option", { sessionId, configId: "reasoning_effort", value: "high" });
    expect(effort.configOptions.find((option) => option.id === "reasoning_effort")).toMatchObject({ currentValue: "high" });
    const chosen = await agent.agent.request("session/set_config_option", { sessionId, configId: "model", value: "test/scripted" });
    expect(chosen.configOptions.find((option) => option.id === "model")).toMatchObject({ type: "select", category: "model", currentValue: "test/scripted" });
    await expect(agent.agent.request("session/set_config_option", { sessionId, configId: "model", value: "nope/missing" })).rejects.toMatchObject({ code: -32602 });
    await expect(agent.agent.request("session/set_config_option", { sessionId, configId: "reasoning_effort", value: "extreme" })).rejects.toMatchObject({ code: -32602 });
    script("Plan marker", { events: [{ type: "text", text: "Here is a plan." }] });
    const before = model.requests.length;
    expect((await agent.agent.request("session/prompt", { sessionId, prompt: text("Plan marker: plan it") })).stopReason).toBe("end_turn");
    const body = model.requests.slice(before).at(-1)!.body as { reasoning_effort?: string; tools?: { function: { name: string } }[] };
    expect(body.reasoning_effort).toBe("high");
    // plan offers no write tool.
    expect(body.tools?.map((tool) => tool.function.name)).not.toContain("write");
  });

  it("lists Sessions newest first, filtered by cwd", async () => {
    const elsewhere = join(home.root, "elsewhere");
    mkdirSync(elsewhere);
    const outside = await newSession(agent, elsewhere);
    const all = (await agent.agent.request("session/list", {})).sessions;
    expect(all[0]!.sessionId).toBe(outside.sessionId);
    const here = (await agent.agent.request("session/list", { cwd: link })).sessions;
    expect(here.map((session) => session.sessionId)).toContain(sessionId);
    expect(here.map((session) => session.sessionId)).not.toContain(outside.sessionId);
    expect(here.find((session) => session.sessionId === sessionId)).toMatchObject({ cwd: real, title: "Greeting marker: say hello" });
    expect(Number.isNaN(Date.parse(here[0]!.updatedAt!))).toBe(false);
  });

  it("forks a Session: the fork continues its history in a new session", async () => {
    const fork = await agent.agent.request("session/fork", { sessionId, cwd: link, mcpServers: [] });
    expect(fork.sessionId).not.toBe(sessionId);
    expect(fork.modes?.currentModeId).toBe("plan");
    script("Fork marker", { events: [{ type: "text", text: "Forked answer." }] });
    const before = model.requests.length;
    expect((await agent.agent.request("session/prompt", { sessionId: fork.sessionId, prompt: text("Fork marker: continue") })).stopReason).toBe("end_turn");
    expect(JSON.stringify(model.requests.slice(before).at(-1)!.body)).toContain("Greeting marker: say hello");
  });

  it("closes a session: it takes no more prompts", async () => {
    const other = await newSession(agent);
    await agent.agent.request("session/close", { sessionId: other.sessionId });
    await expect(agent.agent.request("session/prompt", { sessionId: other.sessionId, prompt: text("hello?") })).rejects.toMatchObject({ code: -32002 });
  });

  it("takes embedded resources and links as prompt text", async () => {
    script("Resource marker", { events: [{ type: "text", text: "Seen the resource." }] });
    const before = model.requests.length;
    const response = await agent.agent.request("session/prompt", {
      sessionId,
      prompt: [
        { type: "text", text: "Resource marker: look at these" },
        { type: "resource", resource: { uri: "file:///tmp/spec.md", mimeType: "text/markdown", text: "# The spec body" } },
        { type: "resource_link", uri: "file:///tmp/other.md", name: "other.md" },
      ],
    });
    expect(response.stopReason).toBe("end_turn");
    const body = JSON.stringify(model.requests.slice(before).at(-1)!.body);
    expect(body).toContain("# The spec body");
    expect(body).toContain("[other.md](file:///tmp/other.md)");
    await expect(agent.agent.request("session/prompt", { sessionId, prompt: [{ type: "audio", data: "AAAA", mimeType: "audio/wav" }] })).rejects.toMatchObject({ code: -32602 });
  });

  it("answers a failed Turn's prompt with a JSON-RPC error naming the fault", async () => {
    script("Failing marker", { error: { status: 400, body: { error: { message: "provider text never shown", type: "invalid_request_error" } } } });
    const failure = await agent.agent.request("session/prompt", { sessionId, prompt: text("Failing marker: break") }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(acp.RequestError);
    expect((failure as acp.RequestError).code).toBe(-32603);
    expect((failure as acp.RequestError).message).toMatch(/the Turn failed: provider_/);
    expect((failure as acp.RequestError).message).not.toContain("provider text never shown");
    // The session takes the next prompt.
    script("Recovered marker", { events: [{ type: "text", text: "Back again." }] });
    expect((await agent.agent.request("session/prompt", { sessionId, prompt: text("Recovered marker: again") })).stopReason).toBe("end_turn");
  });

  it("attaches the client's stdio MCP servers to that Session only, with their environment from memory", async () => {
    const withEnv = await agent.agent.request("session/new", { cwd: link, mcpServers: [everything("secret-for-get-env")] });
    script("Env marker", { events: [{ type: "tool_call", name: "everything_get-env", arguments: {} }] }, { events: [{ type: "text", text: "Printed the environment." }] });
    let from = agent.updates.length;
    expect((await agent.agent.request("session/prompt", { sessionId: withEnv.sessionId, prompt: text("Env marker: print the env") })).stopReason).toBe("end_turn");
    let updates = agent.updatesOf(withEnv.sessionId, from);
    expect(updates.find((update) => update.sessionUpdate === "tool_call")).toMatchObject({ title: "everything_get-env", kind: "other" });
    const printed = updates.filter((update) => update.sessionUpdate === "tool_call_update").at(-1) as acp.ToolCallUpdate;
    expect(printed.status).toBe("completed");
    expect(JSON.stringify(printed.content)).toContain("secret-for-get-env");

    const echoing = await agent.agent.request("session/new", { cwd: link, mcpServers: [everything("never-stored-secret")] });
    script("Echo marker", { events: [{ type: "tool_call", name: "everything_echo", arguments: { message: "hello over ACP" } }] }, { events: [{ type: "text", text: "Echoed." }] });
    from = agent.updates.length;
    let before = model.requests.length;
    expect((await agent.agent.request("session/prompt", { sessionId: echoing.sessionId, prompt: text("Echo marker: echo") })).stopReason).toBe("end_turn");
    const toolsOf = (index: number): string[] => ((model.requests[index]!.body as { tools?: { function: { name: string } }[] }).tools ?? []).map((tool) => tool.function.name);
    expect(toolsOf(before)).toContain("everything_echo");
    updates = agent.updatesOf(echoing.sessionId, from);
    expect(JSON.stringify(updates.filter((update) => update.sessionUpdate === "tool_call_update").at(-1))).toContain("Echo: hello over ACP");

    // Another Session of the same process is offered none of them.
    script("Plain marker", { events: [{ type: "text", text: "No MCP here." }] });
    before = model.requests.length;
    const plain = await newSession(agent);
    expect((await agent.agent.request("session/prompt", { sessionId: plain.sessionId, prompt: text("Plain marker: hi") })).stopReason).toBe("end_turn");
    expect(toolsOf(before).some((name) => name.startsWith("everything_"))).toBe(false);
    expect(toolsOf(before)).toContain("read");
  });

  it("attaches a streamable HTTP MCP server (plain http:// is fine without headers)", async () => {
    const remote = await everythingHttp();
    try {
      const session = await agent.agent.request("session/new", { cwd: link, mcpServers: [{ type: "http", name: "remote everything", url: remote.endpoint, headers: [] }] });
      script("Remote marker", { events: [{ type: "tool_call", name: "remote_everything_echo", arguments: { message: "over streamable HTTP" } }] }, { events: [{ type: "text", text: "Echoed remotely." }] });
      const from = agent.updates.length;
      expect((await agent.agent.request("session/prompt", { sessionId: session.sessionId, prompt: text("Remote marker: echo") })).stopReason).toBe("end_turn");
      const done = agent.updatesOf(session.sessionId, from).filter((update) => update.sessionUpdate === "tool_call_update").at(-1) as acp.ToolCallUpdate;
      expect(done.status).toBe("completed");
      expect(JSON.stringify(done.content)).toContain("Echo: over streamable HTTP");
      // session/close stops the Session's MCP connections before the server goes away.
      await agent.agent.request("session/close", { sessionId: session.sessionId });
    } finally {
      await remote.close();
    }
  });

  it("writes nothing but JSON-RPC frames to stdout, and exits 0 at the end of its input", async () => {
    const code = await agent.close();
    expect(code).toBe(0);
    expectOnlyFrames(agent.stdout());
  });

  it("loads a Session in a new process with its history replayed and its mode restored; resume replays nothing", async () => {
    const again = startAcp({ env: home.env, cwd: home.root });
    closed.push(again);
    await initialize(again, false);
    const loaded = await again.agent.request("session/load", { sessionId, cwd: link, mcpServers: [] });
    expect(loaded.modes?.currentModeId).toBe("plan");
    expect(loaded.configOptions?.find((option) => option.id === "reasoning_effort")).toMatchObject({ currentValue: "high" });
    const replayed = again.updatesOf(sessionId);
    const users = replayed.filter((update) => update.sessionUpdate === "user_message_chunk").map(textOf);
    expect(users.slice(0, 2)).toEqual(["Greeting marker: say hello", "Reading marker: read the notes"]);
    expect(replayed.filter((update) => update.sessionUpdate === "agent_message_chunk").map(textOf)).toEqual(expect.arrayContaining(["Hello from Ze, streamed word by word.", "The notes greet you."]));
    expect(replayed).toContainEqual(expect.objectContaining({ sessionUpdate: "tool_call", title: "Read notes.txt", status: "completed" }));
    expect(replayed).toContainEqual(expect.objectContaining({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: "The user greets me." } }));

    const count = again.updates.length;
    const resumed = await again.agent.request("session/resume", { sessionId, cwd: link, mcpServers: [] });
    expect(resumed.modes?.currentModeId).toBe("plan");
    expect(again.updates.length).toBe(count);
    await expect(again.agent.request("session/load", { sessionId: "00000000-0000-4000-8000-000000000000", cwd: link, mcpServers: [] })).rejects.toMatchObject({ code: -32002 });
  });

  it("dismisses a question when the client does not support form elicitation", async () => {
    const again = closed[0]!;
    const questions = [{ question: "Proceed?", header: "Proceed", options: [{ label: "Yes", description: "" }] }];
    script("Dismiss marker", { events: [{ type: "tool_call", name: "question", arguments: { questions } }] }, { events: [{ type: "text", text: "No answer, moving on." }] });
    await again.agent.request("session/set_mode", { sessionId, modeId: "build" });
    const from = again.updates.length;
    const response = await again.agent.request("session/prompt", { sessionId, prompt: text("Dismiss marker: ask") });
    expect(again.elicitations.length).toBe(0);
    expect(response.stopReason).toBe("end_turn");
    expect(again.updatesOf(sessionId, from).filter((update) => update.sessionUpdate === "tool_call_update").at(-1)).toMatchObject({ status: "failed" });
    expect(again.stderr()).toMatch(/question dismissed/);
  });

  it("shares another database with --database: its Sessions are the CLI's", async () => {
    const shared = startAcp({ env: home.env, cwd: home.root, args: ["--database", "shared.db"] });
    closed.push(shared);
    await initialize(shared);
    const { sessionId: created } = await newSession(shared);
    expect(await shared.close()).toBe(0);
    expect(existsSync(join(home.env["XDG_DATA_HOME"]!, "ze-harness", "shared.db"))).toBe(true);
    const listed = jsonOf<{ id: string; workdir: string }[]>(await runCli(["session", "list", "--all", "--embedded", "--database", "shared.db"], { env: home.env, cwd: home.root }));
    expect(listed).toContainEqual(expect.objectContaining({ id: created, workdir: real }));
    const own = jsonOf<{ id: string }[]>(await runCli(["session", "list", "--all", "--embedded", "--database", "acp.db"], { env: home.env, cwd: home.root }));
    expect(own.map((session) => session.id)).not.toContain(created);
  });

  it("sends what plugins print to stdout to stderr instead", async () => {
    const pluginFile = join(home.dir, "noisy-plugin.mjs");
    writeFileSync(
      pluginFile,
      'export default { id: "noisy", setup() { console.log("noisy plugin: console.log"); process.stdout.write("noisy plugin: stdout.write\\n"); } };\n',
    );
    const configFile = join(home.dir, "noisy.config.json");
    writeFileSync(configFile, JSON.stringify({ plugins: [pluginFile] }));
    const noisy = startAcp({ env: home.env, cwd: home.root, args: ["--config", configFile] });
    closed.push(noisy);
    await initialize(noisy);
    await newSession(noisy);
    expect(await noisy.close()).toBe(0);
    expect(noisy.stderr()).toContain("noisy plugin: console.log");
    expect(noisy.stderr()).toContain("noisy plugin: stdout.write");
    expect(noisy.stdout()).not.toContain("noisy plugin");
    expectOnlyFrames(noisy.stdout());
  });

  it("ends its running Turn when the client goes away, and exits 0", async () => {
    const leaving = startAcp({ env: home.env, cwd: home.root });
    closed.push(leaving);
    await initialize(leaving);
    const { sessionId: created } = await newSession(leaving);
    script("Leaving marker", { events: [{ type: "text", text: "Working on it" }, { type: "delay", ms: 120_000 }, { type: "text", text: " forever." }] });
    const running = leaving.agent.request("session/prompt", { sessionId: created, prompt: text("Leaving marker: go") }).catch((error: unknown) => error);
    await leaving.waitForUpdate((notification) => notification.sessionId === created && textOf(notification.update).includes("Working"));
    expect(await leaving.close()).toBe(0);
    await running;
    const turns = jsonOf<{ turns: { turn: { phase: string; outcome?: { kind: string; fault?: { code: string } } } }[] }>(await runCli(["turn", "list", created, "--embedded", "--database", "acp.db"], { env: home.env, cwd: home.root }));
    expect(turns.turns.map((state) => state.turn.outcome)).toEqual([expect.objectContaining({ kind: "cancelled", reason: "cancelled by the ACP client" })]);
  });

  it("reports client MCP servers it cannot connect on stderr, never their secret values", async () => {
    const again = closed[0]!;
    await again.agent.request("session/new", {
      cwd: link,
      mcpServers: [
        { type: "sse", name: "old-sse", url: "https://example.invalid/sse", headers: [] },
        { type: "http", name: "plain-http", url: "http://127.0.0.1:9/mcp", headers: [{ name: "Authorization", value: "Bearer very-secret-value" }] },
      ],
    });
    expect(again.stderr()).toMatch(/"old-sse" not connected: SSE MCP servers are not supported/);
    expect(again.stderr()).toMatch(/"plain-http" not connected: Ze sends MCP credential headers only over HTTPS/);
    expect(again.stderr()).not.toContain("very-secret-value");
    expect(await again.close()).toBe(0);
    expectOnlyFrames(again.stdout());
    expect(again.stdout()).not.toContain("very-secret-value");
    // No secret value reached the database (its file or its write-ahead log).
    const state = join(home.env["XDG_DATA_HOME"]!, "ze-harness");
    for (const file of ["acp.db", "acp.db-wal"]) {
      if (!existsSync(join(state, file))) continue;
      const bytes = readFileSync(join(state, file)).toString("latin1");
      expect(bytes).not.toContain("never-stored-secret");
      expect(bytes).not.toContain("very-secret-value");
    }
  });
});
