// Attacks on the gateway's MCP OAuth callback `GET /oauth/callback/:server` (no token by design),
// in workerd through miniflare with the local OAuth authorization server (tests/mcp/oauth-server.ts):
// the same redirect delivered twice at once (a double-clicked link, or anyone holding the URL)
// while the first code exchange is still in flight. The state is single-use from the moment a
// callback takes it: the second delivery is refused without contacting the authorization server,
// and the credential the first completes stays authorized (before, the second exchange's
// invalid_grant saved the entry without tokens over the authorized one).
import { randomUUID } from "node:crypto";
import type { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sdk, type ZeClient } from "../../clients/index.js";
import type { McpServer } from "../../services/config/types.js";
import { startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { startOAuthServer, type OAuthTestServer } from "../mcp/oauth-server.js";
import { freePort, remote } from "../mcp/support.js";
import { ok } from "../support/calls.js";
import { networkClient } from "../support/harness.js";
import { testProviderConfig } from "../support/model.js";
import { bundle, miniflare } from "./support.js";

let model: TestModel;
let oauthServer: OAuthTestServer;
let mf: Miniflare;
let url: string;
let client: ZeClient["client"];

beforeAll(async () => {
  let script: string;
  [model, oauthServer, script] = await Promise.all([startTestModel(), startOAuthServer(), bundle("worker/index.ts")]);
  const port = await freePort();
  const servers: McpServer[] = [remote("secure", oauthServer.mcpUrl, {}, { oauth: { kind: "oauth", reference: "secure-login" } })];
  mf = miniflare(script, {
    durableObjects: { HARNESS_SERVERS: { className: "HarnessServerObject", useSQLite: true } },
    bindings: {
      HARNESS_PROVIDERS: JSON.stringify(testProviderConfig(model)),
      HARNESS_MCP: JSON.stringify(servers),
      HARNESS_MCP_CALLBACK_BASE_URL: `http://127.0.0.1:${port}`,
    },
    host: "127.0.0.1",
    port,
  });
  url = (await mf.ready).origin;
  client = networkClient(url).client;
}, 60_000);

afterAll(async () => {
  await mf?.dispose();
  await Promise.all([model?.close(), oauthServer?.close()]);
});

describe("the OAuth callback route under attack (workerd)", () => {
  it("takes a state once: a second delivery during the code exchange is refused and the credential stays authorized", async () => {
    const sessionId = randomUUID();
    await ok(sdk.createSession({ client, path: { server: "oauth", sessionId }, body: {} }));
    const path = { server: "oauth", sessionId, serverName: "secure" };
    const started = await ok(sdk.startMcpCredential({ client, path, body: {} }));
    const redirected = await fetch(started.authorizationUrl, { redirect: "manual" });
    const callback = new URL(redirected.headers.get("location")!);

    // The first delivery's code exchange is held at the authorization server.
    let release!: () => void;
    let held!: () => void;
    const holding = new Promise<void>((resolve) => (held = resolve));
    oauthServer.holdCodeExchange = { until: new Promise<void>((resolve) => (release = resolve)), onHold: () => held() };
    const first = fetch(callback);
    await holding;
    const exchanges = oauthServer.tokenRequests.filter((form) => form.get("grant_type") === "authorization_code").length;

    // The replay while it is in flight: refused, the authorization server not asked again.
    let second: Response;
    let secondHtml: string;
    try {
      second = await fetch(callback);
      secondHtml = await second.text();
    } finally {
      release();
    }
    const page = await first;
    expect(second.status).toBe(409);
    expect(secondHtml).toContain("already being completed");
    expect(secondHtml).not.toContain(callback.searchParams.get("code")!);
    expect(secondHtml).not.toContain(callback.searchParams.get("state")!);
    expect(oauthServer.tokenRequests.filter((form) => form.get("grant_type") === "authorization_code").length).toBe(exchanges);

    expect(page.status).toBe(200);
    expect(await page.text()).toContain("Authorization received");
    expect((await ok(sdk.getMcpCredential({ client, path }))).status).toEqual({ kind: "authorized", generation: 1 });
    // And afterwards the state is spent.
    const again = await fetch(callback);
    expect(again.status).toBe(404);
    await again.body?.cancel();
  });
});
