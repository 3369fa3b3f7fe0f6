// MCP in the Worker's Turns, in workerd through miniflare: the bundled Worker with the servers of
// the `HARNESS_MCP` variable — a real @modelcontextprotocol/server-everything over Streamable
// HTTP, a local stdio entry, and a remote server behind the local OAuth authorization server
// (tests/mcp/oauth-server.ts). A Turn whose scripted model calls `web_echo` asks its permission
// (answered over the API) and gets the server's answer; the Session MCP routes list the servers
// (`web` connected, the stdio entry `failed`/`spawn_failed`, whose read answers the reference's
// sentence); a bad HARNESS_MCP is a typed 503 naming the variable, never its value. OAuth: the
// server-wide credential is authorized through `mcp-credentials/:name/authorize`, completed
// browserlessly by GETting the callback URL at the gateway's `GET /oauth/callback/:server`, the
// OAuth server's tool then works in a Turn of another Session of the same server, and a token
// the OAuth server revoked is refreshed after its 401.
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sdk, type TurnStreamEvent, type ZeClient } from "../../clients/index.js";
import type { McpServer } from "../../services/config/types.js";
import { startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { startOAuthServer, type OAuthTestServer } from "../mcp/oauth-server.js";
import { everythingHttp, freePort, remote } from "../mcp/support.js";
import { failure, ok } from "../support/calls.js";
import { networkClient } from "../support/harness.js";
import { testProviderConfig } from "../support/model.js";
import { readSse } from "../support/terminals.js";
import { bundle, miniflare } from "./support.js";

let model: TestModel;
let everything: Awaited<ReturnType<typeof everythingHttp>>;
let oauthServer: OAuthTestServer;
let script: string;
let mf: Miniflare;
let url: string;
let client: ZeClient["client"];
let persist: string;
let port: number;

const servers = (): McpServer[] => [
  remote("web", everything.endpoint),
  { kind: "local", id: "local", name: "local", transport: { kind: "stdio", command: process.execPath, arguments: ["-e", "setInterval(() => {}, 1000)"] } },
  remote("secure", oauthServer.mcpUrl, {}, { oauth: { kind: "oauth", reference: "secure-login" } }),
];

const LOCAL_STDIO = "Local stdio is unavailable because Workers cannot spawn local processes; the Worker does not emulate stdio or silently fall back to HTTP";

async function start(port: number, extra: Record<string, string> = {}, directory: string = persist): Promise<{ mf: Miniflare; url: string }> {
  const instance = miniflare(script, {
    durableObjects: { HARNESS_SERVERS: { className: "HarnessServerObject", useSQLite: true } },
    durableObjectsPersist: directory,
    bindings: {
      HARNESS_PROVIDERS: JSON.stringify(testProviderConfig(model)),
      HARNESS_PERMISSIONS: JSON.stringify([{ action: "web_echo", resource: "*", effect: "ask" }]),
      HARNESS_MCP: JSON.stringify(servers()),
      HARNESS_MCP_CALLBACK_BASE_URL: `http://127.0.0.1:${port}`,
      ...extra,
    },
    host: "127.0.0.1",
    port,
  });
  return { mf: instance, url: (await instance.ready).origin };
}

beforeAll(async () => {
  [model, everything, oauthServer, script] = await Promise.all([startTestModel(), everythingHttp(), startOAuthServer(), bundle("worker/index.ts")]);
  persist = mkdtempSync(join(tmpdir(), "zh-worker-mcp-"));
  port = await freePort();
  ({ mf, url } = await start(port));
  client = networkClient(url).client;
}, 60_000);

afterAll(async () => {
  await mf?.dispose();
  await Promise.all([model?.close(), everything?.close(), oauthServer?.close()]);
  if (persist) rmSync(persist, { recursive: true, force: true });
});

async function createSession(server: string): Promise<string> {
  const sessionId = randomUUID();
  await ok(sdk.createSession({ client, path: { server, sessionId }, body: {} }));
  return sessionId;
}

async function queue(server: string, sessionId: string, text: string): Promise<string> {
  const turnId = randomUUID();
  await ok(sdk.submitPrompt({ client, path: { server, sessionId }, headers: { "x-ze-harness-client-id": "worker-mcp-test" }, body: { delivery: "queue", turnId, prompt: [{ type: "text", text }] } as never }));
  return turnId;
}

async function watch(server: string, sessionId: string, turnId: string, stop: (event: TurnStreamEvent) => boolean): Promise<TurnStreamEvent[]> {
  const path = `/v1/servers/${server}/sessions/${sessionId}/turns/${turnId}/events`;
  return readSse<TurnStreamEvent>(await fetch(`${url}${path}?afterRevision=0`), path, stop);
}

/** The status of a GET with its own Host header (fetch cannot set Host). */
function statusWithHost(host: string, path: string): Promise<number> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: target.hostname, port: target.port, method: "GET", path, headers: { host } }, (response) => {
      response.resume();
      response.on("end", () => resolve(response.statusCode!));
    });
    request.on("error", reject);
    request.end();
  });
}

