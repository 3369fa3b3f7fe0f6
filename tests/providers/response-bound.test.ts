// ResponseBound (services/providers/wire.ts): what one model response may carry in all. Every
// provider-controlled string a Turn keeps counts against RESPONSE_CONTENT_LIMIT — text, reasoning
// and its continuation data (signatures, redacted and encrypted reasoning), refusals, tool calls'
// ids, names and arguments — and tool calls count against RESPONSE_TOOL_CALL_LIMIT; a malformed
// event (a tool call without a name) is counted as empty, never a crash. streamModel and the
// host's plugin-served models both apply it (tests/turns/outcomes, tests/plugins/models).
import { describe, expect, it } from "vitest";
import type { ModelStreamEvent } from "../../services/providers/index.js";
import { RESPONSE_CONTENT_LIMIT, RESPONSE_TOOL_CALL_LIMIT, ResponseBound } from "../../services/providers/wire.js";

const MiB = 1024 * 1024;
const big = "s".repeat(MiB - 64);

/** How many of `event` fit before the bound answers, and what it answered. */
function fill(event: ModelStreamEvent, max = 100): { accepted: number; reason: string | undefined } {
  const bound = new ResponseBound();
  for (let index = 0; index < max; index++) {
    const reason = bound.exceeded(event);
    if (reason !== undefined) return { accepted: index, reason };
  }
  return { accepted: max, reason: undefined };
}

const contentReason = `the response exceeds ${RESPONSE_CONTENT_LIMIT} characters of content`;

describe("ResponseBound", () => {
  it.each<[string, ModelStreamEvent]>([
    ["text", { type: "text.delta", text: big }],
    ["reasoning", { type: "reasoning.delta", text: big }],
    ["refusal", { type: "refusal.delta", text: big }],
    ["a thinking signature", { type: "reasoning.end", continuation: { protocol: "messages", providerId: "p", data: { signature: big } } }],
    ["redacted reasoning", { type: "reasoning.end", continuation: { protocol: "messages", providerId: "p", data: { redactedData: big } } }],
    ["encrypted reasoning, nested", { type: "reasoning.end", continuation: { protocol: "responses", providerId: "p", data: { id: "r", encryptedContent: [{ part: big }] } } }],
    ["tool-call arguments", { type: "tool_call", id: "c", name: "read", arguments: big }],
    ["tool-call ids", { type: "tool_call", id: big, name: "read", arguments: "{}" }],
  ])("counts %s: 8 MiB of it fit, the ninth passes the limit", (_name, event) => {
    expect(fill(event)).toEqual({ accepted: 8, reason: contentReason });
  });

  it("takes exactly RESPONSE_CONTENT_LIMIT characters, not one more", () => {
    const bound = new ResponseBound();
    expect(bound.exceeded({ type: "text.delta", text: "t".repeat(RESPONSE_CONTENT_LIMIT - 1) })).toBeUndefined();
    expect(bound.exceeded({ type: "text.delta", text: "t" })).toBeUndefined();
    expect(bound.exceeded({ type: "text.delta", text: "t" })).toBe(contentReason);
  });

  it(`allows ${RESPONSE_TOOL_CALL_LIMIT} tool calls in one response, not one more, however small`, () => {
    const { accepted, reason } = fill({ type: "tool_call", id: "c", name: "x", arguments: "{}" }, 5000);
    expect(accepted).toBe(RESPONSE_TOOL_CALL_LIMIT);
    expect(reason).toBe(`the response makes more than ${RESPONSE_TOOL_CALL_LIMIT} tool calls`);
  });

  it("counts a malformed tool call (no name, no arguments) as empty instead of throwing", () => {
    const bound = new ResponseBound();
    expect(() => bound.exceeded({ type: "tool_call", id: "c" } as unknown as ModelStreamEvent)).not.toThrow();
    expect(bound.exceeded({ type: "tool_call", id: "c", name: undefined, arguments: null } as unknown as ModelStreamEvent)).toBeUndefined();
  });

  it("ignores usage and finish events, and each response starts from nothing", () => {
    const bound = new ResponseBound();
    for (let index = 0; index < 10_000; index++) expect(bound.exceeded({ type: "usage", promptTokens: 1, completionTokens: 1 })).toBeUndefined();
    expect(bound.exceeded({ type: "finish", reason: "stop" } as ModelStreamEvent)).toBeUndefined();
    expect(fill({ type: "text.delta", text: big }).accepted).toBe(8);
  });
});
