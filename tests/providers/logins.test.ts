// Host-held device logins (OAuth 2.0 device authorization grant, RFC 8628) against a local
// authorization server: start → long-poll → connected / denied / expired / cancelled, the
// `slow_down` and expiry rules (with a recorded clock), refresh within two minutes of expiry,
// the one 401 refresh-and-retry, a rejected refresh token, and bad input.
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  cancelProviderLogin,
  getProvider,
  getProviderLogin,
  sdk,
  startProviderLogin,
  waitProviderLogin,
  ZeClientError,
} from "../../clients/index.js";
import { createModelGateway } from "../../services/host/models.js";
import {
  CredentialRefresher,
  LoginManager,
  loginMethodsOf,
  resolveProviders,
  type LoginContext,
  type ResolvedProvider,
} from "../../services/providers/index.js";
import { credentialHash } from "../../tools/test-model/index.js";
import { startOAuthServer, type OAuthServer } from "./oauth-server.js";
import { gateProvider, startProviderHarness, type ProviderHarness } from "./provider-harness.js";

let h: ProviderHarness | undefined;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  await h?.close();
  h = undefined;
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const GATE = "gate/m";

async function failure(call: Promise<unknown>): Promise<{ status: number; body: Record<string, unknown> }> {
  try {
    await call;
  } catch (error) {
    if (error instanceof ZeClientError) return { status: error.status, body: error.body };
    throw error;
  }
  throw new Error("expected the call to fail");
}

/** Logs in to `gate` with the server approving after the scripted polls. */
async function login(harness: ProviderHarness, polls: ("pending" | "approve")[] = ["approve"]) {
  harness.oauth.polls.push(...polls);
  const started = await startProviderLogin(harness.api, "gate");
  if (started.status !== "pending") throw new Error(`login did not start: ${JSON.stringify(started)}`);
  const settled = await waitProviderLogin(harness.api, "gate", started.loginId);
  if (settled.status !== "connected") throw new Error(`login failed: ${JSON.stringify(settled)}`);
  return settled;
}

const storedLogin = (harness: ProviderHarness) => JSON.parse(harness.authText()!)["gate"];

