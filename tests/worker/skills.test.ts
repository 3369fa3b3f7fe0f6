// Skills and agent Markdown files from the Worker's /workspace store, in workerd through
// miniflare with the scripted model: a Turn writes a SKILL.md (and a supporting file) through
// `write` at Node's project discovery path; the next Turn's model is offered it and loads it
// through `skill` with Node's rendering (body, base directory, manifest); a malformed SKILL.md
// is skipped, a deeper project level replaces a shallower one, and the Session's Skills are
// listed over the API. Agent Markdown files a Turn writes to /workspace/.ze-harness/agents are
// the server's agents from the next use on (prompt, model, permissions); a file Node would refuse
// is the same typed refusal for that agent, the others keep working.
import { randomUUID } from "node:crypto";
import type { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sdk, type TurnStreamEvent, type ZeClient } from "../../clients/index.js";
import { startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { failure, ok } from "../support/calls.js";
import { networkClient } from "../support/harness.js";
import { testProviderConfig } from "../support/model.js";
import { readSse } from "../support/terminals.js";
import { bundle, miniflare } from "./support.js";

let model: TestModel;
let mf: Miniflare;
let url: string;
let client: ZeClient["client"];

beforeAll(async () => {
  model = await startTestModel();
  const script = await bundle("worker/index.ts");
  mf = miniflare(script, {
    durableObjects: { HARNESS_SERVERS: { className: "HarnessServerObject", useSQLite: true } },
    bindings: { HARNESS_PROVIDERS: JSON.stringify(testProviderConfig(model)) },
    host: "127.0.0.1",
    port: 0,
  });
  url = (await mf.ready).origin;
  client = networkClient(url).client;
}, 60_000);

afterAll(async () => {
  await mf?.dispose();
  await model?.close();
});

async function createSession(server: string, body: Record<string, unknown> = {}): Promise<string> {
  const sessionId = randomUUID();
  await ok(sdk.createSession({ client, path: { server, sessionId }, body }));
  return sessionId;
}

/** Submits a prompt and waits for its Turn to finish; the finishing event. */
async function run(server: string, sessionId: string, text: string, extra: Record<string, unknown> = {}): Promise<TurnStreamEvent> {
  const turnId = randomUUID();
  await ok(
    sdk.submitPrompt({
      client,
      path: { server, sessionId },
      headers: { "x-ze-harness-client-id": "worker-skills-test" },
      body: { delivery: "queue", turnId, prompt: [{ type: "text", text }], ...extra } as never,
    }),
  );
  const path = `/v1/servers/${server}/sessions/${sessionId}/turns/${turnId}/events`;
  const events = await readSse<TurnStreamEvent>(await fetch(`${url}${path}?afterRevision=0`), path, (event) => event.type === "turn.finished");
  return events.at(-1)!;
}

const skillFile = (name: string, description: string, body: string): string => `---\nname: ${name}\ndescription: ${description}\n---\n\n${body}\n`;

describe("Skills from the /workspace store (workerd)", () => {
  it("offers and loads a SKILL.md a previous Turn wrote, as Node discovers and renders it", async () => {
    const sessionId = await createSession("skills");
    model.enqueue(
      {
        events: [
          { type: "tool_call", name: "write", arguments: { filePath: ".ze-harness/skills/greeter/SKILL.md", content: skillFile("greeter", "Greets people\n  the lighthouse way", "Say ahoy before anything else.") } },
          { type: "tool_call", name: "write", arguments: { filePath: ".ze-harness/skills/greeter/phrases/ahoy.txt", content: "ahoy!" } },
          { type: "tool_call", name: "write", arguments: { filePath: ".agents/skills/broken/SKILL.md", content: "no frontmatter here" } },
        ],
      },
      { events: [{ type: "text", text: "Written." }] },
    );
    expect(await run("skills", sessionId, "Write the Skill")).toMatchObject({ type: "turn.finished", outcome: { kind: "completed", text: "Written." } });
    // The first Turn had no Skills: the skill tool was not offered.
    const firstRequest = JSON.stringify(model.requests.at(-2)!.body);
    expect(firstRequest).not.toContain("Skills you can load");

    // The next Turn lists it (description folded to one line) and its model loads it.
    model.enqueue({ events: [{ type: "tool_call", name: "skill", arguments: { name: "greeter" } }, { type: "tool_call", name: "skill", arguments: { name: "broken" } }] }, { events: [{ type: "text", text: "Loaded." }] });
    expect(await run("skills", sessionId, "Greet me")).toMatchObject({ outcome: { kind: "completed", text: "Loaded." } });
    const offered = JSON.stringify(model.requests.at(-2)!.body);
    expect(offered).toContain("- greeter: Greets people the lighthouse way");
    expect(offered).not.toContain("- broken");
    const loaded = JSON.stringify(model.requests.at(-1)!.body);
    expect(loaded).toContain('<skill name=\\"greeter\\">');
    expect(loaded).toContain("Say ahoy before anything else.");
    expect(loaded).toContain("Base directory of this Skill: /workspace/.ze-harness/skills/greeter");
    expect(loaded).toContain("- phrases/ahoy.txt (5 bytes)");
    expect(loaded).toContain("unknown_skill");

    // Listed over the API with the contract's shape.
    const listed = await ok(sdk.sessionSkills({ client, path: { server: "skills", sessionId } }));
    expect(listed.skills).toEqual([{ id: "greeter", displayName: "greeter", description: "Greets people the lighthouse way", advertised: true, userInvocable: true, origin: "host" }]);
  });

  it("searches every level from /workspace down to the workdir: the deeper one wins; a prompt selects it", async () => {
    const outer = await createSession("levels");
    model.enqueue(
      {
        events: [
          { type: "tool_call", name: "write", arguments: { filePath: ".claude/skills/tone/SKILL.md", content: skillFile("tone", "Outer tone", "Speak softly.") } },
          { type: "tool_call", name: "write", arguments: { filePath: "app/.opencode/skill/tone/SKILL.md", content: skillFile("tone", "Inner tone", "Speak loudly.") } },
        ],
      },
      { events: [{ type: "text", text: "Both written." }] },
    );
    expect(await run("levels", outer, "Write both")).toMatchObject({ outcome: { kind: "completed" } });
    // A Session in /workspace sees the outer one only; one in /workspace/app sees the inner one.
    expect((await ok(sdk.sessionSkills({ client, path: { server: "levels", sessionId: outer } }))).skills.map((skill) => skill.description)).toEqual(["Outer tone"]);
    const inner = await createSession("levels", { workdir: "app" });
    expect((await ok(sdk.sessionSkills({ client, path: { server: "levels", sessionId: inner } }))).skills.map((skill) => skill.description)).toEqual(["Inner tone"]);
    // A prompt that selects it has it loaded before the first model request.
    model.enqueue({ events: [{ type: "text", text: "Loud." }] });
    expect(await run("levels", inner, "Talk", { skills: ["tone"] })).toMatchObject({ outcome: { kind: "completed", text: "Loud." } });
    const selected = JSON.stringify(model.requests.at(-1)!.body);
    expect(selected).toContain("Speak loudly.");
    expect(selected).not.toContain("Speak softly.");
  });
});

describe("Agent Markdown files from the /workspace store (workerd)", () => {
  const reviewer = [
    "---",
    "description: Reviews lighthouse logs",
    "model: test/scripted",
    "permissions:",
    "  - { action: shell, resource: '*', effect: deny }",
    "---",
    "",
    "You review lighthouse logs and nothing else.",
  ].join("\n");

  it("runs a Session's Turns with an agent a Turn wrote: its prompt, model and permissions", async () => {
    const writer = await createSession("agents");
    model.enqueue(
      { events: [{ type: "tool_call", name: "write", arguments: { filePath: ".ze-harness/agents/team/reviewer.md", content: reviewer } }] },
      { events: [{ type: "text", text: "Agent written." }] },
    );
    expect(await run("agents", writer, "Write the agent")).toMatchObject({ outcome: { kind: "completed", text: "Agent written." } });

    const listed = await ok(sdk.sessionAgents({ client, path: { server: "agents", sessionId: writer } }));
    expect(listed.agents).toContainEqual({ id: "team/reviewer", displayName: "team/reviewer", description: "Reviews lighthouse logs", model: "test/scripted", mode: "primary", origin: "host" });

    // A Session created with it: the agent's instructions lead the request; its shell deny holds;
    // the Turn ran on the agent's model.
    const sessionId = await createSession("agents", { agent: "team/reviewer" });
    model.enqueue({ events: [{ type: "tool_call", name: "shell", arguments: { command: "ls" } }] }, { events: [{ type: "text", text: "Reviewed." }] });
    const settled = await run("agents", sessionId, "Review the logs");
    expect(settled).toMatchObject({ outcome: { kind: "completed", text: "Reviewed." } });
    const turns = await ok(sdk.listSessionTurns({ client, path: { server: "agents", sessionId }, query: {} }));
    expect(turns.turns[0]!.turn).toMatchObject({ model: "test/scripted" });
    const request = JSON.stringify(model.requests.at(-1)!.body);
    expect(request).toContain("You review lighthouse logs and nothing else.");
    // Denied outright by the agent's rule, shell is not offered at all (Node's rule), so the call names no tool.
    expect(request).toContain("unknown_tool");
    const offered = (model.requests.at(-1)!.body as { tools: { function: { name: string } }[] }).tools.map((tool) => tool.function.name);
    expect(offered).toContain("read");
    expect(offered).not.toContain("shell");
    expect(request).not.toContain("spawn_failed");
    // An unknown agent is the ordinary 400.
    expect((await failure(sdk.createSession({ client, path: { server: "agents", sessionId: randomUUID() }, body: { agent: "team/absent" } }))).status).toBe(400);
  });

  it("answers an agent file Node would refuse with the same typed error; other agents keep working", async () => {
    const writer = await createSession("agents-bad");
    model.enqueue(
      {
        events: [
          { type: "tool_call", name: "write", arguments: { filePath: ".ze-harness/agents/helper.md", content: "---\ndescription: Helps\n---\n\nHelp out." } },
          { type: "tool_call", name: "write", arguments: { filePath: ".ze-harness/agents/loud.md", content: "---\ndescription: Loud\nhidden: true\n---\n\nShout." } },
          // Malformed YAML is skipped silently, as on Node.
          { type: "tool_call", name: "write", arguments: { filePath: ".ze-harness/agents/odd.md", content: "---\na: 1\na: 2\n---\n\nOdd." } },
        ],
      },
      { events: [{ type: "text", text: "Files written." }] },
    );
    expect(await run("agents-bad", writer, "Write the files")).toMatchObject({ outcome: { kind: "completed" } });

    const refused = await failure(sdk.createSession({ client, path: { server: "agents-bad", sessionId: randomUUID() }, body: { agent: "loud" } }));
    expect(refused.status).toBe(503);
    expect(refused.body).toMatchObject({ _tag: "UnavailableError" });
    expect(refused.body.message).toBe('AgentConfigInvalid: /workspace/.ze-harness/agents/loud.md: /hidden: unsupported agent option "hidden"; supported: ' + refused.body.message.split("supported: ")[1]);
    const prompt = await failure(
      sdk.submitPrompt({ client, path: { server: "agents-bad", sessionId: writer }, headers: { "x-ze-harness-client-id": "t" }, body: { delivery: "queue", turnId: randomUUID(), agent: "loud", prompt: [{ type: "text", text: "x" }] } as never }),
    );
    expect(prompt.status).toBe(503);
    expect(prompt.body.message).toContain("AgentConfigInvalid: /workspace/.ze-harness/agents/loud.md");
    expect((await failure(sdk.sessionAgents({ client, path: { server: "agents-bad", sessionId: writer } }))).status).toBe(503);

    // The helper written in the same Turn was never loaded (the catalog as a whole is refused);
    // the default agent still runs, and a Turn can repair the file.
    model.enqueue(
      { events: [{ type: "tool_call", name: "write", arguments: { filePath: ".ze-harness/agents/loud.md", content: "---\ndescription: Loud\n---\n\nShout." } }] },
      { events: [{ type: "text", text: "Repaired." }] },
    );
    expect(await run("agents-bad", writer, "Repair it")).toMatchObject({ outcome: { kind: "completed", text: "Repaired." } });
    const ids = (await ok(sdk.sessionAgents({ client, path: { server: "agents-bad", sessionId: writer } }))).agents.map((agent) => agent.id);
    expect(ids).toEqual(expect.arrayContaining(["helper", "loud"]));
    expect(ids).not.toContain("odd");
    model.enqueue({ events: [{ type: "text", text: "Shouted." }] });
    expect(await run("agents-bad", writer, "Now shout", { agent: "loud" })).toMatchObject({ outcome: { kind: "completed", text: "Shouted." } });
    expect(JSON.stringify(model.requests.at(-1)!.body)).toContain("Shout.");
  });
});
