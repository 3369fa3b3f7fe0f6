// Native provider authoring through the embedded SDK's `providerDefinitions`: a provider written
// with `defineProvider` (options validated by its optionsSchema, its key arriving as a Redacted,
// models filtered and corrected) serves Turns by calling the scripted test model itself; a
// `makeCompatibleProviderDefinition` provider and a config `providers.*.definition` go through
// the same Chat adapter; bad definitions and unknown IDs fail startup with a typed error.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { defineProvider as definePluginProvider, makeCompatibleProviderDefinition as makePluginCompatible } from "../../plugin/index.js";
import {
  EmbeddedHarnessError,
  createEmbeddedHarness,
  defineProvider,
  makeCompatibleProviderDefinition,
  makeRedacted,
  revealRedacted,
  textPrompt,
  type EmbeddedHarness,
  type ProviderModelAcquisitionInput,
} from "../../sdk/index.js";
import type { PluginModelEvent, PluginModelRequest } from "../../plugin/index.js";
import { credentialHash, startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { tempHome, type TempHome } from "../support/harness.js";

let model: TestModel;
let home: TempHome | undefined;
let harness: EmbeddedHarness | undefined;
beforeAll(async () => {
  model = await startTestModel();
});
afterAll(async () => {
  await model.close();
});
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  home?.cleanup();
  home = undefined;
});

const KEY = "sk-native-provider-key-0123456789";

interface Seen {
  readonly acquisitions: ProviderModelAcquisitionInput<{ baseURL: string; greeting?: string }>[];
  readonly requests: PluginModelRequest[];
}

/** A native provider that answers by asking the scripted model (non-streaming Chat Completions) itself. */
function relayProvider(seen: Seen) {
  return defineProvider<{ baseURL: string; greeting?: string }>({
    definitionId: "example.relay",
    version: "1.0.0",
    optionsSchema: { type: "object", properties: { baseURL: { type: "string" }, greeting: { type: "string" } }, required: ["baseURL"], additionalProperties: false },
    credentials: { environment: ["RELAY_API_KEY"] },
    filterModel: (candidate) => candidate.modelId !== "hidden",
    correctModel: (candidate) => (candidate.modelId === "fast" ? { upstreamModelId: "fast-upstream-v2", limits: { outputUnits: 1234 } } : {}),
    acquireModel: (input) => {
      seen.acquisitions.push(input);
      return {
        async *stream(request, context): AsyncGenerator<PluginModelEvent> {
          seen.requests.push(request);
          const response = await fetch(`${input.options.baseURL}/chat/completions`, {
            method: "POST",
            headers: { "content-type": "application/json", authorization: `Bearer ${revealRedacted(input.credentials!)}` },
            body: JSON.stringify({ model: input.upstreamModelId, messages: [{ role: "user", content: "relay" }] }),
            signal: context.signal,
          });
          const body = (await response.json()) as { choices: { message: { content: string } }[] };
          yield { _tag: "ResponseStarted" };
          const text = `${input.options.greeting ?? ""}${body.choices[0]!.message.content}`;
          yield { _tag: "ContentDelta", index: 0, contentId: "c0", contentType: "text", delta: text };
          yield { _tag: "ContentCompleted", index: 0, contentId: "c0", content: { type: "text", text } };
          yield { _tag: "Usage", usage: { freshInputUnits: 3, cacheReadInputUnits: 0, cacheWriteInputUnits: 0, inputUnits: 3, outputUnits: 2, reasoningUnits: 0, totalUnits: 5 } };
          yield { _tag: "ResponseFinished", reason: "stop" };
        },
      };
    },
  });
}

const relayConfig = (options: Record<string, unknown> = { baseURL: "", greeting: "Relayed: " }) => ({
  model: "relay/fast",
  providers: {
    relay: { options: { ...options, ...(options["baseURL"] === "" ? { baseURL: model.openaiBaseURL } : {}) }, definition: { models: { fast: { displayName: "Fast" }, slow: {}, hidden: {} } } },
  },
});