describe("device login through the API", () => {
  it("starts with the prompt, long-polls pending → connected, and stores the tokens on the host", async () => {
    h = await startProviderHarness();
    h.oauth.polls.push("pending", "pending", "approve");
    const started = await startProviderLogin(h.api, "gate");
    expect(started).toMatchObject({ status: "pending", methodId: "device", prompt: { kind: "device", verificationUrl: `${h.oauth.url}/activate`, userCode: "WDJB-MJHT" } });
    if (started.status !== "pending") throw new Error("not pending");
    expect(started.loginId).toMatch(/^login_/);
    expect(typeof started.expiresAt).toBe("number");
    // The device authorization request used the descriptor's client and scope.
    expect(h.oauth.requests.find((request) => request.path === "/oauth/device")?.form).toEqual({ client_id: "ze-test-client", scope: "models" });

    const settled = await getProviderLogin(h.api, "gate", started.loginId, { waitMs: 30000 });
    const final = settled.status === "pending" ? await waitProviderLogin(h.api, "gate", started.loginId) : settled;
    expect(final).toMatchObject({ status: "connected", loginId: started.loginId, connection: { providerId: "gate", method: "oauth", status: "ready" } });
    expect(h.oauth.count("/oauth/token", "urn:ietf:params:oauth:grant-type:device_code")).toBe(3);
    // Device codes and tokens never leave the host.
    for (const body of [started, final, await getProvider(h.api, "gate")]) {
      const text = JSON.stringify(body);
      expect(text).not.toContain("device-code-");
      expect(text).not.toContain("access-1");
      expect(text).not.toContain("refresh-1");
    }
    expect(storedLogin(h)).toMatchObject({ type: "oauth", access: "access-1", refresh: "refresh-1", tokenEndpoint: `${h.oauth.url}/oauth/token`, clientId: "ze-test-client", login: "device" });
    expect(await getProvider(h.api, "gate")).toMatchObject({ availability: { status: "available" }, source: "stored", connection: { method: "oauth", status: "ready" } });

    const turn = await h.turn(GATE);
    expect(turn.outcome?.kind).toBe("completed");
    expect(h.model.requests.at(-1)?.credentialSha256).toBe(credentialHash("access-1"));
  });

  it("reports denial and expiry as failed, storing nothing", async () => {
    h = await startProviderHarness();
    for (const [answer, reason] of [["denied", "denied"], ["expired", "expired"], ["server_error", "error"]] as const) {
      h.oauth.polls.push(answer);
      const started = await startProviderLogin(h.api, "gate");
      const settled = await waitProviderLogin(h.api, "gate", started.loginId);
      expect(settled, answer).toMatchObject({ status: "failed", reason });
      if (settled.status === "failed") expect(settled.message).not.toContain("provider text");
    }
    expect(h.authText()).toBeUndefined();
  });

  it("cancels a pending login (DELETE), and a new login cancels the provider's pending one", async () => {
    h = await startProviderHarness();
    const first = await startProviderLogin(h.api, "gate");
    const second = await startProviderLogin(h.api, "gate");
    expect(await getProviderLogin(h.api, "gate", first.loginId)).toMatchObject({ status: "failed", reason: "cancelled" });
    expect(await getProviderLogin(h.api, "gate", second.loginId)).toMatchObject({ status: "pending" });
    // A long-poll in flight sees the cancellation.
    const waiting = getProviderLogin(h.api, "gate", second.loginId, { waitMs: 30000 });
    expect(await cancelProviderLogin(h.api, "gate", second.loginId)).toMatchObject({ status: "failed", reason: "cancelled", message: "the login was cancelled" });
    expect(await waiting).toMatchObject({ status: "failed", reason: "cancelled" });
    // Cancelling a settled login returns it unchanged.
    expect(await cancelProviderLogin(h.api, "gate", second.loginId)).toMatchObject({ status: "failed", reason: "cancelled" });
    // The cancelled logins stopped polling: a new login gets every poll from now on (at most one
    // request of the cancelled one was already on the wire when it was cancelled).
    const cancelledAt = h.oauth.requests.length;
    const codes = h.oauth.requests.filter((request) => request.path === "/oauth/token").map((request) => request.form["device_code"]);
    h.oauth.polls.push("pending", "pending", "approve");
    const third = await startProviderLogin(h.api, "gate");
    expect(await waitProviderLogin(h.api, "gate", third.loginId)).toMatchObject({ status: "connected" });
    const late = h.oauth.requests.slice(cancelledAt).filter((request) => request.path === "/oauth/token" && codes.includes(request.form["device_code"]));
    expect(late.length).toBeLessThanOrEqual(1);
  });

  it("resolves a discoveryURL path against the provider base URL and shows the notice in the login methods", async () => {
    const notice = { text: "By continuing you accept the terms.", links: [{ label: "Terms", url: "https://example.com/terms" }] };
    h = await startProviderHarness({
      providers: (model, oauth) => ({
        relative: { definition: { baseURL: `${oauth.url}/v1`, protocol: "chat", authentication: { kind: "bearer" }, models: { m: {} }, login: { device: { discoveryURL: "/auth/device", notice } } } },
        noticed: gateProvider(model, oauth, notice),
      }),
    });
    expect((await getProvider(h.api, "noticed")).logins).toEqual([{ id: "device", label: "Device code", notice }]);
    const started = await startProviderLogin(h.api, "relative", { methodId: "device" });
    expect(started.status).toBe("pending");
    expect(h.oauth.requests[0]).toMatchObject({ method: "GET", path: "/auth/device" });
  });

  it("fails a login whose descriptor cannot be read, with our wording only", async () => {
    h = await startProviderHarness({
      providers: (model, oauth) => ({ broken: { definition: { baseURL: model.openaiBaseURL, protocol: "chat", models: { m: {} }, login: { device: { discoveryURL: `${oauth.url}/missing` } } } } }),
    });
    const started = await startProviderLogin(h.api, "broken");
    expect(started).toMatchObject({ status: "failed", reason: "error" });
    if (started.status === "failed") expect(started.message).toMatch(/login descriptor .* could not be read \(HTTP 404\)/);
    expect(await getProviderLogin(h.api, "broken", started.loginId)).toEqual(started);
  });

  it("answers bad input on every login operation with a typed error", async () => {
    h = await startProviderHarness();
    const started = await startProviderLogin(h.api, "gate");
    const client = h.api.client;
    const cases: [string, Promise<unknown>, number, Record<string, unknown>][] = [
      ["start unknown provider", startProviderLogin(h.api, "nope"), 404, { _tag: "NotFoundError", resource: "provider" }],
      ["start a provider without login", startProviderLogin(h.api, "keyed"), 400, { _tag: "ValidationError" }],
      ["start an unknown method", startProviderLogin(h.api, "gate", { methodId: "password" }), 400, { _tag: "ValidationError" }],
      ["get unknown login", getProviderLogin(h.api, "gate", "login_nope"), 404, { _tag: "NotFoundError", resource: "provider_login" }],
      ["get under another provider", getProviderLogin(h.api, "keyed", started.loginId), 404, { _tag: "NotFoundError", resource: "provider_login" }],
      ["get unknown provider", getProviderLogin(h.api, "nope", started.loginId), 404, { _tag: "NotFoundError", resource: "provider" }],
      ["cancel unknown login", cancelProviderLogin(h.api, "gate", "login_nope"), 404, { _tag: "NotFoundError", resource: "provider_login" }],
    ];
    for (const waitMs of ["abc", "-1", "1.5", ""]) {
      cases.push([
        `waitMs ${JSON.stringify(waitMs)}`,
        sdk.getProviderLogin({ client, path: { providerId: "gate", loginId: started.loginId }, query: { waitMs } }).then(({ error, response }) => {
          if (error) throw new ZeClientError(response.status, error as never);
        }),
        400,
        { _tag: "ValidationError" },
      ]);
    }
    for (const [name, call, status, body] of cases) expect(await failure(call), name).toMatchObject({ status, body });
    expect(await getProviderLogin(h.api, "gate", started.loginId)).toMatchObject({ status: "pending" });
    expect(h.authText()).toBeUndefined();
  });
});

