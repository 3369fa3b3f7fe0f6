// Injected-host mode (reference, "Injected-host mode"): with `credentialMode: 'injected-only'`
// provider keys come only from the embedder — the SDK's `providerCredentials` port and
// `setProviderCredential`, or the provider connection routes of `serve --injected-host`, held
// in memory — never from a planted auth.json, a configured `options.apiKey` or the environment.
// The scripted test model records the SHA-256 of the Authorization it receives.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createClient, ZeClientError, type HarnessClient } from "../../clients/index.js";
import { createEmbeddedHarness, EmbeddedHarnessError, makeMcpSecretCredentialResolver, sdk, textPrompt, unwrap, type EmbeddedHarness } from "../../sdk/index.js";
import { credentialHash, startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { assertBuilt, runCli } from "../support/cli.js";
import { startServe, tempHome, type ServeProcess, type TempHome } from "../support/harness.js";
import { TEST_MODEL, testProviderConfig, writeGlobalConfig } from "../support/model.js";
import { EVERYTHING } from "../mcp/support.js";

const PLANTED_AUTH = "sk-planted-in-auth-json";
const PLANTED_ENV = "sk-planted-in-environment";
const PLANTED_CONFIG = "sk-planted-in-config";

let model: TestModel;
let home: TempHome | undefined;
let harness: EmbeddedHarness | undefined;
let serve: ServeProcess | undefined;

beforeAll(async () => {
  model = await startTestModel();
  model.reply(() => ({ events: [{ type: "text", text: "ok" }] }));
});
afterAll(async () => {
  await model.close();
});
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  await serve?.stop();
  serve = undefined;
  home?.cleanup();
  home = undefined;
});

/** A bearer provider whose key could come from auth.json, `options.apiKey` or KEYED_API_KEY — all planted. */
function plantedHome(): { home: TempHome; authPath: string; providers: Record<string, unknown> } {
  const planted = tempHome("ze-injected-");
  const authPath = join(planted.env["XDG_DATA_HOME"]!, "ze-harness", "auth.json");
  mkdirSync(dirname(authPath), { recursive: true });
  writeFileSync(authPath, JSON.stringify({ keyed: { type: "api", key: PLANTED_AUTH } }), { mode: 0o600 });
  planted.env["KEYED_API_KEY"] = PLANTED_ENV;
  const providers = {
    keyed: {
      definition: {
        displayName: "Keyed test model",
        baseURL: model.openaiBaseURL,
        protocol: "chat",
        authentication: { kind: "bearer" },
        credentials: { environment: ["KEYED_API_KEY"] },
        models: { m: { displayName: "M", limits: { contextUnits: 100000, outputUnits: 4096 } } },
      },
      options: { apiKey: PLANTED_CONFIG },
    },
  };
  return { home: planted, authPath, providers };
}

async function failure(call: Promise<unknown>): Promise<ZeClientError> {
  try {
    await call;
  } catch (error) {
    if (error instanceof ZeClientError) return error;
    throw error;
  }
  throw new Error("expected the call to fail");
}

/** Runs one Turn on keyed/m; resolves with the Authorization hash the model saw. */
async function authorizationOfTurn(client: HarnessClient): Promise<string | undefined> {
  const session = await client.createSession();
  const turnId = crypto.randomUUID();
  const before = model.requests.length;
  await client.submitPrompt(session.id, { delivery: "queue", turnId, prompt: textPrompt("Which key?"), model: "keyed/m" });
  const turn = await client.watchTurn(session.id, turnId);
  expect(turn.outcome).toMatchObject({ kind: "completed", text: "ok" });
  expect(model.requests.length).toBe(before + 1);
  return model.requests[before]!.headers["authorization"];
}

/** A prompt to keyed/m is refused at admission and reaches no model. */
async function expectRefused(client: HarnessClient): Promise<void> {
  const session = await client.createSession();
  const before = model.requests.length;
  const refused = await failure(client.submitPrompt(session.id, { delivery: "queue", turnId: crypto.randomUUID(), prompt: textPrompt("No key"), model: "keyed/m" }));
  expect(refused.body).toMatchObject({ _tag: "UnavailableError", reason: "model_unavailable" });
  expect(String(refused.body["message"])).toContain("no injected credential");
  expect(model.requests.length).toBe(before);
}

