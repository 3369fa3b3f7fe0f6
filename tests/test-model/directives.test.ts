// Prompt directives (`directives: true`, CLI `--directives`): `@call`, `@say`, `@then`, `@next`
// lines in the last user message, the tool-result rounds, the echo, and the option off.
import Anthropic from "@anthropic-ai/sdk";
import type { ContentBlockParam, MessageParam } from "@anthropic-ai/sdk/resources/messages";
import OpenAI from "openai";
import type { ChatCompletionMessageParam } from "openai/resources/chat/completions";
import type { ResponseInputItem } from "openai/resources/responses/responses";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import { caught, useTestModel, type ModelFixture } from "./helpers.js";

const PROTOCOLS = ["chat", "responses", "messages"] as const;
type Protocol = (typeof PROTOCOLS)[number];
const ID_PATTERN: Record<Protocol, RegExp> = { chat: /^call_\d{6}$/, responses: /^call_\d{6}$/, messages: /^toolu_\d{6}$/ };

interface Call {
  id: string;
  name: string;
  arguments: unknown;
}
interface Answer {
  text: string;
  calls: Call[];
}

/** A minimal agent loop over one protocol (streaming), keeping its history in that protocol's shape. */
interface Driver {
  ask(): Promise<Answer>;
  /** Appends the answer as the assistant turn, then one tool result per call. */
  answerTools(answer: Answer, results: string[]): void;
}

function driver(fixture: ModelFixture, protocol: Protocol, prompt: string): Driver {
  if (protocol === "chat") {
    const messages: ChatCompletionMessageParam[] = [{ role: "user", content: prompt }];
    return {
      async ask() {
        const completion = await fixture.openai.chat.completions.stream({ model: "gpt-test", messages }).finalChatCompletion();
        const message = completion.choices[0]!.message;
        const calls = (message.tool_calls ?? []).map((call) => {
          if (call.type !== "function") throw new Error(`unexpected tool call type ${call.type}`);
          return { id: call.id, name: call.function.name, arguments: JSON.parse(call.function.arguments) as unknown };
        });
        return { text: message.content ?? "", calls };
      },
      answerTools(answer, results) {
        messages.push({
          role: "assistant",
          content: answer.text === "" ? null : answer.text,
          tool_calls: answer.calls.map((call) => ({ id: call.id, type: "function", function: { name: call.name, arguments: JSON.stringify(call.arguments) } })),
        });
        answer.calls.forEach((call, index) => messages.push({ role: "tool", tool_call_id: call.id, content: results[index] ?? "" }));
      },
    };
  }
  if (protocol === "responses") {
    const input: ResponseInputItem[] = [{ role: "user", content: [{ type: "input_text", text: prompt }] }];
    return {
      async ask() {
        const response = await fixture.openai.responses.stream({ model: "gpt-test", input, store: false }).finalResponse();
        const calls: Call[] = [];
        for (const item of response.output) {
          if (item.type === "function_call") calls.push({ id: item.call_id, name: item.name, arguments: JSON.parse(item.arguments) as unknown });
        }
        return { text: response.output_text, calls };
      },
      answerTools(answer, results) {
        if (answer.text !== "") input.push({ role: "assistant", content: answer.text });
        for (const call of answer.calls) input.push({ type: "function_call", call_id: call.id, name: call.name, arguments: JSON.stringify(call.arguments) });
        answer.calls.forEach((call, index) => input.push({ type: "function_call_output", call_id: call.id, output: results[index] ?? "" }));
      },
    };
  }
  const messages: MessageParam[] = [{ role: "user", content: [{ type: "text", text: prompt }] }];
  return {
    async ask() {
      const message = await fixture.anthropic.messages.stream({ model: "claude-test", max_tokens: 1000, messages }).finalMessage();
      const calls: Call[] = [];
      let text = "";
      for (const block of message.content) {
        if (block.type === "tool_use") calls.push({ id: block.id, name: block.name, arguments: block.input });
        else if (block.type === "text") text += block.text;
      }
      return { text, calls };
    },
    answerTools(answer, results) {
      const content: ContentBlockParam[] = answer.text === "" ? [] : [{ type: "text", text: answer.text }];
      for (const call of answer.calls) content.push({ type: "tool_use", id: call.id, name: call.name, input: call.arguments });
      messages.push({ role: "assistant", content });
      messages.push({ role: "user", content: answer.calls.map((call, index) => ({ type: "tool_result", tool_use_id: call.id, content: results[index] ?? "" })) });
    },
  };
}