describe("poll rules (recorded clock)", () => {
  function recordedContext(start = 1_000_000): { context: LoginContext; sleeps: number[] } {
    let now = start;
    const sleeps: number[] = [];
    return {
      sleeps,
      context: {
        fetch: (input, init) => globalThis.fetch(input, init),
        now: () => now,
        sleep: async (ms, signal) => {
          signal.throwIfAborted();
          sleeps.push(ms);
          now += ms;
        },
      },
    };
  }

  async function setup(options: Parameters<typeof startOAuthServer>[0]): Promise<{ oauth: OAuthServer; provider: ResolvedProvider; authPath: string }> {
    const oauth = await startOAuthServer(options);
    const dir = mkdtempSync(join(tmpdir(), "ze-login-"));
    cleanups.push(() => oauth.close(), () => rmSync(dir, { recursive: true, force: true }));
    const set = resolveProviders({ gate: { definition: { baseURL: "http://127.0.0.1:9/v1", protocol: "chat", models: { m: {} }, login: { device: { discoveryURL: `${oauth.url}/auth/device` } } } } });
    if (!set.ok) throw new Error("providers did not resolve");
    return { oauth, provider: set.value.provider("gate")!, authPath: join(dir, "auth.json") };
  }

  it("waits the server's interval, keeps polling on authorization_pending and adds 5 s on slow_down", async () => {
    const { oauth, provider, authPath } = await setup({ interval: 2 });
    const { context, sleeps } = recordedContext();
    const manager = new LoginManager({ location: () => ({ path: authPath }), env: {}, context });
    oauth.polls.push("pending", "slow_down", "pending", "approve");
    const started = await manager.start(provider);
    if (!started.ok) throw new Error("no start");
    const settled = await manager.wait("gate", started.login.loginId, 30000);
    expect(settled).toMatchObject({ status: "connected" });
    expect(sleeps).toEqual([2000, 2000, 7000, 7000]);
    expect(JSON.parse(readFileSync(authPath, "utf8")).gate).toMatchObject({ access: "access-1" });
  });

  it("backs off (doubling) while the token endpoint cannot be reached, then completes", async () => {
    const { oauth, provider, authPath } = await setup({ interval: 2 });
    const { context, sleeps } = recordedContext();
    let failures = 2;
    const flaky: LoginContext = {
      ...context,
      fetch: async (input, init) => {
        if (input.endsWith("/oauth/token") && failures > 0) {
          failures -= 1;
          throw new TypeError("fetch failed");
        }
        return globalThis.fetch(input, init);
      },
    };
    const manager = new LoginManager({ location: () => ({ path: authPath }), env: {}, context: flaky });
    oauth.polls.push("approve");
    const started = await manager.start(provider);
    if (!started.ok) throw new Error("no start");
    expect(await manager.wait("gate", started.login.loginId, 30000)).toMatchObject({ status: "connected" });
    expect(sleeps).toEqual([2000, 4000, 8000]);
  });

  it("expires the login when the code's lifetime runs out while it is pending", async () => {
    const { oauth, provider, authPath } = await setup({ interval: 4, codeExpiresIn: 10 });
    const { context, sleeps } = recordedContext();
    const manager = new LoginManager({ location: () => ({ path: authPath }), env: {}, context });
    const started = await manager.start(provider);
    if (!started.ok || started.login.status !== "pending") throw new Error("no start");
    expect(started.login.expiresAt).toBe(1_000_000 + 10_000);
    const settled = await manager.wait("gate", started.login.loginId, 30000);
    expect(settled).toMatchObject({ status: "failed", reason: "expired" });
    expect(sleeps).toEqual([4000, 4000, 4000]);
    expect(oauth.count("/oauth/token")).toBe(2);
  });
});