async function runTurn(h: EmbeddedHarness, text: string, modelRef?: string) {
  const session = await h.createSession();
  const turnId = crypto.randomUUID();
  await h.submitPrompt(session.id, { delivery: "queue", turnId, prompt: textPrompt(text), ...(modelRef !== undefined ? { model: modelRef } : {}) });
  return h.watchTurn(session.id, turnId);
}

async function startupError(run: () => Promise<unknown>): Promise<EmbeddedHarnessError> {
  try {
    harness = (await run()) as EmbeddedHarness;
  } catch (error) {
    if (error instanceof EmbeddedHarnessError) return error;
    throw error;
  }
  throw new Error("expected startup to fail");
}

describe("defineProvider through providerDefinitions", () => {
  it("serves a Turn: validated options, the key as a Redacted, filtered and corrected models", async () => {
    home = tempHome("ze-native-");
    const seen: Seen = { acquisitions: [], requests: [] };
    model.enqueue({ events: [{ type: "text", text: "hello from the scripted model" }] });
    harness = await createEmbeddedHarness({
      cwd: home.root,
      databaseFilename: "native.db",
      config: relayConfig(),
      env: { ...home.env, RELAY_API_KEY: KEY },
      providerDefinitions: { relay: relayProvider(seen) },
    });
    const turn = await runTurn(harness, "Say hello");
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "Relayed: hello from the scripted model" });
    // The provider reached the scripted model with the key it was handed, and the corrected upstream ID.
    const request = model.requests.at(-1)!;
    expect(request.credentialSha256).toBe(credentialHash(KEY));
    expect((request.body as { model: string }).model).toBe("fast-upstream-v2");
    // What acquireModel received: validated options (no apiKey), the credential never in plain form.
    const input = seen.acquisitions.at(-1)!;
    expect(input).toMatchObject({ providerId: "relay", modelId: "fast", upstreamModelId: "fast-upstream-v2", protocol: "chat", apiRoot: undefined, options: { baseURL: model.openaiBaseURL, greeting: "Relayed: " } });
    expect(JSON.stringify(input)).not.toContain(KEY);
    expect(String(input.credentials)).toBe("<redacted>");
    // The provider-neutral request: the prompt as a user message, the Turn's tools as descriptors.
    const neutral = seen.requests.at(-1)!;
    expect(neutral.model).toBe("relay/fast");
    expect(neutral.messages.at(-1)).toEqual({ role: "user", content: [{ type: "text", text: "Say hello" }] });
    expect(neutral.tools.length).toBeGreaterThan(0);
    // The catalog: filterModel dropped "hidden", correctModel changed "fast".
    const models = (await harness.getRuntimeModels()).models.filter((entry) => entry.providerId === "relay");
    expect(models.map((entry) => entry.ref)).toEqual(["relay/fast", "relay/slow"]);
    expect(models[0]).toMatchObject({ upstreamId: "fast-upstream-v2", limits: { outputUnits: 1234 }, availability: { status: "available" } });
    expect(await harness.listProviders()).toEqual([expect.objectContaining({ id: "relay", source: "environment", availability: { status: "available" }, methods: ["api_key"] })]);
  });

  it("is unavailable without its credential, naming where one comes from", async () => {
    home = tempHome("ze-native-");
    harness = await createEmbeddedHarness({ cwd: home.root, databaseFilename: "native.db", config: relayConfig(), env: home.env, providerDefinitions: { relay: relayProvider({ acquisitions: [], requests: [] }) } });
    const [provider] = await harness.listProviders();
    expect(provider).toMatchObject({ id: "relay", availability: { status: "unavailable", reason: "missing_credentials" } });
    const session = await harness.createSession();
    await expect(harness.submitPrompt(session.id, { delivery: "queue", turnId: crypto.randomUUID(), prompt: textPrompt("hi"), model: "relay/fast" })).rejects.toMatchObject({
      body: { _tag: "UnavailableError", reason: "model_unavailable", message: expect.stringContaining("RELAY_API_KEY") },
    });
  });

  it("calls a tool and sees its result on the next request, with the Session in its stream context", async () => {
    home = tempHome("ze-native-");
    writeFileSync(join(home.root, "note.txt"), "the note says 42\n");
    const requests: PluginModelRequest[] = [];
    const sessions: string[] = [];
    const toolUser = defineProvider({
      definitionId: "example.tools",
      version: "1",
      acquireModel: () => ({
        async *stream(request, context): AsyncGenerator<PluginModelEvent> {
          requests.push(request);
          sessions.push(context.sessionId);
          yield { _tag: "ResponseStarted" };
          if (requests.length === 1) {
            yield { _tag: "ContentDelta", index: 0, contentId: "r0", contentType: "reasoning", delta: "Read the note first." };
            yield { _tag: "ContentCompleted", index: 0, contentId: "r0", content: { type: "reasoning", text: "Read the note first." } };
            yield { _tag: "ToolCallCompleted", index: 1, toolCall: { type: "tool-call", id: "call-1", name: "read", input: { filePath: "note.txt" } } };
            yield { _tag: "ResponseFinished", reason: "tool-calls" };
            return;
          }
          yield { _tag: "ContentDelta", index: 0, contentId: "c0", contentType: "text", delta: "It says 42." };
          yield { _tag: "ResponseFinished", reason: "stop" };
        },
      }),
    });
    harness = await createEmbeddedHarness({
      cwd: home.root,
      databaseFilename: "native.db",
      config: { model: "tools/m", providers: { tools: { definition: { models: { m: {} } } } } },
      env: home.env,
      providerDefinitions: { tools: toolUser },
    });
    const session = await harness.createSession();
    const turnId = crypto.randomUUID();
    await harness.submitPrompt(session.id, { delivery: "queue", turnId, prompt: textPrompt("What does the note say?") });
    const turn = await harness.watchTurn(session.id, turnId);
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "It says 42." });
    expect(requests).toHaveLength(2);
    expect(sessions).toEqual([session.id, session.id]);
    const [assistant, tool] = requests[1]!.messages.slice(-2);
    expect(assistant).toEqual({
      role: "assistant",
      content: [
        { type: "reasoning", text: "Read the note first." },
        { type: "tool-call", id: "call-1", name: "read", input: { filePath: "note.txt" } },
      ],
    });
    expect(tool).toMatchObject({ role: "tool", content: [{ type: "tool-result", toolCallId: "call-1", isError: false }] });
    expect(JSON.stringify(tool)).toContain("the note says 42");
  });

  it("fails a Turn with our wording when the provider throws, never its text", async () => {
    home = tempHome("ze-native-");
    const failing = defineProvider({
      definitionId: "example.failing",
      version: "1",
      acquireModel: () => ({
        // eslint-disable-next-line require-yield
        async *stream(): AsyncGenerator<PluginModelEvent> {
          throw new Error("provider secret text");
        },
      }),
    });
    harness = await createEmbeddedHarness({
      cwd: home.root,
      databaseFilename: "native.db",
      config: { model: "failing/m", providers: { failing: { definition: { models: { m: {} } } } } },
      env: home.env,
      providerDefinitions: { failing },
    });
    const turn = await runTurn(harness, "hi");
    expect(turn.outcome?.kind).toBe("failed");
    expect(turn.outcome?.kind === "failed" && turn.outcome.fault.message).toContain('the native provider "example.failing" failed while streaming');
    expect(JSON.stringify(turn)).not.toContain("provider secret text");
  });
});

