// `chat`, and the `permission`, `question` and `turn` commands, through the built binary. The
// scripted test model runs in this process; pending requests are driven by submitting Turns
// through the API of a `serve` process and answered with the CLI's --remote commands.
import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  sdk,
  unwrap,
  watchTurn,
  type PermissionReplyResponse,
  type PermissionRequest,
  type QuestionReplyResponse,
  type QuestionRequest,
  type SavedPermission,
  type Session,
  type SessionTurnsResponse,
  type Turn,
  type ZeClient,
} from "../../clients/index.js";
import { startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { assertBuilt, jsonOf, runCli, scriptByPrompt, startCli, type CliOptions, type CliResult, succeeded } from "../support/cli.js";
import { networkClient, startServe, tempHome, type ServeProcess, type TempHome } from "../support/harness.js";
import { TEST_MODEL, testProviderConfig, writeGlobalConfig } from "../support/model.js";

// Every test spawns node processes; leave room on a loaded two-core machine.
vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const token = "cli-turns-token";
const server = "local";
let model: TestModel;
let script: ReturnType<typeof scriptByPrompt>;
let home: TempHome;
let options: CliOptions;
let serve: ServeProcess;
let api: ZeClient;

beforeAll(async () => {
  assertBuilt();
  model = await startTestModel();
  script = scriptByPrompt(model);
  home = tempHome("ze-cli-turns-");
  writeGlobalConfig(home, { model: TEST_MODEL, providers: testProviderConfig(model) });
  options = { env: home.env, cwd: home.root };
  serve = await startServe(["--token", token, "--database", join(home.dir, "serve.db")], home.env, home.root);
  api = networkClient(serve.url, token);
});
afterAll(async () => {
  await serve?.stop();
  await model?.close();
  home?.cleanup();
});

const remote = (args: readonly string[], overrides: Partial<CliOptions> = {}): Promise<CliResult> =>
  runCli([...args, "--remote", serve.url, "--token", token], { ...options, ...overrides });


type ChatMessage = { role: string; content: unknown };
const userTexts = (index: number): string[] =>
  (model.requests[index]!.body as { messages: ChatMessage[] }).messages.filter((message) => message.role === "user").map((message) => JSON.stringify(message.content));

// ---------------------------------------------------------------------------------------------
// chat

describe("chat", () => {
  it("queues each piped line as a Turn and prints the answers in order; EOF waits for them", async () => {
    const session = jsonOf<Session>(await runCli(["--embedded", "session", "create"], options));
    const before = model.requests.length;
    script("First question", { events: [{ type: "text", text: "Answer one." }] });
    script("Second question", { events: [{ type: "text", text: "Answer two." }] });
    const result = await runCli(["--embedded", "chat", session.id], { ...options, input: "First question\n\n   \nSecond question\n" });
    expect(result).toMatchObject({ code: 0, stderr: "", stdout: "Answer one.\nAnswer two.\n" });
    expect(model.requests.length - before).toBe(2);
    expect(userTexts(before).at(-1)).toContain("First question");
    expect(userTexts(before + 1).at(-1)).toContain("Second question");
  });

  it("/steer reaches the model while the running Turn is held by a delay", async () => {
    const session = jsonOf<Session>(await runCli(["--embedded", "session", "create"], options));
    const before = model.requests.length;
    script(
      "Start a long task",
      { events: [{ type: "text", text: "Working on it." }, { type: "delay", ms: 2500 }, { type: "text", text: " Still working." }] },
      { events: [{ type: "text", text: "Bananas included." }] },
    );
    const cli = startCli(["--embedded", "chat", session.id], options);
    cli.write("Start a long task\n");
    await cli.waitFor(/Working on it\./);
    cli.write("/steer Also mention bananas\n");
    cli.end();
    const result = await cli.exited;
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(result.stdout).toBe("Working on it. Still working.\nBananas included.\n");
    expect(model.requests.length - before).toBe(2);
    expect(JSON.stringify((model.requests[before + 1]!.body as { messages: ChatMessage[] }).messages)).toContain("Also mention bananas");
  });

  it("/steer without a running Turn is an error line; the chat goes on", async () => {
    const session = jsonOf<Session>(await runCli(["--embedded", "session", "create"], options));
    script("Hello after a refused steer", { events: [{ type: "text", text: "Still here." }] });
    const result = await runCli(["--embedded", "chat", session.id], { ...options, input: "/steer nobody listens\nHello after a refused steer\n" });
    expect(result).toMatchObject({ code: 0, stdout: "Still here.\n", stderr: "error: no running Turn to steer\n" });
  });

  it("a failed Turn is reported on stderr and makes the exit code 1", async () => {
    const session = jsonOf<Session>(await runCli(["--embedded", "session", "create"], options));
    script("Fail first", { error: { status: 400 } });
    script("Then answer", { events: [{ type: "text", text: "Recovered." }] });
    const result = await runCli(["--embedded", "chat", session.id], { ...options, input: "Fail first\nThen answer\n" });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("Recovered.\n");
    expect(result.stderr).toMatch(/^error: Turn failed: provider_bad_request: [^\n]+\n$/);
  });

  it("an unknown Session fails at once (exit 1) without reading input", async () => {
    const result = await runCli(["--embedded", "chat", randomUUID()], { ...options, input: "Hello\n" });
    expect(result).toMatchObject({ code: 1, stdout: "" });
    expect(result.stderr).toMatch(/^error: NotFoundError: [^\n]+\n$/);
  });

  it("works the same with --remote", async () => {
    const session = await succeeded<Session>(remote(["session", "create"]));
    script("Remote prompt one", { events: [{ type: "text", text: "Remote one." }] });
    script("Remote prompt two", { events: [{ type: "text", text: "Remote two." }] });
    const result = await remote(["chat", session.id], { input: "Remote prompt one\nRemote prompt two\n" });
    expect(result).toMatchObject({ code: 0, stderr: "", stdout: "Remote one.\nRemote two.\n" });
  });
});

// ---------------------------------------------------------------------------------------------
// permission, question, turn (--remote; the Turns are submitted through the API)

async function createSession(): Promise<string> {
  const sessionId = randomUUID();
  await unwrap(sdk.createSession({ client: api.client, path: { server, sessionId }, body: {} }));
  return sessionId;
}

async function submit(sessionId: string, text: string): Promise<string> {
  const turnId = randomUUID();
  await unwrap(
    sdk.submitPrompt({
      client: api.client,
      path: { server, sessionId },
      headers: { "x-ze-harness-client-id": "cli-turns-test" },
      body: { delivery: "queue", turnId, prompt: [{ type: "text", text }] },
    }),
  );
  return turnId;
}

/** Watches a Turn until `pick` finds something in it. */
async function waitUntil<T>(sessionId: string, turnId: string, pick: (turn: Turn) => T | undefined): Promise<T> {
  const controller = new AbortController();
  let found: T | undefined;
  await watchTurn(api, {
    server,
    sessionId,
    turnId,
    signal: controller.signal,
    onEvent: (_event, turn) => {
      found ??= pick(turn);
      if (found !== undefined) controller.abort();
    },
  }).catch((error: unknown) => {
    if (found === undefined) throw error;
  });
  return found!;
}

const finished = (sessionId: string, turnId: string): Promise<Turn> => watchTurn(api, { server, sessionId, turnId });

const pendingApproval = (sessionId: string, turnId: string): Promise<PermissionRequest> =>
  waitUntil(sessionId, turnId, (turn) => turn.parts.flatMap((part) => (part.type === "tool" && part.approval.state === "pending" ? [part.approval.request] : []))[0]);

const pendingQuestion = (sessionId: string, turnId: string): Promise<QuestionRequest> =>
  waitUntil(sessionId, turnId, (turn) => turn.parts.flatMap((part) => (part.type === "tool" && part.question?.state === "pending" ? [part.question.request] : []))[0]);

/** A Turn whose model reads a file outside the workdir (an `external_directory` approval), then answers `answer`. */
async function readOutside(answer: string): Promise<{ sessionId: string; turnId: string; request: PermissionRequest }> {
  const outside = join(home.dir, `outside-${randomUUID()}.txt`);
  writeFileSync(outside, "outside content\n");
  const prompt = `Read the outside file ${randomUUID()}`;
  script(prompt, { events: [{ type: "tool_call", name: "read", arguments: { filePath: outside } }] }, { events: [{ type: "text", text: answer }] });
  const sessionId = await createSession();
  const turnId = await submit(sessionId, prompt);
  return { sessionId, turnId, request: await pendingApproval(sessionId, turnId) };
}

const toolOf = (turn: Turn) => turn.parts.find((part) => part.type === "tool");

describe("permission", () => {
  it("reply once: prints the reply and the Turn; the tool runs and the Turn completes", async () => {
    const { sessionId, turnId, request } = await readOutside("It says outside content.");
    expect(request.action).toBe("external_directory");
    const reply = await succeeded<PermissionReplyResponse>(remote(["permission", "reply", sessionId, request.id, "once"]));
    expect(reply.requestId).toBe(request.id);
    expect(reply.turn.id).toBe(turnId);
    const turn = await finished(sessionId, turnId);
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "It says outside content." });
    expect(toolOf(turn)).toMatchObject({ state: "completed", approval: { state: "resolved", decision: "allow", reply: "once" } });
    expect(await succeeded<SavedPermission[]>(remote(["permission", "saved", "list", sessionId]))).toEqual([]);
  });

  it("takes short ids: Session and request id prefixes (8 hex digits) resolve through the server", async () => {
    const { sessionId, turnId, request } = await readOutside("Short and read.");
    const reply = await succeeded<PermissionReplyResponse>(remote(["permission", "reply", sessionId.slice(0, 8), request.id.slice(0, 8), "once"]));
    expect(reply.requestId).toBe(request.id);
    expect((await finished(sessionId, turnId)).outcome).toMatchObject({ kind: "completed", text: "Short and read." });
    const shown = await succeeded<Turn>(remote(["turn", "show", sessionId.slice(0, 8), turnId.slice(0, 9)]));
    expect(shown.id).toBe(turnId);
  });

  it("reply reject --message: the denial carries the message", async () => {
    const { sessionId, turnId, request } = await readOutside("Understood.");
    await succeeded<PermissionReplyResponse>(remote(["permission", "reply", sessionId, request.id, "reject", "--message", "Stay in the repository."]));
    const turn = await finished(sessionId, turnId);
    expect(toolOf(turn)).toMatchObject({ state: "denied", approval: { decision: "deny", reply: "reject", replyMessage: "Stay in the repository." } });
  });

  it("reply always saves grants; saved list shows them and saved remove deletes one", async () => {
    const { sessionId, turnId, request } = await readOutside("Saved and read.");
    await succeeded<PermissionReplyResponse>(remote(["permission", "reply", sessionId, request.id, "always"]));
    await finished(sessionId, turnId);
    const saved = await succeeded<SavedPermission[]>(remote(["permission", "saved", "list", sessionId]));
    expect(saved.length).toBeGreaterThan(0);
    expect(saved[0]).toMatchObject({ sessionId, action: "external_directory", sourcePermissionRequestId: request.id });
    const removed = await succeeded<SavedPermission>(remote(["permission", "saved", "remove", sessionId, saved[0]!.id]));
    expect(removed).toEqual(saved[0]);
    const after = await succeeded<SavedPermission[]>(remote(["permission", "saved", "list", sessionId]));
    expect(after.map((grant) => grant.id)).not.toContain(saved[0]!.id);
  });

  it("usage errors exit 2; an unknown request is NotFoundError, exit 1", async () => {
    const sessionId = await createSession();
    const badReply = await remote(["permission", "reply", sessionId, randomUUID(), "sometimes"]);
    expect(badReply).toMatchObject({ code: 2, stdout: "" });
    expect(badReply.stderr).toMatch(/^error: [^\n]+\n$/);
    const badId = await remote(["permission", "reply", sessionId, "not-a-uuid", "once"]);
    expect(badId).toMatchObject({ code: 2, stdout: "" });
    const unknown = await remote(["permission", "reply", sessionId, randomUUID(), "once"]);
    expect(unknown).toMatchObject({ code: 1, stdout: "" });
    expect(unknown.stderr).toMatch(/^error: NotFoundError: [^\n]+\n$/);
  });
});

