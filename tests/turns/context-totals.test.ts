// The context check's and the context report's counts of a history (core/diagnostics/record.ts):
// a Session's repeated leading messages are counted once and reused by identity, so the figures
// must equal a plain count over JSON.stringify for a growing history, a replaced message, a
// shorter history and another history that starts with the same message.
import { describe, expect, it } from "vitest";
import { contextReport, messageTotals, messagesJsonLength } from "../../services/core/diagnostics/record.js";
import type { ModelMessage, ModelTool } from "../../services/providers/index.js";

const user = (text: string): ModelMessage => ({ role: "user", content: [{ type: "text", text }] }) as ModelMessage;
const assistant = (text: string): ModelMessage => ({ role: "assistant", content: [{ type: "text", text }] }) as ModelMessage;
const tool = (id: string): ModelMessage => ({ role: "tool", toolCallId: id, toolName: "read", result: { format: "text", value: `result ${id}` }, isError: false }) as ModelMessage;
const tools: ModelTool[] = [{ name: "read", description: "Reads.", inputSchema: { type: "object" } }] as ModelTool[];

/** What the report says, counted plainly. */
function plain(system: string | undefined, messages: readonly ModelMessage[]) {
  const groups = (["user", "assistant", "tool"] as const)
    .map((role) => {
      const own = messages.filter((message) => message.role === role);
      const characters = own.reduce((sum, message) => sum + JSON.stringify(message).length, 0);
      return { role, messages: own.length, characters, estimatedTokens: Math.ceil(characters / 4) };
    })
    .filter((group) => group.messages > 0);
  const total = JSON.stringify(messages).length + (system?.length ?? 0) + JSON.stringify(tools).length;
  return {
    groups: [...(system !== undefined ? [{ role: "system", messages: 1, characters: system.length, estimatedTokens: Math.ceil(system.length / 4) }] : []), ...groups],
    estimatedInputTokens: Math.ceil(total / 4),
  };
}

function check(messages: readonly ModelMessage[], system?: string): void {
  expect(messagesJsonLength(messages)).toBe(JSON.stringify(messages).length);
  const report = contextReport({ system, messages, tools }, 1000);
  expect({ groups: report.groups, estimatedInputTokens: report.estimatedInputTokens }).toEqual(plain(system, messages));
}

describe("a history's context counts", () => {
  it("equal a plain count as the history grows, changes, shrinks and forks", () => {
    check([]);
    const first = user("first");
    const history: ModelMessage[] = [first];
    check(history, "sys");
    for (let step = 0; step < 5; step += 1) {
      history.push(assistant(`answer ${step}`), tool(`c${step}`), user(`prompt ${step}`));
      check([...history]);
      check([...history], "system text");
    }
    const replaced = [...history];
    replaced[3] = user("a different, longer message than before");
    check(replaced);
    check(history.slice(0, 4));
    check([first, user("a fork")]);
    check([...history]);
  });
});

describe("a Session's next request", () => {
  it("looks up only what the last one did not share: the last prompt (read back as another object), the answer and the new prompt", () => {
    const history: ModelMessage[] = [user("first")];
    let prompt = user("prompt 0");
    expect(messageTotals([...history, prompt]).fresh).toBe(2);
    for (let turn = 1; turn <= 20; turn += 1) {
      // The Turn settled: its prompt comes back from its row as an equal but new object.
      history.push(JSON.parse(JSON.stringify(prompt)) as ModelMessage, assistant(`answer ${turn}`));
      prompt = user(`prompt ${turn}`);
      const request = [...history, prompt];
      expect(messageTotals(request).fresh).toBe(3);
      check(request);
    }
    // A history that shares only its first message with the kept one is counted from there on.
    const fork = [history[0]!, user("a fork"), assistant("forked")];
    expect(messageTotals(fork).fresh).toBe(2);
    check(fork);
  });
});
