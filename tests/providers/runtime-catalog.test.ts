// The runtime model catalog through the generated client, in process: the snapshot's shape,
// `hostRevision` moving with its content (a key connected in auth.json by another process), the
// single-shot revision streams, a Session's adopted snapshot (frozen while a Turn runs), the
// typed client helpers and bad input on every operation.
import { randomUUID } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  createZeClient,
  getRuntimeModels,
  getSessionModels,
  runtimeModelsRevision,
  sdk,
  sessionModelsRevision,
  unwrap,
  watchRuntimeModels,
  watchSessionModels,
  type CatalogSnapshot,
} from "../../clients/index.js";
import { startModelHarness, TEST_MODEL, type ModelHarness } from "../support/model.js";

let h: ModelHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** The scripted `test` provider plus `keyed`, a provider that needs a key (none configured). */
async function start(): Promise<ModelHarness> {
  h = await startModelHarness({
    config: (model) => ({
      providers: {
        test: {
          definition: {
            displayName: "Scripted test model",
            baseURL: model.openaiBaseURL,
            protocol: "chat",
            authentication: { kind: "none" },
            models: { scripted: { displayName: "Scripted", limits: { contextUnits: 200000, outputUnits: 8192 } } },
          },
        },
        keyed: {
          definition: {
            displayName: "Keyed",
            baseURL: model.openaiBaseURL,
            protocol: "chat",
            credentials: { environment: ["KEYED_TEST_API_KEY"] },
            models: { a: { capabilities: { input: ["text", "image"], tools: false } } },
          },
        },
      },
    }),
  });
  return h;
}

/** Writes auth.json as another process would (the host re-reads it per request). */
function connectKey(harness: ModelHarness, providerId: string, key: string): void {
  const dir = join(harness.home.env["XDG_DATA_HOME"]!, "ze-harness");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(join(dir, "auth.json"), JSON.stringify({ [providerId]: { type: "api", key } }), { mode: 0o600 });
}

/** The raw single-shot stream: its status, content type and the SSE frames it sent before closing. */
async function rawEvents(harness: ModelHarness, path: string): Promise<{ status: number; type: string | null; frames: string[] }> {
  const response = await harness.fetch(new Request(`http://localhost${path}`));
  const text = await response.text();
  return { status: response.status, type: response.headers.get("content-type"), frames: text.split("\n\n").filter((frame) => frame.trim() !== "") };
}

describe("the runtime snapshot", () => {
  it("lists every provider with availability and every model with capabilities, limits, pricing, defaults and availability", async () => {
    const harness = await start();
    const snapshot = await getRuntimeModels(harness.api);
    expect(snapshot.hostRevision).toMatch(/^catalog-[0-9a-f]{32}$/);
    expect(snapshot.defaultModel).toBe(TEST_MODEL);
    expect(snapshot.providers).toEqual([
      { id: "keyed", displayName: "Keyed", availability: { status: "unavailable", reason: "missing_credentials" } },
      { id: "test", displayName: "Scripted test model", availability: { status: "available" } },
    ]);
    expect(snapshot.models.map((model) => model.ref)).toEqual(["keyed/a", "test/scripted"]);
    expect(snapshot.models[1]).toEqual({
      providerId: "test",
      ref: "test/scripted",
      id: "scripted",
      upstreamId: "scripted",
      displayName: "Scripted",
      capabilities: { input: ["text"], output: ["text"], tools: true },
      limits: { contextUnits: 200000, outputUnits: 8192 },
      pricing: { version: "unknown" },
      defaults: {},
      availability: { status: "available" },
    });
    expect(snapshot.models[0]).toMatchObject({
      ref: "keyed/a",
      capabilities: { input: ["text", "image"], tools: false, image: { referenceTypes: ["url", "base64"] } },
      limits: { contextUnits: 0, outputUnits: 0 },
      availability: { status: "unavailable", reason: "missing_credentials" },
    });
    // The same content gives the same revision.
    expect((await getRuntimeModels(harness.api)).hostRevision).toBe(snapshot.hostRevision);
  });

  it("publishes a new revision when another process connects a key in auth.json, and never returns the key", async () => {
    const harness = await start();
    const before = await getRuntimeModels(harness.api);
    const key = `sk-keyed-${randomUUID()}`;
    connectKey(harness, "keyed", key);
    const after = await getRuntimeModels(harness.api);
    expect(after.hostRevision).not.toBe(before.hostRevision);
    expect(after.providers.find((provider) => provider.id === "keyed")?.availability).toEqual({ status: "available" });
    expect(after.models.find((model) => model.ref === "keyed/a")?.availability).toEqual({ status: "available" });
    expect(JSON.stringify(after)).not.toContain(key);
    expect(await runtimeModelsRevision(harness.api)).toBe(after.hostRevision);
  });

  it("names an available configured default, and no default when the configured one is unavailable", async () => {
    h = await startModelHarness({ config: { model: "test/nope" } });
    const snapshot = await getRuntimeModels(h.api);
    expect(snapshot.defaultModel).toBeUndefined();
    expect(snapshot.models.map((model) => model.ref)).toContain(TEST_MODEL);
  });
});