describe("question", () => {
  /** Scripts a question round ending with `answer`; returns the prompt to submit. */
  const ask = (answer: string): string => {
    const prompt = `Ask me a question ${randomUUID()}`;
    script(
      prompt,
      {
        events: [
          {
            type: "tool_call",
            name: "question",
            arguments: { questions: [{ question: "Which colour?", header: "Colour", options: [{ label: "Red", description: "" }, { label: "Blue", description: "" }] }] },
          },
        ],
      },
      { events: [{ type: "text", text: answer }] },
    );
    return prompt;
  };

  it("reply with ANSWERS JSON (also from stdin with -): the tool gets the answers", async () => {
    for (const via of ["argument", "stdin"] as const) {
      const prompt = ask("Blue it is.");
      const sessionId = await createSession();
      const turnId = await submit(sessionId, prompt);
      const request = await pendingQuestion(sessionId, turnId);
      const answers = '[["Blue"]]';
      const reply = await succeeded<QuestionReplyResponse>(
        via === "argument" ? remote(["question", "reply", sessionId, request.id, answers]) : remote(["question", "reply", sessionId, request.id, "-"], { input: answers }),
      );
      expect(reply).toMatchObject({ requestId: request.id, turn: { id: turnId } });
      const turn = await finished(sessionId, turnId);
      expect(toolOf(turn)).toMatchObject({ state: "completed", question: { state: "answered", answers: [["Blue"]] } });
      expect(turn.outcome).toMatchObject({ kind: "completed", text: "Blue it is." });
    }
  });

  it("reject dismisses the question", async () => {
    const prompt = ask("No answer then.");
    const sessionId = await createSession();
    const turnId = await submit(sessionId, prompt);
    const request = await pendingQuestion(sessionId, turnId);
    const reply = await succeeded<QuestionReplyResponse>(remote(["question", "reject", sessionId, request.id]));
    expect(reply.requestId).toBe(request.id);
    const turn = await finished(sessionId, turnId);
    expect(toolOf(turn)).toMatchObject({ question: { state: "dismissed" } });
  });

  it("ANSWERS that are not JSON string[][] are a usage error (exit 2)", async () => {
    const sessionId = await createSession();
    for (const answers of ["nope", '["Blue"]', "[]", '[[1]]']) {
      const result = await remote(["question", "reply", sessionId, randomUUID(), answers]);
      expect(result, answers).toMatchObject({ code: 2, stdout: "" });
      expect(result.stderr).toMatch(/^error: ANSWERS [^\n]+\n$/);
    }
  });
});

