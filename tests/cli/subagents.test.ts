// Agents and sub-agents from the built CLI: `run --agent plan` delegating to an `explore`
// sub-agent whose permission request surfaces in the parent's terminal (and is rejected, named,
// without one), `session create --agent`, and the descendant commands (`session children`,
// `session approvals`, `session background`) against a real `serve`.
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { sdk, type ServerStreamEvent, type Session, type Turn } from "../../clients/index.js";
import { startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { ok } from "../support/calls.js";
import { assertBuilt, jsonOf, runCli, scriptByPrompt, type CliOptions } from "../support/cli.js";
import { binPath, networkClient, networkFetch, startServe, tempHome, type ServeProcess, type TempHome } from "../support/harness.js";
import { TEST_MODEL, testProviderConfig, writeGlobalConfig } from "../support/model.js";
import { openSse, queue, runToEnd, server } from "../turns/helpers.js";

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

let model: TestModel;
let script: ReturnType<typeof scriptByPrompt>;
let home: TempHome;
let options: CliOptions;
let outside: string;

beforeAll(async () => {
  assertBuilt();
  model = await startTestModel();
  script = scriptByPrompt(model);
  home = tempHome("ze-cli-subagents-");
  writeGlobalConfig(home, { model: TEST_MODEL, providers: testProviderConfig(model) });
  options = { env: home.env, cwd: home.root };
  outside = join(home.dir, "outside-notes.txt");
  writeFileSync(outside, "the outside notes say 42\n");
});
afterAll(async () => {
  await model?.close();
  home?.cleanup();
});

const delegate = (marker: string) => ({
  events: [{ type: "tool_call" as const, name: "task", arguments: { description: "Read the notes", prompt: `${marker}: read ${outside}`, subagent_type: "explore" } }],
});
const say = (text: string) => ({ events: [{ type: "text" as const, text }] });

/** Runs the CLI on a pseudo-terminal (util-linux `script`), typing each answer once its prompt appears. */
function inTerminal(args: readonly string[], answers: readonly (readonly [RegExp, string])[]): Promise<{ code: number | null; output: string }> {
  const quote = (value: string): string => `'${value.replaceAll("'", `'\\''`)}'`;
  const command = [process.execPath, binPath, ...args].map(quote).join(" ");
  const child = spawn("script", ["-qfec", command, "/dev/null"], { cwd: home.root, env: home.env, stdio: ["pipe", "pipe", "pipe"] });
  let output = "";
  let answered = 0;
  let next = 0;
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    output += chunk;
    const answer = answers[next];
    if (answer && answer[0].test(output.slice(answered))) {
      next += 1;
      answered = output.length;
      child.stdin.write(`${answer[1]}\r`);
    }
  });
  const stop = setTimeout(() => child.kill(), 30_000);
  return new Promise((resolvePromise) => child.on("close", (code) => (clearTimeout(stop), resolvePromise({ code, output }))));
}

describe("run --agent plan with an explore sub-agent", () => {
  it("asks the sub-agent's permission on the parent's terminal and finishes with the delegated answer", async () => {
    script("Plan-on-terminal", delegate("Explore-on-terminal"), say("The plan: use 42."));
    script("Explore-on-terminal", { events: [{ type: "tool_call", name: "read", arguments: { filePath: outside } }] }, say("The notes say 42."));
    const result = await inTerminal(["--embedded", "run", "--agent", "plan", "Plan-on-terminal"], [[/Allow \[sub-agent explore\] external_directory \S+\? \[o\]nce\/\[a\]lways\/\[r\]eject /, "o"]]);
    expect(result.output).toContain("The plan: use 42.");
    expect(result.code).toBe(0);
    // The explore child read the file: its content reached the child's next model request.
    const childFollowUp = model.requests.find((request) => JSON.stringify(request.body).includes("the outside notes say 42"));
    expect(childFollowUp).toBeDefined();
  });

  it("without a terminal rejects the sub-agent's request, names it on stderr, and the parent still answers", async () => {
    script("Plan-no-terminal", delegate("Explore-no-terminal"), say("The sub-agent could not read it."));
    script("Explore-no-terminal", { events: [{ type: "tool_call", name: "read", arguments: { filePath: outside } }] });
    const result = await runCli(["--embedded", "run", "--agent", "plan", "--json", "Plan-no-terminal"], options);
    expect(result.stderr).toMatch(/permission rejected \(no interactive terminal\): \[sub-agent explore\] external_directory \S+/);
    expect(result.code).toBe(0);
    const turn = jsonOf<Turn>(result);
    expect(turn.request.agent).toBe("plan");
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "The sub-agent could not read it." });
    const children = jsonOf<Session[]>(await runCli(["--embedded", "session", "children", turn.sessionId], options));
    expect(children.map((child) => [child.agent, child.spawnedFrom?.parentSessionId])).toEqual([["explore", turn.sessionId]]);
  });

  it("refuses an unknown agent before anything runs", async () => {
    const result = await runCli(["--embedded", "run", "--agent", "nobody", "never sent"], options);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error: ValidationError: [^\n]*\/agent: unknown agent "nobody"/);
  });

  it("session create --agent pins the Session's agent", async () => {
    const created = jsonOf<Session>(await runCli(["--embedded", "session", "create", "--agent", "plan"], options));
    expect(created.agent).toBe("plan");
    script("Pinned-plan", say("planned"));
    const turn = jsonOf<Turn>(await runCli(["--embedded", "run", "--session", created.id, "--json", "Pinned-plan"], options));
    expect(turn.request.agent).toBe("plan");
    const refused = await runCli(["--embedded", "session", "create", "--agent", "explore"], options);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/runs only as a sub-agent/);
  });
});

describe("descendant commands against a serve", () => {
  let serve: ServeProcess;
  const token = "cli-subagents-token";
  beforeAll(async () => {
    writeGlobalConfig(home, { model: TEST_MODEL, providers: testProviderConfig(model), permissions: [{ action: "shell", resource: "touch *", effect: "ask" }] });
    serve = await startServe(["--token", token, "--database", join(home.dir, "serve.db")], home.env, home.root);
  });
  afterAll(async () => {
    await serve?.stop();
  });
  const remote = (args: readonly string[]): string[] => [...args, "--remote", serve.url, "--token", token];

  it("lists a waiting child's approval, detaches the chain, and the result arrives as a queued Turn", async () => {
    const authorized = (request: Request): Promise<Response> => {
      const headers = new Headers(request.headers);
      headers.set("authorization", `Bearer ${token}`);
      return networkFetch(new Request(request, { headers }));
    };
    const api = { api: networkClient(serve.url, token), fetch: authorized };
    const sessionId = randomUUID();
    await ok(sdk.createSession({ client: api.api.client, path: { server, sessionId }, body: {} }));
    script("Serve-parent", { events: [{ type: "tool_call", name: "task", arguments: { description: "Touch it", prompt: "Serve-child", subagent_type: "general" } }] }, say("parent went on"));
    script("Serve-child", { events: [{ type: "tool_call", name: "shell", arguments: { command: "touch served.txt" } }] }, say("child touched it"));
    const stream = await openSse<ServerStreamEvent>(api.fetch, serve.url, `/v1/servers/${server}/events`);
    const { turnId } = await queue(api, sessionId, "Serve-parent");
    await stream.until((event) => event.type === "session.turn.approval.requested" && event.sessionId !== sessionId, "the child's approval");
    stream.close();

    const approvals = jsonOf<{ agent: string; request: { id: string; action: string; sessionId: string } }[]>(await runCli(remote(["session", "approvals", sessionId]), options));
    expect(approvals).toHaveLength(1);
    expect(approvals[0]).toMatchObject({ agent: "general", request: { action: "shell" } });
    expect(jsonOf(await runCli(remote(["session", "background", sessionId]), options))).toEqual({ promoted: true });
    expect((await runToEnd(api, sessionId, turnId)).turn.outcome).toMatchObject({ kind: "completed", text: "parent went on" });
    expect(jsonOf(await runCli(remote(["session", "background", sessionId]), options))).toEqual({ promoted: false });

    script("child touched it", say("noted"));
    const reply = await runCli(remote(["permission", "reply", sessionId, approvals[0]!.request.id, "once"]), options);
    expect(reply.code).toBe(0);
    const turns = await waitForTurns(api, sessionId, 2);
    expect(turns[1]!.request.prompt[0]).toMatchObject({ text: expect.stringContaining("<task_result>\nchild touched it\n</task_result>") });
  });
});

/** The Session's Turns once it has `count`, watched on the server stream. */
async function waitForTurns(api: { api: ReturnType<typeof networkClient>; fetch: (request: Request) => Promise<Response> }, sessionId: string, count: number): Promise<Turn[]> {
  const list = async () => (await ok(sdk.listSessionTurns({ client: api.api.client, path: { server, sessionId } }))).turns.map((entry) => entry.turn);
  const stream = await openSse<ServerStreamEvent>(api.fetch, api.api.baseUrl, `/v1/servers/${server}/events`);
  try {
    let turns = await list();
    while (turns.length < count) {
      await stream.until((event) => event.type === "session.turn.snapshot" && event.sessionId === sessionId, "a Turn of the Session");
      turns = await list();
    }
    return turns;
  } finally {
    stream.close();
  }
}
