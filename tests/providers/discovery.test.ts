// Model discovery against the scripted test model's `GET /v1/models`, through the generated
// client: an authenticated listing at startup, enrichment from the catalog, endpoint limits,
// unknown limits as zero, failures logged and never fatal, `discovery: false`, reload and
// refresh repeating it, a prompt naming a newly listed model, and a running Turn keeping the
// catalog generation it started with across a reload.
import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { getRuntimeModels, sdk, unwrap, type CatalogModel } from "../../clients/index.js";
import type { TestModel } from "../../tools/test-model/index.js";
import { credentialHash } from "../../tools/test-model/server.js";
import { startModelHarness, type ModelHarness } from "../support/model.js";

const KEY = "sk-local-proxy-0123456789abcdef";

let h: ModelHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** The reference's `local-proxy` example pointed at the test model, keyed by `options.apiKey`. */
function localProxy(model: TestModel, definition: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    "local-proxy": {
      definition: {
        displayName: "Local proxy",
        baseURL: model.openaiBaseURL,
        protocol: "chat",
        authentication: { kind: "bearer" },
        credentials: { environment: ["LOCAL_PROXY_API_KEY"] },
        ...definition,
      },
      options: { apiKey: KEY },
    },
  };
}

async function start(definition: Record<string, unknown> = {}, list?: Parameters<TestModel["setModelList"]>[0]): Promise<{ harness: ModelHarness; warnings: string[] }> {
  const warnings: string[] = [];
  let testModel: TestModel | undefined;
  h = await startModelHarness({
    config: (model) => {
      testModel = model;
      if (list !== undefined) model.setModelList(list);
      return { providers: { ...localProxy(model, definition), test: { definition: { baseURL: model.openaiBaseURL, protocol: "chat", authentication: { kind: "none" }, models: { scripted: {} } } } } };
    },
    harness: { onWarning: (message) => warnings.push(message) },
  });
  void testModel;
  return { harness: h, warnings };
}

const modelsOf = async (harness: ModelHarness, providerId = "local-proxy"): Promise<CatalogModel[]> =>
  (await getRuntimeModels(harness.api)).models.filter((model) => model.providerId === providerId);

