// Provider connections through the generated client (in process): summaries, connecting,
// replacing, relabelling and deleting an API key in the global auth.json, and the credential the
// next model request carries (the test model records its SHA-256 only). Bad input on every
// operation is a typed error that leaves auth.json byte for byte as it was.
import { mkdirSync, statSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  connectProviderKey,
  deleteProviderConnection,
  getProvider,
  listProviders,
  sdk,
  updateProviderConnection,
  ZeClientError,
} from "../../clients/index.js";
import { credentialHash } from "../../tools/test-model/index.js";
import { KEYED, startProviderHarness, type ProviderHarness } from "./provider-harness.js";

let h: ProviderHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const KEY_A = "sk-keyed-AAAA-0123456789";
const KEY_B = "sk-keyed-BBBB-9876543210";

async function failure(call: Promise<unknown>): Promise<{ status: number; body: Record<string, unknown> }> {
  try {
    await call;
  } catch (error) {
    if (error instanceof ZeClientError) return { status: error.status, body: error.body };
    throw error;
  }
  throw new Error("expected the call to fail");
}

const lastHash = (harness: ProviderHarness): string | undefined => harness.model.requests.at(-1)?.credentialSha256;

describe("provider summaries", () => {
  it("lists every configured provider; one without a credential stays listed as connectable", async () => {
    h = await startProviderHarness();
    const providers = await listProviders(h.api);
    expect(providers.map((provider) => provider.id)).toEqual(["gate", "keyed", "test"]);
    const keyed = await getProvider(h.api, "keyed");
    expect(keyed).toEqual({
      id: "keyed",
      displayName: "Keyed test model",
      availability: { status: "unavailable", reason: "missing_credentials" },
      source: "none",
      methods: ["api_key"],
      logins: [],
    });
    expect(await getProvider(h.api, "test")).toMatchObject({ availability: { status: "available" }, source: "none", methods: [] });
    expect(await getProvider(h.api, "gate")).toMatchObject({ methods: ["api_key", "oauth"], logins: [{ id: "device", label: "Device code" }] });
  });

  it("refuses a model of a provider without a credential at admission, naming provider connect and the variable", async () => {
    h = await startProviderHarness();
    const refused = await h.submit(KEYED);
    expect(refused.response.status).toBe(503);
    expect(refused.error).toMatchObject({ _tag: "UnavailableError", reason: "model_unavailable" });
    const message = (refused.error as { message: string }).message;
    expect(message).toContain("`ze-harness provider connect keyed`");
    expect(message).toContain("KEYED_API_KEY");
    expect(h.model.requests).toHaveLength(0);
  });
});