const finished = (event: TurnStreamEvent): boolean => event.type === "turn.finished";

describe("MCP in the Worker's Turns (workerd)", () => {
  it("offers HARNESS_MCP's servers to a Turn: web_echo asks its permission and answers; the catalog lists each server's state", async () => {
    const sessionId = await createSession("mcp");
    model.enqueue({ events: [{ type: "tool_call", name: "web_echo", arguments: { message: "hello from a Turn" } }] }, { events: [{ type: "text", text: "Echoed." }] });
    const before = model.requests.length;
    const turnId = await queue("mcp", sessionId, "Echo something");
    const asked = (await watch("mcp", sessionId, turnId, (event) => event.type === "turn.approval.requested" || finished(event))).at(-1)!;
    expect(asked).toMatchObject({ type: "turn.approval.requested", request: { action: "web_echo", toolId: "web_echo" } });
    // The first model request offered the server's Tools.
    const offered = JSON.stringify(model.requests[before]!.body);
    expect(offered).toContain("web_echo");
    expect(offered).toContain("web_get-sum");
    const requestId = (asked as Extract<TurnStreamEvent, { type: "turn.approval.requested" }>).request.id;
    await ok(sdk.replyPermission({ client, path: { server: "mcp", sessionId, permissionRequestId: requestId }, body: { reply: "once" } }));
    const events = await watch("mcp", sessionId, turnId, finished);
    expect(events.at(-1)).toMatchObject({ type: "turn.finished", outcome: { kind: "completed", text: "Echoed." } });
    expect(JSON.stringify(model.requests.at(-1)!.body)).toContain("Echo: hello from a Turn");

    const { catalog } = await ok(sdk.getMcpCatalog({ client, path: { server: "mcp", sessionId } }));
    expect(catalog.servers.map((server) => [server.name, server.origin])).toEqual([["web", "host"]]);
    expect(catalog.servers[0]!.catalog.tools.map((tool) => tool.name)).toContain("echo");
    expect(catalog.unavailable).toEqual([
      { origin: "host", serverId: "local", name: "local", order: 0, state: "failed", reason: "spawn_failed", retrying: false },
      { origin: "host", serverId: "secure", name: "secure", order: 0, state: "failed", reason: "authorization_required", retrying: false },
    ]);
    // A read of the stdio server answers the reference's sentence as a typed 503.
    const local = await failure(sdk.readMcpResource({ client, path: { server: "mcp", sessionId, serverName: "local" }, body: { uri: "demo://resource/static/document/x" } }));
    expect(local.status).toBe(503);
    expect(local.body.message).toContain(LOCAL_STDIO);
    // Resources and prompts of the connected server, through the Node host's handlers.
    const read = await ok(sdk.readMcpResource({ client, path: { server: "mcp", sessionId, serverName: "web" }, body: { uri: "demo://resource/dynamic/text/3" } }));
    expect(read.resource.contents[0]).toMatchObject({ uri: "demo://resource/dynamic/text/3", text: expect.stringMatching(/^Resource 3:/) });
    // A prompt resolved by the server is admitted as a Turn of the Session.
    model.enqueue({ events: [{ type: "text", text: "Sunny." }] });
    const promptTurn = randomUUID();
    const submitted = await ok(
      sdk.submitMcpPrompt({ client, path: { server: "mcp", sessionId, serverName: "web", promptName: "args-prompt" }, headers: { "x-ze-harness-client-id": "worker-mcp-test" }, body: { turnId: promptTurn, arguments: { city: "Oslo" } } }),
    );
    expect(submitted.receipt).toMatchObject({ sessionId, turnId: promptTurn });
    expect((await watch("mcp", sessionId, promptTurn, finished)).at(-1)).toMatchObject({ type: "turn.finished", outcome: { kind: "completed", text: "Sunny." } });
    expect(JSON.stringify(model.requests.at(-1)!.body)).toContain("What's weather in Oslo?");
    const missing = await failure(sdk.getMcpCatalog({ client, path: { server: "mcp", sessionId: randomUUID() } }));
    expect(missing.status).toBe(404);
    const unknown = await failure(sdk.readMcpResource({ client, path: { server: "mcp", sessionId, serverName: "nope" }, body: { uri: "x://y" } }));
    expect(unknown.status).toBe(404);
  });

  it("authorizes the server-wide OAuth credential through the gateway's callback route, then the Tool works in every Session and a revoked token is refreshed", async () => {
    const first = await createSession("mcp");
    const second = await createSession("mcp");
    const path = { server: "mcp", sessionId: first, serverName: "secure" };
    expect((await ok(sdk.getMcpCredential({ client, path }))).status).toEqual({ kind: "absent", generation: 0 });
    const started = await ok(sdk.startMcpCredential({ client, path, body: {} }));
    expect(started.status).toEqual({ kind: "pending", generation: 1 });
    const authorization = new URL(started.authorizationUrl);
    expect(authorization.origin).toBe(oauthServer.base);
    expect(authorization.searchParams.get("redirect_uri")).toBe(`${url}/oauth/callback/mcp`);
    expect(oauthServer.registrations[0]).toMatchObject({ redirect_uris: [`${url}/oauth/callback/mcp`] });
    // The browser's part, without a browser: the authorization server redirects to the callback address.
    const redirected = await fetch(authorization, { redirect: "manual" });
    expect(redirected.status).toBe(302);
    const callback = new URL(redirected.headers.get("location")!);
    expect(callback.origin + callback.pathname).toBe(`${url}/oauth/callback/mcp`);
    // Another server name never completes it (nor binds an object to that name).
    const elsewhere = await fetch(`${url}/oauth/callback/other${callback.search}`);
    expect(elsewhere.status).toBe(404);
    await elsewhere.body?.cancel();
    const page = await fetch(callback);
    const html = await page.text();
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    expect(html).toContain("Authorization received");
    expect(html).not.toContain(callback.searchParams.get("code")!);
    expect(html).not.toContain(callback.searchParams.get("state")!);
    // Used once: the same redirect again finds nothing pending.
    const again = await fetch(callback);
    expect(again.status).toBe(404);
    await again.body?.cancel();
    // The deployment's Host policy applies; only a GET with a state reaches an object.
    expect(await statusWithHost("evil.example", `/oauth/callback/mcp${callback.search}`)).toBe(403);
    const posted = await fetch(callback, { method: "POST" });
    expect(posted.status).toBe(405);
    await posted.body?.cancel();
    const stateless = await fetch(`${url}/oauth/callback/mcp?code=x`);
    expect(stateless.status).toBe(400);
    await stateless.body?.cancel();

    // Server-wide: the other Session sees the credential and the connected server.
    const status = await ok(sdk.getMcpCredential({ client, path: { ...path, sessionId: second } }));
    expect(status.status).toEqual({ kind: "authorized", generation: 1 });
    const { catalog } = await ok(sdk.getMcpCatalog({ client, path: { server: "mcp", sessionId: second } }));
    expect(catalog.servers.map((server) => server.name)).toEqual(["secure", "web"]);

    const whoami = async (sessionId: string, answer: string): Promise<string> => {
      model.enqueue({ events: [{ type: "tool_call", name: "secure_whoami", arguments: {} }] }, { events: [{ type: "text", text: answer }] });
      const turnId = await queue("mcp", sessionId, "Who am I?");
      const events = await watch("mcp", sessionId, turnId, finished);
      expect(events.at(-1)).toMatchObject({ type: "turn.finished", outcome: { kind: "completed", text: answer } });
      return JSON.stringify(model.requests.at(-1)!.body);
    };
    expect(await whoami(second, "First.")).toContain("token=access-1");
    // The authorization server invalidates the access token: the next call's 401 refreshes it once.
    oauthServer.revokeAccess("access-1");
    const rejected = oauthServer.mcpAuthorizations.length;
    expect(await whoami(first, "Second.")).toContain("token=access-2");
    expect(oauthServer.mcpAuthorizations.slice(rejected)).toContain("Bearer access-1");
    expect(oauthServer.tokenRequests.map((form) => form.get("grant_type"))).toEqual(["authorization_code", "refresh_token"]);
    expect(oauthServer.tokenRequests[1]!.get("refresh_token")).toBe("refresh-1");
    // Two calls of one model step after another revocation: one refresh serves both.
    oauthServer.revokeAccess("access-2");
    model.enqueue(
      { events: [{ type: "tool_call", name: "secure_whoami", arguments: {} }, { type: "tool_call", name: "secure_whoami", arguments: {} }] },
      { events: [{ type: "text", text: "Both." }] },
    );
    const both = await queue("mcp", second, "Who am I, twice?");
    expect((await watch("mcp", second, both, finished)).at(-1)).toMatchObject({ type: "turn.finished", outcome: { kind: "completed", text: "Both." } });
    expect(JSON.stringify(model.requests.at(-1)!.body).match(/token=access-3/g)).toHaveLength(2);
    expect(oauthServer.tokenRequests.map((form) => form.get("grant_type"))).toEqual(["authorization_code", "refresh_token", "refresh_token"]);

    // The credential lives in the object's SQLite: after a restart of workerd on the persisted
    // state, the first Turn connects with the stored token (no new authorization or grant).
    await mf.dispose();
    ({ mf } = await start(port));
    expect(await whoami(first, "After a restart.")).toContain("token=access-3");
    expect(oauthServer.tokenRequests).toHaveLength(3);

    // Forgetting revokes and retires the server for every Session.
    const forgotten = await ok(sdk.forgetMcpCredential({ client, path, body: {} }));
    expect(forgotten).toEqual({ generation: 1, revocation: "completed" });
    expect(oauthServer.revocations).toEqual(["refresh-3"]);
    const after = await ok(sdk.getMcpCatalog({ client, path: { server: "mcp", sessionId: second } }));
    expect(after.catalog.unavailable.find((server) => server.name === "secure")).toMatchObject({ state: "failed", reason: "authorization_required" });
    // No token, code or verifier in any answer.
    const answers = JSON.stringify([started, status, catalog, forgotten, after]);
    for (const secret of ["access-1", "access-2", "access-3", "refresh-1", "refresh-2", "refresh-3", callback.searchParams.get("code")!]) expect(answers).not.toContain(secret);
  });

  it("answers a bad HARNESS_MCP with a typed 503 naming the variable, never its value", async () => {
    const secret = "not-a-url-s3cr3t-value";
    const bad = await start(0, { HARNESS_MCP: JSON.stringify([{ kind: "remote", id: "x", name: "x", transport: { kind: "streamable-http", endpoint: `http://127.0.0.1/mcp?token=${secret}` } }]) }, join(persist, "bad"));
    try {
      const answer = await fetch(`${bad.url}/v1/servers/bad/sessions`);
      expect(answer.status).toBe(503);
      const text = await answer.text();
      expect(text).toContain("ConfigInvalid");
      expect(text).toContain("HARNESS_MCP");
      expect(text).toContain("/0/transport/endpoint");
      expect(text).not.toContain(secret);
    } finally {
      await bad.mf.dispose();
    }
  });
});
