// Each Session follows the project file nearest ITS workdir, not the one nearest the host's root:
// two projects under one in-process host (its root has no project file) with different deny rules,
// default models, agents, MCP servers and plugins; edits apply at the project's next Turn without a
// restart; a broken file fails only that project's commands, naming the file; `--config` is the
// project layer of every Session. The model is the scripted test server (it records each request).
import { randomUUID } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { sdk } from "../../clients/index.js";
import type { RecordedRequest, TestModel } from "../../tools/test-model/index.js";
import { failure, ok } from "../support/calls.js";
import { startModelHarness, type ModelHarness } from "../support/model.js";
import { queue, runToEnd, server, submitCall, text } from "../turns/helpers.js";
import { everything } from "../mcp/support.js";
import { doublingPlugin } from "../plugins/helpers.js";

vi.setConfig({ testTimeout: 60_000 });

let h: ModelHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** The scripted provider with two models, so a request says which default applied. */
const providers = (model: TestModel) => ({
  test: {
    definition: {
      displayName: "Scripted test model",
      baseURL: model.openaiBaseURL,
      protocol: "chat",
      authentication: { kind: "none" },
      models: {
        scripted: { displayName: "Scripted", limits: { contextUnits: 200000, outputUnits: 8192 } },
        other: { displayName: "Other", limits: { contextUnits: 200000, outputUnits: 8192 } },
      },
    },
  },
});

const toolsOf = (request: RecordedRequest | undefined): string[] => ((request!.body as { tools?: { function: { name: string } }[] }).tools ?? []).map((tool) => tool.function.name);
const modelOf = (request: RecordedRequest | undefined): string => (request!.body as { model: string }).model;

/** Writes `<root>/<name>/ze-harness.config.json` (a string as is, else as JSON); returns its path. */
function project(h: ModelHarness, name: string, config: unknown): string {
  const dir = join(h.home.root, name);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, "ze-harness.config.json");
  writeFileSync(file, typeof config === "string" ? config : JSON.stringify(config));
  return file;
}

async function session(h: ModelHarness, workdir: string, body: Record<string, unknown> = {}): Promise<string> {
  const sessionId = randomUUID();
  await ok(sdk.createSession({ client: h.api.client, path: { server, sessionId }, body: { workdir, ...body } }));
  return sessionId;
}

/** Runs one Turn answered with `reply`; returns the model request it made. */
async function turn(h: ModelHarness, sessionId: string, reply = "ok", extra: Record<string, unknown> = {}): Promise<RecordedRequest> {
  const before = h.model.requests.length;
  h.model.enqueue({ events: [{ type: "text", text: reply }] });
  const { turn: finished } = await runToEnd(h, sessionId, (await queue(h, sessionId, "hello", extra)).turnId);
  expect(finished.outcome).toMatchObject({ kind: "completed", text: reply });
  expect(h.model.requests.length).toBe(before + 1);
  return h.model.requests[before]!;
}

