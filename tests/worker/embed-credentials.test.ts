// Runtime provider credentials on an embedded WorkerHarnessHost (tests/worker/fixtures/
// embed-credentials-object.ts), in workerd through miniflare with the scripted model at a loopback
// baseURL, one workerd start: the live slot of an injected-only host (fails closed empty; a write,
// a rotation and a removal take effect on the next Turn with no reload; an in-flight request keeps
// its key; `has` is boolean-only; unknown ids and non-injected hosts throw) and the
// `resolveProviderCredential` resolver (a key per Session, asked once per Turn with the Turn's
// scope; a denial or a throw fails the Turn with `model_run_failed`, a bad code dropped).
import { randomUUID } from "node:crypto";
import type { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createZeClient, sdk, type ZeClient } from "../../clients/index.js";
import { credentialHash, startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { failure, ok } from "../support/calls.js";
import { contractFetch } from "../support/contract.js";
import { bundle, miniflare } from "./support.js";

const KEY_ONE = "slot-key-one";
const KEY_TWO = "slot-key-two-rotated";

let model: TestModel;
let mf: Miniflare;
let url: string;

beforeAll(async () => {
  model = await startTestModel();
  const script = await bundle("tests/worker/fixtures/embed-credentials-object.ts");
  mf = miniflare(script, {
    durableObjects: { CREDENTIALS: { className: "CredentialsObject", useSQLite: true } },
    bindings: {
      CREDENTIALS_PROVIDERS: JSON.stringify({
        test: {
          definition: {
            displayName: "Scripted test model",
            baseURL: model.openaiBaseURL,
            protocol: "chat",
            authentication: { kind: "bearer" },
            credentials: { environment: ["CREDENTIALS_TEST_KEY"] },
            models: { scripted: { displayName: "Scripted", limits: { contextUnits: 200000, outputUnits: 8192 } } },
          },
        },
      }),
    },
    host: "127.0.0.1",
    port: 0,
  });
  url = (await mf.ready).origin;
}, 60_000);

afterAll(async () => {
  await mf?.dispose();
  await model?.close();
});

/** The generated client for one of the fixture's objects. */
const clientOf = (object: string): ZeClient["client"] =>
  createZeClient({
    baseUrl: url,
    fetch: contractFetch((request) => {
      const named = new Request(request);
      named.headers.set("x-fixture-object", object);
      return globalThis.fetch(named);
    }),
  }).client;

const fixture = async (object: string, path: string, init: RequestInit = {}): Promise<any> => {
  const response = await fetch(`${url}${path}${path.includes("?") ? "&" : "?"}object=${object}`, init);
  expect(response.status).toBe(200);
  return response.json();
};

const credential = (object: string, method: "GET" | "PUT" | "DELETE", providerId: string, key?: string) =>
  fixture(object, `/fixture/credential?providerId=${encodeURIComponent(providerId)}`, { method, ...(key !== undefined ? { body: key } : {}) });

async function createSession(object: string): Promise<string> {
  const sessionId = randomUUID();
  await ok(sdk.createSession({ client: clientOf(object), path: { server: "embedded", sessionId }, body: {} }));
  return sessionId;
}

const submit = (object: string, sessionId: string, turnId = randomUUID()) =>
  sdk.submitPrompt({ client: clientOf(object), path: { server: "embedded", sessionId }, headers: { "x-ze-harness-client-id": "credentials-test" }, body: { delivery: "queue", turnId, prompt: [{ type: "text", text: "hello" }] } as never });

/** Admits a Turn and answers its `turn.finished` event. */
async function runTurn(object: string, sessionId: string): Promise<any> {
  const turnId = randomUUID();
  await ok(submit(object, sessionId, turnId));
  return { turnId, ...(await fixture(object, `/fixture/outcome?sessionId=${sessionId}&turnId=${turnId}`)) };
}

describe("runtime provider credentials on WorkerHarnessHost (workerd)", () => {
  it("the live slot: fails closed empty, a write and a rotation apply on the next Turn, a removal fails closed while an in-flight request keeps its key", async () => {
    const sessionId = await createSession("slot");
    // Empty slot: the admission is refused for want of a key, and no model request is made.
    const before = model.requests.length;
    const refused = await failure(submit("slot", sessionId));
    expect(refused.status).toBe(503);
    expect(JSON.stringify(refused.body)).toContain("has no injected credential");
    expect(model.requests.length).toBe(before);
    expect(await credential("slot", "GET", "test")).toEqual({ has: false });

    // A write: the next Turn runs on it, with no reload.
    expect(await credential("slot", "PUT", "test", KEY_ONE)).toEqual({ has: true });
    model.enqueue({ events: [{ type: "text", text: "On key one." }] });
    expect(await runTurn("slot", sessionId)).toMatchObject({ type: "turn.finished", outcome: { kind: "completed", text: "On key one." } });
    expect(model.requests.at(-1)!.credentialSha256).toBe(credentialHash(KEY_ONE));

    // A rotation: the next Turn uses the new key.
    expect(await credential("slot", "PUT", "test", KEY_TWO)).toEqual({ has: true });
    model.enqueue({ events: [{ type: "text", text: "On key two." }] });
    expect(await runTurn("slot", sessionId)).toMatchObject({ outcome: { kind: "completed", text: "On key two." } });
    expect(model.requests.at(-1)!.credentialSha256).toBe(credentialHash(KEY_TWO));

    // A removal while a request is in flight: that request carried (and keeps) its key; the next admission fails closed.
    let arrived!: () => void;
    const requested = new Promise<void>((resolve) => (arrived = resolve));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    model.reply(async () => {
      arrived();
      await gate;
      return { events: [{ type: "text", text: "Finished in flight." }] };
    });
    const turnId = randomUUID();
    await ok(submit("slot", sessionId, turnId));
    await requested;
    expect(await credential("slot", "DELETE", "test")).toEqual({ has: false });
    release();
    expect(await fixture("slot", `/fixture/outcome?sessionId=${sessionId}&turnId=${turnId}`)).toMatchObject({ outcome: { kind: "completed", text: "Finished in flight." } });
    expect(model.requests.at(-1)!.credentialSha256).toBe(credentialHash(KEY_TWO));
    expect((await failure(submit("slot", sessionId))).status).toBe(503);
  });

  it("has() is boolean-only, unknown ids throw on write and remove, a malformed key is refused, and a non-injected host throws", async () => {
    expect(await credential("slot", "GET", "nope")).toEqual({ has: false });
    expect(await credential("slot", "PUT", "nope", KEY_ONE)).toMatchObject({ threw: true, tag: "NotFoundError" });
    expect(await credential("slot", "DELETE", "nope")).toMatchObject({ threw: true, tag: "NotFoundError" });
    const malformed = await credential("slot", "PUT", "test", "has a space");
    expect(malformed).toMatchObject({ threw: true, tag: "ValidationError" });
    expect(JSON.stringify(malformed)).not.toContain("has a space");
    expect(await credential("slot", "GET", "test")).toEqual({ has: false });
    for (const method of ["GET", "PUT", "DELETE"] as const) {
      expect(await credential("ambient", method, "test", method === "PUT" ? KEY_ONE : undefined)).toMatchObject({ threw: true, tag: "ValidationError", message: expect.stringContaining("injected-only") });
    }
  });

  it("the resolver: a key per Session, asked once per Turn with the Turn's scope", async () => {
    const alice = await createSession("resolver");
    const bob = await createSession("resolver");
    await fixture("resolver", `/fixture/answer?sessionId=${alice}`, { method: "POST", body: JSON.stringify({ apiKey: "alice-key" }) });
    await fixture("resolver", `/fixture/answer?sessionId=${bob}`, { method: "POST", body: JSON.stringify({ apiKey: "bob-key" }) });

    // Alice's Turn calls a tool, so it makes two model requests on one acquisition of the key.
    model.enqueue({ events: [{ type: "tool_call", name: "read", arguments: { filePath: "missing.md" } }] }, { events: [{ type: "text", text: "Alice done." }] });
    const first = await runTurn("resolver", alice);
    expect(first).toMatchObject({ outcome: { kind: "completed", text: "Alice done." } });
    expect(model.requests.slice(-2).map((request) => request.credentialSha256)).toEqual([credentialHash("alice-key"), credentialHash("alice-key")]);

    model.enqueue({ events: [{ type: "text", text: "Bob done." }] });
    const second = await runTurn("resolver", bob);
    expect(second).toMatchObject({ outcome: { kind: "completed", text: "Bob done." } });
    expect(model.requests.at(-1)!.credentialSha256).toBe(credentialHash("bob-key"));

    const calls = (await fixture("resolver", "/fixture/calls")) as { providerId: string; scope: Record<string, string> }[];
    expect(calls.filter((call) => call.scope["turnId"] === first.turnId)).toEqual([{ providerId: "test", scope: { kind: "turn", sessionId: alice, turnId: first.turnId } }]);
    expect(calls.filter((call) => call.scope["turnId"] === second.turnId)).toEqual([{ providerId: "test", scope: { kind: "turn", sessionId: bob, turnId: second.turnId } }]);
  });

  it("the resolver: a denial fails the Turn with model_run_failed and its code, a bad code is dropped, a throw names only the provider", async () => {
    const before = model.requests.length;
    const denied = await createSession("resolver");
    await fixture("resolver", `/fixture/answer?sessionId=${denied}`, { method: "POST", body: JSON.stringify({ denied: "The seat for this workspace was revoked", code: "seat:revoked/2" }) });
    expect(await runTurn("resolver", denied)).toMatchObject({ outcome: { kind: "failed", fault: { code: "model_run_failed", message: "The seat for this workspace was revoked", providerCode: "seat:revoked/2" } } });

    const badCode = await createSession("resolver");
    await fixture("resolver", `/fixture/answer?sessionId=${badCode}`, { method: "POST", body: JSON.stringify({ denied: "No seat", code: "bad code!" }) });
    const dropped = await runTurn("resolver", badCode);
    expect(dropped).toMatchObject({ outcome: { kind: "failed", fault: { code: "model_run_failed", message: "No seat" } } });
    expect(dropped.outcome.fault.providerCode).toBeUndefined();

    const throwing = await createSession("resolver");
    await fixture("resolver", `/fixture/answer?sessionId=${throwing}`, { method: "POST", body: JSON.stringify("throw") });
    const threw = await runTurn("resolver", throwing);
    expect(threw).toMatchObject({ outcome: { kind: "failed", fault: { code: "model_run_failed", message: 'The credential resolver failed for provider "test"' } } });
    expect(JSON.stringify(threw)).not.toContain("sk-secret-in-error");
    // No model request was made on a denied or failed acquisition.
    expect(model.requests.length).toBe(before);
  });
});
