// The provider authority in workerd (miniflare): the Worker's runtime model and provider routes
// through the singleton HarnessProviderAuthorityObject's RPC, with HARNESS_PROVIDERS as the
// allowlist (absent: OpenAI, OpenCode Go, OpenRouter; `"{}"` refused as a typed error), provider
// connections in the authority's own SQLite surviving a restart of workerd on the persisted
// directory, a credential change publishing a new catalog revision and a relabel not, a stored
// key winning over the Worker secret (and an unreadable stored one blocking it) through the
// server objects' key seam, logins answered as unsupported, and no key in any response body.
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "libsql";
import { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createZeClient, sdk, type ZeClient } from "../../clients/index.js";
import { failure, ok } from "../support/calls.js";
import { contractFetch } from "../support/contract.js";
import { bundle } from "./support.js";
import { authorityConfig } from "../../worker/authority-config.js";
// @ts-expect-error -- the plain .mjs deployment configuration, without types
import { workerOptions } from "../../worker/miniflare.config.mjs";

const STORED_KEY = "sk-stored-key-4f1c9a0b7e2d";
const ENV_KEY = "sk-worker-secret-8d3e6b1a5c90";
const TOKEN = "authority-test-token";

let script: string;
const open: Miniflare[] = [];
const temps: string[] = [];
/** Every response body the tests received: none may hold a key. */
const bodies: string[] = [];

interface Host {
  readonly mf: Miniflare;
  readonly api: ZeClient;
  /** The test-only key seam route (authority-fixture.ts). */
  keys(provider: string): Promise<Record<string, unknown>>;
  raw(path: string, init?: RequestInit): Promise<Response>;
}

const recording = (base: (request: Request) => Promise<Response>) => async (request: Request): Promise<Response> => {
  const response = await base(request);
  bodies.push(await response.clone().text());
  return response;
};

async function start(variables: Record<string, string>, persist?: string): Promise<Host> {
  const mf = new Miniflare(workerOptions({ scriptPath: script, persist, port: 0, env: { HARNESS_API_TOKEN: TOKEN, ...variables } }));
  open.push(mf);
  const url = (await mf.ready).origin;
  const raw = recording((request) => globalThis.fetch(request));
  return {
    mf,
    api: createZeClient({ baseUrl: url, fetch: contractFetch(raw), token: TOKEN }),
    keys: async (provider) => (await (await globalThis.fetch(`${url}/__test/keys?provider=${provider}`)).json()) as Record<string, unknown>,
    raw: (path, init = {}) => raw(new Request(`${url}${path}`, { ...init, headers: { authorization: `Bearer ${TOKEN}`, ...(init.headers ?? {}) } })),
  };
}

async function stop(host: Host): Promise<void> {
  await host.mf.dispose();
  open.splice(open.indexOf(host.mf), 1);
}

const temp = (prefix: string): string => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  temps.push(dir);
  return dir;
};

/** The authority object's SQLite file under a persisted directory (its namespace's only object). */
function authorityDatabase(persist: string): string {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith(".sqlite") && dir.includes("HarnessProviderAuthorityObject")) found.push(path);
    }
  };
  walk(persist);
  if (found.length !== 1) throw new Error(`expected one authority database under ${persist}, found ${JSON.stringify(found)}`);
  return found[0]!;
}

beforeAll(async () => {
  script = await bundle("tests/worker/authority-fixture.ts");
}, 60_000);

afterAll(async () => {
  for (const mf of open) await mf.dispose();
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});

