// Per-Session OAuth of the MCP servers a Session plugin declares, on the Worker host in workerd
// (one start, state persisted to a temp directory): two Sessions add a fixture Bundle plugin whose
// revision declares the OAuth-protected server of tests/mcp/oauth-server.ts. Session A authorizes
// it through its own `mcp-credentials/secure` routes, the authorization server redirects (no
// browser) to the gateway's `GET /oauth/callback/:server`, which completes Session A's credential;
// A's catalog then lists the server (origin `session`) and A's Turn calls `secure_whoami` with the
// token. Session B, with the same declared server, sees none of it (absent, authorization_required)
// and starts an authorization of its own. Deleting Session A deletes its credential rows from the
// object's SQLite, and only its rows; deleting the server (deleteServer) deletes the rows of every
// Session it deleted. No token, code or verifier in any answer.
import { randomUUID } from "node:crypto";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { build } from "esbuild";
import Database from "libsql";
import type { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sdk, type AddSessionPluginRequest, type TurnStreamEvent, type ZeClient } from "../../clients/index.js";
import { startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { freePort } from "../mcp/support.js";
import { startOAuthServer, type OAuthTestServer } from "../mcp/oauth-server.js";
import { ok } from "../support/calls.js";
import { networkClient } from "../support/harness.js";
import { testProviderConfig } from "../support/model.js";
import { readSse } from "../support/terminals.js";
import { bundle, miniflare } from "./support.js";

const SERVER = "local";
let model: TestModel;
let oauthServer: OAuthTestServer;
let mf: Miniflare | undefined;
let url: string;
let client: ZeClient["client"];
let files: Server;
let bundleUrl: string;
let persist: string;
let script: string;
let port: number;

beforeAll(async () => {
  let plugin: Uint8Array;
  [model, oauthServer, script, plugin] = await Promise.all([
    startTestModel(),
    startOAuthServer(),
    bundle("worker/index.ts"),
    build({
      entryPoints: [resolve("tests/worker/fixtures/bundle-plugin.mjs")],
      bundle: true,
      format: "esm",
      platform: "neutral",
      write: false,
      logLevel: "silent",
      alias: { "@zephyrcloudio/harness-plugin": resolve("plugin/index.ts") },
      define: { __FIXTURE_VERSION__: JSON.stringify("1"), __FIXTURE_MCP__: "false" },
    }).then((result) => result.outputFiles[0]!.contents),
  ]);
  files = createServer((request, response) => {
    if (request.url !== "/notes.js") return void response.writeHead(404).end();
    response.writeHead(200, { "content-type": "text/javascript" }).end(Buffer.from(plugin));
  });
  await new Promise<void>((done) => files.listen(0, "127.0.0.1", done));
  bundleUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}/notes.js`;
  persist = mkdtempSync(join(tmpdir(), "zh-worker-session-oauth-"));
  port = await freePort();
  await start();
}, 90_000);

afterAll(async () => {
  await mf?.dispose();
  await Promise.all([model?.close(), oauthServer?.close()]);
  await new Promise((done) => (files ? files.close(done) : done(undefined)));
  if (persist) rmSync(persist, { recursive: true, force: true });
});

/** Starts workerd on the persisted state (the same callback origin each time). */
async function start(): Promise<void> {
  mf = miniflare(script, {
    durableObjects: { HARNESS_SERVERS: { className: "HarnessServerObject", useSQLite: true } },
    durableObjectsPersist: persist,
    workerLoaders: { LOADER: {} },
    bindings: {
      HARNESS_PROVIDERS: JSON.stringify(testProviderConfig(model)),
      HARNESS_PLUGIN_BUNDLE_LOOPBACK_HTTP: "true",
      HARNESS_MCP_CALLBACK_BASE_URL: `http://127.0.0.1:${port}`,
    },
    host: "127.0.0.1",
    port,
  });
  url = (await mf.ready).origin;
  client = networkClient(url).client;
}

async function createSession(): Promise<string> {
  const sessionId = randomUUID();
  await ok(sdk.createSession({ client, path: { server: SERVER, sessionId }, body: {} }));
  return sessionId;
}

const withSecure = (): AddSessionPluginRequest =>
  ({
    id: randomUUID(),
    source: { _tag: "Bundle", url: bundleUrl },
    resolved: { pluginId: "test.notes" },
    options: { folder: "notes" },
    mcpServers: [{ kind: "remote", id: "secure", name: "secure", protocolVersions: ["2025-06-18"], transport: { kind: "streamable-http", endpoint: oauthServer.mcpUrl, headers: {}, oauth: { kind: "oauth", reference: "secure-login" } } }],
    skills: [],
  }) as AddSessionPluginRequest;

/** The Session credential rows in the server object's SQLite (read once workerd let go of the file). */
function sessionCredentialRows(): { session_id: string; reference: string }[] {
  const rows: { session_id: string; reference: string }[] = [];
  const walk = (directory: string): void => {
    for (const entry of readdirSync(directory, { withFileTypes: true })) {
      const path = join(directory, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".sqlite")) {
        const db = new Database(path, { readonly: true });
        try {
          const table = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'worker_mcp_session_oauth_credential'").get();
          if (table !== undefined) rows.push(...(db.prepare("SELECT session_id, reference FROM worker_mcp_session_oauth_credential ORDER BY session_id").all() as { session_id: string; reference: string }[]));
        } finally {
          db.close();
        }
      }
    }
  };
  walk(persist);
  return rows;
}