describe("the project file nearest each Session's workdir", () => {
  it("decides its deny rules, default model and agents, whichever project the host started in", async () => {
    h = await startModelHarness({ config: (model) => ({ providers: providers(model) }) });
    project(h, "a", {
      model: "test/other",
      permissions: [{ action: "read", resource: "*", effect: "deny" }],
      agents: { reviewer: { description: "Reviews changes", mode: "primary", system: "A-REVIEWER-SYSTEM" } },
    });
    project(h, "b", { permissions: [{ action: "shell", resource: "*", effect: "deny" }] });
    const a = await session(h, "a");
    const b = await session(h, "b");

    const inA = await turn(h, a);
    expect(modelOf(inA)).toBe("other");
    expect(toolsOf(inA)).not.toContain("read");
    expect(toolsOf(inA)).toContain("shell");
    const inB = await turn(h, b);
    expect(modelOf(inB)).toBe("scripted");
    expect(toolsOf(inB)).toContain("read");
    expect(toolsOf(inB)).not.toContain("shell");

    // A's agent exists for A's Sessions only.
    const agentsOf = async (sessionId: string) => (await ok(sdk.sessionAgents({ client: h!.api.client, path: { server, sessionId } }))).agents.map((agent) => agent.id);
    expect(await agentsOf(a)).toContain("reviewer");
    expect(await agentsOf(b)).not.toContain("reviewer");
    const reviewed = await turn(h, a, "reviewed", { agent: "reviewer" });
    expect(JSON.stringify(reviewed.body)).toContain("A-REVIEWER-SYSTEM");
    expect(await session(h, "a", { agent: "reviewer" })).toBeTypeOf("string");
    const refused = await failure(sdk.createSession({ client: h.api.client, path: { server, sessionId: randomUUID() }, body: { workdir: "b", agent: "reviewer" } }));
    expect(refused).toMatchObject({ status: 400, body: { _tag: "ValidationError" } });
    const inBWithAgent = await failure(submitCall(h, b, { delivery: "queue", turnId: randomUUID(), prompt: text("hi"), agent: "reviewer" }));
    expect(inBWithAgent.status).toBe(400);

    // A client's file read in A meets A's read deny; B's reads are allowed.
    writeFileSync(join(h.home.root, "a", "notes.txt"), "A-NOTES");
    writeFileSync(join(h.home.root, "b", "notes.txt"), "B-NOTES");
    const read = (sessionId: string) => h!.fetch(new Request(`http://localhost/v1/servers/${server}/sessions/${sessionId}/files/content?path=${Buffer.from("notes.txt").toString("base64")}`));
    expect((await read(a)).status).toBe(403);
    const allowed = await read(b);
    expect(allowed.status).toBe(200);
    expect(await allowed.text()).toContain("file.begin");
  });

  it("starts the MCP servers and plugins a project file declares for that project's Sessions only", async () => {
    h = await startModelHarness();
    const plugin = join(h.home.dir, "doubling.mjs");
    writeFileSync(plugin, doublingPlugin("example.doubling"));
    project(h, "a", { mcp: [everything()] });
    project(h, "b", { plugins: [plugin] });
    const a = await session(h, "a");
    const b = await session(h, "b");

    const inA = await turn(h, a);
    expect(toolsOf(inA)).toContain("everything_echo");
    expect(toolsOf(inA)).not.toContain("double");
    const inB = await turn(h, b);
    expect(toolsOf(inB)).toContain("double");
    expect(toolsOf(inB).some((tool) => tool.startsWith("everything_"))).toBe(false);

    const serversOf = async (sessionId: string) => (await ok(sdk.getMcpCatalog({ client: h!.api.client, path: { server, sessionId } }))).catalog.servers.map((entry) => entry.name);
    expect(await serversOf(a)).toEqual(["everything"]);
    expect(await serversOf(b)).toEqual([]);
  });

  it("applies an edit at the project's next Turn; a broken file fails that project's commands, naming it, while others keep working", async () => {
    h = await startModelHarness();
    project(h, "a", {});
    const bFile = project(h, "b", {});
    const a = await session(h, "a");
    const b = await session(h, "b");
    expect(toolsOf(await turn(h, b))).toContain("read");

    // A deny rule added while the host runs applies to B's next Turn.
    project(h, "b", { permissions: [{ action: "read", resource: "*", effect: "deny" }] });
    expect(toolsOf(await turn(h, b))).not.toContain("read");
    expect(toolsOf(await turn(h, a))).toContain("read");

    // Not JSON: B's prompt and B's new Session fail with the one-line error naming the file.
    project(h, "b", "{ not json");
    const prompt = await failure(submitCall(h, b, { delivery: "queue", turnId: randomUUID(), prompt: text("hi") }));
    expect(prompt).toMatchObject({ status: 400, body: { _tag: "ValidationError" } });
    expect(prompt.body.message).toMatch(new RegExp(`^${bFile.replaceAll(/[.*+?^${}()|[\]\\/]/g, "\\$&")}: `));
    expect(prompt.body.message).not.toContain("\n");
    const created = await failure(sdk.createSession({ client: h.api.client, path: { server, sessionId: randomUUID() }, body: { workdir: "b" } }));
    expect(created).toMatchObject({ status: 400, body: { _tag: "ValidationError" } });
    expect(created.body.message.startsWith(`${bFile}: `)).toBe(true);
    // A schema violation names the file and the JSON pointer.
    project(h, "b", { permissions: 5 });
    const invalid = await failure(submitCall(h, b, { delivery: "queue", turnId: randomUUID(), prompt: text("hi") }));
    expect(invalid.body.message.startsWith(`${bFile}: /permissions: `)).toBe(true);
    // A keeps working meanwhile; B works again once its file is fixed, with the fixed rules.
    expect(toolsOf(await turn(h, a))).toContain("read");
    project(h, "b", { permissions: [{ action: "shell", resource: "*", effect: "deny" }] });
    const fixed = await turn(h, b);
    expect(toolsOf(fixed)).toContain("read");
    expect(toolsOf(fixed)).not.toContain("shell");
  });

  it("with --config, that file is the project layer of every Session (the nearest project file is not read)", async () => {
    h = await startModelHarness({ config: (model) => ({ providers: providers(model) }) });
    const explicit = join(h.home.dir, "explicit.config.json");
    writeFileSync(explicit, JSON.stringify({ permissions: [{ action: "read", resource: "*", effect: "deny" }] }));
    await h.harness.close();
    const { startHarness } = await import("../support/harness.js");
    const second = await startHarness({ configPath: explicit }, h.home);
    const first = h;
    h = { ...first, ...second, close: async () => (await second.close(), await first.model.close()) } as ModelHarness;
    project(h, "a", { model: "test/other", permissions: [] });
    const a = await session(h, "a");
    const inA = await turn(h, a);
    expect(modelOf(inA)).toBe("scripted");
    expect(toolsOf(inA)).not.toContain("read");
    // An edit of the --config file applies at the next Turn too.
    writeFileSync(explicit, JSON.stringify({ model: "test/other" }));
    const edited = await turn(h, a);
    expect(modelOf(edited)).toBe("other");
    expect(toolsOf(edited)).toContain("read");
  });
});
