// The fetched catalog (`$XDG_CACHE_HOME/ze-harness/models.json`) refreshed from a local
// node:http catalog server standing in for ZE_HARNESS_MODELS_URL: conditional requests (ETag →
// If-None-Match → 304), the bundle as the floor (only data proven published at or after the
// bundle was built replaces it), a broken document keeping the previous data, refreshed data
// taking effect on runtime reload, the cache's location and mode, and a real `serve` refreshing in
// the background unless ZE_HARNESS_DISABLE_MODELS_FETCH=1.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createZeClient, getRuntimeModels, runtimeModelsRevision, sdk, unwrap } from "../../clients/index.js";
import { createHarness } from "../../services/host/harness.js";
import { bundledCatalog, cacheDirectory, catalogCacheFile } from "../../services/providers/index.js";
import { networkClient, startHarness, startServe, tempHome, type ServeProcess, type TempHome, type TestHarness } from "../support/harness.js";
import { writeGlobalConfig } from "../support/model.js";

interface Answer {
  readonly status?: number;
  readonly body?: string;
  readonly headers?: Record<string, string>;
}

interface CatalogServer {
  readonly url: string;
  readonly requests: { readonly headers: IncomingMessage["headers"] }[];
  answer(fn: (request: IncomingMessage) => Answer): void;
  /** Resolves at the count-th request. */
  waitForRequest(count: number): Promise<void>;
  close(): Promise<void>;
}