describe("compatible providers: makeCompatibleProviderDefinition and config definitions share the adapters", () => {
  it("runs a compatible definition through the Chat adapter, the config entry's definition fields over it", async () => {
    home = tempHome("ze-native-");
    model.enqueue({ events: [{ type: "text", text: "compatible answer" }] }, { events: [{ type: "text", text: "declarative answer" }] });
    const compatible = makeCompatibleProviderDefinition({
      definitionId: "example.compatible",
      baseURL: "http://127.0.0.1:9/never-used",
      protocol: "chat",
      authentication: { kind: "header", name: "api-key" },
      headers: { "x-from-definition": "yes" },
      models: { m: { displayName: "M", upstreamId: "compatible-upstream" } },
    });
    harness = await createEmbeddedHarness({
      cwd: home.root,
      databaseFilename: "native.db",
      config: {
        model: "compat/m",
        providers: {
          compat: { options: { apiKey: KEY }, definition: { baseURL: model.openaiBaseURL } },
          declared: { definition: { baseURL: model.openaiBaseURL, protocol: "chat", authentication: { kind: "header", name: "api-key" }, headers: { "x-from-definition": "yes" }, models: { m: { upstreamId: "declared-upstream" } } }, options: { apiKey: KEY } },
        },
      },
      env: home.env,
      providerDefinitions: { compat: compatible },
    });
    expect((await runTurn(harness, "one")).outcome).toMatchObject({ kind: "completed", text: "compatible answer" });
    expect((await runTurn(harness, "two", "declared/m")).outcome).toMatchObject({ kind: "completed", text: "declarative answer" });
    const [viaDefinition, viaConfig] = model.requests.slice(-2);
    for (const [request, upstream] of [[viaDefinition!, "compatible-upstream"], [viaConfig!, "declared-upstream"]] as const) {
      expect(request.path).toBe("/v1/chat/completions");
      expect(request.headers["x-from-definition"]).toBe("yes");
      expect(request.credentialSha256).toBe(credentialHash(KEY));
      expect((request.body as { model: string }).model).toBe(upstream);
    }
  });
});