describe("the revision streams", () => {
  it("modelEvents emits the present revision once as text/event-stream and closes", async () => {
    const harness = await start();
    const { hostRevision } = await getRuntimeModels(harness.api);
    const raw = await rawEvents(harness, "/v1/runtime/models/events");
    expect(raw.status).toBe(200);
    expect(raw.type).toMatch(/^text\/event-stream/);
    expect(raw.frames).toHaveLength(1);
    expect(raw.frames[0]).toContain("event: models.revision");
    expect(raw.frames[0]).toContain(JSON.stringify({ type: "models.revision", hostRevision }));
    const { stream } = await sdk.modelEvents({ client: harness.api.client, sseMaxRetryAttempts: 1 });
    const events: unknown[] = [];
    for await (const event of stream) events.push(event);
    expect(events).toEqual([{ type: "models.revision", hostRevision }]);
  });

  it("sessionModelEvents emits the Session's adopted revision once and closes", async () => {
    const harness = await start();
    const sessionId = await harness.createSession();
    const snapshot = await getSessionModels(harness.api, { sessionId });
    expect(snapshot).toEqual(await getRuntimeModels(harness.api));
    const raw = await rawEvents(harness, `/v1/servers/local/sessions/${sessionId}/models/events`);
    expect(raw.status).toBe(200);
    expect(raw.frames).toHaveLength(1);
    expect(await sessionModelsRevision(harness.api, { sessionId })).toBe(snapshot.hostRevision);
  });

  it("watchRuntimeModels reports the present snapshot, then a new one after a credential change", async () => {
    const harness = await start();
    const controller = new AbortController();
    const seen: CatalogSnapshot[] = [];
    let second!: () => void;
    const gotSecond = new Promise<void>((resolve) => (second = resolve));
    const watching = watchRuntimeModels(harness.api, {
      signal: controller.signal,
      intervalMs: 20,
      onSnapshot: (snapshot) => {
        seen.push(snapshot);
        if (seen.length === 1) connectKey(harness, "keyed", "sk-watch-0123456789");
        if (seen.length === 2) second();
      },
    });
    await gotSecond;
    controller.abort();
    await watching;
    expect(seen[0]!.hostRevision).not.toBe(seen[1]!.hostRevision);
    expect(seen[1]!.providers.find((provider) => provider.id === "keyed")?.availability.status).toBe("available");
  });
});

describe("watchSessionModels", () => {
  it("reports the Session's snapshot only when its revision is new, and a 4xx ends the watch", async () => {
    const harness = await start();
    const sessionId = await harness.createSession();
    const known = (await getSessionModels(harness.api, sessionId)).hostRevision;
    const controller = new AbortController();
    const seen: CatalogSnapshot[] = [];
    let checks = 0;
    let got!: () => void;
    const gotOne = new Promise<void>((resolve) => (got = resolve));
    // The same in-process handler, counting the revision checks the watch makes.
    const counting = createZeClient({
      baseUrl: "http://localhost",
      fetch: (request) => {
        if (request.url.endsWith("/models/events")) checks += 1;
        return harness.fetch(request);
      },
    });
    const watching = watchSessionModels(counting, sessionId, {
      signal: controller.signal,
      knownRevision: known,
      intervalMs: 10,
      onSnapshot: (snapshot) => {
        seen.push(snapshot);
        got();
      },
    });
    // The known revision fetches nothing while it stays.
    await expect.poll(() => checks).toBeGreaterThanOrEqual(2);
    expect(seen).toEqual([]);
    connectKey(harness, "keyed", "sk-session-watch-0123456789");
    await gotOne;
    controller.abort();
    await watching;
    expect(seen).toHaveLength(1);
    expect(seen[0]!.hostRevision).not.toBe(known);
    await expect(watchSessionModels(harness.api, randomUUID(), { onSnapshot: () => undefined })).rejects.toMatchObject({ status: 404, body: { _tag: "NotFoundError" } });
  });
});