describe("discovery at startup", () => {
  it("lists GET <baseURL>/models with the provider's credential and enriches recognized IDs from the catalog", async () => {
    const { harness, warnings } = await start({}, [
      { id: "gpt-4.1", owned_by: "openai" },
      { id: "openai/gpt-4.1-mini" },
      { id: "claude-3-5-haiku-20241022" },
      { id: "mystery-ctx", context_length: 32768 },
      { id: "mystery-len", max_model_len: 4096 },
      { id: "mystery-bare" },
      { id: "bad id" },
    ]);
    const models = await modelsOf(harness);
    expect(models.map((model) => model.id)).toEqual(["claude-3-5-haiku-20241022", "gpt-4.1", "mystery-bare", "mystery-ctx", "mystery-len", "openai/gpt-4.1-mini"]);
    const byId = Object.fromEntries(models.map((model) => [model.id, model]));
    // Catalog metadata (limits, pricing, capabilities) for recognized IDs.
    expect(byId["gpt-4.1"]).toMatchObject({ ref: "local-proxy/gpt-4.1", limits: { contextUnits: 1047576, outputUnits: 32768 }, pricing: { version: "v1", rates: { input: "2", output: "8" } }, availability: { status: "available" } });
    expect(byId["openai/gpt-4.1-mini"]!.pricing.version).toBe("v1");
    expect(byId["claude-3-5-haiku-20241022"]).toMatchObject({ limits: { contextUnits: 200000, outputUnits: 8192 }, capabilities: { input: ["text", "image"] } });
    // The endpoint's limits; unknown limits stay zero; unknown IDs are text in/out with tools.
    expect(byId["mystery-ctx"]).toMatchObject({ limits: { contextUnits: 32768, outputUnits: 0 }, pricing: { version: "unknown" }, capabilities: { input: ["text"], output: ["text"], tools: true } });
    expect(byId["mystery-len"]!.limits).toEqual({ contextUnits: 4096, outputUnits: 0 });
    expect(byId["mystery-bare"]!.limits).toEqual({ contextUnits: 0, outputUnits: 0 });
    expect(harness.model.modelListRequests).toHaveLength(1);
    expect(harness.model.modelListRequests[0]).toMatchObject({ path: "/v1/models", headers: { authorization: `Bearer ${KEY}` } });
    expect(warnings).toEqual([]);
    expect(JSON.stringify(await getRuntimeModels(harness.api))).not.toContain(KEY);
  });

  it("a discovered model serves a Turn over the provider's own transport (never the catalog match's)", async () => {
    const { harness } = await start({}, [{ id: "gpt-4.1", owned_by: "openai" }]);
    harness.model.enqueue({ events: [{ type: "text", text: "from the proxy" }] });
    const sessionId = await harness.createSession();
    const turnId = await harness.submit(sessionId, "hi", { model: "local-proxy/gpt-4.1" });
    const { turn } = await harness.finish(sessionId, turnId);
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "from the proxy" });
    const request = await harness.model.waitForRequest(1);
    expect(request).toMatchObject({ protocol: "chat", path: "/v1/chat/completions", body: { model: "gpt-4.1" } });
    expect(request.headers["authorization"]).toBe(`Bearer ${credentialHash(KEY)}`);
  });

  it("a failing endpoint is a warning: the provider keeps its configured models and the host serves", async () => {
    const { harness, warnings } = await start({ discovery: true, models: { pinned: { limits: { contextUnits: 1000, outputUnits: 100 } } } }, { status: 500 });
    expect((await modelsOf(harness)).map((model) => model.id)).toEqual(["pinned"]);
    expect(warnings).toEqual(["local-proxy: model discovery failed: the provider answered HTTP 500"]);
    expect((await getRuntimeModels(harness.api)).models.map((model) => model.ref)).toContain("test/scripted");
  });

  it("an answer that is not a model list, or an unreachable endpoint, is a warning too", async () => {
    const first = await start({}, { status: 200, body: { nothing: true } });
    expect(await modelsOf(first.harness)).toEqual([]);
    expect(first.warnings).toEqual(["local-proxy: model discovery failed: the answer is not a model list"]);
    await first.harness.close();
    h = undefined;
    const warnings: string[] = [];
    h = await startModelHarness({
      config: { providers: { "local-proxy": { definition: { baseURL: "http://127.0.0.1:9/v1", protocol: "chat", authentication: { kind: "none" } } } }, model: undefined },
      harness: { onWarning: (message) => warnings.push(message) },
    });
    const snapshot = await getRuntimeModels(h.api);
    expect(snapshot.providers.map((provider) => provider.id)).toEqual(["local-proxy"]);
    expect(snapshot.models).toEqual([]);
    expect(warnings).toEqual(["local-proxy: model discovery failed: http://127.0.0.1:9 cannot be reached"]);
  });

  it("with no credential the provider stays visible for connection and nothing is requested", async () => {
    const warnings: string[] = [];
    h = await startModelHarness({
      config: (model) => ({
        providers: { "local-proxy": { definition: { baseURL: model.openaiBaseURL, protocol: "chat", credentials: { environment: ["LOCAL_PROXY_API_KEY"] } } } },
      }),
      harness: { onWarning: (message) => warnings.push(message) },
    });
    h.model.setModelList([{ id: "m" }]);
    const snapshot = await getRuntimeModels(h.api);
    expect(snapshot.providers).toEqual([{ id: "local-proxy", displayName: "local-proxy", availability: { status: "unavailable", reason: "missing_credentials" } }]);
    expect(h.model.modelListRequests).toEqual([]);
    expect(warnings[0]).toMatch(/^local-proxy: model discovery skipped: .*LOCAL_PROXY_API_KEY/);
  });

  it("discovery: false uses only the configured models", async () => {
    const { harness } = await start({ discovery: false }, [{ id: "listed" }]);
    expect(await modelsOf(harness)).toEqual([]);
    expect(harness.model.modelListRequests).toEqual([]);
  });

  it("configured model overrides win over discovered metadata; discovery adds beside them", async () => {
    const { harness } = await start({ discovery: true, models: { "mystery-ctx": { displayName: "Pinned", capabilities: { tools: false }, limits: { outputUnits: 512 } } } }, [
      { id: "mystery-ctx", context_length: 9000 },
      { id: "other" },
    ]);
    const byId = Object.fromEntries((await modelsOf(harness)).map((model) => [model.id, model]));
    expect(byId["mystery-ctx"]).toMatchObject({ displayName: "Pinned", capabilities: { tools: false }, limits: { contextUnits: 9000, outputUnits: 512 } });
    expect(byId["other"]).toBeDefined();
  });
});