async function startCatalogServer(): Promise<CatalogServer> {
  const requests: { headers: IncomingMessage["headers"] }[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  let answer: (request: IncomingMessage) => Answer = () => ({ status: 404, body: "{}" });
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    requests.push({ headers: request.headers });
    const reply = answer(request);
    response.writeHead(reply.status ?? 200, { "content-type": "application/json", ...(reply.headers ?? {}) });
    response.end(reply.body ?? "");
    for (const waiter of waiters.filter((w) => w.count <= requests.length)) waiter.resolve();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/api.json`,
    requests,
    answer: (fn) => (answer = fn),
    waitForRequest: (count) => (requests.length >= count ? Promise.resolve() : new Promise((resolve) => waiters.push({ count, resolve }))),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A models.dev document whose `openai` lists only `models`. */
const documentWith = (...models: string[]): string =>
  JSON.stringify({
    openai: {
      id: "openai",
      name: "OpenAI",
      npm: "@ai-sdk/openai",
      env: ["OPENAI_API_KEY"],
      models: Object.fromEntries(models.map((id) => [id, { id, name: id.toUpperCase(), tool_call: true, limit: { context: 5000, output: 500 } }])),
    },
  });

const builtAt = Date.parse(bundledCatalog().builtAt!);
const after = new Date(builtAt + 24 * 3600 * 1000).toUTCString();
const before = new Date(builtAt - 365 * 24 * 3600 * 1000).toUTCString();

let catalogServer: CatalogServer | undefined;
let harness: TestHarness | undefined;
let serve: ServeProcess | undefined;
let home: TempHome | undefined;
afterEach(async () => {
  await serve?.stop();
  await harness?.close();
  await catalogServer?.close();
  home?.cleanup();
  serve = harness = catalogServer = home = undefined;
});

async function start(): Promise<{ server: CatalogServer; h: TestHarness }> {
  catalogServer = await startCatalogServer();
  const at = tempHome();
  writeGlobalConfig(at, { providers: { openai: true } });
  harness = await startHarness({ env: { ...at.env, ZE_HARNESS_MODELS_URL: catalogServer.url } }, at);
  return { server: catalogServer, h: harness };
}

/** Another harness on the same home (and cache), without removing the home when it closes. */
async function createHarnessOn(at: TempHome, url: string, warnings: string[]): Promise<{ harness: Awaited<ReturnType<typeof createHarness>>; api: ReturnType<typeof createZeClient> }> {
  const second = await createHarness({ serverRoot: at.root, env: { ...at.env, ZE_HARNESS_MODELS_URL: url }, database: join(at.dir, "second.db"), onWarning: (message) => warnings.push(message) });
  return { harness: second, api: createZeClient({ baseUrl: "http://localhost", fetch: second.fetch }) };
}

const openaiModels = async (h: TestHarness): Promise<string[]> =>
  (await getRuntimeModels(h.api)).models.filter((model) => model.providerId === "openai").map((model) => model.id);

const refresh = (h: TestHarness, providerId?: string) =>
  unwrap(sdk.refreshProviderModels({ client: h.api.client, body: providerId !== undefined ? { providerId } : {} }));

const reload = async (h: TestHarness) => expect((await unwrap(sdk.reload({ client: h.api.client, body: {} }))).result).toBe("reloaded");

describe("refreshProviderModels against the catalog URL", () => {
  it("caches a newer document (0600 under $XDG_CACHE_HOME/ze-harness), answers 304 to If-None-Match, and takes effect on reload", async () => {
    const { server, h } = await start();
    const bundledIds = await openaiModels(h);
    expect(bundledIds.length).toBeGreaterThan(1);
    const initial = await getRuntimeModels(h.api);
    server.answer((request) =>
      request.headers["if-none-match"] === '"v1"' ? { status: 304 } : { body: documentWith("gpt-served"), headers: { etag: '"v1"', "last-modified": after } },
    );

    const first = await refresh(h);
    expect(first.providers).toEqual([{ providerId: "openai", status: "updated", message: "refreshed catalog data takes effect on runtime reload" }]);
    // Not before a reload: the snapshot is still the bundle's.
    expect(first.snapshot.hostRevision).toBe(initial.hostRevision);
    expect(await openaiModels(h)).toEqual(bundledIds);

    const file = catalogCacheFile(h.home.env);
    expect(file).toBe(join(h.home.env["XDG_CACHE_HOME"]!, "ze-harness", "models.json"));
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(h.home.env["XDG_CACHE_HOME"]!, "ze-harness")).mode & 0o777).toBe(0o700);
    const cached = JSON.parse(readFileSync(file, "utf8"));
    expect(cached).toMatchObject({ url: server.url, etag: '"v1"', publishedAt: new Date(after).toISOString() });

    const second = await refresh(h, "openai");
    expect(server.requests[1]!.headers["if-none-match"]).toBe('"v1"');
    // The cached data still differs from what the host runs: reload would change it.
    expect(second.providers).toEqual([{ providerId: "openai", status: "updated", message: "refreshed catalog data takes effect on runtime reload" }]);

    await reload(h);
    expect(await openaiModels(h)).toEqual(["gpt-served"]);
    const reloaded = await getRuntimeModels(h.api);
    expect(reloaded.hostRevision).not.toBe(initial.hostRevision);
    expect(reloaded.models.find((model) => model.ref === "openai/gpt-served")).toMatchObject({ displayName: "GPT-SERVED", limits: { contextUnits: 5000, outputUnits: 500 } });

    const third = await refresh(h);
    expect(server.requests[2]!.headers["if-none-match"]).toBe('"v1"');
    expect(third.providers).toEqual([{ providerId: "openai", status: "unchanged" }]);
  });

  it("a broken document fails the refresh and keeps the previous data; the bundle stays the floor", async () => {
    const { server, h } = await start();
    const bundledIds = await openaiModels(h);
    for (const body of ["not json", JSON.stringify({ nothing: { id: "nothing" } }), ""]) {
      server.answer(() => ({ body }));
      const result = await refresh(h);
      expect(result.providers).toEqual([{ providerId: "openai", status: "failed", message: expect.stringMatching(/^catalog refresh from http:\/\/127\.0\.0\.1:\d+ failed: /) }]);
    }
    server.answer(() => ({ status: 500, body: "{}" }));
    expect((await refresh(h)).providers[0]).toMatchObject({ status: "failed", message: expect.stringMatching(/HTTP 500$/) });
    expect(existsSync(catalogCacheFile(h.home.env))).toBe(false);
    await reload(h);
    expect(await openaiModels(h)).toEqual(bundledIds);

    // A good document, then a broken one: the good one stays cached and used.
    server.answer(() => ({ body: documentWith("gpt-good"), headers: { "last-modified": after } }));
    await refresh(h);
    server.answer(() => ({ body: "{ broken" }));
    expect((await refresh(h)).providers[0]!.status).toBe("failed");
    await reload(h);
    expect(await openaiModels(h)).toEqual(["gpt-good"]);
  });

  it("data not proven newer than the bundle is not used; changed content proves the previous check", async () => {
    const { server, h } = await start();
    const bundledIds = await openaiModels(h);
    // Published before the bundle was built: cached, never used.
    server.answer(() => ({ body: documentWith("gpt-ancient"), headers: { "last-modified": before } }));
    await refresh(h);
    await reload(h);
    expect(await openaiModels(h)).toEqual(bundledIds);
    // No Last-Modified (models.dev): unchanged content proves nothing new…
    server.answer(() => ({ body: documentWith("gpt-ancient") }));
    expect((await refresh(h)).providers).toEqual([{ providerId: "openai", status: "unchanged" }]);
    await reload(h);
    expect(await openaiModels(h)).toEqual(bundledIds);
    // …changed content was published after the previous check (which is after the bundle was built).
    server.answer(() => ({ body: documentWith("gpt-new") }));
    expect((await refresh(h)).providers[0]!.status).toBe("updated");
    await reload(h);
    expect(await openaiModels(h)).toEqual(["gpt-new"]);
  });

  it("a first fetch without Last-Modified proves nothing", async () => {
    const { server, h } = await start();
    const bundledIds = await openaiModels(h);
    server.answer(() => ({ body: documentWith("gpt-first") }));
    expect((await refresh(h)).providers).toEqual([{ providerId: "openai", status: "unchanged" }]);
    expect(JSON.parse(readFileSync(catalogCacheFile(h.home.env), "utf8")).publishedAt).toBeUndefined();
    await reload(h);
    expect(await openaiModels(h)).toEqual(bundledIds);
  });

  it("a cached catalog the config cannot compile against is not used: the bundle serves, at reload and at startup", async () => {
    const { server, h } = await start();
    const bundledIds = await openaiModels(h);
    const other = JSON.stringify({ gateway: { id: "gateway", npm: "@ai-sdk/openai-compatible", api: "https://gateway.example/v1", models: { g: { id: "g" } } } });
    server.answer(() => ({ body: other, headers: { "last-modified": after } }));
    expect((await refresh(h)).providers[0]).toMatchObject({ providerId: "openai", status: "updated" });
    await reload(h);
    expect(await openaiModels(h)).toEqual(bundledIds);
    const warnings: string[] = [];
    const second = await createHarnessOn(h.home, server.url, warnings);
    try {
      expect((await getRuntimeModels(second.api)).models.filter((model) => model.providerId === "openai").map((model) => model.id)).toEqual(bundledIds);
      expect(warnings).toEqual([expect.stringMatching(/^the cached model catalog could not be used \(.*openai.*\); using the bundled catalog$/)]);
    } finally {
      await second.harness.close();
    }
  });

  it("an embedded host never refreshes on its own", async () => {
    const { server, h } = await start();
    await getRuntimeModels(h.api);
    await reload(h);
    expect(server.requests).toEqual([]);
  });
});

describe("the cache location", () => {
  it("is $XDG_CACHE_HOME/ze-harness when absolute, else ~/.cache/ze-harness", () => {
    expect(cacheDirectory({ HOME: "/home/u", XDG_CACHE_HOME: "/xdg/cache" })).toBe("/xdg/cache/ze-harness");
    expect(cacheDirectory({ HOME: "/home/u" })).toBe("/home/u/.cache/ze-harness");
    expect(cacheDirectory({ HOME: "/home/u", XDG_CACHE_HOME: "relative" })).toBe("/home/u/.cache/ze-harness");
    expect(catalogCacheFile({ HOME: "/home/u" })).toBe("/home/u/.cache/ze-harness/models.json");
  });
});

describe("a real serve", () => {
  it("refreshes the cache in the background at startup from ZE_HARNESS_MODELS_URL", async () => {
    catalogServer = await startCatalogServer();
    catalogServer.answer(() => ({ body: documentWith("gpt-background"), headers: { etag: '"bg"', "last-modified": after } }));
    home = tempHome();
    writeGlobalConfig(home, { providers: { openai: true } });
    const env = { ...home.env, ZE_HARNESS_MODELS_URL: catalogServer.url };
    delete (env as Record<string, string | undefined>)["ZE_HARNESS_DISABLE_MODELS_FETCH"];
    serve = await startServe(["--database", join(home.dir, "serve.db")], env, home.root);
    await catalogServer.waitForRequest(1);
    await expect.poll(() => existsSync(catalogCacheFile(home!.env))).toBe(true);
    const client = networkClient(serve.url);
    // Refreshed data takes effect on runtime reload, over the network too.
    expect((await getRuntimeModels(client)).models.some((model) => model.ref === "openai/gpt-background")).toBe(false);
    expect((await unwrap(sdk.reload({ client: client.client, body: {} }))).result).toBe("reloaded");
    expect((await getRuntimeModels(client)).models.filter((model) => model.providerId === "openai").map((model) => model.id)).toEqual(["gpt-background"]);
  });

  it("makes no background request with ZE_HARNESS_DISABLE_MODELS_FETCH=1", async () => {
    catalogServer = await startCatalogServer();
    home = tempHome();
    serve = await startServe(["--database", join(home.dir, "serve.db")], { ...home.env, ZE_HARNESS_MODELS_URL: catalogServer.url }, home.root);
    const client = networkClient(serve.url);
    const snapshot = await getRuntimeModels(client);
    // The single-shot revision stream over the network.
    expect(await runtimeModelsRevision(client)).toBe(snapshot.hostRevision);
    expect(catalogServer.requests).toEqual([]);
    // An explicit refresh still asks.
    catalogServer.answer(() => ({ status: 304 }));
    await unwrap(sdk.refreshProviderModels({ client: client.client, body: {} }));
    expect(catalogServer.requests).toHaveLength(1);
  });
});
