// OAuth for remote MCP servers against a loopback authorization server in front of a streamable
// HTTP MCP server: authorize → callback → Tool call → refresh (on expiry and after a 401) → forget.
import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { callbackUrl, listenForCallbacks, type CallbackListener, type McpHost } from "../../services/mcp/index.js";
import { everything, host, remote, toolContext } from "./support.js";
import { startOAuthServer, type OAuthTestServer } from "./oauth-server.js";

let as: OAuthTestServer;
let listener: CallbackListener;
let authPath: string;
let clock: number;

beforeEach(async () => {
  as = await startOAuthServer();
  listener = await listenForCallbacks(0);
  authPath = join(mkdtempSync(join(tmpdir(), "ze-mcp-oauth-")), "state", "auth.json");
  clock = Date.UTC(2026, 0, 1);
});
afterEach(async () => {
  await listener.close();
  await as.close();
});

function secureHost(extra: Partial<Parameters<typeof host>[0]> = {}): McpHost {
  return host({
    env: { PATH: process.env["PATH"] ?? "", TEAM: "blue" },
    authFile: { path: authPath },
    callbackPort: listener.port,
    now: () => clock,
    servers: [
      remote("secure", as.mcpUrl, { reconnect: { kind: "manual" } }, { oauth: { kind: "oauth", reference: "secure-oauth" }, headers: { "x-team": { kind: "environment", reference: "TEAM" } } }),
      everything({ id: "plain", name: "plain" }),
    ],
    ...extra,
  });
}

/** Follows the authorization URL like a browser that approves, and returns what the loopback listener received. */
async function approve(authorizationUrl: string) {
  const received = listener.next("secure");
  const answer = await fetch(authorizationUrl, { redirect: "manual" });
  expect(answer.status).toBe(302);
  const page = await fetch(answer.headers.get("location")!);
  expect(page.status).toBe(200);
  expect(await page.text()).toContain("Authorization received");
  return received;
}

const secureStatus = (mcp: McpHost) => mcp.servers().find((server) => server.name === "secure")!.status;

async function whoami(mcp: McpHost): Promise<string> {
  const tool = mcp.tools().find((candidate) => candidate.id === "secure_whoami");
  if (!tool) throw new Error(`secure_whoami is not offered (${JSON.stringify(secureStatus(mcp))})`);
  const out = await tool.execute({}, toolContext());
  return String(out.result.value);
}

async function authorized(mcp: McpHost): Promise<void> {
  const start = await mcp.authorize("secure");
  expect(await mcp.completeAuthorization("secure", await approve(start.authorizationUrl))).toMatchObject({ kind: "authorized" });
}

