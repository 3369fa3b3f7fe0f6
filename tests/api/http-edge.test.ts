// The HTTP edge with raw Requests: version and CORS headers, Host/Origin guards, bearer
// auth, body limits and parsing, routing errors, the 503 answer of every operation this
// build does not implement yet, and the OpenAPI document and reference page.
// Every request goes through contractFetch, so API responses are checked against the contract.
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sdk } from "../../clients/index.js";
import { routes, type RouteDefinition } from "../../generated/server/routes.js";
import * as depthHandlerModule from "../../services/host/depth-handlers.js";
import * as handlerModule from "../../services/host/handlers.js";
import * as historyHandlerModule from "../../services/host/history-handlers.js";
import * as workspaceHistoryHandlerModule from "../../services/host/workspace-history-handlers.js";
import * as mcpHandlerModule from "../../services/host/mcp-handlers.js";
import * as pluginRouteModule from "../../services/host/plugin-routes.js";
import * as modelHandlerModule from "../../services/host/model-handlers.js";
import * as providerHandlerModule from "../../services/host/provider-handlers.js";
import * as terminalHandlerModule from "../../services/host/terminal-handlers.js";
import * as workspaceFilesHandlerModule from "../../services/host/workspace-files-handlers.js";
import { ok } from "../support/calls.js";
import { exampleHttpRequest, exampleRequest } from "../support/examples.js";
import { harnessPerTest, repoRoot, startHarness, type TestHarness } from "../support/harness.js";

const packageVersion = (JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { version: string }).version;
const committedOpenapi = JSON.parse(readFileSync(join(repoRoot, "generated", "openapi.json"), "utf8")) as {
  paths: Record<string, Record<string, { operationId: string }>>;
};

const base = "http://localhost";
const sessionsPath = "/v1/servers/local/sessions";

const harness = harnessPerTest();

