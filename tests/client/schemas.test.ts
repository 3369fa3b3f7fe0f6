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
