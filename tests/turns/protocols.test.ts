// The same tool round through each provider protocol the scripted model speaks: Chat
// Completions, Responses and Anthropic Messages, each over its real SDK.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ToolTurnPart } from "../../clients/index.js";
import { startModelHarness, type ModelHarness, type TestProtocol } from "../support/model.js";
import { queue, runToEnd, seen } from "./helpers.js";

let h: ModelHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const paths: Record<TestProtocol, string> = {
  chat: "/v1/chat/completions",
  responses: "/v1/responses",
  messages: "/v1/messages",
};

describe.each(["chat", "responses", "messages"] as const)("the %s protocol", (protocol) => {
  it("runs a reasoning + tool round and completes with text and usage", async () => {
    h = await startModelHarness({ protocol });
    writeFileSync(join(h.home.root, "greeting.txt"), "PROTO-GREETING\n");
    h.model.enqueue(
      {
        events: [
          { type: "reasoning", text: "I should read the file." },
          { type: "text", text: "Reading." },
          { type: "tool_call", name: "read", arguments: { filePath: "greeting.txt" } },
        ],
        usage: { promptTokens: 100, completionTokens: 20, cachedPromptTokens: 40, reasoningTokens: 5 },
      },
      { events: [{ type: "text", text: "It says PROTO-GREETING." }], usage: { promptTokens: 150, completionTokens: 10 } },
    );
    const sessionId = await h.createSession();
    const { turnId } = await queue(h, sessionId, "What does greeting.txt say?");
    const { events, turn } = await runToEnd(h, sessionId, turnId);
    expect(turn.outcome).toEqual({ kind: "completed", turnId, text: "It says PROTO-GREETING." });
    expect(turn.parts.map((part) => part.type)).toEqual(["reasoning", "text", "tool", "text"]);
    const tool = turn.parts[2] as ToolTurnPart;
    expect(tool).toMatchObject({ toolId: "read", state: "completed", input: { filePath: "greeting.txt" } });
    expect(tool.toolCallId).not.toBe("");
    expect(h.model.requests.map((request) => [request.protocol, request.path])).toEqual([
      [protocol, paths[protocol]],
      [protocol, paths[protocol]],
    ]);
    // The tool result went back under the model's call id.
    const second = seen(h.model.requests[1]);
    expect(second).toContain("PROTO-GREETING");
    expect(second).toContain(tool.toolCallId);
    expect(events.filter((event) => event.type === "turn.usage").map((event) => (event as { usage: unknown }).usage)).toEqual([
      { promptTokens: 100, completionTokens: 20, totalTokens: 120, cachedPromptTokens: 40, reasoningCompletionTokens: 5 },
      { promptTokens: 150, completionTokens: 10, totalTokens: 160 },
    ]);
    expect(turn.usage).toEqual({ promptTokens: 250, completionTokens: 30, totalTokens: 280, cachedPromptTokens: 40, reasoningCompletionTokens: 5 });
  });
});
