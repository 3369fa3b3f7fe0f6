// Skills and nested workspace instructions inside real Turns: the Skill catalogs (host and
// Session, safe metadata only), the developer instruction that lists advertised Skills, the
// `skill` tool loading a body and its supporting-file manifest, Skills a prompt selects (loaded
// before the first model call; typed refusals), and nested AGENTS.md files attached to a read
// result once while that result stays in model-visible history.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { sdk, type ToolTurnPart, type Turn } from "../../clients/index.js";
import type { RecordedRequest } from "../../tools/test-model/index.js";
import { failure, ok } from "../support/calls.js";
import { startModelHarness, type ModelHarness } from "../support/model.js";
import { queue, runToEnd, server, submitCall, text } from "../turns/helpers.js";

type ChatBody = { messages: { role: string; content: unknown }[]; tools?: { function: { name: string } }[] };
const systemOf = (request: RecordedRequest | undefined): string =>
  (request!.body as ChatBody).messages
    .filter((message) => message.role === "system" || message.role === "developer")
    .map((message) => String(message.content))
    .join("\n");
const toolsOf = (request: RecordedRequest | undefined): string[] => ((request!.body as ChatBody).tools ?? []).map((tool) => tool.function.name);
const toolMessages = (request: RecordedRequest | undefined): string[] =>
  (request!.body as ChatBody).messages.filter((message) => message.role === "tool").map((message) => (typeof message.content === "string" ? message.content : JSON.stringify(message.content)));
const say = (words: string) => ({ events: [{ type: "text" as const, text: words }] });
const call = (name: string, args: Record<string, unknown>) => ({ events: [{ type: "tool_call" as const, name, arguments: args }] });
const toolParts = (turn: Turn) => turn.parts.filter((part): part is ToolTurnPart => part.type === "tool");

function write(path: string, content: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
}

const skillFile = (name: string, description: string, body: string, extra = "") => `---\nname: ${name}\ndescription: ${description}\n${extra}---\n\n${body}\n`;

let h: ModelHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** A harness whose project and home hold Skills (written before the first discovery). */
async function withSkills(): Promise<ModelHarness> {
  const harness = await startModelHarness();
  const root = harness.home.root;
  write(join(root, ".ze-harness", "skills", "release", "SKILL.md"), skillFile("release", "Cut a release of this project", "RELEASE-BODY: bump, tag, publish."));
  write(join(root, ".ze-harness", "skills", "release", "checklist.md"), "- [ ] tests\n");
  write(join(root, ".claude", "skills", "hidden", "SKILL.md"), skillFile("hidden", "Only by exact name", "HIDDEN-BODY", "disable-model-invocation: true\n"));
  write(join(root, ".agents", "skills", "modelonly", "SKILL.md"), skillFile("modelonly", "Only the model may load it", "MODEL-ONLY-BODY", "user-invocable: false\n"));
  // A global Skill of the same name as a project one: the project's (later) replaces it.
  write(join(harness.home.env["HOME"]!, ".ze-harness", "skills", "release", "SKILL.md"), skillFile("release", "The global release skill", "GLOBAL-BODY"));
  write(join(root, ".ze-harness", "skills", "broken", "SKILL.md"), "no frontmatter here\n");
  return harness;
}

describe("Skill catalogs", () => {
  it("list the discovered Skills' safe metadata for the host and for a Session", async () => {
    h = await withSkills();
    const sessionId = await h.createSession();
    const expected = [
      { id: "hidden", displayName: "hidden", description: "Only by exact name", advertised: false, userInvocable: true, origin: "host" },
      { id: "modelonly", displayName: "modelonly", description: "Only the model may load it", advertised: true, userInvocable: false, origin: "host" },
      { id: "release", displayName: "release", description: "Cut a release of this project", advertised: true, userInvocable: true, origin: "host" },
    ];
    expect((await ok(sdk.skills({ client: h.api.client }))).skills).toEqual(expected);
    expect(await ok(sdk.sessionSkills({ client: h.api.client, path: { server, sessionId } }))).toEqual({ sessionId, skills: expected });
    expect(JSON.stringify(await ok(sdk.skills({ client: h.api.client })))).not.toContain("BODY");
    const missing = await failure(sdk.sessionSkills({ client: h.api.client, path: { server, sessionId: "00000000-0000-4000-8000-0000000000c1" } }));
    expect(missing.status).toBe(404);
  });
});