describe("a Session's adopted snapshot", () => {
  it("stays the one its running Turn started with while the runtime snapshot moves, then follows the runtime again", async () => {
    const harness = await start();
    const sessionId = await harness.createSession();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    harness.model.reply(async () => {
      await gate;
      return { events: [{ type: "text", text: "done" }] };
    });
    const before = await getRuntimeModels(harness.api);
    const turnId = await harness.submit(sessionId, "hello");
    await harness.model.waitForRequest(1);
    connectKey(harness, "keyed", "sk-during-turn-0123456789");
    const runtime = await getRuntimeModels(harness.api);
    expect(runtime.hostRevision).not.toBe(before.hostRevision);
    expect((await getSessionModels(harness.api, { sessionId })).hostRevision).toBe(before.hostRevision);
    expect(await sessionModelsRevision(harness.api, { sessionId })).toBe(before.hostRevision);
    // Another (idle) Session adopts the runtime snapshot.
    const idle = await harness.createSession();
    expect((await getSessionModels(harness.api, { sessionId: idle })).hostRevision).toBe(runtime.hostRevision);
    release();
    const { turn } = await harness.finish(sessionId, turnId);
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "done" });
    await expect.poll(async () => (await getSessionModels(harness.api, { sessionId })).hostRevision).toBe(runtime.hostRevision);
  });
});

describe("bad input changes nothing and gets the contract's typed errors", () => {
  it("an unknown Session, a malformed Session ID and an unknown server", async () => {
    const harness = await start();
    const unknown = randomUUID();
    await expect(getSessionModels(harness.api, { sessionId: unknown })).rejects.toMatchObject({ status: 404, body: { _tag: "NotFoundError", resource: "session" } });
    await expect(sessionModelsRevision(harness.api, { sessionId: unknown })).rejects.toMatchObject({ status: 404, body: { _tag: "NotFoundError" } });
    for (const path of [`/v1/servers/local/sessions/not-a-uuid/models`, `/v1/servers/local/sessions/not-a-uuid/models/events`]) {
      const response = await harness.fetch(new Request(`http://localhost${path}`));
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ _tag: "ValidationError" });
    }
    const sessionId = await harness.createSession();
    await expect(getSessionModels(harness.api, { sessionId, server: "elsewhere" })).rejects.toMatchObject({ status: 404 });
    await expect(sessionModelsRevision(harness.api, { sessionId, server: "elsewhere" })).rejects.toMatchObject({ status: 404 });
  });

  it("refreshProviderModels: an unknown providerId is 404 provider, an over-long or mistyped one is 400", async () => {
    const harness = await start();
    const before = await getRuntimeModels(harness.api);
    await expect(unwrap(sdk.refreshProviderModels({ client: harness.api.client, body: { providerId: "nope" } }))).rejects.toMatchObject({
      status: 404,
      body: { _tag: "NotFoundError", resource: "provider" },
    });
    const missing = await harness.fetch(new Request("http://localhost/v1/runtime/models/refresh", { method: "POST" }));
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ _tag: "ValidationError" });
    for (const body of [{ providerId: "x".repeat(129) }, { providerId: 7 }, ["test"]]) {
      const response = await harness.fetch(new Request("http://localhost/v1/runtime/models/refresh", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }));
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ _tag: "ValidationError" });
    }
    expect((await getRuntimeModels(harness.api)).hostRevision).toBe(before.hostRevision);
  });

  it("refreshing a provider with nothing to refresh reports it unchanged with the present snapshot", async () => {
    const harness = await start();
    const result = await unwrap(sdk.refreshProviderModels({ client: harness.api.client, body: { providerId: "test" } }));
    expect(result.providers).toEqual([{ providerId: "test", status: "unchanged" }]);
    expect(result.snapshot).toEqual(await getRuntimeModels(harness.api));
  });
});
