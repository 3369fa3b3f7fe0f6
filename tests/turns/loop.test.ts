import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startModelHarness, type ModelHarness } from "../support/model.js";

let h: ModelHarness;
beforeEach(async () => {
  h = await startModelHarness();
});
afterEach(async () => {
  await h.close();
});

describe("the model ↔ tool loop", () => {
  it("runs a tool call and completes with the model's final text", async () => {
    writeFileSync(join(h.home.root, "hello.txt"), "hello world\n");
    h.model.enqueue(
      { events: [{ type: "tool_call", name: "read", arguments: { filePath: "hello.txt" } }] },
      { events: [{ type: "text", text: "It says hello world." }], usage: { promptTokens: 12, completionTokens: 4 } },
    );
    const sessionId = await h.createSession();
    const turnId = await h.submit(sessionId, "What does hello.txt say?");
    const { events, turn } = await h.finish(sessionId, turnId);
    expect(turn.phase).toBe("completed");
    expect(turn.outcome).toEqual({ kind: "completed", turnId, text: "It says hello world." });
    const tool = turn.parts.find((part) => part.type === "tool");
    expect(tool).toMatchObject({ type: "tool", toolId: "read", state: "completed" });
    expect(events.map((event) => event.type)).toContain("turn.tool.completed");
    // The tool result went back to the model in the second request.
    const second = h.model.requests[1]!.body as { messages: { role: string; content: unknown }[] };
    expect(JSON.stringify(second.messages)).toContain("hello world");
  });
});
