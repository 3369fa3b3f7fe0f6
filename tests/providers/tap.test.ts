// TAP and `via` against local stand-ins: the scripted test model plays the TAP Gateway
// (ZE_HARNESS_TAP_BASE_URL = <model>/v1/credits, so `via` requests reach <model>/v1/via/<id>/…)
// and the local OAuth server plays the TAP issuer's device flow (ZE_HARNESS_TAP_ISSUER).
// Covered: the `tap` login with the TAP notice, `provider list` showing `"source": "via", "via":
// "tap"`, a Turn of a `via: "tap"` provider going through the gateway with the TAP sign-in, the
// 401 refresh-and-retry of the TAP login, errors naming TAP, and bad `via` configurations.
import { afterEach, describe, expect, it } from "vitest";
import { getProvider, listProviders, startProviderLogin, waitProviderLogin } from "../../clients/index.js";
import { TAP_NOTICE, resolveProviders } from "../../services/providers/index.js";
import { credentialHash } from "../../tools/test-model/index.js";
import { startProviderHarness, type ProviderHarness } from "./provider-harness.js";

let h: ProviderHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const ROUTED = "openrouter/vendor/m";

function startTap(): Promise<ProviderHarness> {
  return startProviderHarness({
    env: (model, oauth) => ({ ZE_HARNESS_TAP_BASE_URL: `${model.url}/v1/credits`, ZE_HARNESS_TAP_ISSUER: oauth.url, OPENROUTER_API_KEY: "sk-local-openrouter-key-never-used" }),
    providers: () => ({
      tap: true,
      openrouter: { via: "tap", definition: { models: { "vendor/m": { displayName: "Vendor M", limits: { contextUnits: 100000, outputUnits: 4096 } } } } },
    }),
  });
}

async function signIn(harness: ProviderHarness): Promise<void> {
  harness.oauth.polls.push("approve");
  const started = await startProviderLogin(harness.api, "tap");
  if (started.status !== "pending") throw new Error(`login did not start: ${JSON.stringify(started)}`);
  expect(started).toMatchObject({ methodId: "tap", prompt: { kind: "device", userCode: "WDJB-MJHT" } });
  const settled = await waitProviderLogin(harness.api, "tap", started.loginId);
  expect(settled).toMatchObject({ status: "connected", connection: { providerId: "tap", method: "oauth", status: "ready" } });
}

describe("the tap login", () => {
  it("offers the TAP sign-in with the TAP app's notice, found at the issuer's well-known descriptor", async () => {
    h = await startTap();
    const tap = await getProvider(h.api, "tap");
    expect(tap).toMatchObject({ id: "tap", displayName: "TAP", availability: { status: "unavailable", reason: "missing_credentials" }, source: "none" });
    expect(tap.logins).toEqual([
      {
        id: "tap",
        label: "TAP account",
        notice: {
          text: "By continuing, you acknowledge Zephyr Cloud's Terms of Service and Privacy Policy, and agree to receive occasional product emails and notifications.",
          links: [
            { label: "Terms of Service", url: "https://zephyr-cloud.io/terms" },
            { label: "Privacy Policy", url: "https://zephyr-cloud.io/privacy" },
          ],
        },
      },
    ]);
    expect(tap.logins[0]?.notice).toEqual(JSON.parse(JSON.stringify(TAP_NOTICE)));
    await signIn(h);
    expect(h.oauth.requests[0]).toMatchObject({ method: "GET", path: "/.well-known/oauth-authorization-server" });
    const stored = JSON.parse(h.authText()!)["tap"];
    expect(stored).toMatchObject({ type: "oauth", access: "access-1", login: "tap" });
    expect(await getProvider(h.api, "tap")).toMatchObject({ availability: { status: "available" }, source: "stored", connection: { method: "oauth" } });
  });
});

