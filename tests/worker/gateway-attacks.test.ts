// The Worker gateway under attack, in workerd (miniflare) over one bundle of the Worker itself:
// what a caller without the token, or with it but with hostile paths and headers, can make the
// gateway do. Each test names the hole it closes or the attack it shows holding: a preflight
// never reaches (and so never creates) a server object; names and Session ids the gateway cannot
// carry unchanged in its identity headers are typed 400s, not workerd 500s with a stack; oversized
// requests are refused before an object exists; a blank HARNESS_API_TOKEN fails closed (as
// `serve --token ""` refuses to start); Host/Origin checks hold on every route, the client's own
// identity headers are replaced, and a provider key never appears in any answer.
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundle } from "./support.js";
// @ts-expect-error -- the plain .mjs deployment configuration, without types
import { workerOptions } from "../../worker/miniflare.config.mjs";

const TOKEN = "gateway-attack-token";
const SECRET = "sk-discovery-secret-5e0c2b7d91af";
const auth = { authorization: `Bearer ${TOKEN}` };

let script: string;
let persist: string;
let mf: Miniflare;
let url: string;
let models: Server;
/** Every request header the discovery server saw (the provider key is sent there, and only there). */
const seenByProvider: string[] = [];
const open: Miniflare[] = [];

/** The server objects' SQLite files under the persisted directory: one per object that was ever woken. */
const serverObjects = (): string[] =>
  readdirSync(persist, { recursive: true }).map(String).filter((name) => name.includes("HarnessServerObject") && name.endsWith(".sqlite"));

/** A raw HTTP/1.1 request (fetch cannot set Host). */
function raw(method: string, path: string, headers: Record<string, string>): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: target.hostname, port: target.port, method, path, headers }, (response) => {
      let body = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (body += chunk));
      response.on("end", () => resolve({ status: response.statusCode!, body, headers: response.headers }));
    });
    request.on("error", reject);
    request.end();
  });
}

async function start(env: Record<string, string>, persistDir?: string): Promise<string> {
  const instance = new Miniflare(workerOptions({ scriptPath: script, persist: persistDir, port: 0, env }));
  open.push(instance);
  return (await instance.ready).origin;
}

beforeAll(async () => {
  script = await bundle("worker/index.ts");
  persist = mkdtempSync(join(tmpdir(), "zh-gateway-attacks-"));
  // A provider's /models endpoint that echoes the request (the key included) in a failing answer.
  models = createServer((request, response) => {
    seenByProvider.push(JSON.stringify(request.headers));
    response.writeHead(500, { "content-type": "text/plain" }).end(`denied for ${request.headers.authorization ?? ""}`);
  });
  await new Promise<void>((resolve) => models.listen(0, "127.0.0.1", resolve));
  const providers = { leaky: { definition: { protocol: "chat", baseURL: `http://127.0.0.1:${(models.address() as AddressInfo).port}/v1`, credentials: { environment: ["LEAKY_API_KEY"] } } } };
  url = await start({ HARNESS_API_TOKEN: TOKEN, HARNESS_PROVIDERS: JSON.stringify(providers), LEAKY_API_KEY: SECRET }, persist);
  mf = open[0]!;
}, 90_000);

afterAll(async () => {
  for (const instance of open) await instance.dispose();
  models?.close();
  if (persist !== undefined) rmSync(persist, { recursive: true, force: true });
});

