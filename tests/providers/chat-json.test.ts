// The Chat Completions request's messages are serialized per message and reused across requests
// (adapters/chat.ts `chatMessagesJson`): the text must be exactly JSON.stringify of the lowered
// messages, for every kind of message, on the first request and on later ones that reuse the
// cached parts, and an assistant's reasoning must follow the provider of the request at hand.
import { describe, expect, it } from "vitest";
import { chatMessages, chatMessagesJson, chatRequestJson, joinedMessagesJson } from "../../services/providers/adapters/chat.js";
import type { ModelMessage, ModelRequest, ModelTool } from "../../services/providers/index.js";

const PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

const history: ModelMessage[] = [
  { role: "user", content: [{ type: "text", text: "Read a.txt, and \"quote\" this: \u2028" }] },
  {
    role: "assistant",
    content: [
      { type: "reasoning", text: "Need the file.", continuation: { protocol: "chat", providerId: "p1", data: { field: "reasoning_content" } } },
      { type: "text", text: "Reading." },
      { type: "tool_call", id: "call_1", name: "read", arguments: '{"path":"a.txt"}' },
      { type: "tool_call", id: "call_2", name: "shot", arguments: "{}" },
    ],
  },
  { role: "tool", toolCallId: "call_1", toolName: "read", result: { format: "text", value: "hello" }, isError: false },
  {
    role: "tool",
    toolCallId: "call_2",
    toolName: "shot",
    result: { format: "content", value: [{ type: "text", text: "a picture" }, { type: "image", source: { type: "base64", mimeType: "image/png", data: PIXEL } }] },
    isError: false,
  },
  { role: "assistant", content: [{ type: "reasoning", text: "only thinking" }] },
  { role: "user", content: [{ type: "text", text: "Look:" }, { type: "image", source: { type: "url", url: "https://example.test/a.png" } }] },
  { role: "assistant", content: [{ type: "refusal", text: "No." }] },
] as ModelMessage[];

function requestFor(providerId: string, system?: string): Pick<ModelRequest, "system" | "messages" | "model"> {
  return { system, messages: history, model: { providerId } as ModelRequest["model"] };
}

