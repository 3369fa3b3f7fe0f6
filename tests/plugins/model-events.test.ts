// The plugin model event rules (services/plugins/model-events.ts), event by event: what each
// valid sequence lowers to (interleaved outputs released in index order, reasoning closed, usage
// converted) and the first rule each broken sequence violates.
import { describe, expect, it } from "vitest";
import type { PluginModelEvent } from "../../plugin/index.js";
import { MalformedModelStream, PluginEventChecker, pluginEventsOf } from "../../services/plugins/model-events.js";
import type { ModelStreamEvent } from "../../services/providers/index.js";

const TOOLS = [{ name: "read", description: "", inputSchema: { type: "object" } }];

function lower(events: readonly unknown[], tools = TOOLS, takesTools = true): ModelStreamEvent[] {
  const checker = new PluginEventChecker(tools, takesTools);
  const out = events.flatMap((event) => checker.accept(event));
  checker.end();
  return out;
}
const problem = (events: readonly unknown[], takesTools = true): string => {
  try {
    lower(events, TOOLS, takesTools);
  } catch (error) {
    if (error instanceof MalformedModelStream) return error.message;
    throw error;
  }
  return "accepted";
};

const started = { _tag: "ResponseStarted" } as const;
const stop = { _tag: "ResponseFinished", reason: "stop" } as const;
const delta = (index: number, contentId: string, text: string, contentType = "text") => ({ _tag: "ContentDelta", index, contentId, contentType, delta: text });
const done = (index: number, contentId: string, text: string, type = "text") => ({ _tag: "ContentCompleted", index, contentId, content: { type, text } });
const call = (index: number, id = "c1", name = "read") => ({ _tag: "ToolCallCompleted", index, toolCall: { type: "tool-call", id, name, input: { filePath: "." } } });

describe("plugin model events", () => {
  it("release interleaved outputs in index order, close reasoning and convert usage", () => {
    const events = [
      started,
      delta(0, "r", "think", "reasoning"),
      delta(1, "t", "Hel"),
      delta(0, "r", "ing", "reasoning"),
      delta(1, "t", "lo"),
      done(0, "r", "thinking", "reasoning"),
      done(1, "t", "Hello"),
      { _tag: "ContentCompleted", index: 2, contentId: "b", content: { type: "reasoning-boundary" } },
      { _tag: "Usage", usage: { freshInputUnits: 5, cacheReadInputUnits: 2, cacheWriteInputUnits: 1, inputUnits: 8, outputUnits: 3, reasoningUnits: 1, totalUnits: 11 } },
      stop,
    ];
    expect(lower(events)).toEqual([
      { type: "reasoning.delta", text: "think" },
      { type: "reasoning.delta", text: "ing" },
      { type: "reasoning.end" },
      { type: "text.delta", text: "Hel" },
      { type: "text.delta", text: "lo" },
      { type: "reasoning.end" },
      { type: "usage", promptTokens: 8, completionTokens: 3, cachedPromptTokens: 2, cacheWriteTokens: 1, reasoningTokens: 1 },
      { type: "finish", reason: "stop" },
    ]);
  });

  it("assemble tool calls from input deltas and require tool-calls exactly when one completed", () => {
    const events = [
      started,
      { _tag: "ToolCallInputDelta", index: 0, toolCallId: "c1", toolName: "read", delta: '{"filePath"' },
      { _tag: "ToolCallInputDelta", index: 0, toolCallId: "c1", toolName: "read", delta: ':"."}' },
      call(0),
      { _tag: "ResponseFinished", reason: "tool-calls" },
    ];
    expect(lower(events)).toEqual([{ type: "tool_call", id: "c1", name: "read", arguments: '{"filePath":"."}' }, { type: "finish", reason: "tool_calls" }]);
    expect(problem([started, call(0), stop])).toBe("the reason is tool-calls exactly when a tool call completed");
    expect(problem([started, done(0, "t", "x"), { _tag: "ResponseFinished", reason: "tool-calls" }])).toBe("the reason is tool-calls exactly when a tool call completed");
  });

  it("name the first broken rule", () => {
    expect(problem([delta(0, "t", "x")])).toBe("ContentDelta before ResponseStarted");
    expect(problem([started, started])).toBe("ResponseStarted twice");
    expect(problem([started, delta(1, "t", "x")])).toBe("output 1 skips index 0");
    expect(problem([started, delta(0, "t", "ab"), done(0, "t", "abc")])).toBe("output 0's completion does not equal its deltas");
    expect(problem([started, delta(0, "t", "a"), delta(0, "u", "b")])).toBe("output 0 changed its id or type");
    expect(problem([started, done(0, "t", "a"), done(1, "t", "b")])).toBe('output id "t" is used twice');
    expect(problem([started, delta(0, "t", "a"), stop])).toBe("ResponseFinished before every output completed");
    expect(problem([started, call(0, "c1", "write"), { _tag: "ResponseFinished", reason: "tool-calls" }])).toBe('tool "write" was not offered');
    expect(problem([started, call(0)], false)).toBe("the model does not take tools");
    expect(problem([started, { _tag: "Usage", usage: { freshInputUnits: 1, cacheReadInputUnits: 0, cacheWriteInputUnits: 0, inputUnits: 2, outputUnits: 0, reasoningUnits: 0, totalUnits: 2 } }])).toBe("Usage totals do not agree");
    expect(problem([started, stop, done(0, "t", "late")])).toBe("ContentCompleted after ResponseFinished");
    expect(problem([started, done(0, "t", "a")])).toBe("the stream ended without ResponseFinished");
    expect(problem([started, { _tag: "Surprise" }])).toBe('unknown event "Surprise"');
  });

  it("turn a sibling's events back into one valid plugin sequence", async () => {
    async function* sibling(): AsyncGenerator<ModelStreamEvent> {
      yield { type: "reasoning.delta", text: "hm" };
      yield { type: "reasoning.end" };
      yield { type: "text.delta", text: "Hi" };
      yield { type: "tool_call", id: "c9", name: "read", arguments: '{"filePath":"a"}' };
      yield { type: "usage", promptTokens: 10, completionTokens: 2, cachedPromptTokens: 4 };
      yield { type: "finish", reason: "tool_calls" };
    }
    const events: PluginModelEvent[] = [];
    for await (const event of pluginEventsOf(sibling())) events.push(event);
    // What Core checks a plugin model's own stream with accepts it unchanged.
    expect(lower(events).map((event) => event.type)).toEqual(["reasoning.delta", "reasoning.end", "text.delta", "tool_call", "usage", "finish"]);
    expect(events.at(-2)).toEqual({ _tag: "Usage", usage: { freshInputUnits: 6, cacheReadInputUnits: 4, cacheWriteInputUnits: 0, inputUnits: 10, outputUnits: 2, reasoningUnits: 0, totalUnits: 12 } });
  });
});