describe("the provider authority (workerd)", () => {
  it("lists the default providers and their models, with a Worker secret as the environment key; logins are unsupported", async () => {
    const host = await start({ OPENROUTER_API_KEY: ENV_KEY });
    const { providers } = await ok(sdk.providers({ client: host.api.client }));
    expect(providers.map((provider) => provider.id)).toEqual(["openai", "opencode-go", "openrouter"]);
    const openrouter = providers.find((provider) => provider.id === "openrouter")!;
    expect(openrouter).toMatchObject({ availability: { status: "available" }, source: "environment", methods: ["api_key"], logins: [] });
    expect(providers.find((provider) => provider.id === "openai")).toMatchObject({ availability: { status: "unavailable", reason: "missing_credentials" }, source: "none" });

    const catalog = await ok(sdk.models({ client: host.api.client }));
    expect(new Set(catalog.models.map((model) => model.providerId))).toEqual(new Set(["openai", "openrouter"]));
    expect(catalog.models.filter((model) => model.providerId === "openrouter").every((model) => model.availability.status === "available")).toBe(true);
    expect(catalog.defaultModel?.startsWith("openrouter/")).toBe(true);
    // The single-shot revision stream names the same revision.
    const events = await (await host.raw("/v1/runtime/models/events")).text();
    expect(events).toContain(`"hostRevision":"${catalog.hostRevision}"`);

    expect((await failure(sdk.getProvider({ client: host.api.client, path: { providerId: "deepseek" } }))).status).toBe(404);
    const login = await failure(sdk.startProviderLogin({ client: host.api.client, path: { providerId: "openai" }, body: {} }));
    expect(login).toMatchObject({ status: 503, body: { _tag: "UnavailableError", message: "Cloudflare Worker hosts report login as unsupported" } });
    // The key seam resolves the Worker secret named by the catalog's credential variable.
    expect(await host.keys("openrouter")).toEqual({ ok: true, origin: "environment", key: ENV_KEY });
    expect(await host.keys("openai")).toMatchObject({ ok: false, reason: "missing_credentials" });
    // Without the token, nothing is answered.
    expect((await globalThis.fetch(`${(await host.mf.ready).origin}/v1/runtime/providers`)).status).toBe(401);
    await stop(host);
  });

  it("takes HARNESS_PROVIDERS as the allowlist and refuses a map that enables nothing", async () => {
    const deepseek = await start({ HARNESS_PROVIDERS: JSON.stringify({ deepseek: {} }) });
    const { providers } = await ok(sdk.providers({ client: deepseek.api.client }));
    expect(providers.map((provider) => provider.id)).toEqual(["deepseek"]);
    const catalog = await ok(sdk.models({ client: deepseek.api.client }));
    expect(catalog.models.length).toBeGreaterThan(0);
    expect(catalog.models.every((model) => model.providerId === "deepseek")).toBe(true);
    await stop(deepseek);

    const empty = await start({ HARNESS_PROVIDERS: "{}" });
    const refused = await failure(sdk.models({ client: empty.api.client }));
    expect(refused.status).toBe(503);
    expect(refused.body).toMatchObject({ _tag: "UnavailableError" });
    expect(String((refused.body as { message: string }).message)).toContain("the providers map is empty");
    expect((await failure(sdk.providers({ client: empty.api.client }))).status).toBe(503);
    // Nothing can be connected under an unusable configuration.
    expect((await failure(sdk.connectProviderKey({ client: empty.api.client, path: { providerId: "openai" }, body: { apiKey: STORED_KEY } }))).status).toBe(503);
    await stop(empty);
  });

  it("refuses HARNESS_PROVIDERS values that are not a provider map, or carry a key, naming the path and never the value", () => {
    const refusal = (value: string) => {
      const config = authorityConfig({ HARNESS_PROVIDERS: value });
      if (config.ok) throw new Error(`${value} was accepted`);
      return config.error;
    };
    expect(refusal("{}")).toMatchObject({ _tag: "ProvidersEmpty", path: "/providers" });
    expect(refusal("not json")).toMatchObject({ _tag: "ProvidersMalformed", path: "/providers" });
    expect(refusal("[]")).toMatchObject({ _tag: "ProvidersMalformed" });
    expect(refusal(JSON.stringify({ openai: "yes" }))).toMatchObject({ _tag: "ProviderInvalid", path: "/providers/openai" });
    expect(refusal(JSON.stringify({ openai: { enable: true } }))).toMatchObject({ _tag: "ProviderInvalid", path: "/providers/openai/enable" });
    const apiKey = refusal(JSON.stringify({ openai: { options: { apiKey: "sk-in-plain-variable" } } }));
    expect(apiKey).toMatchObject({ _tag: "ProviderInvalid", path: "/providers/openai/options/apiKey" });
    expect(JSON.stringify(apiKey)).not.toContain("sk-in-plain-variable");
    expect(refusal(JSON.stringify({ nosuch: {} }))).toMatchObject({ _tag: "ProviderInvalid", providerId: "nosuch" });
    // Absent or blank: the defaults; a listed entry with enabled: false stays listed, disabled.
    const defaults = authorityConfig({});
    expect(defaults.ok && defaults.providers.providers.map((provider) => provider.id)).toEqual(["openai", "opencode-go", "openrouter"]);
    const listed = authorityConfig({ HARNESS_PROVIDERS: JSON.stringify({ deepseek: {}, openai: { enabled: false } }) });
    expect(listed.ok && listed.providers.providers.map((provider) => [provider.id, provider.enabled])).toEqual([
      ["deepseek", true],
      ["openai", false],
    ]);
  });

  it("stores a connection that survives a restart; the stored key wins over the Worker secret; a relabel publishes no revision; an unreadable one blocks the secret", async () => {
    const persist = temp("zh-authority-");
    const first = await start({ OPENROUTER_API_KEY: ENV_KEY }, persist);
    const before = await ok(sdk.models({ client: first.api.client }));
    // Bad input changes nothing.
    const bad = await failure(sdk.connectProviderKey({ client: first.api.client, path: { providerId: "openrouter" }, body: { apiKey: "has space" } }));
    expect(bad.status).toBe(400);
    expect((await ok(sdk.models({ client: first.api.client }))).hostRevision).toBe(before.hostRevision);

    const { connection } = await ok(sdk.connectProviderKey({ client: first.api.client, path: { providerId: "openrouter" }, body: { apiKey: STORED_KEY, label: "team key" } }));
    expect(connection).toMatchObject({ providerId: "openrouter", label: "team key", method: "api_key", status: "ready" });
    const connected = await ok(sdk.models({ client: first.api.client }));
    // A credential change publishes a new revision, though availability reads the same.
    expect(connected.hostRevision).not.toBe(before.hostRevision);
    expect((await ok(sdk.getProvider({ client: first.api.client, path: { providerId: "openrouter" } }))).provider).toMatchObject({ source: "stored", connection });
    expect(await first.keys("openrouter")).toEqual({ ok: true, origin: "stored", key: STORED_KEY });
    await stop(first);

    const second = await start({ OPENROUTER_API_KEY: ENV_KEY }, persist);
    const { provider } = await ok(sdk.getProvider({ client: second.api.client, path: { providerId: "openrouter" } }));
    expect(provider).toMatchObject({ source: "stored", connection });
    expect((await ok(sdk.models({ client: second.api.client }))).hostRevision).toBe(connected.hostRevision);
    expect(await second.keys("openrouter")).toEqual({ ok: true, origin: "stored", key: STORED_KEY });

    const relabelled = await ok(
      sdk.updateProviderConnection({ client: second.api.client, path: { providerId: "openrouter", connectionId: connection.connectionId }, body: { label: "renamed" } }),
    );
    expect(relabelled.connection).toMatchObject({ connectionId: connection.connectionId, label: "renamed" });
    expect((await ok(sdk.models({ client: second.api.client }))).hostRevision).toBe(connected.hostRevision);
    expect(
      (await failure(sdk.updateProviderConnection({ client: second.api.client, path: { providerId: "openrouter", connectionId: "conn_missing" }, body: { label: "x" } }))).status,
    ).toBe(404);
    await stop(second);

    // A stored credential that cannot be read blocks the Worker secret: unavailable, reconnect.
    const database = new Database(authorityDatabase(persist));
    database.prepare("UPDATE provider_connection SET credential = ? WHERE provider_id = ?").run("{not json", "openrouter");
    database.close();
    const third = await start({ OPENROUTER_API_KEY: ENV_KEY }, persist);
    expect(await third.keys("openrouter")).toMatchObject({ ok: false, reason: "reconnect_required" });
    const blocked = (await ok(sdk.getProvider({ client: third.api.client, path: { providerId: "openrouter" } }))).provider;
    expect(blocked).toMatchObject({ availability: { status: "unavailable", reason: "reconnect_required" }, connection: { connectionId: connection.connectionId, status: "reconnect_required" } });
    const unreadable = await ok(sdk.models({ client: third.api.client }));
    expect(unreadable.models.find((model) => model.providerId === "openrouter")?.availability).toEqual({ status: "unavailable", reason: "reconnect_required" });

    // Deleting it is a credential change: a new revision, and the Worker secret applies again.
    await ok(sdk.deleteProviderConnection({ client: third.api.client, path: { providerId: "openrouter", connectionId: connection.connectionId } }));
    const deleted = await ok(sdk.models({ client: third.api.client }));
    expect(deleted.hostRevision).not.toBe(unreadable.hostRevision);
    expect((await ok(sdk.getProvider({ client: third.api.client, path: { providerId: "openrouter" } }))).provider).toMatchObject({ source: "environment" });
    expect(await third.keys("openrouter")).toEqual({ ok: true, origin: "environment", key: ENV_KEY });
    await stop(third);
  });

  it("discovers a custom provider's models with its Worker secret, and refreshProviderModels lists them again", async () => {
    const listed = ["local-a", "local-b"];
    const authorizations: (string | undefined)[] = [];
    const models: Server = createServer((request, response) => {
      authorizations.push(request.headers.authorization);
      if (request.url !== "/v1/models") return void response.writeHead(404).end();
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ object: "list", data: listed.map((id) => ({ id, object: "model" })) }));
    });
    await new Promise<void>((resolve) => models.listen(0, "127.0.0.1", resolve));
    try {
      const definition = {
        displayName: "Local proxy",
        baseURL: `http://127.0.0.1:${(models.address() as AddressInfo).port}/v1`,
        protocol: "chat",
        authentication: { kind: "bearer" },
        credentials: { environment: ["LOCAL_PROXY_API_KEY"] },
      };
      const host = await start({ HARNESS_PROVIDERS: JSON.stringify({ "local-proxy": { definition } }), LOCAL_PROXY_API_KEY: ENV_KEY });
      const refs = (snapshot: { models: { ref: string }[] }) => snapshot.models.map((model) => model.ref);
      const first = await ok(sdk.models({ client: host.api.client }));
      expect(refs(first)).toEqual(["local-proxy/local-a", "local-proxy/local-b"]);
      expect(authorizations).toEqual([`Bearer ${ENV_KEY}`]);

      listed.push("local-c");
      const refreshed = await ok(sdk.refreshProviderModels({ client: host.api.client, body: { providerId: "local-proxy" } }));
      expect(refreshed.providers).toEqual([{ providerId: "local-proxy", status: "updated" }]);
      expect(refs(refreshed.snapshot)).toEqual(["local-proxy/local-a", "local-proxy/local-b", "local-proxy/local-c"]);
      expect(refreshed.snapshot.hostRevision).not.toBe(first.hostRevision);
      expect(refs(await ok(sdk.models({ client: host.api.client })))).toContain("local-proxy/local-c");
      const again = await ok(sdk.refreshProviderModels({ client: host.api.client, body: {} }));
      expect(again.providers).toEqual([{ providerId: "local-proxy", status: "unchanged" }]);
      expect((await failure(sdk.refreshProviderModels({ client: host.api.client, body: { providerId: "nosuch" } }))).status).toBe(404);

      // A failed discovery keeps what was known.
      models.closeAllConnections();
      await new Promise((resolve) => models.close(resolve));
      const failed = await ok(sdk.refreshProviderModels({ client: host.api.client, body: {} }));
      expect(failed.providers).toMatchObject([{ providerId: "local-proxy", status: "failed" }]);
      expect(refs(failed.snapshot)).toEqual(["local-proxy/local-a", "local-proxy/local-b", "local-proxy/local-c"]);
      await stop(host);
    } finally {
      models.closeAllConnections();
      models.close();
    }
  });

  it("never puts a key in a response body", () => {
    expect(bodies.length).toBeGreaterThan(20);
    for (const body of bodies) {
      expect(body).not.toContain(STORED_KEY);
      expect(body).not.toContain(ENV_KEY);
    }
  });
});
