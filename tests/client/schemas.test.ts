// The generated zod schemas are built on first use (tools/generate.mjs wraps each in z.lazy)
// and validate exactly as eager ones: the same results and the same issues.
import * as z from "zod";
import { describe, expect, it } from "vitest";
import * as schemas from "../../generated/client/zod.gen.js";

const exported = Object.entries(schemas) as [string, z.ZodType][];

describe("generated zod schemas", () => {
  it("are lazy, except plain enums (kept eager: callers read their options)", () => {
    const kinds = new Map<string, number>();
    for (const [, schema] of exported) kinds.set(schema._zod.def.type, (kinds.get(schema._zod.def.type) ?? 0) + 1);
    expect([...kinds.keys()].sort()).toEqual(["enum", "lazy"]);
    expect(kinds.get("lazy")).toBeGreaterThan(400);
    expect(schemas.zReasoningEffort.options).toContain("high");
  });

  it("validate as the schema they wrap: results and issues are the same", () => {
    const lazy = schemas.zSetSessionTitleRequest;
    const eager = (lazy as unknown as z.ZodLazy)._zod.def.getter() as z.ZodType;
    for (const value of [{ title: "A title" }, {}, { title: 42 }, { title: "x".repeat(101) }, null]) {
      const [a, b] = [lazy.safeParse(value), eager.safeParse(value)];
      expect(a.success).toBe(b.success);
      expect(a.error?.issues).toEqual(b.error?.issues);
    }
    // Optional properties holding a lazy schema stay optional.
    expect(schemas.zCreateSessionRequest.safeParse({}).success).toBe(true);
    expect(schemas.zCreateSessionRequest.safeParse({ defaultModel: 7 }).success).toBe(false);
  });
});

/** The inner schema of a generated (lazy) schema. */
const inner = (schema: z.ZodType): z.ZodType => (schema._zod.def.type === "lazy" ? ((schema as unknown as z.ZodLazy)._zod.def.getter() as z.ZodType) : schema);

/** A discriminated union as hey-api wrote it before tools/generate.mjs rewrote it: every member tried, each an intersection. */
function asPlainUnion(union: z.ZodDiscriminatedUnion): z.ZodType {
  const key = union._zod.def.discriminator;
  const options = union._zod.def.options as unknown as z.ZodType[];
  return z.union(
    options.map((option) => {
      const values = [...(option._zod.propValues?.[key] ?? [])];
      expect(values).toHaveLength(1);
      return z.object({ [key]: z.literal(values[0] as string) }).and(option);
    }) as unknown as [z.ZodType, z.ZodType],
  );
}

const turnId = "a0e7a6da-1f10-4cdf-a62f-01cdf44f0e6c";
const sessionId = "59538b87-b0ea-4524-ad8c-140d05e02d8d";
const unlimited = { kind: "unlimited", origin: "absent" };
// A Turn's events as a one-step Turn streams them (recorded from a real serve).
const turnEvents = [
  {
    type: "turn.snapshot",
    revision: 5,
    turn: {
      id: turnId,
      sessionId,
      sequence: 2,
      request: { sessionId, turnId, prompt: [{ type: "text", text: "hello" }], agent: "build" },
      model: "test/scripted",
      modelLeaseId: "lease_00f726cbaec54cf798e189bab46ee7dc",
      requestOptionsId: "a9477917-2797-4b5b-aecc-6bdc9c2d9aa8",
      policy: {
        version: 4,
        permissions: [],
        permissionMatching: { caseSensitive: true },
        approval: { timeoutMs: unlimited },
        timeouts: { turnMs: unlimited },
        steering: { maxBatches: unlimited },
        subagents: { maxDepth: { kind: "finite", value: 1, origin: "platform" } },
        provider: { maxAttempts: { kind: "finite", value: 3, origin: "platform" }, attemptTimeoutMs: unlimited, elapsedMs: unlimited, pacing: { kind: "none" } },
        context: { safetyReserve: { units: 1024, origin: "platform" } },
        images: { maxBase64Bytes: unlimited },
      },
      steering: { gate: "closed", promotedBatchCount: 0, steers: [] },
      phase: "completed",
      revision: 5,
      parts: [{ type: "text", id: "c8100f49-6814-4438-8761-8324a346e864", assistantMessageIndex: 0, text: "Hello!" }],
      acceptedAt: 1796655119358,
      attribution: { clientId: "ze-bench" },
      usage: { promptTokens: 2629, completionTokens: 14, totalTokens: 2643 },
      contextUse: { model: "test/scripted", usedUnits: 2643, contextUnits: 200000 },
      outcome: { kind: "completed", turnId, text: "Hello!" },
      startedAt: 1796655119358,
      completedAt: 1796655119368,
    },
  },
  { type: "turn.text.delta", revision: 4, partId: "c8100f49-6814-4438-8761-8324a346e864", assistantMessageIndex: 0, offset: 0, delta: "Hello!", extra: "dropped" },
  { type: "turn.finished", revision: 5, outcome: { kind: "completed", turnId, text: "Hello!" }, completedAt: 1796655119368 },
];