describe("createEmbeddedHarness({ credentialMode: 'injected-only' })", () => {
  it("ignores a planted auth.json, configured key and environment key; uses only what the embedder writes", async () => {
    const planted = plantedHome();
    home = planted.home;
    const authBefore = readFileSync(planted.authPath, "utf8");
    harness = await createEmbeddedHarness({
      cwd: home.root,
      databaseFilename: ":memory:",
      config: { model: "keyed/m", providers: planted.providers },
      env: home.env,
      credentialMode: "injected-only",
    });
    expect(await harness.getProvider("keyed")).toMatchObject({ availability: { status: "unavailable", reason: "missing_credentials" }, source: "none" });
    await expectRefused(harness);
    expect(await harness.hasProviderCredential("keyed")).toBe(false);

    await harness.setProviderCredential("keyed", "sk-from-the-embedder");
    expect(await harness.hasProviderCredential("keyed")).toBe(true);
    expect(await authorizationOfTurn(harness)).toBe(`Bearer ${credentialHash("sk-from-the-embedder")}`);
    // A rotation applies at the next Turn; a removal fails new Turns closed.
    await harness.setProviderCredential("keyed", "sk-rotated");
    expect(await authorizationOfTurn(harness)).toBe(`Bearer ${credentialHash("sk-rotated")}`);
    await harness.removeProviderCredential("keyed");
    await expectRefused(harness);
    // Bad input is a typed error that changes nothing.
    await expect(harness.setProviderCredential("nope", "sk-x")).rejects.toMatchObject({ _tag: "NotFoundError" });
    await expect(harness.setProviderCredential("keyed", "has spaces")).rejects.toMatchObject({ _tag: "ValidationError" });
    expect(await harness.hasProviderCredential("keyed")).toBe(false);
    expect(readFileSync(planted.authPath, "utf8")).toBe(authBefore);
  });

  it("asks the providerCredentials resolver at each acquisition, naming the Session", async () => {
    const planted = plantedHome();
    home = planted.home;
    const asked: { providerId: string; sessionId?: string }[] = [];
    harness = await createEmbeddedHarness({
      cwd: home.root,
      databaseFilename: ":memory:",
      config: { model: "keyed/m", providers: planted.providers },
      env: home.env,
      credentialMode: "injected-only",
      providerCredentials: (request) => {
        asked.push(request);
        return `sk-for-${request.sessionId}`;
      },
    });
    const session = await harness.createSession();
    const turnId = crypto.randomUUID();
    const before = model.requests.length;
    await harness.submitPrompt(session.id, { delivery: "queue", turnId, prompt: textPrompt("Resolver"), model: "keyed/m" });
    expect((await harness.watchTurn(session.id, turnId)).outcome).toMatchObject({ kind: "completed" });
    expect(model.requests[before]!.headers["authorization"]).toBe(`Bearer ${credentialHash(`sk-for-${session.id}`)}`);
    expect(asked).toContainEqual({ providerId: "keyed", sessionId: session.id });
  });

  it("asks resolveProviderCredential once per Turn with its scope; a denial fails the Turn with model_run_failed", async () => {
    const planted = plantedHome();
    home = planted.home;
    const asked: { providerId: string; scope: unknown }[] = [];
    let denied = false;
    harness = await createEmbeddedHarness({
      cwd: home.root,
      databaseFilename: ":memory:",
      config: { model: "keyed/m", providers: planted.providers },
      env: home.env,
      credentialMode: "injected-only",
      resolveProviderCredential: async (request) => {
        asked.push(request);
        return denied ? { denied: "No seat for this Session", code: "seat_missing" } : { apiKey: `sk-scoped-${request.scope.sessionId}` };
      },
    });
    const session = await harness.createSession();
    const turnId = crypto.randomUUID();
    const before = model.requests.length;
    await harness.submitPrompt(session.id, { delivery: "queue", turnId, prompt: textPrompt("Scoped"), model: "keyed/m" });
    expect((await harness.watchTurn(session.id, turnId)).outcome).toMatchObject({ kind: "completed" });
    expect(model.requests[before]!.headers["authorization"]).toBe(`Bearer ${credentialHash(`sk-scoped-${session.id}`)}`);
    expect(asked).toEqual([{ providerId: "keyed", scope: { kind: "turn", sessionId: session.id, turnId } }]);
    denied = true;
    const refusedTurn = crypto.randomUUID();
    const count = model.requests.length;
    await harness.submitPrompt(session.id, { delivery: "queue", turnId: refusedTurn, prompt: textPrompt("Denied"), model: "keyed/m" });
    expect((await harness.watchTurn(session.id, refusedTurn)).outcome).toMatchObject({ kind: "failed", fault: { code: "model_run_failed", message: "No seat for this Session", providerCode: "seat_missing" } });
    expect(model.requests.length).toBe(count);
  });

  it("takes initial keys as a map; an ambient host refuses credential writes; a bad mode is a typed startup error", async () => {
    const planted = plantedHome();
    home = planted.home;
    harness = await createEmbeddedHarness({
      cwd: home.root,
      databaseFilename: ":memory:",
      config: { model: "keyed/m", providers: planted.providers },
      env: home.env,
      credentialMode: "injected-only",
      providerCredentials: { keyed: "sk-initial" },
    });
    expect(await authorizationOfTurn(harness)).toBe(`Bearer ${credentialHash("sk-initial")}`);
    await harness.close();
    harness = await createEmbeddedHarness({ cwd: home.root, databaseFilename: ":memory:", config: { model: "keyed/m", providers: planted.providers }, env: home.env });
    // Ambient: the configured key wins (the precedence the reference gives), and writes are refused.
    expect(await authorizationOfTurn(harness)).toBe(`Bearer ${credentialHash(PLANTED_CONFIG)}`);
    await expect(harness.setProviderCredential("keyed", "sk-x")).rejects.toBeInstanceOf(EmbeddedHarnessError);
    await expect(createEmbeddedHarness({ cwd: home.root, databaseFilename: ":memory:", env: home.env, credentialMode: "other" as never })).rejects.toMatchObject({
      _tag: "ValidationError",
    });
    // A port on an ambient host would be silently unused: refused instead.
    await expect(createEmbeddedHarness({ cwd: home.root, databaseFilename: ":memory:", env: home.env, mcpCredentialResolver: () => "x" })).rejects.toThrow(
      /mcpCredentialResolver needs credentialMode "injected-only"/,
    );
  });

  it("MCP: secret references only from mcpCredentialResolver; environment references fail closed", async () => {
    home = tempHome("ze-injected-");
    home.env["SOURCE_VALUE"] = "from-the-environment";
    const server = (id: string, environment: Record<string, unknown>) => ({ kind: "local", id, name: id, reconnect: { kind: "manual" }, transport: { kind: "stdio", command: process.execPath, arguments: [EVERYTHING, "stdio"], environment } });
    harness = await createEmbeddedHarness({
      cwd: home.root,
      databaseFilename: ":memory:",
      env: home.env,
      config: {
        model: TEST_MODEL,
        providers: testProviderConfig(model),
        permissions: [{ action: "*", resource: "*", effect: "allow" }],
        mcp: [server("sec", { FROM_SECRET: { kind: "secret", reference: "tok" } }), server("envy", { FROM_ENV: { kind: "environment", reference: "SOURCE_VALUE" } })],
      },
      credentialMode: "injected-only",
      mcpCredentialResolver: makeMcpSecretCredentialResolver({ tok: "secret-from-the-embedder" }),
    });
    const session = await harness.createSession();
    const { catalog } = await unwrap(sdk.getMcpCatalog({ client: harness.api.client, path: { server: "local", sessionId: session.id } }));
    expect(catalog.servers.map((entry) => entry.name)).toEqual(["sec"]);
    const before = model.requests.length;
    model.enqueue({ events: [{ type: "tool_call", name: "sec_get-env", arguments: {} }] }, { events: [{ type: "text", text: "read" }] });
    const turnId = crypto.randomUUID();
    await harness.submitPrompt(session.id, { delivery: "queue", turnId, prompt: textPrompt("env?") });
    expect((await harness.watchTurn(session.id, turnId)).outcome).toMatchObject({ kind: "completed", text: "read" });
    const result = JSON.stringify(model.requests[before + 1]!.body);
    expect(result).toContain("secret-from-the-embedder");
    expect(result).not.toContain("from-the-environment");
  });
});