describe("stored logins refresh on demand", () => {
  it("refreshes a login within two minutes of expiry before the request", async () => {
    h = await startProviderHarness({ oauth: { accessExpiresIn: 60, refreshedExpiresIn: 3600 } });
    await login(h);
    expect(h.oauth.count("/oauth/token", "refresh_token")).toBe(0);
    await h.turn(GATE);
    const refresh = h.oauth.requests.find((request) => request.form["grant_type"] === "refresh_token");
    expect(refresh?.form).toEqual({ grant_type: "refresh_token", refresh_token: "refresh-1", client_id: "ze-test-client" });
    expect(h.model.requests.at(-1)?.credentialSha256).toBe(credentialHash("access-2"));
    expect(storedLogin(h)).toMatchObject({ access: "access-2", refresh: "refresh-2" });
    expect(h.oauth.count("/oauth/token", "refresh_token")).toBe(1);
  });

  it("uses a login far from expiry without refreshing", async () => {
    h = await startProviderHarness({ oauth: { accessExpiresIn: 3600 } });
    await login(h);
    await h.turn(GATE);
    expect(h.oauth.count("/oauth/token", "refresh_token")).toBe(0);
    expect(h.model.requests.at(-1)?.credentialSha256).toBe(credentialHash("access-1"));
  });

  it("refreshes once and retries once when the provider rejects the token with 401", async () => {
    h = await startProviderHarness({ oauth: { accessExpiresIn: 3600 } });
    await login(h);
    h.model.enqueue({ error: { status: 401 } });
    const turn = await h.turn(GATE);
    expect(turn.outcome?.kind).toBe("completed");
    expect(h.model.requests.map((request) => request.credentialSha256)).toEqual([credentialHash("access-1"), credentialHash("access-2")]);
    expect(h.oauth.count("/oauth/token", "refresh_token")).toBe(1);
  });

  it("does not retry a second 401 (one refresh, one retry)", async () => {
    h = await startProviderHarness({ oauth: { accessExpiresIn: 3600 } });
    await login(h);
    h.model.enqueue({ error: { status: 401 } }, { error: { status: 401 } });
    const turn = await h.turn(GATE);
    expect(turn.outcome?.kind).toBe("failed");
    expect(h.model.requests).toHaveLength(2);
    expect(h.oauth.count("/oauth/token", "refresh_token")).toBe(1);
  });

  it("stops refreshing after the provider rejects the refresh token, until the next login", async () => {
    h = await startProviderHarness({ oauth: { accessExpiresIn: 60 } });
    await login(h);
    h.oauth.refreshes.push("invalid_grant");
    const refused = await h.submit(GATE);
    expect(refused.response.status).toBe(503);
    expect(refused.error).toMatchObject({ _tag: "UnavailableError", reason: "model_unavailable" });
    expect((refused.error as { message: string }).message).toContain("`ze-harness provider login gate`");
    expect(await getProvider(h.api, "gate")).toMatchObject({ availability: { status: "unavailable", reason: "reconnect_required" }, connection: { status: "reconnect_required" } });
    expect((await h.submit(GATE)).response.status).toBe(503);
    expect(h.oauth.count("/oauth/token", "refresh_token")).toBe(1);
    expect(h.model.requests).toHaveLength(0);

    // A new login clears it.
    await login(h);
    expect(await getProvider(h.api, "gate")).toMatchObject({ availability: { status: "available" }, connection: { status: "ready" } });
  });

  it("runs one refresh per provider at a time and reuses a rotation already in storage", async () => {
    const oauth = await startOAuthServer({ accessExpiresIn: 3600 });
    const dir = mkdtempSync(join(tmpdir(), "ze-refresh-"));
    cleanups.push(() => oauth.close(), () => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, "auth.json");
    const entry = { type: "oauth", access: "old-access", refresh: "refresh-0", expires: Date.now() + 30_000, tokenEndpoint: `${oauth.url}/oauth/token`, clientId: "ze-test-client" };
    writeFileSync(path, JSON.stringify({ gate: entry }), { mode: 0o600 });
    const refresher = new CredentialRefresher(() => ({ path }));
    const release = oauth.holdRefreshes();
    const both = Promise.all([refresher.refresh("gate"), refresher.refresh("gate", { force: true, rejectedAccess: "old-access" })]);
    await oauth.waitFor((requests) => requests.length === 1);
    release();
    expect(await both).toEqual(["refreshed", "refreshed"]);
    expect(oauth.count("/oauth/token", "refresh_token")).toBe(1);
    expect(JSON.parse(readFileSync(path, "utf8")).gate).toMatchObject({ access: "access-1", refresh: "refresh-1" });
    // Another process rotated the token meanwhile: a 401 on the old one reuses the stored one.
    expect(await refresher.refresh("gate", { force: true, rejectedAccess: "old-access" })).toBe("rotated_elsewhere");
    expect(oauth.count("/oauth/token", "refresh_token")).toBe(1);
  });

  it("completes a refresh and its write even when the requesting call is cancelled", async () => {
    const oauth = await startOAuthServer({ accessExpiresIn: 3600 });
    const dir = mkdtempSync(join(tmpdir(), "ze-refresh-"));
    cleanups.push(() => oauth.close(), () => rmSync(dir, { recursive: true, force: true }));
    const env = { HOME: dir, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir };
    const path = join(dir, "ze-harness", "auth.json");
    mkdirSync(join(dir, "ze-harness"), { recursive: true, mode: 0o700 });
    writeFileSync(path, JSON.stringify({ gate: { type: "oauth", access: "old-access", refresh: "refresh-0", expires: Date.now() + 30_000, tokenEndpoint: `${oauth.url}/oauth/token` } }), { mode: 0o600 });
    const gateway = createModelGateway(
      { providers: { gate: { definition: { baseURL: "http://127.0.0.1:9/v1", protocol: "chat", models: { m: {} }, login: { device: { discoveryURL: `${oauth.url}/auth/device` } } } } } } as never,
      env,
    );
    const release = oauth.holdRefreshes();
    const controller = new AbortController();
    const stream = gateway.stream({ model: "gate/m", messages: [], tools: [], signal: controller.signal })[Symbol.asyncIterator]();
    const first = stream.next().catch((error: unknown) => error);
    await oauth.waitFor((requests) => requests.length === 1);
    controller.abort(new Error("turn cancelled"));
    release();
    await first;
    await oauth.waitFor(() => JSON.parse(readFileSync(path, "utf8")).gate.access === "access-1");
    expect(JSON.parse(readFileSync(path, "utf8")).gate).toMatchObject({ access: "access-1", refresh: "refresh-1" });
  });
});