describe("API key connections", () => {
  it("connects a key atomically (0600 in a 0700 directory); the next request carries it", async () => {
    h = await startProviderHarness();
    const connection = await connectProviderKey(h.api, "keyed", { apiKey: KEY_A, label: "personal" });
    expect(connection).toMatchObject({ providerId: "keyed", label: "personal", method: "api_key", status: "ready" });
    expect(connection.connectionId).toMatch(/^conn_/);
    expect(JSON.stringify(connection)).not.toContain(KEY_A);
    expect(statSync(h.authPath).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(h.authPath)).mode & 0o777).toBe(0o700);
    // opencode's shape, plus Ze's metadata.
    expect(JSON.parse(h.authText()!)).toEqual({ keyed: { type: "api", key: KEY_A, connectionId: connection.connectionId, label: "personal", createdAt: connection.createdAt, updatedAt: connection.updatedAt } });

    const summary = await getProvider(h.api, "keyed");
    expect(summary).toMatchObject({ availability: { status: "available" }, source: "stored", connection });
    expect(JSON.stringify(await listProviders(h.api))).not.toContain(KEY_A);

    const turn = await h.turn(KEYED);
    expect(turn.outcome?.kind).toBe("completed");
    expect(lastHash(h)).toBe(credentialHash(KEY_A));
  });

  it("replaces the key: a new connection id, the old one is gone, the next request carries the new key", async () => {
    h = await startProviderHarness();
    const first = await connectProviderKey(h.api, "keyed", { apiKey: KEY_A });
    expect(first.label).toBe("keyed");
    await h.turn(KEYED);
    expect(lastHash(h)).toBe(credentialHash(KEY_A));

    const second = await connectProviderKey(h.api, "keyed", { apiKey: KEY_B });
    expect(second.connectionId).not.toBe(first.connectionId);
    expect(await failure(deleteProviderConnection(h.api, "keyed", first.connectionId))).toMatchObject({ status: 404, body: { _tag: "NotFoundError", resource: "connection" } });
    await h.turn(KEYED);
    expect(lastHash(h)).toBe(credentialHash(KEY_B));
    expect(h.authText()).not.toContain(KEY_A);
  });

  it("relabels a connection without touching its key", async () => {
    h = await startProviderHarness();
    const connection = await connectProviderKey(h.api, "keyed", { apiKey: KEY_A });
    const renamed = await updateProviderConnection(h.api, "keyed", connection.connectionId, { label: "work laptop" });
    expect(renamed).toMatchObject({ connectionId: connection.connectionId, label: "work laptop", createdAt: connection.createdAt, method: "api_key" });
    expect(renamed.updatedAt).toBeGreaterThanOrEqual(connection.updatedAt);
    expect((await getProvider(h.api, "keyed")).connection).toEqual(renamed);
    await h.turn(KEYED);
    expect(lastHash(h)).toBe(credentialHash(KEY_A));
  });

  it("deletes the connection: the provider is connectable again and its models are refused", async () => {
    h = await startProviderHarness();
    const connection = await connectProviderKey(h.api, "keyed", { apiKey: KEY_A });
    expect(await deleteProviderConnection(h.api, "keyed", connection.connectionId)).toBe(true);
    expect(await getProvider(h.api, "keyed")).toMatchObject({ availability: { status: "unavailable", reason: "missing_credentials" }, source: "none" });
    expect((await getProvider(h.api, "keyed")).connection).toBeUndefined();
    expect(JSON.parse(h.authText()!)).toEqual({});
    expect((await h.submit(KEYED)).response.status).toBe(503);
  });

  it("keeps entries it does not own and connections of other providers", async () => {
    h = await startProviderHarness();
    mkdirSync(dirname(h.authPath), { recursive: true, mode: 0o700 });
    writeFileSync(h.authPath, JSON.stringify({ other: { type: "api", key: "sk-other" }, "mcp:linear": { tokens: "x" } }), { mode: 0o600 });
    const connection = await connectProviderKey(h.api, "keyed", { apiKey: KEY_A });
    await deleteProviderConnection(h.api, "keyed", connection.connectionId);
    expect(JSON.parse(h.authText()!)).toEqual({ other: { type: "api", key: "sk-other" }, "mcp:linear": { tokens: "x" } });
  });

  it("names an entry written by another tool auth:<provider> and can relabel and delete it", async () => {
    h = await startProviderHarness();
    mkdirSync(dirname(h.authPath), { recursive: true, mode: 0o700 });
    writeFileSync(h.authPath, JSON.stringify({ keyed: { type: "api", key: KEY_A } }), { mode: 0o600 });
    const summary = await getProvider(h.api, "keyed");
    expect(summary.connection).toMatchObject({ connectionId: "auth:keyed", label: "keyed", method: "api_key", status: "ready" });
    expect(await updateProviderConnection(h.api, "keyed", "auth:keyed", { label: "imported" })).toMatchObject({ connectionId: "auth:keyed", label: "imported" });
    expect(await deleteProviderConnection(h.api, "keyed", "auth:keyed")).toBe(true);
  });
});

describe("credential precedence", () => {
  it("a stored connection is used before the environment; the environment once it is deleted", async () => {
    const ENV_KEY = "sk-keyed-from-env-000";
    h = await startProviderHarness({ env: { KEYED_API_KEY: ENV_KEY } });
    expect(await getProvider(h.api, "keyed")).toMatchObject({ availability: { status: "available" }, source: "environment" });
    const connection = await connectProviderKey(h.api, "keyed", { apiKey: KEY_A });
    expect((await getProvider(h.api, "keyed")).source).toBe("stored");
    await h.turn(KEYED);
    expect(lastHash(h)).toBe(credentialHash(KEY_A));
    await deleteProviderConnection(h.api, "keyed", connection.connectionId);
    await h.turn(KEYED);
    expect(lastHash(h)).toBe(credentialHash(ENV_KEY));
  });

  it("a configured options.apiKey takes precedence over a stored connection", async () => {
    const CONFIGURED = "sk-configured-key-111";
    h = await startProviderHarness({ providers: (model) => ({ fixed: { ...keyed(model), options: { apiKey: CONFIGURED } } }) });
    await connectProviderKey(h.api, "fixed", { apiKey: KEY_A });
    const summary = await getProvider(h.api, "fixed");
    expect(summary).toMatchObject({ availability: { status: "available" }, source: "environment", connection: { method: "api_key" } });
    await h.turn("fixed/m");
    expect(lastHash(h)).toBe(credentialHash(CONFIGURED));
  });
});

function keyed(model: ProviderHarness["model"]): Record<string, unknown> {
  return {
    definition: {
      baseURL: model.openaiBaseURL,
      protocol: "chat",
      authentication: { kind: "bearer" },
      models: { m: {} },
    },
  };
}