describe("the Worker gateway under attack (workerd)", () => {
  it("answers a preflight itself: without the token nothing reaches or creates a server object", async () => {
    expect(mf).toBeDefined();
    const preflight = await fetch(`${url}/v1/servers/made-by-anyone/sessions`, {
      method: "OPTIONS",
      headers: { origin: url, "access-control-request-method": "GET" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-methods")).toContain("GET");
    expect(serverObjects()).toEqual([]);
    // The check above could fail: an authenticated request does create the object.
    expect((await fetch(`${url}/v1/servers/made-by-owner/sessions`, { headers: auth })).status).toBe(200);
    expect(serverObjects()).toHaveLength(1);
    // And the preflight is still refused for a foreign origin.
    expect((await fetch(`${url}/v1/servers/made-by-owner/sessions`, { method: "OPTIONS", headers: { origin: "https://evil.example" } })).status).toBe(403);
  });

  it("refuses names and Session ids it cannot carry unchanged, and oversized requests, as typed errors before any object exists", async () => {
    const before = serverObjects().length;
    for (const path of ["/v1/servers/a%0Ab/sessions", "/v1/servers/%20padded/sessions", "/v1/servers/tab%09/sessions", "/v1/servers/a/sessions/%E0%A4"]) {
      const response = await fetch(`${url}${path}`, { headers: auth });
      expect(response.status, path).toBe(400);
      expect(response.headers.get("ze-harness-version"), path).toBeTruthy();
      expect(((await response.json()) as { _tag: string })._tag, path).toBe("ValidationError");
    }
    const long = await fetch(`${url}/v1/servers/${"x".repeat(9000)}/sessions`, { headers: auth });
    expect(long.status).toBe(414);
    expect(((await long.json()) as { _tag: string })._tag).toBe("ValidationError");
    const headers = await fetch(`${url}/v1/servers/big-headers/sessions`, { headers: { ...auth, "x-padding": "p".repeat(20_000) } });
    expect(headers.status).toBe(431);
    expect(serverObjects()).toHaveLength(before);
    // Encoded names are names, one object each, never a path: `a%2Fb` and `日本` are served and isolated.
    const session = "0beb6619-0000-4000-8000-00000000b001";
    const created = await fetch(`${url}/v1/servers/a%2Fb/sessions/${session}`, { method: "PUT", headers: { ...auth, "content-type": "application/json" }, body: "{}" });
    expect(created.status).toBe(200);
    const list = async (server: string): Promise<unknown[]> => ((await (await fetch(`${url}/v1/servers/${server}/sessions`, { headers: auth })).json()) as { sessions: unknown[] }).sessions;
    expect(await list("a%2Fb")).toHaveLength(1);
    expect(await list("a")).toEqual([]);
    expect(await list("%E6%97%A5%E6%9C%AC")).toEqual([]);
  });

  it("replaces a client's own identity headers: another server's name in x-zephyr-server reaches nothing of it", async () => {
    const session = "0beb6619-0000-4000-8000-00000000b002";
    expect((await fetch(`${url}/v1/servers/victim/sessions/${session}`, { method: "PUT", headers: { ...auth, "content-type": "application/json" }, body: "{}" })).status).toBe(200);
    const spoofed = await fetch(`${url}/v1/servers/attacker/sessions`, { headers: { ...auth, "x-zephyr-server": "victim", "x-zephyr-session-id": session } });
    expect(((await spoofed.json()) as { sessions: unknown[] }).sessions).toEqual([]);
    const other = await fetch(`${url}/v1/servers/attacker/sessions/${session}`, { headers: { ...auth, "x-zephyr-server": "victim" } });
    expect(other.status).toBe(404);
  });

  it("checks Host and Origin on every route, the token on every authenticated one, and never answers the provider key", async () => {
    for (const path of ["/openapi.json", "/v1/health", "/v1/runtime/providers", "/v1/runtime/models", "/v1/servers/victim/sessions"]) {
      expect((await raw("GET", path, { host: "evil.example", ...auth })).status, path).toBe(403);
      expect((await raw("GET", path, { host: "127.0.0.1", origin: "https://evil.example", ...auth })).status, path).toBe(403);
      expect((await raw("OPTIONS", path, { host: "evil.example" })).status, path).toBe(403);
    }
    for (const authorization of ["", "Bearer", "Bearer ", `Bearer ${TOKEN}x`, `Basic ${TOKEN}`, `Bearer ${TOKEN.slice(0, -1)}`]) {
      for (const path of ["/v1/runtime/providers", "/v1/servers/victim/sessions"]) {
        expect((await raw("GET", path, { host: "127.0.0.1", authorization })).status, `${path} ${authorization}`).toBe(401);
      }
    }
    // The provider's discovery fails with an answer that echoes the key: no answer carries it.
    const answers: string[] = [];
    for (const [method, path, body] of [
      ["GET", "/v1/runtime/providers", undefined],
      ["GET", "/v1/runtime/providers/leaky", undefined],
      ["GET", "/v1/runtime/models", undefined],
      ["POST", "/v1/runtime/models/refresh", "{}"],
      ["POST", "/v1/runtime/models/refresh", '{"providerId":"leaky"}'],
    ] as const) {
      const response = await fetch(`${url}${path}`, { method, headers: { ...auth, "content-type": "application/json" }, ...(body !== undefined ? { body } : {}) });
      expect(response.status, path).toBe(200);
      answers.push(await response.text());
    }
    // A refused key is not echoed either: not one with a space, nor an over-long one.
    for (const apiKey of [`${SECRET} tail`, `${SECRET}${"k".repeat(9000)}`, `${SECRET}\n`]) {
      const refused = await fetch(`${url}/v1/runtime/providers/leaky/connect/key`, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: JSON.stringify({ apiKey }) });
      expect(refused.status).toBe(400);
      answers.push(await refused.text());
    }
    expect(seenByProvider.some((headers) => headers.includes(SECRET))).toBe(true);
    expect(answers.join("\n")).toContain('"status":"failed"');
    expect(answers.join("\n")).not.toContain(SECRET);
  });

  it("fails closed when HARNESS_API_TOKEN is set but blank (the Node host refuses an empty --token)", async () => {
    const blank = await start({ HARNESS_API_TOKEN: "" });
    for (const path of ["/v1/runtime/providers", "/v1/servers/open/sessions"]) {
      const response = await fetch(`${blank}${path}`);
      expect(response.status, path).toBe(503);
      expect(((await response.json()) as { message: string }).message).toContain("HARNESS_API_TOKEN is set but empty");
    }
  });
});