describe("login declarations", () => {
  it("openai (and a named entry based on it) offers the ChatGPT login; definitions are checked strictly", () => {
    const set = resolveProviders({ openai: true, work: { base: "openai" }, openrouter: true });
    if (!set.ok) throw new Error("did not resolve");
    expect(loginMethodsOf(set.value.provider("openai")!)).toEqual([{ id: "chatgpt", label: "ChatGPT account" }]);
    expect(loginMethodsOf(set.value.provider("work")!)).toEqual([{ id: "chatgpt", label: "ChatGPT account" }]);
    expect(loginMethodsOf(set.value.provider("openrouter")!)).toEqual([]);
    const definition = (login: unknown) => ({ x: { definition: { baseURL: "http://127.0.0.1:1/v1", protocol: "chat", models: { m: {} }, login } } });
    for (const login of [{ module: "nope" }, { device: {} }, { device: { discoveryURL: "/d", extra: 1 } }, { device: { discoveryURL: "/d" }, module: "codex" }, { device: { discoveryURL: "/d", notice: { text: "t", links: [{ label: "l", url: "not a url" }] } } }]) {
      const result = resolveProviders(definition(login) as never);
      expect(result.ok, JSON.stringify(login)).toBe(false);
      if (!result.ok) expect(result.error).toMatchObject({ _tag: "ProviderInvalid" });
    }
    expect(resolveProviders(definition({ device: { discoveryURL: "/auth/device" } }) as never).ok).toBe(true);
  });
});