describe("bad definitions", () => {
  it("fails startup for an unknown provider ID, options its schema refuses, and a compatible definition the config schema refuses", async () => {
    home = tempHome("ze-native-");
    const base = { cwd: home.root, databaseFilename: ":memory:", env: home.env };
    const seen: Seen = { acquisitions: [], requests: [] };
    const unknown = await startupError(() => createEmbeddedHarness({ ...base, config: relayConfig(), providerDefinitions: { relay: relayProvider(seen), other: relayProvider(seen) } }));
    expect(unknown).toMatchObject({ _tag: "ProviderInvalid", message: expect.stringContaining("/providers/other: providerDefinitions names a provider the providers configuration does not list") });
    const options = await startupError(() => createEmbeddedHarness({ ...base, config: relayConfig({ baseURL: 42 }), providerDefinitions: { relay: relayProvider(seen) } }));
    expect(options).toMatchObject({ _tag: "ProviderInvalid", message: expect.stringContaining("/providers/relay/options/baseURL: must be string") });
    const compatible = makeCompatibleProviderDefinition({ definitionId: "example.bad", protocol: "graphql" as never, models: { m: {} } });
    const refused = await startupError(() => createEmbeddedHarness({ ...base, config: { providers: { bad: true } }, providerDefinitions: { bad: compatible } }));
    expect(refused).toMatchObject({ _tag: "ProviderInvalid", message: expect.stringContaining("/providers/bad/definition/protocol") });
    expect(seen.acquisitions).toEqual([]);
  });

  it("defineProvider refuses a bad definitionId, an empty version and a missing acquireModel; the plugin and SDK exports are the same", () => {
    expect(() => defineProvider({ definitionId: "Bad Id", version: "1", acquireModel: () => ({ stream: () => (async function* () {})() }) })).toThrow(/definitionId/);
    expect(() => defineProvider({ definitionId: "ok", version: "", acquireModel: () => ({ stream: () => (async function* () {})() }) })).toThrow(/version/);
    expect(() => defineProvider({ definitionId: "ok", version: "1" } as never)).toThrow(/acquireModel/);
    expect(defineProvider).toBe(definePluginProvider);
    expect(makeCompatibleProviderDefinition).toBe(makePluginCompatible);
    const secret = makeRedacted("sk-hidden");
    expect(JSON.stringify({ secret })).toBe('{"secret":"<redacted>"}');
    expect(revealRedacted(secret)).toBe("sk-hidden");
    expect(() => revealRedacted({ _tag: "Redacted" })).toThrow(/Redacted/);
  });
});
