// Plugin models (`context.models.register`), through a real plugin file loaded by config as a
// plugin author writes it: they are listed in the runtime model catalog with their metadata, and
// a Turn naming one runs its event stream through the same model call and settlement as a
// provider model — text deltas and usage, tool calls and a second request with the results,
// delegation to a sibling (the scripted test model), a malformed stream, and the error rule: a
// thrown PluginError's first 200 characters of `message` reach the fault, `publicMessage` never,
// any other throw is generic.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { sdk } from "../../clients/index.js";
import { RESPONSE_CONTENT_LIMIT } from "../../services/providers/wire.js";
import { startModelHarness, type ModelHarness } from "../support/model.js";
import { failure } from "../support/calls.js";
import { cancel, queue, runToEnd, submitCall, text } from "../turns/helpers.js";
import { contractUrl } from "./helpers.js";

let h: ModelHarness | undefined;
let second: Awaited<ReturnType<typeof import("../support/harness.js").startHarness>> | undefined;
afterEach(async () => {
  await second?.harness.close();
  second = undefined;
  await h?.close();
  h = undefined;
});

const LONG = `${"x".repeat(199)}Y${"z".repeat(100)}`;
const shared = globalThis as unknown as { zeRequests?: unknown[]; zeHanging?: boolean; zeFloodSent?: number };

const plugin = `
import { definePlugin, PluginError } from ${JSON.stringify(contractUrl)};

const metadata = (tools) => ({
  displayName: "Echo",
  capabilities: { input: ["text"], output: ["text"], tools },
  limits: { contextUnits: 200000, outputUnits: 1000 },
  pricing: { version: "v1", currency: "USD", unit: "million_model_units", rates: { input: "0.5", output: "1" } },
  defaults: { temperature: 0.2 },
});
const lastUser = (request) => request.messages.filter((m) => m.role === "user").at(-1).content.find((p) => p.type === "text").text;
const usage = { _tag: "Usage", usage: { freshInputUnits: 7, cacheReadInputUnits: 3, cacheWriteInputUnits: 0, inputUnits: 10, outputUnits: 4, reasoningUnits: 0, totalUnits: 14 } };

export default definePlugin({
  id: "example.models",
  setup(context) {
    const model = (modelId, tools, stream, displayName) => context.models.register({
      providerId: "local.echo", providerDisplayName: "Local echo", modelId,
      metadata: { ...metadata(tools), ...(displayName ? { displayName } : {}) }, stream,
    });
    model("echo", false, async function* (request, ctx) {
      (globalThis.zeRequests ??= []).push({ request, sessionId: ctx.sessionId, turnId: ctx.turnId, candidates: await ctx.listCandidates() });
      yield { _tag: "ResponseStarted" };
      yield { _tag: "ContentDelta", index: 0, contentId: "t", contentType: "text", delta: "Echo: " };
      yield { _tag: "ContentDelta", index: 0, contentId: "t", contentType: "text", delta: lastUser(request) };
      yield { _tag: "ContentCompleted", index: 0, contentId: "t", content: { type: "text", text: "Echo: " + lastUser(request) } };
      yield usage;
      yield { _tag: "ResponseFinished", reason: "stop" };
    });
    model("reader", true, async function* (request) {
      yield { _tag: "ResponseStarted" };
      const result = request.messages.at(-1).role === "tool" ? request.messages.at(-1).content[0] : undefined;
      if (result === undefined) {
        yield { _tag: "ToolCallInputDelta", index: 0, toolCallId: "call_1", toolName: "read", delta: '{"filePath":' };
        yield { _tag: "ToolCallInputDelta", index: 0, toolCallId: "call_1", toolName: "read", delta: '"."}' };
        yield { _tag: "ToolCallCompleted", index: 0, toolCall: { type: "tool-call", id: "call_1", name: "read", input: { filePath: "." } } };
        yield { _tag: "ResponseFinished", reason: "tool-calls" };
        return;
      }
      yield { _tag: "ContentCompleted", index: 0, contentId: "t", content: { type: "text", text: "read " + result.toolCallId + (result.isError ? " failed" : " ok") } };
      yield { _tag: "ResponseFinished", reason: "stop" };
    });
    model("router", true, async function* (request, ctx) {
      const [sibling] = await ctx.listCandidates();
      yield* ctx.delegate(sibling.ref, request);
    });
    model("thrower", false, async function* () {
      yield { _tag: "ResponseStarted" };
      throw new PluginError({ message: ${JSON.stringify(LONG)}, publicMessage: "never shown" });
    });
    model("crasher", false, async function* () {
      throw new Error("private detail sk-secret-value");
    });
    model("hang", false, async function* () {
      yield { _tag: "ResponseStarted" };
      globalThis.zeHanging = true;
      await new Promise(() => {});
    });
    model("flood", false, async function* () {
      globalThis.zeFloodSent = 0;
      yield { _tag: "ResponseStarted" };
      const piece = "f".repeat(1000000);
      for (let index = 0; index < 40; index++) {
        globalThis.zeFloodSent += 1;
        yield { _tag: "ContentDelta", index: 0, contentId: "t", contentType: "text", delta: piece };
      }
      yield { _tag: "ResponseFinished", reason: "stop" };
    });
    model("malformed", false, async function* () {
      yield { _tag: "ContentDelta", index: 0, contentId: "t", contentType: "text", delta: "too early" };
    });
  },
});
`;