describe("turn", () => {
  it("show, list (paged) and cancel", async () => {
    const sessionId = await createSession();
    script("The first listed Turn", { events: [{ type: "text", text: "First." }] });
    const first = await submit(sessionId, "The first listed Turn");
    await finished(sessionId, first);
    const before = model.requests.length;
    script("The Turn to cancel", { hang: true });
    const second = await submit(sessionId, "The Turn to cancel");
    await model.waitForRequest(before + 1);

    const shown = await succeeded<Turn>(remote(["turn", "show", sessionId, first]));
    expect(shown).toMatchObject({ id: first, sessionId, sequence: 1, phase: "completed", outcome: { text: "First." } });

    const cancelled = await succeeded<Turn>(remote(["turn", "cancel", sessionId, second, "--reason", "changed my mind"]));
    expect(cancelled).toMatchObject({ id: second, cancellation: { reason: "changed my mind" } });
    const settled = await finished(sessionId, second);
    expect(settled).toMatchObject({ phase: "cancelled", outcome: { kind: "cancelled", reason: "changed my mind" } });
    expect(await succeeded<Turn>(remote(["turn", "show", sessionId, second]))).toMatchObject({ phase: "cancelled" });

    const page = await succeeded<SessionTurnsResponse>(remote(["turn", "list", sessionId, "--limit", "1"]));
    expect(page.turns.map((entry) => entry.turn.id)).toEqual([first]);
    expect(page.nextAfterSequence).toBe(1);
    const next = await succeeded<SessionTurnsResponse>(remote(["turn", "list", sessionId, "--limit", "1", "--after", String(page.nextAfterSequence)]));
    expect(next.turns.map((entry) => entry.turn.id)).toEqual([second]);
    const all = await succeeded<SessionTurnsResponse>(remote(["turn", "list", sessionId]));
    expect(all.turns.map((entry) => entry.turn.sequence)).toEqual([1, 2]);
  });

  it("errors: an unknown Turn is NotFoundError (exit 1); a malformed id is a usage error (exit 2)", async () => {
    const sessionId = await createSession();
    const unknown = await remote(["turn", "show", sessionId, randomUUID()]);
    expect(unknown).toMatchObject({ code: 1, stdout: "" });
    expect(unknown.stderr).toMatch(/^error: NotFoundError: [^\n]+\n$/);
    const malformed = await remote(["turn", "cancel", sessionId, "42"]);
    expect(malformed).toMatchObject({ code: 2, stdout: "" });
    expect(malformed.stderr).toMatch(/^error: [^\n]+\n$/);
  });

  it("turn commands also work embedded (against the local database)", async () => {
    script("Local turn", { events: [{ type: "text", text: "Local." }] });
    const turn = jsonOf<Turn>(await runCli(["--embedded", "run", "--json", "Local turn"], options));
    expect(await succeeded<Turn>(runCli(["--embedded", "turn", "show", turn.sessionId, turn.id], options))).toEqual(turn);
    const page = await succeeded<SessionTurnsResponse>(runCli(["--embedded", "turn", "list", turn.sessionId], options));
    expect(page.turns.map((entry) => entry.turn.id)).toEqual([turn.id]);
  });
});
