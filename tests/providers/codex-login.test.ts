// The `openai` ChatGPT login (the `codex` login module) against a local stand-in issuer
// (`ZE_HARNESS_CODEX_ISSUER`) and a stand-in Codex deployment (`ZE_HARNESS_CODEX_BASE_URL`, the
// scripted test model): device code, approval, the authorization-code exchange with the issuer's
// PKCE verifier, and requests of that login going to the Codex Responses endpoint with the
// ChatGPT account header — not to a configured base URL.
import { afterEach, describe, expect, it } from "vitest";
import { connectProviderKey, getProvider, startProviderLogin, waitProviderLogin } from "../../clients/index.js";
import { credentialHash } from "../../tools/test-model/index.js";
import { startProviderHarness, type ProviderHarness } from "./provider-harness.js";

let h: ProviderHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** openai with a configured base URL; the Codex issuer and deployment point at the stand-ins. */
const codexHarness = (): Promise<ProviderHarness> =>
  startProviderHarness({
    providers: (model) => ({ openai: { options: { baseURL: `${model.url}/configured/v1` } } }),
    env: (model, oauth) => ({ ZE_HARNESS_CODEX_ISSUER: oauth.url, ZE_HARNESS_CODEX_BASE_URL: `${model.url}/backend-api/codex` }),
  });

describe("openai ChatGPT login", () => {
  it("signs in with a device code and sends requests to the Codex deployment with the account header", async () => {
    h = await codexHarness();
    expect((await getProvider(h.api, "openai")).logins).toEqual([{ id: "chatgpt", label: "ChatGPT account" }]);
    h.oauth.polls.push("pending", "approve");
    const started = await startProviderLogin(h.api, "openai", { methodId: "chatgpt" });
    expect(started).toMatchObject({ status: "pending", methodId: "chatgpt", prompt: { kind: "device", verificationUrl: `${h.oauth.url}/codex/device`, userCode: "CODX-1234" } });
    const settled = await waitProviderLogin(h.api, "openai", started.loginId);
    expect(settled).toMatchObject({ status: "connected", connection: { providerId: "openai", method: "oauth", status: "ready" } });

    expect(h.oauth.requests.find((request) => request.path === "/api/accounts/deviceauth/usercode")?.json).toEqual({ client_id: "app_EMoamEEZ73f0CkXaXp7hrann" });
    expect(h.oauth.requests.find((request) => request.form["grant_type"] === "authorization_code")?.form).toEqual({
      grant_type: "authorization_code",
      code: "auth-code-1",
      redirect_uri: `${h.oauth.url}/deviceauth/callback`,
      client_id: "app_EMoamEEZ73f0CkXaXp7hrann",
      code_verifier: "verifier-1",
    });
    const stored = JSON.parse(h.authText()!)["openai"];
    expect(stored).toMatchObject({ type: "oauth", accountId: "acct-test-1", login: "chatgpt", tokenEndpoint: `${h.oauth.url}/oauth/token`, clientId: "app_EMoamEEZ73f0CkXaXp7hrann" });

    const turn = await h.turn("openai/gpt-4.1");
    expect(turn.outcome?.kind).toBe("completed");
    const request = h.model.requests.at(-1)!;
    expect(request.path).toBe("/backend-api/codex/responses");
    expect(request.protocol).toBe("responses");
    expect(request.headers["chatgpt-account-id"]).toBe("acct-test-1");
    expect(request.credentialSha256).toBe(credentialHash(h.oauth.issued[0]!));
  });

  it("switching to an API key sends requests to the configured base URL again", async () => {
    h = await codexHarness();
    h.oauth.polls.push("approve");
    const started = await startProviderLogin(h.api, "openai");
    await waitProviderLogin(h.api, "openai", started.loginId);
    await connectProviderKey(h.api, "openai", { apiKey: "sk-openai-api-key-123" });
    await h.turn("openai/gpt-4.1");
    const request = h.model.requests.at(-1)!;
    expect(request.path).toBe("/configured/v1/responses");
    expect(request.headers["chatgpt-account-id"]).toBeUndefined();
    expect(request.credentialSha256).toBe(credentialHash("sk-openai-api-key-123"));
  });
});

