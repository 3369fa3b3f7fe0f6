// The Worker as `worker:dev` configures it (worker/miniflare.config.mjs: the server objects and
// the singleton provider authority): a Turn's inference key comes through the authority. With
// only the Worker secret, the scripted model sees the secret; once a key is connected through
// `/v1/runtime/providers/:id/connect/key`, a server object initialized after it uses the stored
// key (the reference: servers resolve keys once at initialization; a stored key wins).
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sdk, type ZeClient } from "../../clients/index.js";
import { watchTurn } from "../../clients/watch.js";
import { credentialHash, startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { ok } from "../support/calls.js";
import { networkClient } from "../support/harness.js";
import { testProviderConfig } from "../support/model.js";
// @ts-expect-error -- a plain .mjs configuration without types
import { workerOptions } from "../../worker/miniflare.config.mjs";
import { bundle } from "./support.js";

let model: TestModel;
let mf: Miniflare;
let api: ZeClient;
let client: ZeClient["client"];
let persist: string;

const SECRET = "sk-worker-secret-0001";
const STORED = "sk-stored-connection-0002";

beforeAll(async () => {
  model = await startTestModel();
  const script = await bundle("worker/index.ts");
  persist = mkdtempSync(join(tmpdir(), "zh-worker-keys-"));
  const providers = testProviderConfig(model) as { test: { definition: Record<string, unknown> } };
  // The scripted provider takes a bearer key named by its definition (a Worker secret).
  providers.test.definition = { ...providers.test.definition, authentication: { kind: "bearer" }, credentials: { environment: ["SCRIPTED_API_KEY"] } };
  mf = new Miniflare(workerOptions({ scriptPath: script, persist, port: 0, env: { HARNESS_PROVIDERS: JSON.stringify(providers), SCRIPTED_API_KEY: SECRET } }));
  api = networkClient((await mf.ready).origin);
  client = api.client;
}, 60_000);

afterAll(async () => {
  await mf?.dispose();
  await model?.close();
  if (persist) rmSync(persist, { recursive: true, force: true });
});

/** Runs one Turn on a fresh server (a server object initialized now) and returns the credential the model saw. */
async function credentialOfTurn(server: string): Promise<string | undefined> {
  model.enqueue({ events: [{ type: "text", text: "keyed" }] });
  const sessionId = randomUUID();
  await ok(sdk.createSession({ client, path: { server, sessionId }, body: {} }));
  const turnId = randomUUID();
  await ok(sdk.submitPrompt({ client, path: { server, sessionId }, headers: { "x-ze-harness-client-id": "worker-keys-test" }, body: { delivery: "queue", turnId, prompt: [{ type: "text", text: "hello" }] } as never }));
  const turn = await watchTurn(api, { server, sessionId, turnId });
  expect(turn.outcome).toMatchObject({ kind: "completed", text: "keyed" });
  return model.requests.at(-1)!.credentialSha256;
}

describe("provider keys of Worker Turns through the authority", () => {
  it("uses the Worker secret, then a connected key for servers initialized after it; no key in any answer", async () => {
    expect(await credentialOfTurn("before")).toBe(credentialHash(SECRET));
    const connected = await ok(sdk.connectProviderKey({ client, path: { providerId: "test" }, body: { apiKey: STORED, label: "stored" } }));
    expect(JSON.stringify(connected)).not.toContain(STORED);
    expect(await credentialOfTurn("after")).toBe(credentialHash(STORED));
  });
});
