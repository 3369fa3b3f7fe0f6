// JSON request bodies as the contract means them (services/http/json.ts), against a real harness
// with the scripted model: nesting bounded at MAX_JSON_DEPTH before anything walks the value (a
// 100,000-deep `providerOptions` was a 500 from the Session service's recursive canonical JSON),
// no field the contract does not declare (`visibility.through` was dropped by zod and admitted
// with 202), no key twice, UTF-8 only. Each refusal is a 400 ValidationError and admits nothing.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEPTH_MESSAGE, firstUnknownField, MAX_JSON_DEPTH } from "../../services/http/json.js";
import { startModelHarness, type ModelHarness } from "../support/model.js";

const base = "http://localhost";
let h: ModelHarness;
let sessionId: string;
const unexpected: unknown[] = [];

beforeAll(async () => {
  h = await startModelHarness({ harness: { onUnexpectedError: (error) => unexpected.push(error) } });
  sessionId = await h.createSession();
});
afterAll(async () => {
  await h.close();
});

const post = (path: string, body: string | Uint8Array<ArrayBuffer>): Promise<Response> =>
  h.fetch(
    new Request(`${base}/v1/servers/local/sessions/${sessionId}/${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-ze-harness-client-id": "json-test" },
      body,
    }),
  );

/** A prompt body as text, with `extra` spliced in verbatim (so it may be any JSON text at all). */
const promptText = (extra: string, turnId = randomUUID()): string =>
  `{"delivery":"queue","turnId":"${turnId}","prompt":[{"type":"text","text":"hi"}]${extra === "" ? "" : `,${extra}`}}`;
const compactionText = (extra: string): string => `{"compactionId":"${randomUUID()}"${extra === "" ? "" : `,${extra}`}}`;

const nestedArray = (depth: number): string => "[".repeat(depth) + "]".repeat(depth);
const nestedObject = (depth: number): string => '{"a":'.repeat(depth - 1) + "{}" + "}".repeat(depth - 1);

async function expectRefused(response: Response, message: string | RegExp): Promise<void> {
  const body = (await response.json()) as { _tag: string; message: string };
  expect({ status: response.status, tag: body._tag }).toEqual({ status: 400, tag: "ValidationError" });
  if (typeof message === "string") expect(body.message).toBe(message);
  else expect(body.message).toMatch(message);
}

const turnIds = async (): Promise<string[]> => {
  const response = await h.fetch(new Request(`${base}/v1/servers/local/sessions/${sessionId}/turns`));
  return ((await response.json()) as { turns: { turn: { id: string } }[] }).turns.map((state) => state.turn.id);
};

describe("nesting depth", () => {
  it.each<[string, (depth: number) => string]>([
    ["array", nestedArray],
    ["object", nestedObject],
  ])("a 100,000-deep %s in providerOptions of prompts and compactions is a 400, never a 500, and admits nothing", async (_, nested) => {
    const before = await turnIds();
    await expectRefused(await post("prompts", promptText(`"providerOptions":${nested(100_000)}`)), DEPTH_MESSAGE);
    await expectRefused(await post("compactions", compactionText(`"providerOptions":${nested(100_000)}`)), DEPTH_MESSAGE);
    expect(await turnIds()).toEqual(before);
    expect(unexpected).toEqual([]);
  });

  it(`the body itself counts as level 1: ${MAX_JSON_DEPTH} levels are admitted, ${MAX_JSON_DEPTH + 1} are not`, async () => {
    const turnId = randomUUID();
    // The body is level 1, providerOptions' outermost array level 2.
    const admitted = await post("prompts", promptText(`"providerOptions":{"x":${nestedArray(MAX_JSON_DEPTH - 2)}}`, turnId));
    expect(admitted.status).toBe(202);
    await expectRefused(await post("prompts", promptText(`"providerOptions":{"x":${nestedArray(MAX_JSON_DEPTH - 1)}}`)), DEPTH_MESSAGE);
    expect(await turnIds()).toContain(turnId);
  });

  it("brackets inside strings are text, not nesting", async () => {
    const response = await post("prompts", promptText(`"providerOptions":{"note":${JSON.stringify("[{".repeat(10_000))}}`));
    expect(response.status).toBe(202);
  });

  it("any route with a body is bounded the same way, before its schema is looked at", async () => {
    const response = await h.fetch(
      new Request(`${base}/v1/servers/local/sessions/${randomUUID()}`, { method: "PUT", headers: { "content-type": "application/json" }, body: nestedArray(100_000) }),
    );
    await expectRefused(response, DEPTH_MESSAGE);
  });
});

describe("fields the contract does not declare", () => {
  it("visibility.through is refused by name, not admitted with 202", async () => {
    const before = await turnIds();
    await expectRefused(
      await post("prompts", promptText(`"visibility":{"through":[[[1]]]}`)),
      "Invalid request: body.visibility.through (/visibility/through): is not a field of this request",
    );
    expect(await turnIds()).toEqual(before);
  });

  it.each<[string, string, string]>([
    ["at the top", `"turnID":"${randomUUID()}"`, "body.turnID (/turnID)"],
    ["in an array element", "", "body.prompt.0.colour (/prompt/0/colour)"],
  ])("an unknown field %s is named by its pointer", async (_, extra, label) => {
    const text = extra === "" ? promptText("").replace('"text":"hi"', '"text":"hi","colour":"red"') : promptText(extra);
    await expectRefused(await post("prompts", text), `Invalid request: ${label}: is not a field of this request`);
  });

  it("in a discriminated union the member that matched decides: a steer's field on a queued prompt is refused", async () => {
    await expectRefused(await post("prompts", promptText(`"expectedTurnId":"${randomUUID()}"`)), /body\.expectedTurnId \(\/expectedTurnId\): is not a field/);
  });

  it("an open value (providerOptions) keeps every key it is given, at any depth up to the bound", async () => {
    const response = await post("prompts", promptText(`"providerOptions":{"anything":{"goes":[{"here":true}]}}`));
    expect(response.status).toBe(202);
  });

  it("firstUnknownField walks input and output side by side and stops at open values", () => {
    const open = { deep: { x: 1 } };
    expect(firstUnknownField({ a: 1, b: [{ c: 1, d: 2 }] }, { a: 1, b: [{ c: 1 }] })).toEqual(["b", 0, "d"]);
    expect(firstUnknownField({ a: open }, { a: open })).toBeUndefined();
    expect(firstUnknownField({ a: { b: 1 } }, { a: { b: 1, defaulted: 2 } })).toBeUndefined();
  });
});

describe("duplicate keys and encoding", () => {
  it.each<[string, string, string]>([
    ["at the top", `"model":"a/b","model":"c/d"`, "body (/model)"],
    ["nested", `"visibility":{"excludedTurnIds":[],"excludedTurnIds":[]}`, "body (/visibility/excludedTurnIds)"],
    ["spelt with an escape", `"providerOptions":{"a":1,"\\u0061":2}`, "body (/providerOptions/a)"],
  ])("a key given twice %s is refused, naming where", async (_, extra, label) => {
    const before = await turnIds();
    await expectRefused(await post("prompts", promptText(extra)), new RegExp(`^Invalid request: ${label.replace(/[()/]/g, "\\$&")}: the key "\\w+" is given more than once$`));
    expect(await turnIds()).toEqual(before);
  });

  it("the same key in two sibling objects is not a duplicate", async () => {
    const response = await post("prompts", promptText(`"providerOptions":{"x":{"a":1},"y":{"a":2},"z":[{"a":1},{"a":2}]}`));
    expect(response.status).toBe(202);
  });

  it("a body that is not UTF-8 is refused, not decoded with U+FFFD", async () => {
    const text = new TextEncoder().encode(promptText(`"providerOptions":{"x":"__"}`));
    const at = Buffer.from(text).indexOf("__");
    text[at] = 0xc3;
    text[at + 1] = 0x28;
    await expectRefused(await post("prompts", text), "Invalid request: the body is not valid UTF-8");
  });
});