describe("bad input changes nothing", () => {
  it("answers every operation's bad input with a typed error and leaves auth.json as it was", async () => {
    h = await startProviderHarness();
    const good = await connectProviderKey(h.api, "keyed", { apiKey: KEY_A });
    const before = h.authText();
    const client = h.api.client;
    const api = h.api;
    // Thunks, run one at a time: calls started together could reject before the loop awaits them (an unhandled rejection).
    const cases: [string, () => Promise<unknown>, number, Record<string, unknown>][] = [
      ["getProvider unknown", () => getProvider(api, "nope"), 404, { _tag: "NotFoundError", resource: "provider" }],
      ["connect unknown provider", () => connectProviderKey(api, "nope", { apiKey: KEY_B }), 404, { _tag: "NotFoundError", resource: "provider" }],
      ["connect empty key", () => connectProviderKey(api, "keyed", { apiKey: "" }), 400, { _tag: "ValidationError" }],
      ["connect key with a space", () => connectProviderKey(api, "keyed", { apiKey: "sk two" }), 400, { _tag: "ValidationError" }],
      ["connect key with a line break", () => connectProviderKey(api, "keyed", { apiKey: "sk\nInjected: x" }), 400, { _tag: "ValidationError" }],
      ["connect huge key", () => connectProviderKey(api, "keyed", { apiKey: "k".repeat(9000) }), 400, { _tag: "ValidationError" }],
      ["connect label too long", () => connectProviderKey(api, "keyed", { apiKey: KEY_B, label: "l".repeat(257) }), 400, { _tag: "ValidationError" }],
      ["connect label with control characters", () => connectProviderKey(api, "keyed", { apiKey: KEY_B, label: "a\u0007b" }), 400, { _tag: "ValidationError" }],
      ["connect a keyless provider", () => connectProviderKey(api, "test", { apiKey: KEY_B }), 400, { _tag: "ValidationError" }],
      ["connect a non-string key", () => sdk.connectProviderKey({ client, path: { providerId: "keyed" }, body: { apiKey: 42 } as never, throwOnError: true }).catch(wrap), 400, { _tag: "ValidationError" }],
      ["update unknown connection", () => updateProviderConnection(api, "keyed", "conn_nope", { label: "x" }), 404, { _tag: "NotFoundError", resource: "connection" }],
      ["update blank label", () => updateProviderConnection(api, "keyed", good.connectionId, { label: "   " }), 400, { _tag: "ValidationError" }],
      ["update unknown provider", () => updateProviderConnection(api, "nope", good.connectionId, { label: "x" }), 404, { _tag: "NotFoundError", resource: "provider" }],
      ["update another provider's connection", () => updateProviderConnection(api, "gate", good.connectionId, { label: "x" }), 404, { _tag: "NotFoundError", resource: "connection" }],
      ["delete unknown connection", () => deleteProviderConnection(api, "keyed", "conn_nope"), 404, { _tag: "NotFoundError", resource: "connection" }],
      ["delete another provider's connection", () => deleteProviderConnection(api, "gate", good.connectionId), 404, { _tag: "NotFoundError", resource: "connection" }],
    ];
    for (const [name, call, status, body] of cases) {
      const refused = await failure(call());
      expect(refused, name).toMatchObject({ status, body });
      expect(JSON.stringify(refused.body), name).not.toContain(KEY_A);
      expect(JSON.stringify(refused.body), name).not.toContain(KEY_B);
      expect(JSON.stringify(refused.body), name).not.toContain("sk two");
    }
    expect(h.authText()).toBe(before);
    expect((await getProvider(h.api, "keyed")).connection).toEqual(good);
  });

  it("an auth.json that is not a JSON object fails every connection operation and is never overwritten", async () => {
    h = await startProviderHarness();
    mkdirSync(dirname(h.authPath), { recursive: true, mode: 0o700 });
    writeFileSync(h.authPath, "[1, 2, 3]\n", { mode: 0o600 });
    // One at a time: calls started together could reject before the loop awaits them (an unhandled rejection).
    for (const call of [
      () => connectProviderKey(h!.api, "keyed", { apiKey: KEY_A }),
      () => updateProviderConnection(h!.api, "keyed", "auth:keyed", { label: "x" }),
      () => deleteProviderConnection(h!.api, "keyed", "auth:keyed"),
      () => sdk.startProviderLogin({ client: h!.api.client, path: { providerId: "gate" }, body: {}, throwOnError: true }).catch(wrap),
    ]) {
      const refused = await failure(call());
      expect(refused).toMatchObject({ status: 503, body: { _tag: "UnavailableError" } });
      expect(refused.body["message"]).toContain("not a JSON object");
    }
    expect(h.authText()).toBe("[1, 2, 3]\n");
    // Listing still works: nothing counts as stored.
    expect((await getProvider(h.api, "keyed")).source).toBe("none");
    expect(h.oauth.requests).toHaveLength(0);
  });

  it("ZE_HARNESS_AUTH_CONTENT supplies connections read-only for scripted runs", async () => {
    h = await startProviderHarness({ env: { ZE_HARNESS_AUTH_CONTENT: JSON.stringify({ keyed: { type: "api", key: KEY_A } }) } });
    expect(await getProvider(h.api, "keyed")).toMatchObject({ source: "stored", connection: { connectionId: "auth:keyed" } });
    await h.turn(KEYED);
    expect(lastHash(h)).toBe(credentialHash(KEY_A));
    // One at a time: calls started together could reject before the loop awaits them (an unhandled rejection).
    for (const call of [
      () => connectProviderKey(h!.api, "keyed", { apiKey: KEY_B }),
      () => updateProviderConnection(h!.api, "keyed", "auth:keyed", { label: "x" }),
      () => deleteProviderConnection(h!.api, "keyed", "auth:keyed"),
      () => sdk.startProviderLogin({ client: h!.api.client, path: { providerId: "gate" }, body: {}, throwOnError: true }).catch(wrap),
    ]) {
      expect(await failure(call())).toMatchObject({ status: 403, body: { _tag: "ForbiddenError" } });
    }
    expect(h.authText()).toBeUndefined();
  });
});