/** Runs the loop until an answer has no tool calls (at most `rounds` requests); every tool answers `result of <name>`. */
async function runLoop(fixture: ModelFixture, protocol: Protocol, prompt: string, rounds = 6): Promise<Answer[]> {
  const loop = driver(fixture, protocol, prompt);
  const answers: Answer[] = [];
  for (let round = 0; round < rounds; round += 1) {
    const answer = await loop.ask();
    answers.push(answer);
    if (answer.calls.length === 0) return answers;
    loop.answerTools(answer, answer.calls.map((call) => `result of ${call.name}`));
  }
  throw new Error(`the loop did not end within ${rounds} rounds: ${JSON.stringify(answers)}`);
}

const chatParams = (content: string) => ({ model: "gpt-test", messages: [{ role: "user" as const, content }] });
const names = (answer: Answer | undefined): string[] => answer?.calls.map((call) => call.name) ?? [];

describe("prompt directives (directives: true)", () => {
  const fixture = useTestModel({ directives: true });

  it("@call answers with that tool call, ids in the call_ scheme (chat, non-streaming)", async () => {
    const completion = await fixture.openai.chat.completions.create(chatParams('Please read it.\n@call read_file {"path":"a.ts","lines":[1,2]}'));
    const choice = completion.choices[0]!;
    expect(choice.finish_reason).toBe("tool_calls");
    expect(choice.message.content).toBeNull();
    expect(choice.message.tool_calls).toHaveLength(1);
    const call = choice.message.tool_calls![0]!;
    expect(call.type === "function" && call.function.name).toBe("read_file");
    expect(call.type === "function" && JSON.parse(call.function.arguments)).toEqual({ path: "a.ts", lines: [1, 2] });
    expect(call.id).toMatch(ID_PATTERN.chat);
  });

  for (const protocol of PROTOCOLS) {
    it(`several @call lines are parallel calls in one answer (${protocol}, streaming)`, async () => {
      const prompt = ['@call read_file {"path":"a.ts"}', '  @call grep {"pattern":"TODO","path":"src"}', "@call list_dir"].join("\n");
      const answer = await driver(fixture, protocol, prompt).ask();
      expect(answer.text).toBe("");
      expect(answer.calls.map(({ name, arguments: args }) => ({ name, args }))).toEqual([
        { name: "read_file", args: { path: "a.ts" } },
        { name: "grep", args: { pattern: "TODO", path: "src" } },
        { name: "list_dir", args: {} },
      ]);
      for (const call of answer.calls) expect(call.id).toMatch(ID_PATTERN[protocol]);
      expect(new Set(answer.calls.map((call) => call.id)).size).toBe(3);
    });

    it(`a tool-result round answers @then and never re-issues the @call (${protocol})`, async () => {
      const answers = await runLoop(fixture, protocol, 'Read a.ts.\n@call read_file {"path":"a.ts"}\n@then I read a.ts.');
      expect(answers.map(names)).toEqual([["read_file"], []]);
      expect(answers[1]!.text).toBe("I read a.ts.");
      expect(fixture.model.requests).toHaveLength(2);
    });

    it(`without @then the tool-result round answers "done: " and the results (${protocol})`, async () => {
      const answers = await runLoop(fixture, protocol, "@call alpha {}\n@call beta {}");
      expect(answers.map(names)).toEqual([["alpha", "beta"], []]);
      expect(answers[1]!.text).toBe("done: result of alpha\nresult of beta");
    });

    it(`@next runs a multi-step script, one step a round (${protocol})`, async () => {
      // Steps with text and calls: in Responses one assistant turn is then several input items.
      const prompt = ["@say Reading.", '@call read_file {"path":"a"}', "@next", "@say Now writing.", '@call write_file {"path":"b"}', "@next", "@call check", "@then Wrote b."];
      const answers = await runLoop(fixture, protocol, prompt.join("\n"));
      expect(answers.map(names)).toEqual([["read_file"], ["write_file"], ["check"], []]);
      expect(answers.map((answer) => answer.text)).toEqual(["Reading.", "Now writing.", "", "Wrote b."]);
      expect(answers[1]!.calls[0]!.arguments).toEqual({ path: "b" });
    });
  }

  it("the default done: text is truncated to 500 characters", async () => {
    const long = `${"x".repeat(600)}END`;
    const completion = await fixture.openai.chat.completions.create({
      model: "gpt-test",
      messages: [
        { role: "user", content: "@call read_file {}" },
        { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "read_file", arguments: "{}" } }] },
        { role: "tool", tool_call_id: "call_1", content: [{ type: "text", text: long }] },
      ],
    });
    const text = completion.choices[0]!.message.content!;
    expect(text).toBe(`done: ${"x".repeat(500)}…`);
    expect(completion.choices[0]!.finish_reason).toBe("stop");
  });

  it("@say is a final text answer; with @call in one step, text then the calls", async () => {
    const said = await fixture.openai.chat.completions.create(chatParams("@say All good."));
    expect(said.choices[0]!.message.content).toBe("All good.");
    expect(said.choices[0]!.message.tool_calls).toBeUndefined();
    expect(said.choices[0]!.finish_reason).toBe("stop");

    const thenOnly = await fixture.openai.responses.create({ model: "gpt-test", input: "Nothing to call.\n@then Straight away." });
    expect(thenOnly.output_text).toBe("Straight away.");

    const message = await fixture.anthropic.messages.create({
      model: "claude-test",
      max_tokens: 100,
      messages: [{ role: "user", content: "@say Let me look.\n@say Second line.\n@call ls {\"path\":\".\"}" }],
    });
    expect(message.stop_reason).toBe("tool_use");
    expect(message.content).toHaveLength(2);
    expect(message.content[0]).toMatchObject({ type: "text", text: "Let me look.\nSecond line." });
    expect(message.content[1]).toMatchObject({ type: "tool_use", name: "ls", input: { path: "." } });
    expect(message.content[1]!.type === "tool_use" && message.content[1]!.id).toMatch(ID_PATTERN.messages);
  });

  it("without directives the answer echoes the first line of the user text, in every protocol", async () => {
    const completion = await fixture.openai.chat.completions.create(chatParams("hello there\nsecond line"));
    expect(completion.choices[0]!.message.content).toBe("echo: hello there");
    const response = await fixture.openai.responses.create({ model: "gpt-test", input: "  just a question  " });
    expect(response.output_text).toBe("echo: just a question");
    const message = await fixture.anthropic.messages.create({
      model: "claude-test",
      max_tokens: 100,
      messages: [{ role: "user", content: [{ type: "text", text: "from parts\n@nothing here" }] }],
    });
    expect(message.content[0]).toMatchObject({ type: "text", text: "echo: from parts" });
    expect(message.stop_reason).toBe("end_turn");
  });

  it("reads only the last user message, including all its content parts", async () => {
    const earlier: ChatCompletionMessageParam[] = [
      { role: "user", content: "@call old_tool {}" },
      { role: "assistant", content: "ok" },
    ];
    const parts = await fixture.openai.chat.completions.create({
      model: "gpt-test",
      messages: [...earlier, { role: "user", content: [{ type: "text", text: "some context" }, { type: "text", text: '@call grep {"q":1}' }] }],
    });
    const calls = parts.choices[0]!.message.tool_calls ?? [];
    expect(calls.map((call) => call.type === "function" && call.function.name)).toEqual(["grep"]);
    const plain = await fixture.openai.chat.completions.create({ model: "gpt-test", messages: [...earlier, { role: "user", content: "plain" }] });
    expect(plain.choices[0]!.message.content).toBe("echo: plain");
  });

  it("a Messages user turn that adds text after the tool results starts over from that text", async () => {
    const message = await fixture.anthropic.messages.create({
      model: "claude-test",
      max_tokens: 100,
      messages: [
        { role: "user", content: "@call a {}\n@then never" },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_x", name: "a", input: {} }] },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "toolu_x", content: "ok" },
            { type: "text", text: "@say steered" },
          ],
        },
      ],
    });
    expect(message.content).toEqual([{ type: "text", text: "steered", citations: null }]);
  });

  it("a sub-agent's prompt carries its own directives through the parent's @call", async () => {
    const childPrompt = '@call read_file {"path":"x.ts"}\n@then child done';
    const parentPrompt = `Delegate.\n@call task ${JSON.stringify({ description: "read x", prompt: childPrompt, subagent_type: "general" })}`;
    const parent = driver(fixture, "responses", parentPrompt);
    const delegation = await parent.ask();
    expect(names(delegation)).toEqual(["task"]);
    const args = delegation.calls[0]!.arguments as { prompt: string; subagent_type: string };
    expect(args.prompt).toBe(childPrompt);
    expect(args.subagent_type).toBe("general");

    // The child Session: its user message is the prompt, so its directives drive it.
    const child = await runLoop(fixture, "messages", args.prompt);
    expect(child.map(names)).toEqual([["read_file"], []]);
    expect(child[1]!.text).toBe("child done");

    parent.answerTools(delegation, [`<task_result>\n${child[1]!.text}\n</task_result>`]);
    const final = await parent.ask();
    expect(final).toEqual({ text: "done: <task_result>\nchild done\n</task_result>", calls: [] });
  });

  it("a malformed directive is a 500 naming the line, without SDK retries", async () => {
    const retrying = new OpenAI({ baseURL: fixture.model.openaiBaseURL, apiKey: "k" }); // default maxRetries: 2
    const error = await caught(() => retrying.chat.completions.create(chatParams("Read it.\n@call read_file {path: a.ts}")));
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect((error as Error).message).toMatch(/bad directive .*line 2 .*not JSON/);
    expect(fixture.model.requests).toHaveLength(1);
    const noName = await caught(() => fixture.anthropic.messages.create({ model: "c", max_tokens: 10, messages: [{ role: "user", content: "@call" }] }));
    expect(noName).toBeInstanceOf(Anthropic.APIError);
    expect((noName as Error).message).toMatch(/@call needs a tool name/);
    const array = await caught(() => fixture.openai.responses.create({ model: "gpt-test", input: "@call grep [1]" }));
    expect((array as Error).message).toMatch(/line 1 .*must be a JSON object/);
    const emptyStep = await caught(() => fixture.openai.chat.completions.create(chatParams("@call a {}\n@next\n@next\n@say end")));
    expect((emptyStep as Error).message).toMatch(/step 2 has no @call or @say/);
  });

  it("the queue and reply() still come first", async () => {
    const { model, openai } = fixture;
    model.enqueue({ events: [{ type: "text", text: "queued" }] });
    expect((await openai.chat.completions.create(chatParams("@say directive"))).choices[0]!.message.content).toBe("queued");
    expect((await openai.chat.completions.create(chatParams("@say directive"))).choices[0]!.message.content).toBe("directive");
    model.reply(() => ({ events: [{ type: "text", text: "from reply" }] }));
    expect((await openai.chat.completions.create(chatParams("@say directive"))).choices[0]!.message.content).toBe("from reply");
  });

  it("usage is estimated as for any scripted turn", async () => {
    const completion = await fixture.openai.chat.completions.create(chatParams('@call read_file {"path":"a.ts"}'));
    const body = fixture.model.requests[0]!.body as unknown;
    expect(completion.usage?.prompt_tokens).toBe(Math.ceil(JSON.stringify(body).length / 4));
    expect(completion.usage?.completion_tokens).toBe(Math.ceil(`read_file${JSON.stringify({ path: "a.ts" })}`.length / 4));
  });
});