const request = (path: string, init: RequestInit = {}): Promise<Response> => harness().fetch(new Request(`${base}${path}`, init));
const putJson = (path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> =>
  request(path, { method: "PUT", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
const listedIds = async (): Promise<string[]> =>
  ((await (await request(sessionsPath)).json()) as { sessions: { id: string }[] }).sessions.map((s) => s.id);

describe("headers on every response", () => {
  const expectVersionHeaders = (response: Response): void => {
    expect(response.headers.get("Ze-Harness-Version")).toBe(`2/${packageVersion}`);
    const exposed = (response.headers.get("Access-Control-Expose-Headers") ?? "").split(",").map((h) => h.trim().toLowerCase());
    expect(exposed).toContain("ze-harness-version");
  };

  it.each<[string, () => Promise<Response>, number]>([
    ["a success", () => request("/v1/health"), 200],
    ["a validation error", () => request(`${sessionsPath}/not-a-uuid`), 400],
    ["a not-found error", () => request("/v1/nowhere"), 404],
    ["a forbidden error", () => request("/v1/health", { headers: { host: "evil.example" } }), 403],
    ["an unavailable operation", () => request("/v1/logs"), 503],
    ["a preflight", () => request("/v1/health", { method: "OPTIONS", headers: { origin: base } }), 204],
    ["the OpenAPI document", () => request("/openapi.json"), 200],
    ["the reference page", () => request("/reference"), 200],
    ["the dashboard", () => request("/dashboard"), 200],
  ])("%s carries Ze-Harness-Version and exposes it", async (_, send, status) => {
    const response = await send();
    expect(response.status).toBe(status);
    expectVersionHeaders(response);
  });

  it("an unauthorized error carries them too", async () => {
    const secured = await startHarness({ token: "s3cret" });
    try {
      const response = await secured.fetch(new Request(`${base}${sessionsPath}`));
      expect(response.status).toBe(401);
      expectVersionHeaders(response);
    } finally {
      await secured.close();
    }
  });
});

describe("routing", () => {
  it("an unknown path is 404 NotFoundError for resource 'endpoint'", async () => {
    const response = await request("/v1/does-not-exist");
    expect(response.status).toBe(404);
    const body = await response.json();
    expect(body).toMatchObject({ _tag: "NotFoundError", resource: "endpoint" });
    expect(typeof body.message).toBe("string");
  });

  it("a known path with the wrong method is 404 naming the allowed methods", async () => {
    const response = await request("/v1/health", { method: "POST" });
    expect(response.status).toBe(404);
    const body = await response.json();
    expect(body).toMatchObject({ _tag: "NotFoundError", resource: "endpoint" });
    expect(body.message).toContain("GET");
  });

  it("a server other than 'local' is 404", async () => {
    for (const response of [
      await request("/v1/servers/remote/sessions"),
      await request(`/v1/servers/remote/sessions/${randomUUID()}`),
      await request("/v1/servers/remote", { method: "DELETE" }),
    ]) {
      expect(response.status).toBe(404);
      expect(await response.json()).toMatchObject({ _tag: "NotFoundError", message: expect.stringContaining("remote") });
    }
  });

  it("creating a Session on another server is 404 and creates nothing anywhere", async () => {
    const id = randomUUID();
    const response = await putJson(`/v1/servers/remote/sessions/${id}`, {});
    expect(response.status).toBe(404);
    expect(await listedIds()).toEqual([]);
  });

  it("errors carry _tag and message", async () => {
    for (const response of [
      await request(`${sessionsPath}/${randomUUID()}`),
      await request(`${sessionsPath}/x`),
      await request("/v1/health", { headers: { origin: "https://evil.example" } }),
    ]) {
      const body = await response.json();
      expect(typeof body._tag).toBe("string");
      expect(typeof body.message).toBe("string");
      expect(body.message.length).toBeGreaterThan(0);
    }
  });
});

describe("Host and Origin guards", () => {
  it("a foreign Host header is 403 ForbiddenError", async () => {
    const response = await request("/v1/health", { headers: { host: "evil.example" } });
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ _tag: "ForbiddenError", message: expect.stringContaining("evil.example") });
  });

  it("a foreign Host header cannot create a Session", async () => {
    const response = await putJson(`${sessionsPath}/${randomUUID()}`, {}, { host: "evil.example:80" });
    expect(response.status).toBe(403);
    expect(await listedIds()).toEqual([]);
  });

  it.each(["localhost:4317", "127.0.0.1:4317", "[::1]:4317"])("a loopback Host header (%s) is allowed", async (host) => {
    const response = await request("/v1/health", { headers: { host } });
    expect(response.status).toBe(200);
  });

  it("a cross-site Origin is 403 ForbiddenError and creates nothing", async () => {
    const id = randomUUID();
    const response = await putJson(`${sessionsPath}/${id}`, {}, { origin: "https://evil.example" });
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ _tag: "ForbiddenError" });
    expect(response.headers.get("Access-Control-Allow-Origin")).toBeNull();
    expect(await listedIds()).toEqual([]);
  });

  it("a same-origin loopback Origin is allowed and echoed for CORS", async () => {
    const response = await request("/v1/health", { headers: { host: "127.0.0.1:4317", origin: "http://127.0.0.1:4317" } });
    expect(response.status).toBe(200);
    expect(response.headers.get("Access-Control-Allow-Origin")).toBe("http://127.0.0.1:4317");
  });

  it("a loopback Origin on another port is not same-origin and is 403", async () => {
    const response = await request("/v1/health", { headers: { host: "127.0.0.1:4317", origin: "http://127.0.0.1:9999" } });
    expect(response.status).toBe(403);
  });

  it("an OPTIONS preflight from the same origin is 204 with the allowed methods and headers", async () => {
    const response = await request(`${sessionsPath}/${randomUUID()}`, {
      method: "OPTIONS",
      headers: { host: "localhost:4317", origin: "http://localhost:4317", "access-control-request-method": "PUT" },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get("Access-Control-Allow-Origin")).toBe("http://localhost:4317");
    const methods = (response.headers.get("Access-Control-Allow-Methods") ?? "").split(",").map((m) => m.trim());
    expect(methods).toEqual(expect.arrayContaining(["GET", "PUT", "POST", "DELETE", "PATCH"]));
    const headers = (response.headers.get("Access-Control-Allow-Headers") ?? "").toLowerCase();
    expect(headers).toContain("authorization");
    expect(headers).toContain("content-type");
    expect(await response.text()).toBe("");
  });

  it("an OPTIONS preflight from a foreign origin is 403", async () => {
    const response = await request(sessionsPath, { method: "OPTIONS", headers: { origin: "https://evil.example" } });
    expect(response.status).toBe(403);
  });
});