describe("serve --injected-host", () => {
  beforeAll(() => assertBuilt());

  it("prints `<url> mode=injected-host` and takes keys only from its supervisor, in memory", async () => {
    const planted = plantedHome();
    home = planted.home;
    writeGlobalConfig(home, { model: "keyed/m", providers: planted.providers });
    const authBefore = readFileSync(planted.authPath, "utf8");
    serve = await startServe(["--injected-host"], home.env, home.root);
    expect(serve.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+ mode=injected-host$/);
    const client = createClient({ baseUrl: serve.url.split(" ")[0]! });
    expect(await client.getProvider("keyed")).toMatchObject({ availability: { status: "unavailable" }, source: "none" });
    await expectRefused(client);
    // The supervisor injects the key through the provider connection route.
    const connection = await client.connectProviderKey("keyed", { apiKey: "sk-from-the-supervisor" });
    expect(JSON.stringify(connection)).not.toContain("sk-from-the-supervisor");
    expect(await authorizationOfTurn(client)).toBe(`Bearer ${credentialHash("sk-from-the-supervisor")}`);
    // Logins would store credentials the supervisor did not give: refused.
    const login = await failure(client.startProviderLogin("keyed"));
    expect(login.status).toBe(403);
    expect(readFileSync(planted.authPath, "utf8")).toBe(authBefore);
    await client.deleteProviderConnection("keyed", connection.connectionId);
    await expectRefused(client);
    expect(serve.stderr()).not.toContain("sk-from-the-supervisor");
  });

  it("refuses a non-loopback address and --register (usage, exit 2)", async () => {
    home = tempHome("ze-injected-");
    const remote = await runCli(["serve", "--injected-host", "--hostname", "0.0.0.0", "--token", "t", "--port", "0"], { cwd: home.root, env: home.env });
    expect(remote.code).toBe(2);
    expect(remote.stderr).toContain("--injected-host serves loopback only");
    const registered = await runCli(["serve", "--injected-host", "--register"], { cwd: home.root, env: home.env });
    expect(registered.code).toBe(2);
    expect(registered.stderr).toContain("--injected-host and --register cannot be combined");
  });
});