async function start(): Promise<NonNullable<typeof second>> {
  h = await startModelHarness();
  const file = join(h.home.dir, "models.mjs");
  writeFileSync(file, plugin);
  writeFileSync(join(h.home.root, "ze-harness.config.json"), JSON.stringify({ plugins: [file] }));
  await h.harness.close();
  const { startHarness } = await import("../support/harness.js");
  second = await startHarness({}, h.home);
  return second;
}

async function run(host: NonNullable<typeof second>, model: string, prompt: string) {
  const api = { api: host.api, fetch: host.fetch };
  const sessionId = crypto.randomUUID();
  const created = await sdk.createSession({ client: api.api.client, path: { server: "local", sessionId }, body: { defaultModel: model } });
  expect(created.error).toBeUndefined();
  const result = await runToEnd(api, sessionId, (await queue(api, sessionId, prompt)).turnId);
  return { ...result, sessionId };
}

describe("plugin models", () => {
  it("are listed in the runtime model catalog with their metadata", async () => {
    const host = await start();
    const { data } = await sdk.models({ client: host.api.client });
    const echo = data!.models.find((model) => model.ref === "local.echo/echo");
    expect(echo).toEqual({
      providerId: "local.echo",
      ref: "local.echo/echo",
      id: "echo",
      upstreamId: "echo",
      displayName: "Echo",
      capabilities: { input: ["text"], output: ["text"], tools: false },
      limits: { contextUnits: 200000, outputUnits: 1000 },
      pricing: { version: "v1", currency: "USD", unit: "million_model_units", rates: { input: "0.5", output: "1" } },
      defaults: { temperature: 0.2 },
      availability: { status: "available" },
    });
    expect(data!.providers).toContainEqual({ id: "local.echo", displayName: "Local echo", availability: { status: "available" } });
    expect(data!.models.filter((model) => model.providerId === "local.echo").map((model) => model.id)).toEqual(["crasher", "echo", "flood", "hang", "malformed", "reader", "router", "thrower"]);
    // A plugin model is chosen by name only: the default stays the configured composed model.
    expect(data!.defaultModel).toBe("test/scripted");
  });

  it("serve a Turn: text deltas, usage and the completed answer, with the contract's request", async () => {
    shared.zeRequests = [];
    const host = await start();
    const { turn, events, sessionId } = await run(host, "local.echo/echo", "hello there");
    expect(turn.phase).toBe("completed");
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "Echo: hello there" });
    expect(turn.usage).toEqual({ promptTokens: 10, completionTokens: 4, cachedPromptTokens: 3, totalTokens: 14 });
    // The answer is one text part of the Turn, as a provider model's would be.
    expect(JSON.stringify(turn.parts)).toContain("Echo: hello there");
    expect(events.at(-1)).toMatchObject({ type: "turn.finished" });
    const seen = shared.zeRequests![0] as { request: Record<string, unknown>; sessionId: string; turnId: string; candidates: { ref: string }[] };
    expect(seen.sessionId).toBe(sessionId);
    expect(seen.turnId).toBe(turn.id);
    expect(seen.request).toMatchObject({ model: "local.echo/echo", tools: [], toolChoice: { mode: "none" }, settings: { temperature: 0.2 }, messages: [{ role: "user", content: [{ type: "text", text: "hello there" }] }] });
    // Siblings are the available composed models, never plugin models.
    expect(seen.candidates.map((candidate) => candidate.ref)).toEqual(["test/scripted"]);
    // The scripted provider model was never called.
    expect(h!.model.requests).toHaveLength(0);
  });

  it("call tools: Core runs the call and calls the model again with its result", async () => {
    const host = await start();
    const { turn, events } = await run(host, "local.echo/reader", "look");
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "read call_1 ok" });
    // The read ran as a tool part, the second request carried its result.
    const tool = turn.parts.find((part) => part.type === "tool") as { toolId?: string; toolCallId: string } | undefined;
    expect(tool).toMatchObject({ toolCallId: "call_1" });
    expect(events.some((event) => event.type === "turn.tool.completed")).toBe(true);
  });

  it("delegate to a sibling: the scripted model answers through the plugin", async () => {
    const host = await start();
    h!.model.enqueue({ events: [{ type: "text", text: "from the sibling" }] });
    const { turn } = await run(host, "local.echo/router", "route me");
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "from the sibling" });
    expect(h!.model.requests).toHaveLength(1);
    expect(JSON.stringify(h!.model.requests[0]!.body)).toContain("route me");
  });

  it("fail the model run with the first 200 characters of a PluginError's message, never its publicMessage", async () => {
    const host = await start();
    const { turn } = await run(host, "local.echo/thrower", "go");
    expect(turn.phase).toBe("failed");
    const fault = (turn.outcome as { fault: { code: string; message: string } }).fault;
    expect(fault.message).toContain("x".repeat(199) + "Y");
    expect(fault.message).not.toContain("Yz");
    expect(fault.message).not.toContain("never shown");
  });

  it("fail generically for any other throw, and as malformed for a broken event sequence", async () => {
    const host = await start();
    const crashed = await run(host, "local.echo/crasher", "go");
    expect(crashed.turn.phase).toBe("failed");
    const crashFault = (crashed.turn.outcome as { fault: { message: string } }).fault;
    expect(crashFault.message).toBe("local.echo/crasher: the plugin model failed");
    expect(JSON.stringify(crashed.turn)).not.toContain("sk-secret-value");
    const malformed = await run(host, "local.echo/malformed", "go");
    expect(malformed.turn.phase).toBe("failed");
    expect((malformed.turn.outcome as { fault: { message: string } }).fault.message).toBe("local.echo/malformed: the plugin model sent a malformed response: ContentDelta before ResponseStarted");
  });

  it("from a Session plugin serve that Session's Turns (admitted for it alone), and the runtime catalog does not list them", async () => {
    const host = await start();
    const api = { api: host.api, fetch: host.fetch };
    const file = join(h!.home.dir, "session-model.mjs");
    writeFileSync(
      file,
      `export default { id: "session.models", setup(context) { context.models.register({ providerId: "session.only", providerDisplayName: "Session only", modelId: "answer",
        metadata: { displayName: "Answer", capabilities: { input: ["text"], output: ["text"], tools: false }, limits: { contextUnits: 200000, outputUnits: 1000 } },
        stream: async function* () { yield { _tag: "ResponseStarted" }; yield { _tag: "ContentCompleted", index: 0, contentId: "a", content: { type: "text", text: "from the overlay" } }; yield { _tag: "ResponseFinished", reason: "stop" }; } }); } };`,
    );
    const sessionId = crypto.randomUUID();
    await sdk.createSession({ client: api.api.client, path: { server: "local", sessionId }, body: { defaultModel: "session.only/answer" } });
    const added = await sdk.addSessionPlugin({ client: api.api.client, path: { server: "local", sessionId }, body: { id: "rev-1", source: { _tag: "File", uri: pathToFileURL(file).href }, resolved: { pluginId: "session.models" }, options: {}, mcpServers: [], skills: [] } as never });
    expect(added.data?.status.plugins.at(-1)).toMatchObject({ pluginId: "session.models", status: "active", registrations: ["model:session.only/answer"] });
    const { turn } = await runToEnd(api, sessionId, (await queue(api, sessionId, "hi")).turnId);
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "from the overlay" });
    // Another Session cannot name it: admission refuses the unknown model.
    const other = crypto.randomUUID();
    await sdk.createSession({ client: api.api.client, path: { server: "local", sessionId: other }, body: {} });
    const refused = await failure(submitCall(api, other, { delivery: "queue", turnId: crypto.randomUUID(), model: "session.only/answer", prompt: text("hi") }));
    expect(refused).toMatchObject({ status: 503, body: { _tag: "UnavailableError" } });
    // The runtime catalog does not list a Session's plugin model.
    const { data } = await sdk.models({ client: api.api.client });
    expect(data!.models.some((model) => model.providerId === "session.only")).toBe(false);
  });

  it("from a project's configured plugin serve Turns of Sessions in that project (its plugins start with the first Turn)", async () => {
    h = await startModelHarness();
    const project = join(h.home.root, "project");
    mkdirSync(project);
    const file = join(project, "models.mjs");
    writeFileSync(file, plugin);
    writeFileSync(join(project, "ze-harness.config.json"), JSON.stringify({ plugins: ["./models.mjs"] }));
    const api = { api: h.api, fetch: h.fetch };
    const sessionId = crypto.randomUUID();
    const created = await sdk.createSession({ client: api.api.client, path: { server: "local", sessionId }, body: { workdir: "project", defaultModel: "local.echo/echo" } });
    expect(created.error).toBeUndefined();
    const { turn } = await runToEnd(api, sessionId, (await queue(api, sessionId, "from the project")).turnId);
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "Echo: from the project" });
    // A Session at the server root (the host's scope, no plugins) cannot name it.
    const other = await h.createSession();
    expect(await failure(submitCall(api, other, { delivery: "queue", turnId: crypto.randomUUID(), model: "local.echo/echo", prompt: text("hi") }))).toMatchObject({ status: 503 });
  });

  it("are bounded as provider responses are: past RESPONSE_CONTENT_LIMIT characters the Turn fails provider_too_large and the stream is not read on", async () => {
    const host = await start();
    const { turn } = await run(host, "local.echo/flood", "flood");
    expect(turn.phase).toBe("failed");
    expect(turn.outcome).toMatchObject({ kind: "failed", fault: { code: "provider_too_large", message: expect.stringContaining(`exceeds ${RESPONSE_CONTENT_LIMIT} characters of content`) } });
    // The stream stopped being read at the bound (9 pieces of 1,000,000), far before its 40.
    expect(shared.zeFloodSent).toBe(Math.floor(RESPONSE_CONTENT_LIMIT / 1_000_000) + 1);
  });

  it("never hold a cancelled Turn, even when the stream ignores the signal", async () => {
    delete shared.zeHanging;
    const host = await start();
    const api = { api: host.api, fetch: host.fetch };
    const sessionId = crypto.randomUUID();
    await sdk.createSession({ client: api.api.client, path: { server: "local", sessionId }, body: { defaultModel: "local.echo/hang" } });
    const { turnId } = await queue(api, sessionId, "wait");
    while (shared.zeHanging !== true) await new Promise((resolve) => setImmediate(resolve));
    await cancel(api, sessionId, turnId, "enough");
    const { turn } = await runToEnd(api, sessionId, turnId);
    expect(turn.phase).toBe("cancelled");
  });

  it("may not name a configured native provider: the plugin fails activation instead of registering a model nothing serves", async () => {
    h = await startModelHarness();
    const file = join(h.home.dir, "shadow.mjs");
    writeFileSync(
      file,
      `export default { id: "example.shadow", setup(context) { context.models.register({ providerId: "test", providerDisplayName: "Shadow", modelId: "scripted",
        metadata: { displayName: "Shadow", capabilities: { input: ["text"], output: ["text"], tools: false }, limits: { contextUnits: 0, outputUnits: 0 } },
        stream: async function* () {} }); } };`,
    );
    writeFileSync(join(h.home.root, "ze-harness.config.json"), JSON.stringify({ plugins: [file] }));
    await h.harness.close();
    const { startHarness } = await import("../support/harness.js");
    await expect(startHarness({}, h.home)).rejects.toThrow('model provider id "test" names a native provider');
  });
});