describe("generated discriminated unions (tools/generate.mjs rewrites hey-api's unions of intersections)", () => {
  const unions = exported.map(([name, schema]) => [name, inner(schema)] as const).filter(([, schema]) => schema._zod.def.type === "union" && "discriminator" in schema._zod.def);

  it("build, each member claiming exactly its own discriminator value", () => {
    expect(unions.length).toBeGreaterThanOrEqual(45);
    for (const [name, union] of unions) {
      const key = (union as z.ZodDiscriminatedUnion)._zod.def.discriminator;
      // The first parse builds the value → member map, which throws on a member without the key
      // or two members claiming one value.
      expect(() => union.safeParse({ [key]: "\u0000 no such value" }), name).not.toThrow();
      expect(union.safeParse({ [key]: "\u0000 no such value" }).success, name).toBe(false);
      asPlainUnion(union as z.ZodDiscriminatedUnion);
    }
  });

  it("accept and return what the plain unions did, for good and bad input", () => {
    const stream = inner(schemas.zTurnStreamEvent) as z.ZodDiscriminatedUnion;
    const plain = asPlainUnion(stream);
    const bad = [
      { ...turnEvents[2], type: "turn.nope" },
      { ...turnEvents[2], outcome: { kind: "completed" } },
      { ...turnEvents[1], delta: "" },
      { revision: 1 },
      "turn.finished",
      null,
    ];
    for (const event of [...turnEvents, ...bad]) {
      const [fast, slow] = [stream.safeParse(event), plain.safeParse(event)];
      expect(fast.success, JSON.stringify(event)).toBe(slow.success);
      expect(fast.data).toEqual(slow.data);
    }
    expect(stream.safeParse(turnEvents[1]).data).not.toHaveProperty("extra");
    expect(turnEvents.every((event) => stream.safeParse(event).success)).toBe(true);
  });

  it("report a bad member's issue at its own path", () => {
    const result = schemas.zTurnStreamEvent.safeParse({ ...turnEvents[2], completedAt: "soon" });
    expect(result.error?.issues.map((issue) => issue.path)).toEqual([["completedAt"]]);
  });
});

describe("generated SDK validators", () => {
  it("import the zod schemas once and keep the module (an import() per call resolves the specifier again each time)", async () => {
    const { readFileSync } = await import("node:fs");
    const source = readFileSync(new URL("../../generated/client/sdk.gen.ts", import.meta.url), "utf8");
    expect(source.match(/\(await import\('\.\/zod\.gen\.js'\)\)/g)).toBeNull();
    expect(source.match(/\?\?= import\('\.\/zod\.gen\.js'\)/g)).toHaveLength(1);
    expect(source.match(/await \(await zodSchemas\(\)\)\.z\w+\.parseAsync\(data\)/g)?.length).toBeGreaterThan(90);
  });
});