describe("bearer token", () => {
  let secured: TestHarness;
  beforeAll(async () => {
    secured = await startHarness({ token: "s3cret" });
  });
  afterAll(async () => {
    await secured.close();
  });
  const send = (path: string, init: RequestInit = {}) => secured.fetch(new Request(`${base}${path}`, init));

  it("without a bearer an operation is 401 UnauthorizedError", async () => {
    const response = await send(sessionsPath);
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ _tag: "UnauthorizedError" });
  });

  it.each(["Bearer wrong", "Bearer s3cret-and-more", "Basic s3cret", "s3cret"])("with Authorization %j it is 401", async (authorization) => {
    const response = await send(sessionsPath, { headers: { authorization } });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ _tag: "UnauthorizedError" });
  });

  it("a rejected create writes nothing", async () => {
    const id = randomUUID();
    const response = await send(`${sessionsPath}/${id}`, { method: "PUT", headers: { "content-type": "application/json" }, body: "{}" });
    expect(response.status).toBe(401);
    const listed = await send(sessionsPath, { headers: { authorization: "Bearer s3cret" } });
    expect(await listed.json()).toEqual({ sessions: [] });
  });

  it("with the right bearer the operation answers 200", async () => {
    const response = await send(sessionsPath, { headers: { authorization: "Bearer s3cret" } });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ sessions: [] });
  });

  it("health and capabilities stay public", async () => {
    expect((await send("/v1/health")).status).toBe(200);
    expect((await send("/v1/capabilities")).status).toBe(200);
  });

  it("the generated client with the token is let in", async () => {
    // startHarness hands the token to its client.
    expect(await ok(sdk.listSessions({ client: secured.api.client, path: { server: "local" } }))).toEqual({ sessions: [] });
  });
});

describe("request bodies", () => {
  it("a body over 1 MiB is 413 ValidationError with a clear message and creates nothing", async () => {
    const id = randomUUID();
    const response = await putJson(`${sessionsPath}/${id}`, { systemPrompt: "x".repeat(1024 * 1024) });
    expect(response.status).toBe(413);
    const body = await response.json();
    expect(body).toMatchObject({ _tag: "ValidationError" });
    expect(body.message).toMatch(/exceeds the 1048576-byte limit/);
    expect(await listedIds()).toEqual([]);
  });

  it("a declared Content-Length over 1 MiB is refused before the body is read", async () => {
    const response = await request(`${sessionsPath}/${randomUUID()}`, {
      method: "PUT",
      headers: { "content-type": "application/json", "content-length": String(1024 * 1024 + 1) },
      body: "{}",
    });
    expect(response.status).toBe(413);
    expect((await response.json()).message).toMatch(/exceeds the 1048576-byte limit/);
    expect(await listedIds()).toEqual([]);
  });

  it("a streamed body over 1 MiB without Content-Length is refused the same way", async () => {
    const chunk = new TextEncoder().encode(`{"systemPrompt":"${"y".repeat(600 * 1024)}`);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(chunk);
        controller.enqueue(new TextEncoder().encode(`${"y".repeat(600 * 1024)}"}`));
        controller.close();
      },
    });
    const response = await request(`${sessionsPath}/${randomUUID()}`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: stream,
      duplex: "half",
    } as RequestInit);
    expect(response.status).toBe(413);
    expect((await response.json()).message).toMatch(/exceeds the 1048576-byte limit/);
    expect(await listedIds()).toEqual([]);
  });

  it("a body just under 1 MiB is accepted", async () => {
    const id = randomUUID();
    const response = await putJson(`${sessionsPath}/${id}`, { systemPrompt: "x".repeat(1024 * 1024 - 100) });
    expect(response.status).toBe(200);
    expect(await listedIds()).toEqual([id]);
  });

  it("a body that is not JSON is 400 and creates nothing", async () => {
    const response = await request(`${sessionsPath}/${randomUUID()}`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: "{not json",
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ _tag: "ValidationError", message: expect.stringMatching(/not valid JSON/) });
    expect(await listedIds()).toEqual([]);
  });

  it("a JSON body with a non-JSON content type is 400 and creates nothing", async () => {
    const response = await request(`${sessionsPath}/${randomUUID()}`, { method: "PUT", headers: { "content-type": "text/plain" }, body: "{}" });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ _tag: "ValidationError", message: expect.stringMatching(/application\/json/) });
    expect(await listedIds()).toEqual([]);
  });
});