describe("per-Session OAuth of plugin-declared MCP servers on the Worker", () => {
  it("authorizes a Session's own server through its routes and the gateway callback, scoped to that Session and deleted with it", async () => {
    const a = await createSession();
    const b = await createSession();
    await ok(sdk.addSessionPlugin({ client, path: { server: SERVER, sessionId: a }, body: withSecure() }));
    await ok(sdk.addSessionPlugin({ client, path: { server: SERVER, sessionId: b }, body: withSecure() }));
    const path = { server: SERVER, sessionId: a, serverName: "secure" };

    // Before: nothing stored, nothing sent; the catalog says why.
    const before = await ok(sdk.getMcpCatalog({ client, path: { server: SERVER, sessionId: a } }));
    expect(before.catalog.unavailable).toEqual([expect.objectContaining({ origin: "session", name: "secure", state: "failed", reason: "authorization_required" })]);
    expect((await ok(sdk.getMcpCredential({ client, path }))).status).toEqual({ kind: "absent", generation: 0 });

    const started = await ok(sdk.startMcpCredential({ client, path, body: {} }));
    expect(started.status).toEqual({ kind: "pending", generation: 1 });
    const authorization = new URL(started.authorizationUrl);
    expect(authorization.origin).toBe(oauthServer.base);
    expect(authorization.searchParams.get("redirect_uri")).toBe(`${url}/oauth/callback/${SERVER}`);
    // The browser's part without a browser: the redirect to the gateway's callback completes A's credential.
    const redirected = await fetch(authorization, { redirect: "manual" });
    expect(redirected.status).toBe(302);
    const callback = new URL(redirected.headers.get("location")!);
    const page = await fetch(callback);
    const html = await page.text();
    expect(page.status).toBe(200);
    expect(html).toContain("Authorization received");
    expect(html).not.toContain(callback.searchParams.get("code")!);
    // Used once.
    const again = await fetch(callback);
    expect(again.status).toBe(404);
    await again.body?.cancel();

    const status = await ok(sdk.getMcpCredential({ client, path }));
    expect(status.status).toEqual({ kind: "authorized", generation: 1 });
    const { catalog } = await ok(sdk.getMcpCatalog({ client, path: { server: SERVER, sessionId: a } }));
    expect(catalog.servers.map((server) => [server.name, server.origin])).toEqual([["secure", "session"]]);

    // A's Turn calls the server with A's token.
    model.enqueue({ events: [{ type: "tool_call", name: "secure_whoami", arguments: {} }] }, { events: [{ type: "text", text: "Known." }] });
    const turnId = randomUUID();
    await ok(sdk.submitPrompt({ client, path: { server: SERVER, sessionId: a }, headers: { "x-ze-harness-client-id": "worker-session-oauth-test" }, body: { delivery: "queue", turnId, prompt: [{ type: "text", text: "Who am I?" }] } as never }));
    const events = `/v1/servers/${SERVER}/sessions/${a}/turns/${turnId}/events`;
    const seen = await readSse<TurnStreamEvent>(await fetch(`${url}${events}?afterRevision=0`), events, (event) => event.type === "turn.finished");
    expect(seen.at(-1)).toMatchObject({ type: "turn.finished", outcome: { kind: "completed", text: "Known." } });
    expect(JSON.stringify(model.requests.at(-1)!.body)).toContain("token=access-1");

    // Session B declares the same server: its credential is its own, still absent; it starts its own authorization.
    const bPath = { ...path, sessionId: b };
    expect((await ok(sdk.getMcpCredential({ client, path: bPath }))).status).toEqual({ kind: "absent", generation: 0 });
    const bCatalog = await ok(sdk.getMcpCatalog({ client, path: { server: SERVER, sessionId: b } }));
    expect(bCatalog.catalog.unavailable).toEqual([expect.objectContaining({ name: "secure", reason: "authorization_required" })]);
    expect((await ok(sdk.startMcpCredential({ client, path: bPath, body: {} }))).status).toEqual({ kind: "pending", generation: 1 });

    const answers = JSON.stringify([started, status, catalog, bCatalog]);
    for (const secret of ["access-1", "refresh-1", callback.searchParams.get("code")!]) expect(answers).not.toContain(secret);

    // Deleting A deletes A's credential rows, and only those.
    await ok(sdk.deleteSession({ client, path: { server: SERVER, sessionId: a } }));
    const stopped = mf!;
    mf = undefined;
    await stopped.dispose();
    expect(sessionCredentialRows()).toEqual([{ session_id: b, reference: "secure-login" }]);
  });

  it("deletes the credential rows of every Session deleted with its server (deleteServer), not only a deleteSession's", async () => {
    await start();
    // B's pending authorization (its PKCE verifier) is still stored; B goes with the server.
    const { deleted } = await ok(sdk.deleteServer({ client, path: { server: SERVER } }));
    expect(deleted.sessionIds.length).toBeGreaterThan(0);
    const stopped = mf!;
    mf = undefined;
    await stopped.dispose();
    expect(sessionCredentialRows()).toEqual([]);
  }, 60_000);
});