/** A raw SDK call's thrown error body as a ZeClientError (throwOnError surfaces the body only). */
function wrap(error: unknown): never {
  if (error instanceof ZeClientError) throw error;
  const body = error as Record<string, unknown>;
  throw new ZeClientError(body["_tag"] === "ValidationError" ? 400 : body["_tag"] === "NotFoundError" ? 404 : body["_tag"] === "ForbiddenError" ? 403 : 503, body as never);
}

describe("over a real serve", () => {
  it("connects, replaces and deletes a key over HTTP; each next request carries the current one", async () => {
    const { assertBuilt } = await import("../support/cli.js");
    const { networkClient, startServe, tempHome } = await import("../support/harness.js");
    const { TEST_MODEL, testProviderConfig, writeGlobalConfig } = await import("../support/model.js");
    const { startTestModel } = await import("../../tools/test-model/index.js");
    const { keyedProvider } = await import("./provider-harness.js");
    const { randomUUID } = await import("node:crypto");
    const { unwrap } = await import("../../clients/index.js");
    assertBuilt();
    const model = await startTestModel();
    model.reply(() => ({ events: [{ type: "text", text: "ok" }] }));
    const home = tempHome("ze-serve-keys-");
    writeGlobalConfig(home, { model: TEST_MODEL, providers: { ...testProviderConfig(model), keyed: keyedProvider(model) } });
    const serve = await startServe(["--token", "t0ken"], home.env, home.root);
    try {
      const api = networkClient(serve.url, "t0ken");
      const turn = async () => {
        const sessionId = randomUUID();
        const turnId = randomUUID();
        await unwrap(sdk.createSession({ client: api.client, path: { server: "local", sessionId }, body: {} }));
        await unwrap(sdk.submitPrompt({ client: api.client, path: { server: "local", sessionId }, headers: { "x-ze-harness-client-id": "t" }, body: { delivery: "queue", turnId, prompt: [{ type: "text", text: "hi" }], model: KEYED } }));
        const { stream } = await sdk.watchTurn({ client: api.client, path: { server: "local", sessionId, turnId }, sseMaxRetryAttempts: 0 });
        for await (const event of stream) if ((event as { type?: string }).type === "turn.finished") break;
        return model.requests.at(-1)?.credentialSha256;
      };
      const first = await connectProviderKey(api, "keyed", { apiKey: KEY_A });
      expect(await turn()).toBe(credentialHash(KEY_A));
      const second = await connectProviderKey(api, "keyed", { apiKey: KEY_B });
      expect(second.connectionId).not.toBe(first.connectionId);
      expect(await turn()).toBe(credentialHash(KEY_B));
      expect(await deleteProviderConnection(api, "keyed", second.connectionId)).toBe(true);
      const sessionId = randomUUID();
      await unwrap(sdk.createSession({ client: api.client, path: { server: "local", sessionId }, body: {} }));
      const refused = await sdk.submitPrompt({ client: api.client, path: { server: "local", sessionId }, headers: { "x-ze-harness-client-id": "t" }, body: { delivery: "queue", turnId: randomUUID(), prompt: [{ type: "text", text: "hi" }], model: KEYED } });
      expect(refused.response.status).toBe(503);
      expect(refused.error).toMatchObject({ _tag: "UnavailableError", reason: "model_unavailable" });
      expect((await getProvider(api, "keyed")).source).toBe("none");
      expect(serve.stderr()).not.toContain(KEY_A);
    } finally {
      await serve.stop();
      await model.close();
      home.cleanup();
    }
  });
});