// The operations this build implements are the keys of the handler sets that
// services/host/handlers.ts, history-handlers.ts, depth-handlers.ts, mcp-handlers.ts and plugin-routes.ts build (`sessionHandlers`,
// and every other `…Handlers` factory);
// the factories only close over their services, so building them with none is safe. Every
// other route of the contract must answer 503 UnavailableError naming what is missing.
const implemented = new Set(
  [handlerModule, historyHandlerModule, workspaceHistoryHandlerModule, depthHandlerModule, mcpHandlerModule, pluginRouteModule, modelHandlerModule, providerHandlerModule, terminalHandlerModule, workspaceFilesHandlerModule]
    .flatMap((module) => Object.entries(module))
    .filter(([name, value]) => name.endsWith("Handlers") && typeof value === "function")
    .flatMap(([, factory]) => Object.keys((factory as (services: unknown) => object)({}))),
);
const unimplemented = routes.filter((route) => !implemented.has(route.operationId));

describe("operations not implemented yet", () => {
  it("the contract has 95 operations and the Session set is a strict subset of them", () => {
    expect(routes).toHaveLength(95);
    for (const operationId of implemented) expect(routes.map((route) => route.operationId)).toContain(operationId);
    expect(unimplemented.length).toBeGreaterThan(0);
    expect(unimplemented.length + implemented.size).toBe(95);
  });

  it.each(unimplemented.map((route): [string, RouteDefinition] => [route.operationId, route]))(
    "%s answers 503 UnavailableError service_unavailable naming the capability",
    async (operationId, route) => {
      const example = exampleRequest(route);
      // The example must pass the route's own validation, or a 503 could not be reached.
      if (route.schemas.path) expect(route.schemas.path.safeParse(example.path).success).toBe(true);
      if (route.schemas.query) expect(route.schemas.query.safeParse(example.query).success).toBe(true);
      if (route.schemas.headers) expect(route.schemas.headers.safeParse(example.headers).success).toBe(true);
      if (route.schemas.body && example.body !== undefined) expect(route.schemas.body.safeParse(example.body).success).toBe(true);

      const response = await harness().fetch(exampleHttpRequest(route, example, base));
      const body = await response.json();
      expect({ status: response.status, body }).toMatchObject({
        status: 503,
        body: { _tag: "UnavailableError", reason: "service_unavailable" },
      });
      // "<operationId> is unavailable: <capability> is not provided by this host yet", with a real capability.
      const named = /^(\w+) is unavailable: (.+) is not provided by this host yet$/.exec(body.message);
      expect(named?.[1]).toBe(operationId);
      expect(named?.[2]).not.toMatch(/^this operation$/);
    },
  );

  it.each<[string, RegExp]>([
    ["logs", /daemon log/],
    ["getMcpCatalog", /MCP/],
    ["sessionPlugins", /plugin/],
    ["providers", /provider/],
    ["listSessionCompactions", /compaction/],
    ["forkSession", /fork|conversation/],
  ])("the 503 of %s names its capability (%s)", async (operationId, capability) => {
    const route = unimplemented.find((r) => r.operationId === operationId);
    // An operation that is now implemented drops out of this table.
    if (!route) return expect(implemented.has(operationId)).toBe(true);
    const response = await harness().fetch(exampleHttpRequest(route, exampleRequest(route), base));
    expect(response.status).toBe(503);
    expect((await response.json()).message).toMatch(capability);
  });

  it("an unavailable operation still checks the token first", async () => {
    const secured = await startHarness({ token: "s3cret" });
    try {
      const route = unimplemented.find((r) => r.authenticated)!;
      const response = await secured.fetch(exampleHttpRequest(route, exampleRequest(route), base));
      expect(response.status).toBe(401);
    } finally {
      await secured.close();
    }
  });
});

describe("documents", () => {
  it("GET /openapi.json returns the committed document with 95 operations, and a HEAD twin of each GET", async () => {
    const response = await request("/openapi.json");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    const served = await response.json();
    expect(served).toEqual(committedOpenapi);
    const items = Object.values(served.paths as typeof committedOpenapi.paths);
    const operationIds = items.flatMap((item) => Object.entries(item).filter(([method]) => method !== "head").map(([, op]) => op.operationId));
    expect(operationIds).toHaveLength(95);
    expect(new Set(operationIds).size).toBe(95);
    for (const item of items) {
      const get = item["get"];
      expect(item["head"]?.operationId).toBe(get ? `head${get.operationId[0]!.toUpperCase()}${get.operationId.slice(1)}` : undefined);
    }
  });

  it("GET /reference returns an HTML page", async () => {
    const response = await request("/reference");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/html/);
    expect((await response.text()).trimStart().toLowerCase()).toMatch(/^<!doctype html|^<html/);
  });
});