describe("reload, refresh and prompts repeat discovery", () => {
  it("runtime reload lists again and publishes a new revision", async () => {
    const { harness } = await start({}, [{ id: "one" }]);
    const before = await getRuntimeModels(harness.api);
    harness.model.setModelList([{ id: "one" }, { id: "two", context_length: 2048 }]);
    const reloaded = await unwrap(sdk.reload({ client: harness.api.client, body: {} }));
    expect(reloaded.result).toBe("reloaded");
    const after = await getRuntimeModels(harness.api);
    expect(after.hostRevision).not.toBe(before.hostRevision);
    expect((await modelsOf(harness)).map((model) => model.id)).toEqual(["one", "two"]);
    expect(harness.model.modelListRequests).toHaveLength(2);
  });

  it("refreshProviderModels re-discovers: updated, then unchanged, then failed (keeping the models)", async () => {
    const { harness, warnings } = await start({}, [{ id: "one" }]);
    await getRuntimeModels(harness.api);
    harness.model.setModelList([{ id: "one" }, { id: "two" }]);
    const client = harness.api.client;
    const updated = await unwrap(sdk.refreshProviderModels({ client, body: { providerId: "local-proxy" } }));
    expect(updated.providers).toEqual([{ providerId: "local-proxy", status: "updated" }]);
    expect(updated.snapshot.models.filter((model) => model.providerId === "local-proxy").map((model) => model.id)).toEqual(["one", "two"]);
    expect(updated.snapshot).toEqual(await getRuntimeModels(harness.api));
    const unchanged = await unwrap(sdk.refreshProviderModels({ client, body: { providerId: "local-proxy" } }));
    expect(unchanged.providers).toEqual([{ providerId: "local-proxy", status: "unchanged" }]);
    expect(unchanged.snapshot.hostRevision).toBe(updated.snapshot.hostRevision);
    harness.model.setModelList({ status: 503 });
    const failed = await unwrap(sdk.refreshProviderModels({ client, body: {} }));
    expect(failed.providers).toContainEqual({ providerId: "local-proxy", status: "failed", message: "local-proxy: model discovery failed: the provider answered HTTP 503" });
    expect(failed.snapshot.hostRevision).toBe(updated.snapshot.hostRevision);
    expect(warnings).toContain("local-proxy: model discovery failed: the provider answered HTTP 503");
  });

  it("a prompt naming a model the catalog lacks lists the provider again before admission", async () => {
    const { harness } = await start({}, [{ id: "one" }]);
    await getRuntimeModels(harness.api);
    harness.model.setModelList([{ id: "one" }, { id: "fresh" }]);
    harness.model.enqueue({ events: [{ type: "text", text: "fresh answer" }] });
    const sessionId = await harness.createSession();
    const turnId = await harness.submit(sessionId, "hi", { model: "local-proxy/fresh" });
    const { turn } = await harness.finish(sessionId, turnId);
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "fresh answer" });
    // A model no listing has is still refused, as before.
    await expect(
      unwrap(sdk.submitPrompt({ client: harness.api.client, path: { server: "local", sessionId }, headers: { "x-ze-harness-client-id": "test" }, body: { delivery: "queue", turnId: randomUUID(), model: "local-proxy/never", prompt: [{ type: "text", text: "x" }] } as never })),
    ).rejects.toMatchObject({ status: 503, body: { _tag: "UnavailableError" } });
  });

  it("a running Turn keeps the catalog it started with when a reload drops its model", async () => {
    const { harness } = await start({}, [{ id: "leased" }]);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let calls = 0;
    harness.model.reply(async () => {
      calls += 1;
      if (calls === 1) {
        await gate;
        return { events: [{ type: "tool_call", name: "read", arguments: { path: "missing.txt" } }] };
      }
      return { events: [{ type: "text", text: "still leased" }] };
    });
    const sessionId = await harness.createSession();
    const turnId = await harness.submit(sessionId, "go", { model: "local-proxy/leased" });
    await harness.model.waitForRequest(1);
    harness.model.setModelList([{ id: "replacement" }]);
    expect((await unwrap(sdk.reload({ client: harness.api.client, body: {} }))).result).toBe("reloaded");
    expect((await modelsOf(harness)).map((model) => model.id)).toEqual(["replacement"]);
    release();
    const { turn } = await harness.finish(sessionId, turnId);
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "still leased" });
    expect((await harness.model.waitForRequest(2)).body).toMatchObject({ model: "leased" });
    // A new Turn sees the new generation.
    await expect(harness.submit(sessionId, "again", { model: "local-proxy/leased" })).rejects.toMatchObject({ status: 503 });
  });
});