describe("via: tap", () => {
  it("lists the routed provider as source via, unavailable until signed in to TAP, and refuses its model naming TAP", async () => {
    h = await startTap();
    const routed = (await listProviders(h.api)).find((provider) => provider.id === "openrouter");
    // The local OPENROUTER_API_KEY is not what authenticates it: the key stored in TAP is.
    expect(routed).toEqual({
      id: "openrouter",
      displayName: expect.any(String),
      availability: { status: "unavailable", reason: "missing_credentials" },
      source: "via",
      via: "tap",
      methods: [],
      logins: [],
    });
    const refused = await h.submit(ROUTED);
    expect(refused.response.status).toBe(503);
    expect(refused.error).toMatchObject({ _tag: "UnavailableError", reason: "model_unavailable" });
    expect(JSON.stringify(refused.error)).toContain("you are not signed in to TAP: run `ze-harness provider login tap`");
    expect(h.model.requests).toHaveLength(0);
  });

  it("sends the routed provider's requests through the TAP Gateway with the TAP sign-in once signed in", async () => {
    h = await startTap();
    await signIn(h);
    expect(await getProvider(h.api, "openrouter")).toMatchObject({ availability: { status: "available" }, source: "via", via: "tap" });
    // The TAP tokens stay in auth.json: never in a provider summary.
    const listed = JSON.stringify(await listProviders(h.api));
    for (const token of ["access-1", "refresh-1", "device-code"]) expect(listed).not.toContain(token);
    const turn = await h.turn(ROUTED);
    expect(turn.outcome?.kind).toBe("completed");
    const request = h.model.requests.at(-1)!;
    expect(request.path).toBe("/v1/via/openrouter/chat/completions");
    expect(request.credentialSha256).toBe(credentialHash("access-1"));
    expect(request.credentialSha256).not.toBe(credentialHash("sk-local-openrouter-key-never-used"));
    expect((request.body as { model?: string }).model).toBe("vendor/m");
  });

  it("refreshes the TAP sign-in once and retries when the gateway rejects it with 401", async () => {
    h = await startTap();
    await signIn(h);
    h.model.enqueue({ error: { status: 401 } });
    const turn = await h.turn(ROUTED);
    expect(turn.outcome?.kind).toBe("completed");
    expect(h.model.requests.map((request) => request.credentialSha256)).toEqual([credentialHash("access-1"), credentialHash("access-2")]);
    expect(h.oauth.count("/oauth/token", "refresh_token")).toBe(1);
  });

  it("fails a Turn whose key TAP does not hold with an error naming TAP, never the gateway's text", async () => {
    h = await startTap();
    await signIn(h);
    h.model.enqueue({ error: { status: 404, body: { error: { code: "provider_key_missing", message: "gateway text that must never be shown" } } } });
    const turn = await h.turn(ROUTED);
    expect(turn.outcome?.kind).toBe("failed");
    const message = turn.outcome?.kind === "failed" ? turn.outcome.fault.message : "";
    expect(message).toContain("No openrouter key is stored in TAP");
    expect(JSON.stringify(turn)).not.toContain("gateway text");
  });

  it("names TAP when the gateway fails another way", async () => {
    h = await startTap();
    await signIn(h);
    h.model.enqueue({ error: { status: 400 } });
    const turn = await h.turn(ROUTED);
    const message = turn.outcome?.kind === "failed" ? turn.outcome.fault.message : "";
    expect(message).toContain("openrouter/vendor/m (through TAP):");
  });
});

describe("via configuration", () => {
  const error = (providers: Record<string, unknown>, env: Record<string, string> = {}) => {
    const result = resolveProviders(providers as never, { env });
    return result.ok ? undefined : result.error;
  };

  it("refuses a via that names no configured provider, a provider that cannot hold keys, itself, or a bad TAP URL", () => {
    expect(error({ openrouter: { via: "tap" } })).toMatchObject({ _tag: "ProviderInvalid", providerId: "openrouter", path: "/providers/openrouter/via", message: expect.stringContaining('"tap" is not a configured provider') });
    expect(error({ openai: true, openrouter: { via: "openai" } })).toMatchObject({ path: "/providers/openrouter/via", message: expect.stringContaining("cannot hold provider keys (only tap can)") });
    expect(error({ tap: { via: "tap" } })).toMatchObject({ path: "/providers/tap/via", message: "a provider cannot hold its own key" });
    expect(error({ tap: true }, { ZE_HARNESS_TAP_BASE_URL: "ftp://gateway.example" })).toMatchObject({ providerId: "tap", message: expect.stringContaining("ZE_HARNESS_TAP_BASE_URL") });
  });

  it("places the tap preset at the default gateway, discovering its models, and routes via its origin", () => {
    const result = resolveProviders({ tap: true, openrouter: { via: "tap", definition: { models: { "x/y": {} } } } }, { env: {} });
    if (!result.ok) throw new Error(result.error.message);
    const tap = result.value.provider("tap")!;
    expect(tap).toMatchObject({ baseURL: "https://gateway.theaiplatform.app/v1/credits", protocol: "chat", discovery: true, login: { module: "tap" } });
    expect(result.value.model("openrouter/x/y")).toMatchObject({
      endpoint: "https://gateway.theaiplatform.app/v1/via/openrouter/chat/completions",
      authentication: { kind: "bearer" },
      via: { providerId: "tap", displayName: "TAP" },
    });
  });
});