describe("directives off (the default)", () => {
  const fixture = useTestModel();

  it("leaves a directive prompt unanswered: the 500 no scripted response", async () => {
    const error = await caught(() => fixture.openai.chat.completions.create(chatParams("@call read_file {}")));
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect((error as Error).message).toMatch(/no scripted response for request #1/);
    const plain = await caught(() => fixture.anthropic.messages.create({ model: "c", max_tokens: 10, messages: [{ role: "user", content: "hi" }] }));
    expect((plain as Error).message).toMatch(/no scripted response for request #2/);
  });
});

describe("the CLI --directives", () => {
  it("answers past the script from the prompt's directives", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", "tools/test-model/main.ts", "--directives"], {
      cwd: join(import.meta.dirname, "..", ".."),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout }).once("line", resolve);
        child.once("exit", () => reject(new Error(`the CLI exited early: ${stderr}`)));
      });
      const openai = new OpenAI({ baseURL: `${url}/v1`, apiKey: "k", maxRetries: 0 });
      const completion = await openai.chat.completions.create(chatParams('@call task {"prompt":"hi"}'));
      const call = completion.choices[0]!.message.tool_calls?.[0];
      expect(call?.type === "function" && call.function).toEqual({ name: "task", arguments: '{"prompt":"hi"}' });
      expect((await openai.chat.completions.create(chatParams("ping"))).choices[0]!.message.content).toBe("echo: ping");
    } finally {
      child.kill("SIGTERM");
    }
    expect(await exited).toBe(0);
  });
});
