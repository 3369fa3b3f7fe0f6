// A code-defined provider's `optionsSchema` (services/providers/native.ts) in workerd, through an
// embedding host Durable Object (tests/worker/fixtures/provider-options-object.ts) made after the
// Worker's startup, when workerd refuses Ajv's generated code: the options are checked by the
// Worker's schema interpreter instead (worker/validation.ts). Options that pass reach the
// provider's `acquireModel` (a Turn answers with them); an unknown property or a wrong type is
// refused with the typed `ProviderInvalid`, naming the option, never its value.
import { randomUUID } from "node:crypto";
import type { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sdk, type TurnStreamEvent } from "../../clients/index.js";
import { ok } from "../support/calls.js";
import { networkClient } from "../support/harness.js";
import { readSse } from "../support/terminals.js";
import { bundle, miniflare } from "./support.js";

let mf: Miniflare;
let url: string;

beforeAll(async () => {
  const script = await bundle("tests/worker/fixtures/provider-options-object.ts");
  mf = miniflare(script, { durableObjects: { OPTS: { className: "OptionsObject", useSQLite: true } }, host: "127.0.0.1", port: 0 });
  url = (await mf.ready).origin;
}, 60_000);

afterAll(async () => {
  await mf?.dispose();
});

const resources = async (server: string) => (await fetch(`${url}/fixture/${server}/resources`)).json();

describe("a provider definition's optionsSchema in workerd", () => {
  it("passes good options to acquireModel and refuses bad ones with ProviderInvalid", async () => {
    expect(await resources("good")).toEqual({ providerIds: ["greeter"] });
    const client = networkClient(url).client;
    const sessionId = randomUUID();
    await ok(sdk.createSession({ client, path: { server: "good", sessionId }, body: {} }));
    const turnId = randomUUID();
    await ok(sdk.submitPrompt({ client, path: { server: "good", sessionId }, headers: { "x-ze-harness-client-id": "provider-options-test" }, body: { delivery: "queue", turnId, prompt: [{ type: "text", text: "Hello" }] } as never }));
    const path = `/v1/servers/good/sessions/${sessionId}/turns/${turnId}/events`;
    const events = await readSse<TurnStreamEvent>(await fetch(`${url}${path}?afterRevision=0`), path, (event) => event.type === "turn.finished");
    expect(events.at(-1)).toMatchObject({ type: "turn.finished", outcome: { kind: "completed", text: "Ahoy!" } });

    const typo = (await resources("typo")) as { refused: { tag: string; message: string } };
    expect(typo.refused.tag).toBe("ProviderInvalid");
    expect(typo.refused.message).toContain("greeter");
    expect(typo.refused.message).toMatch(/lowd|additional/i);
    const wrong = (await resources("wrong")) as { refused: { tag: string; message: string } };
    expect(wrong.refused.tag).toBe("ProviderInvalid");
    expect(wrong.refused.message).toContain("/options/greeting");
    expect(wrong.refused.message).not.toContain("42");
    // A refused host answers its API with the typed refusal too.
    const answered = await fetch(`${url}/v1/servers/wrong/sessions/${randomUUID()}`, { method: "PUT", headers: { "content-type": "application/json" }, body: "{}" });
    expect(answered.status).toBe(503);
    expect(await answered.json()).toMatchObject({ _tag: "UnavailableError" });
  });
});