describe("Skills in a Turn", () => {
  it("lists advertised Skills to the model and loads one when the model calls skill", async () => {
    h = await withSkills();
    h.model.enqueue(call("skill", { name: "release" }), call("skill", { name: "hidden" }), call("skill", { name: "nope" }), say("Released."));
    const sessionId = await h.createSession();
    const { turn } = await runToEnd(h, sessionId, (await queue(h, sessionId, "cut a release")).turnId);
    const first = h.model.requests[0];
    expect(toolsOf(first)).toContain("skill");
    const system = systemOf(first);
    expect(system).toContain("- release: Cut a release of this project");
    expect(system).toContain("- modelonly: Only the model may load it");
    expect(system).not.toContain("hidden");
    expect(system).not.toContain("RELEASE-BODY");
    const [release, hidden, unknown] = toolParts(turn);
    expect(release).toMatchObject({ toolId: "skill", state: "completed" });
    const loaded = String((release!.canonicalResult as { value: string }).value);
    expect(loaded).toContain("RELEASE-BODY: bump, tag, publish.");
    expect(loaded).not.toContain("GLOBAL-BODY");
    expect(loaded).toContain("checklist.md");
    // An unadvertised Skill still loads by exact name; an unknown one fails the call only.
    expect(String((hidden!.canonicalResult as { value: string }).value)).toContain("HIDDEN-BODY");
    expect(unknown).toMatchObject({ state: "failed", fault: { code: "unknown_skill" } });
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "Released." });
  });

  it("loads the Skills a prompt selects before the first model call", async () => {
    h = await withSkills();
    h.model.enqueue(say("Following the release skill."));
    const sessionId = await h.createSession();
    const { turn } = await runToEnd(h, sessionId, (await queue(h, sessionId, "go", { skills: ["release"] })).turnId);
    expect(turn.request.skills).toEqual(["release"]);
    expect(toolParts(turn)).toEqual([expect.objectContaining({ toolId: "skill", input: { name: "release" }, state: "completed" })]);
    expect(toolMessages(h.model.requests[0]).join("\n")).toContain("RELEASE-BODY");
    expect(h.model.requests).toHaveLength(1);
  });

  it("refuses unknown, non-user-invocable and duplicate selections, and selections for an agent without skill", async () => {
    h = await startModelHarness({ config: { agents: { bare: { system: "No tools.", mode: "primary" } } } });
    write(join(h.home.root, ".ze-harness", "skills", "release", "SKILL.md"), skillFile("release", "Release", "BODY"));
    write(join(h.home.root, ".ze-harness", "skills", "modelonly", "SKILL.md"), skillFile("modelonly", "Model only", "BODY", "user-invocable: false\n"));
    const sessionId = await h.createSession();
    const refuse = async (extra: Record<string, unknown>) => failure(submitCall(h!, sessionId, { delivery: "queue", turnId: crypto.randomUUID(), prompt: text("x"), ...extra }));
    expect(await refuse({ skills: ["nope"] })).toMatchObject({ status: 400, body: { message: expect.stringContaining("/skills/0: there is no Skill \"nope\"") } });
    expect(await refuse({ skills: ["modelonly"] })).toMatchObject({ status: 400, body: { message: expect.stringContaining("not user-invocable") } });
    expect(await refuse({ skills: ["release", "release"] })).toMatchObject({ status: 400, body: { message: expect.stringContaining("/skills/1") } });
    expect(await refuse({ skills: ["release"], agent: "explore" })).toMatchObject({ status: 400 });
    expect((await ok(sdk.listSessionTurns({ client: h.api.client, path: { server, sessionId } }))).turns).toEqual([]);
  });

  it("does not offer skill when there are no Skills", async () => {
    h = await startModelHarness();
    h.model.enqueue(say("ok"));
    const sessionId = await h.createSession();
    await runToEnd(h, sessionId, (await queue(h, sessionId, "hi")).turnId);
    expect(toolsOf(h.model.requests[0])).not.toContain("skill");
  });
});

describe("nested AGENTS.md", () => {
  it("attaches the files between a read target and the workdir once while the result is in history", async () => {
    h = await startModelHarness();
    const root = h.home.root;
    write(join(root, "AGENTS.md"), "ROOT-RULES");
    write(join(root, "pkg", "AGENTS.md"), "PKG-RULES");
    write(join(root, "pkg", "lib", "AGENTS.md"), "LIB-RULES");
    write(join(root, "pkg", "lib", "a.ts"), "export const a = 1;\n");
    write(join(root, "pkg", "lib", "b.ts"), "export const b = 2;\n");
    h.model.enqueue(call("read", { filePath: "pkg/lib/a.ts" }), call("read", { filePath: "pkg/lib/b.ts" }), say("read both"), call("read", { filePath: "pkg" }), say("listed"));
    const sessionId = await h.createSession();
    const { turn } = await runToEnd(h, sessionId, (await queue(h, sessionId, "read")).turnId);
    const [a, b] = toolParts(turn);
    expect(a!.instructions?.map((source) => [source.kind, source.id, (source as { content: string }).content])).toEqual([
      ["instruction", "pkg/lib/AGENTS.md", "LIB-RULES"],
      ["instruction", "pkg/AGENTS.md", "PKG-RULES"],
    ]);
    expect(a!.instructions?.[0]).toMatchObject({ role: "developer", order: 1, afterToolCallId: a!.toolCallId });
    expect(b!.instructions).toBeUndefined();
    const afterFirst = toolMessages(h.model.requests[1]);
    expect(afterFirst[0]).toContain("Instructions from pkg/lib/AGENTS.md:");
    expect(afterFirst[0]).toContain("PKG-RULES");
    // The workdir's own AGENTS.md is the Turn's developer instruction, never attached to a read.
    expect(afterFirst[0]).not.toContain("ROOT-RULES");
    expect(systemOf(h.model.requests[0])).toContain("ROOT-RULES");
    // The canonical result stays the tool's own output.
    expect(String((a!.canonicalResult as { value: string }).value)).not.toContain("PKG-RULES");

    // A later Turn whose history still holds the attachment does not attach them again.
    const next = await runToEnd(h, sessionId, (await queue(h, sessionId, "list pkg")).turnId);
    expect(toolParts(next.turn)[0]!.instructions).toBeUndefined();
    expect(toolMessages(h.model.requests[4]).at(-1)).not.toContain("Instructions from");
  });
});