describe("chatMessagesJson", () => {
  it("is JSON.stringify of the lowered messages, on the first request and on the next ones", () => {
    const first = requestFor("p1", "Be brief.");
    const expected = JSON.stringify(chatMessages(first));
    expect(chatMessagesJson(first)).toBe(expected);
    // Again: the user and assistant parts now come from the cache.
    expect(chatMessagesJson(first)).toBe(expected);
    // The reasoning is replayed to its own provider, on the assistant message with tool calls.
    expect(JSON.parse(expected)[2]).toMatchObject({ role: "assistant", reasoning_content: "Need the file." });
  });

  it("lowers a cached assistant message again for another provider", () => {
    const own = requestFor("p1");
    const other = requestFor("p2");
    expect(chatMessagesJson(own)).toBe(JSON.stringify(chatMessages(own)));
    const elsewhere = chatMessagesJson(other);
    expect(elsewhere).toBe(JSON.stringify(chatMessages(other)));
    expect(JSON.parse(elsewhere)[1]).not.toHaveProperty("reasoning_content");
    // And back: the first provider's reasoning is not lost to the other's cached form.
    expect(JSON.parse(chatMessagesJson(own))[1]).toMatchObject({ reasoning_content: "Need the file." });
  });

  it("reuses a Session's leading messages only while they are the same objects: a growing history, a tool run continued, a changed message, another provider", () => {
    const user = (text: string): ModelMessage => ({ role: "user", content: [{ type: "text", text }] }) as ModelMessage;
    const silent = (): ModelMessage => ({ role: "assistant", content: [{ type: "reasoning", text: "hm" }] }) as ModelMessage;
    const first = user("first");
    const grown: ModelMessage[] = [first];
    const check = (messages: ModelMessage[], providerId = "p1", system?: string) => {
      const request = { system, messages: [...messages], model: { providerId } as ModelRequest["model"] };
      expect(chatMessagesJson(request)).toBe(JSON.stringify(chatMessages(request)));
    };
    check(grown);
    // Messages that send nothing, at the start of the reused part and after it.
    grown.push(silent());
    check(grown, "p1", "sys");
    for (const message of history) {
      grown.push(message);
      check(grown);
      check(grown, "p1", "sys");
    }
    // A tool run at the end, then continued by the next request: it lowers as one run.
    const withTools = [first, ...history.slice(0, 3)];
    check(withTools);
    check([...withTools, history[3]!]);
    check([...withTools, history[3]!, user("next")]);
    // Another provider lowers the assistant messages again; a replaced message is not reused.
    check(grown, "p2");
    check(grown, "p1");
    const changed = [...grown];
    changed[2] = user("replaced");
    check(changed);
    check(grown.slice(0, 3));
    check([silent()]);
    check([silent(), silent(), user("after silence")]);
  });

  it("reuses a Session's history up to the last Turn's prompt, which the next request holds as another object, and never cuts a tool run", () => {
    const user = (text: string): ModelMessage => ({ role: "user", content: [{ type: "text", text }] }) as ModelMessage;
    const answer = (text: string): ModelMessage => ({ role: "assistant", content: [{ type: "text", text }] }) as ModelMessage;
    const expectLowered = (messages: ModelMessage[], providerId = "p1") => {
      const joined = joinedMessagesJson(messages, providerId);
      expect(`[${joined.json}]`).toBe(JSON.stringify(chatMessages({ messages, model: { providerId } as ModelRequest["model"] })));
      return joined.reused;
    };
    const settled: ModelMessage[] = [user("first")];
    let prompt = user("prompt 0");
    expect(expectLowered([...settled, prompt])).toBe(0);
    for (let turn = 1; turn <= 10; turn += 1) {
      const shared = settled.length;
      settled.push(JSON.parse(JSON.stringify(prompt)) as ModelMessage, answer(`answer ${turn}`));
      prompt = user(`prompt ${turn}`);
      expect(expectLowered([...settled, prompt])).toBe(shared);
    }
    // A tool run in the middle whose last result comes back as another object: the reuse stops
    // before the run (after the assistant message that called the tools), not inside it.
    const [caller, read, shot] = [history[1]!, history[2]!, history[3]!];
    const withRun = [user("tools"), caller, read, shot, answer("done"), user("next")];
    expect(expectLowered(withRun)).toBe(0);
    const copied = [...withRun.slice(0, 3), JSON.parse(JSON.stringify(shot)) as ModelMessage, answer("done again"), user("then")];
    expect(expectLowered(copied)).toBe(2);
    // Another provider reuses nothing of the first's.
    expect(expectLowered(copied, "p2")).toBe(0);
  });

  it("sends no system message for an empty system prompt, and [] for no messages", () => {
    expect(chatMessagesJson({ system: "", messages: [], model: { providerId: "p1" } as ModelRequest["model"] })).toBe("[]");
  });
});

describe("chatRequestJson", () => {
  const tools: ModelTool[] = [
    { name: "read", description: "Reads a file.", inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } },
    { name: "shell", description: "Runs \"a\" command.", inputSchema: { type: "object", properties: {} } },
  ] as ModelTool[];
  const requestOf = (extra: Partial<ModelRequest>): ModelRequest =>
    ({ system: "Be brief.", messages: history, model: { providerId: "p1", upstreamId: "up-m", reasoning: true, temperature: true }, ...extra }) as ModelRequest;
  // What the body was before its parts were cached: one JSON.stringify of the whole request.
  const plain = (request: ModelRequest, offered: readonly ModelTool[]) =>
    JSON.stringify({
      model: "up-m",
      stream: true,
      stream_options: { include_usage: true },
      ...(offered.length > 0 ? { tools: offered.map((tool) => ({ type: "function", function: { name: tool.name, description: tool.description, parameters: tool.inputSchema } })) } : {}),
      ...(request.maxOutputTokens !== undefined ? { max_tokens: request.maxOutputTokens } : {}),
      ...(request.reasoningEffort !== undefined ? { reasoning_effort: request.reasoningEffort } : {}),
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
      messages: chatMessages(request),
    });

  it("is JSON.stringify of the whole request, with and without tools and options, on the first request and on the next ones", () => {
    const full = requestOf({ maxOutputTokens: 100, reasoningEffort: "low", temperature: 0.5 } as Partial<ModelRequest>);
    const bare = requestOf({});
    for (let round = 0; round < 2; round += 1) {
      expect(chatRequestJson(full, tools)).toBe(plain(full, tools));
      expect(chatRequestJson(bare, tools)).toBe(plain(bare, tools));
      expect(chatRequestJson(bare, [])).toBe(plain(bare, []));
      expect(chatRequestJson(full, [])).toBe(plain(full, []));
    }
    expect(JSON.parse(chatRequestJson(full, tools)).tools[1].function.description).toBe('Runs "a" command.');
  });
});