describe("MCP OAuth", () => {
  it("authorizes, calls a Tool, refreshes on expiry and after a 401, and forgets", async () => {
    mkdirSync(dirname(authPath), { recursive: true });
    writeFileSync(authPath, JSON.stringify({ openai: { type: "api", key: "sk-keep-me" } }));
    const mcp = secureHost();
    await mcp.start();
    // Without a credential nothing is sent to the server.
    expect(secureStatus(mcp)).toMatchObject({ state: "failed", reason: "authorization_required", retrying: false });
    expect(as.mcpAuthorizations).toEqual([]);
    expect(await mcp.credentialStatus("secure")).toEqual({ kind: "absent", generation: 0 });

    const start = await mcp.authorize("secure");
    expect(start.status).toEqual({ kind: "pending", generation: 1 });
    const url = new URL(start.authorizationUrl);
    expect(url.origin + url.pathname).toBe(`${as.base}/authorize`);
    expect(url.searchParams.get("code_challenge_method")).toBe("S256");
    expect(url.searchParams.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(url.searchParams.get("client_id")).toBe("client-1");
    expect(url.searchParams.get("redirect_uri")).toBe(callbackUrl(listener.port, "secure"));
    expect(url.searchParams.get("resource")).toBe(as.mcpUrl);
    expect(url.searchParams.get("scope")).toBe("mcp");
    expect(as.registrations).toHaveLength(1);
    expect(as.registrations[0]).toMatchObject({ redirect_uris: [callbackUrl(listener.port, "secure")], token_endpoint_auth_method: "none" });
    // The same request resumes the pending authorization.
    expect(await mcp.authorize("secure")).toEqual(start);
    expect(await mcp.credentialStatus("secure")).toEqual({ kind: "pending", generation: 1 });

    const callback = await approve(start.authorizationUrl);
    expect(callback).toMatchObject({ kind: "success", issuer: as.base });
    const status = await mcp.completeAuthorization("secure", callback);
    expect(status).toEqual({ kind: "authorized", generation: 1 });
    expect(as.tokenRequests.map((form) => form.get("grant_type"))).toEqual(["authorization_code"]);

    // Stored in auth.json, owner-only, beside the entries that were there.
    expect(statSync(authPath).mode & 0o777).toBe(0o600);
    const stored = JSON.parse(readFileSync(authPath, "utf8"));
    expect(stored.openai).toEqual({ type: "api", key: "sk-keep-me" });
    expect(stored["mcp:secure-oauth"]).toMatchObject({ type: "mcp-oauth", serverId: "secure", generation: 1, tokens: { access_token: "access-1" } });
    expect(JSON.stringify(await mcp.credentialStatus("secure"))).not.toContain("access-");

    // The server was reconnected with the credential; the configured header travels too.
    expect(secureStatus(mcp).state).toBe("connected");
    expect(await whoami(mcp)).toBe("token=access-1 team=blue");

    // Within two minutes of expiry the token is refreshed before use.
    clock += 2 * 3600 * 1000;
    expect(await whoami(mcp)).toBe("token=access-2 team=blue");
    expect(as.tokenRequests.at(-1)?.get("grant_type")).toBe("refresh_token");
    expect(as.tokenRequests.at(-1)?.get("refresh_token")).toBe("refresh-1");

    // A 401 forces one refresh and a retry.
    as.revokeAccess("access-2");
    expect(await whoami(mcp)).toBe("token=access-3 team=blue");
    expect(as.mcpAuthorizations.filter((header) => header === "Bearer access-2").length).toBeGreaterThan(0);

    const forgotten = await mcp.forgetCredential("secure");
    expect(forgotten).toEqual({ generation: 1, revocation: "completed" });
    expect(as.revocations).toEqual(["refresh-3"]);
    expect(await mcp.credentialStatus("secure")).toEqual({ kind: "forgotten", generation: 1, revocation: "completed" });
    expect(secureStatus(mcp)).toMatchObject({ state: "failed", reason: "authorization_required" });
    expect(mcp.tools().some((tool) => tool.id === "secure_whoami")).toBe(false);
    const after = JSON.parse(readFileSync(authPath, "utf8"));
    expect(after["mcp:secure-oauth"].tokens).toBeUndefined();
    expect(after.openai).toEqual({ type: "api", key: "sk-keep-me" });
  });

  it("marks the credential expired when the refresh token is rejected", async () => {
    const mcp = secureHost();
    await authorized(mcp);
    expect(await whoami(mcp)).toBe("token=access-1 team=blue");
    as.rejectRefresh = true;
    clock += 2 * 3600 * 1000;
    await expect(whoami(mcp)).rejects.toMatchObject({ _tag: "ToolFailure" });
    expect(await mcp.credentialStatus("secure")).toEqual({ kind: "expired", generation: 1, expiredAtEpochMs: clock });
    await mcp.until((h) => h.servers().find((server) => server.name === "secure")!.status.state === "failed");
    expect(secureStatus(mcp)).toMatchObject({ state: "failed", reason: "authorization_required" });
    expect(mcp.tools().some((tool) => tool.id === "secure_whoami")).toBe(false);
  });

  it("checks the callback's state and issuer, and cancels pending authorizations", async () => {
    const mcp = secureHost();
    const start = await mcp.authorize("secure");
    const callback = await approve(start.authorizationUrl);
    if (callback.kind !== "success") throw new Error("expected success");
    await expect(mcp.completeAuthorization("secure", { ...callback, state: "forged" })).rejects.toMatchObject({
      body: { _tag: "ValidationError", message: expect.stringContaining("(/callback/state)") },
    });
    await expect(mcp.completeAuthorization("secure", { ...callback, issuer: "https://evil.example" })).rejects.toMatchObject({
      body: { _tag: "ValidationError", message: expect.stringContaining("(/callback/issuer)") },
    });
    const { issuer: _omitted, ...withoutIssuer } = callback;
    await expect(mcp.completeAuthorization("secure", withoutIssuer)).rejects.toMatchObject({ body: { _tag: "ValidationError", message: expect.stringContaining("required") } });
    await expect(mcp.cancelAuthorization("secure", 7)).rejects.toMatchObject({ body: { _tag: "ConflictError" } });
    expect(await mcp.cancelAuthorization("secure", 1)).toEqual({ kind: "absent", generation: 1 });
    await expect(mcp.completeAuthorization("secure", callback)).rejects.toMatchObject({ body: { _tag: "ConflictError" } });
    expect(as.tokenRequests).toEqual([]);

    const again = await mcp.authorize("secure");
    expect(again.status).toEqual({ kind: "pending", generation: 2 });
    // The registered client is reused for the same redirect address.
    expect(as.registrations).toHaveLength(1);
    const state = new URL(again.authorizationUrl).searchParams.get("state")!;
    expect(await mcp.completeAuthorization("secure", { kind: "denied", state, error: "access_denied", issuer: as.base })).toEqual({ kind: "absent", generation: 2 });
  });

  it("uses a pre-registered public client instead of registering one", async () => {
    const mcp = secureHost();
    const start = await mcp.authorize("secure", { client: { clientId: "my-public-client", tokenEndpointAuthMethod: "none" } });
    expect(new URL(start.authorizationUrl).searchParams.get("client_id")).toBe("my-public-client");
    expect(as.registrations).toEqual([]);
    await expect(mcp.authorize("secure", { authorizationServer: "https://other.example" })).rejects.toMatchObject({
      body: { _tag: "ValidationError", message: expect.stringContaining("(/authorizationServer)") },
    });
  });

  it("answers 404 for an unknown server and 409 for a server without OAuth", async () => {
    const mcp = secureHost();
    await expect(mcp.credentialStatus("nobody")).rejects.toMatchObject({ body: { _tag: "NotFoundError", resource: "mcp_server" } });
    await expect(mcp.authorize("plain")).rejects.toMatchObject({ body: { _tag: "ConflictError" } });
  });
});
