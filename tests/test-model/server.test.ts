// The script queue, reply(), scripted errors, drops, hangs, delays, waitForRequest and the CLI.
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import { startTestModel, type ScriptedResponse } from "../../tools/test-model/index.js";
import { caught, useTestModel } from "./helpers.js";

const fixture = useTestModel();
const chatParams = { model: "gpt-test", messages: [{ role: "user" as const, content: "hi" }] };
const messageParams = { model: "claude-test", max_tokens: 100, messages: [{ role: "user" as const, content: "hi" }] };
const repoRoot = join(import.meta.dirname, "..", "..");

describe("the script queue", () => {
  it("is one FIFO shared by all three protocols", async () => {
    const { model, openai, anthropic } = fixture;
    model.enqueue({ events: [{ type: "text", text: "first" }] }, { events: [{ type: "text", text: "second" }] }, { events: [{ type: "text", text: "third" }] });
    const message = await anthropic.messages.create(messageParams);
    const response = await openai.responses.create({ model: "gpt-test", input: "hi" });
    const completion = await openai.chat.completions.create(chatParams);
    expect(message.content[0]).toMatchObject({ text: "first" });
    expect(response.output_text).toBe("second");
    expect(completion.choices[0]!.message.content).toBe("third");
    expect(model.requests.map((request) => request.protocol)).toEqual(["messages", "responses", "chat"]);
  });

  it("falls back to reply() when the queue is empty, and reply() sees the request", async () => {
    const { model, openai } = fixture;
    model.enqueue({ events: [{ type: "text", text: "queued" }] });
    model.reply(async (request) => {
      const last = request.body.messages.at(-1);
      return { events: [{ type: "text", text: `echo: ${last.content}` }] };
    });
    expect((await openai.chat.completions.create(chatParams)).choices[0]!.message.content).toBe("queued");
    const second = await openai.chat.completions.create({ ...chatParams, messages: [{ role: "user", content: "ping" }] });
    expect(second.choices[0]!.message.content).toBe("echo: ping");
  });

  it("answers an unscripted request 500 with a clear message, without SDK retries", async () => {
    const { model } = fixture;
    const retrying = new OpenAI({ baseURL: model.openaiBaseURL, apiKey: "k" }); // default maxRetries: 2
    const error = await caught(() => retrying.chat.completions.create(chatParams));
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(500);
    expect(String((error as Error).message)).toMatch(/no scripted response for request #1/);
    expect(model.requests).toHaveLength(1);

    const anthropicError = await caught(() => fixture.anthropic.messages.create(messageParams));
    expect(anthropicError).toBeInstanceOf(Anthropic.APIError);
    expect(String((anthropicError as Error).message)).toMatch(/no scripted response for request #2/);
  });

  it("reports a throwing reply() as a 500 naming the error", async () => {
    const { model, openai } = fixture;
    model.reply(() => {
      throw new Error("script bug");
    });
    const error = await caught(() => openai.chat.completions.create(chatParams));
    expect(String((error as Error).message)).toMatch(/reply\(\) threw .*script bug/);
  });

  it("rejects a malformed scripted response at enqueue()", () => {
    const { model } = fixture;
    expect(() => model.enqueue({ events: [{ type: "txt", text: "x" }] } as unknown as ScriptedResponse)).toThrow(/unknown event type "txt"/);
    expect(() => model.enqueue({ error: { status: 200 } })).toThrow(/error\.status/);
    expect(() => model.enqueue({} as ScriptedResponse)).toThrow(/events/);
  });

  it("answers 404 for an unknown route", async () => {
    const response = await fetch(`${fixture.model.url}/v1/embeddings`, { method: "POST", body: "{}" });
    expect(response.status).toBe(404);
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(/no route/);
    expect(fixture.model.requests).toHaveLength(0);
  });
});

describe("scripted errors", () => {
  it("surface as the openai SDK's typed APIError with status, body and headers", async () => {
    const { model, openai } = fixture;
    model.enqueue({
      error: {
        status: 429,
        headers: { "retry-after": "7" },
        body: { error: { message: "Rate limit reached", type: "requests", code: "rate_limit_exceeded", param: null } },
      },
    });
    const error = await caught(() => openai.chat.completions.create({ ...chatParams, stream: true }));
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    const apiError = error as InstanceType<typeof OpenAI.RateLimitError>;
    expect(apiError.status).toBe(429);
    expect(apiError.code).toBe("rate_limit_exceeded");
    expect(apiError.message).toContain("Rate limit reached");
    expect(apiError.headers?.get("retry-after")).toBe("7");
  });

  it("get a default body in each protocol's error envelope", async () => {
    const { model, openai, anthropic } = fixture;
    model.enqueue({ error: { status: 400 } }, { error: { status: 529 } });
    const badRequest = await caught(() => openai.responses.create({ model: "gpt-test", input: "hi" }));
    expect(badRequest).toBeInstanceOf(OpenAI.BadRequestError);
    expect((badRequest as InstanceType<typeof OpenAI.APIError>).type).toBe("invalid_request_error");

    const overloaded = await caught(() => anthropic.messages.stream(messageParams).finalMessage());
    expect(overloaded).toBeInstanceOf(Anthropic.APIError);
    expect((overloaded as InstanceType<typeof Anthropic.APIError>).status).toBe(529);
    expect((overloaded as InstanceType<typeof Anthropic.APIError>).type).toBe("overloaded_error");
  });
});

describe("transport failures", () => {
  it("drop as the first event: no response at all, the SDK's APIConnectionError", async () => {
    const { model, openai, anthropic } = fixture;
    model.enqueue({ events: [{ type: "drop" }] }, { events: [{ type: "drop" }] }, { events: [{ type: "delay", ms: 20 }, { type: "drop" }] });
    expect(await caught(() => openai.chat.completions.create({ ...chatParams, stream: true }))).toBeInstanceOf(OpenAI.APIConnectionError);
    expect(await caught(() => anthropic.messages.create(messageParams))).toBeInstanceOf(Anthropic.APIConnectionError);
    // Non-streaming: delays before a drop still hold the answer back, then the connection goes.
    expect(await caught(() => openai.responses.create({ model: "gpt-test", input: "hi" }))).toBeInstanceOf(OpenAI.APIConnectionError);
  });

  it("drop mid-stream: the deltas before it arrive, then iteration rejects", async () => {
    const { model, openai } = fixture;
    // The server flushes before dropping; the delay also lets the client read the deltas first
    // (a fetch body that errors discards whatever it still had queued).
    model.enqueue({ events: [{ type: "text", text: "partial answer" }, { type: "delay", ms: 50 }, { type: "drop" }, { type: "text", text: "never sent" }] });
    const stream = await openai.chat.completions.create({ ...chatParams, stream: true });
    let text = "";
    const error = await caught(async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    });
    expect(text).toBe("partial answer");
    // Not an APIError: undici's TypeError("terminated") comes through the SDK's iterator as is.
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(/terminated/);
  });

  it("drop mid-stream rejects the stream helpers too", async () => {
    const { model, openai, anthropic } = fixture;
    const cut: ScriptedResponse = { events: [{ type: "text", text: "partial" }, { type: "drop" }] };
    model.enqueue(cut, cut);
    expect(await caught(() => anthropic.messages.stream(messageParams).finalMessage())).toBeInstanceOf(Anthropic.AnthropicError);
    expect(await caught(() => openai.responses.stream({ model: "gpt-test", input: "hi" }).finalResponse())).toBeInstanceOf(OpenAI.OpenAIError);
  });

  it("hang: nothing comes back until the client aborts", async () => {
    const { model, openai, anthropic } = fixture;
    model.enqueue({ hang: true }, { hang: true });
    const controller = new AbortController();
    const pending = caught(() => openai.chat.completions.create({ ...chatParams, stream: true }, { signal: controller.signal }));
    await model.waitForRequest(1);
    controller.abort();
    expect(await pending).toBeInstanceOf(OpenAI.APIUserAbortError);

    const second = new AbortController();
    const pendingMessage = caught(() => anthropic.messages.create(messageParams, { signal: second.signal }));
    await model.waitForRequest(2);
    second.abort();
    expect(await pendingMessage).toBeInstanceOf(Anthropic.APIUserAbortError);

    // The server is still fine afterwards.
    model.enqueue({ events: [{ type: "text", text: "back" }] });
    expect((await openai.chat.completions.create(chatParams)).choices[0]!.message.content).toBe("back");
  });

  it("close() ends hanging requests instead of waiting for them", async () => {
    const model = await startTestModel();
    model.enqueue({ hang: true });
    const client = new OpenAI({ baseURL: model.openaiBaseURL, apiKey: "k", maxRetries: 0 });
    const pending = caught(() => client.chat.completions.create(chatParams));
    await model.waitForRequest(1);
    await model.close();
    expect(await pending).toBeInstanceOf(OpenAI.APIConnectionError);
  });
});

describe("delays", () => {
  it("pause the stream between deltas", async () => {
    const { model, anthropic } = fixture;
    model.enqueue({ events: [{ type: "text", text: "before " }, { type: "delay", ms: 300 }, { type: "text", text: "after" }] });
    const times: { text: string; at: number }[] = [];
    // From before the request: "after" is written no sooner than 300 ms after "before" was, which
    // is after this. (The gap between the two receipts is no bound: a busy client can take
    // "before" late.)
    const started = performance.now();
    const stream = anthropic.messages.stream(messageParams);
    stream.on("text", (text) => times.push({ text, at: performance.now() }));
    const message = await stream.finalMessage();
    expect(message.content).toEqual([{ type: "text", text: "before after", citations: null }]);
    expect(times.map((entry) => entry.text)).toEqual(["before ", "after"]);
    expect(times[1]!.at - started).toBeGreaterThanOrEqual(295);
  });

  it("let a client abort a slow stream mid-way", async () => {
    const { model, openai } = fixture;
    model.enqueue({ events: [{ type: "text", text: "one" }, { type: "delay", ms: 10_000 }, { type: "text", text: "two" }] });
    const started = Date.now();
    const stream = await openai.chat.completions.create({ ...chatParams, stream: true });
    let text = "";
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      if (text === "one") stream.controller.abort();
    }
    expect(text).toBe("one");
    expect(Date.now() - started).toBeLessThan(5_000);
    model.enqueue({ events: [{ type: "text", text: "next" }] });
    expect((await openai.chat.completions.create(chatParams)).choices[0]!.message.content).toBe("next");
  });
});

describe("waitForRequest", () => {
  it("resolves for requests already made and for requests still to come", async () => {
    const { model, openai } = fixture;
    model.reply(() => ({ events: [{ type: "text", text: "ok" }] }));
    const second = model.waitForRequest(2);
    await openai.chat.completions.create(chatParams);
    expect((await model.waitForRequest(1)).protocol).toBe("chat");
    await fixture.anthropic.messages.create(messageParams);
    expect((await second).protocol).toBe("messages");
  });

  it("rejects pending waits on close()", async () => {
    const model = await startTestModel();
    const waiting = model.waitForRequest(1);
    await model.close();
    await expect(waiting).rejects.toThrow(/closed/);
  });
});

describe("the CLI", () => {
  it("serves a script file, prints its URL first, and exposes the control endpoints", async () => {
    const dir = mkdtempSync(join(tmpdir(), "test-model-cli-"));
    try {
      const script = join(dir, "script.json");
      const responses: ScriptedResponse[] = [
        { events: [{ type: "text", text: "from the script" }] },
        { events: [{ type: "tool_call", name: "run", arguments: { cmd: "ls" } }] },
      ];
      writeFileSync(script, JSON.stringify(responses));
      const child = spawn(process.execPath, ["--import", "tsx", "tools/test-model/main.ts", "--port", "0", "--script", script], {
        cwd: repoRoot,
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stderr = "";
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
      try {
        const lines = createInterface({ input: child.stdout });
        const url = await new Promise<string>((resolve, reject) => {
          lines.once("line", resolve);
          child.once("exit", () => reject(new Error(`the CLI exited early: ${stderr}`)));
        });
        expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

        const openai = new OpenAI({ baseURL: `${url}/v1`, apiKey: "k", maxRetries: 0 });
        expect((await openai.chat.completions.create(chatParams)).choices[0]!.message.content).toBe("from the script");
        const anthropic = new Anthropic({ baseURL: url, apiKey: "k", maxRetries: 0 });
        const message = await anthropic.messages.stream(messageParams).finalMessage();
        expect(message.content[0]).toMatchObject({ type: "tool_use", name: "run", input: { cmd: "ls" } });
        const exhausted = await caught(() => openai.chat.completions.create(chatParams));
        expect(String((exhausted as Error).message)).toMatch(/no scripted response for request #3/);

        const queued = await fetch(`${url}/__test-model/enqueue`, { method: "POST", body: JSON.stringify({ events: [{ type: "text", text: "late" }] }) });
        expect(queued.status).toBe(200);
        expect((await openai.responses.create({ model: "gpt-test", input: "hi" })).output_text).toBe("late");

        const recorded = (await (await fetch(`${url}/__test-model/requests`)).json()) as { protocol: string }[];
        expect(recorded.map((request) => request.protocol)).toEqual(["chat", "messages", "chat", "responses"]);
        expect(stderr).toMatch(/#2 messages POST \/v1\/messages \(stream\)/);
      } finally {
        child.kill("SIGTERM");
      }
      expect(await exited).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses a malformed script", async () => {
    const dir = mkdtempSync(join(tmpdir(), "test-model-cli-"));
    try {
      const script = join(dir, "bad.json");
      writeFileSync(script, JSON.stringify([{ events: [{ type: "nope" }] }]));
      const child = spawn(process.execPath, ["--import", "tsx", "tools/test-model/main.ts", "--script", script], { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] });
      let stderr = "";
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
      expect(code).toBe(2);
      expect(stderr).toMatch(/bad\.json\[0\]: events\[0\]: unknown event type "nope"/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the model list (GET …/models)", () => {
  it("is a 404 until set, then the OpenAI list (what the openai SDK reads), then a scripted error; every request is recorded", async () => {
    const { model, openai } = fixture;
    const unset = await fetch(`${model.openaiBaseURL}/models`);
    expect(unset.status).toBe(404);
    model.setModelList([{ id: "m-1", owned_by: "openai", context_length: 4096 }, { id: "m-2" }]);
    const page = await openai.models.list();
    expect(page.data.map((entry) => entry.id)).toEqual(["m-1", "m-2"]);
    expect(page.data[0]).toMatchObject({ owned_by: "openai", context_length: 4096 });
    model.setModelList({ status: 401 });
    expect((await fetch(`${model.url}/api/v1/models`, { headers: { authorization: "Bearer k" } })).status).toBe(401);
    expect(model.modelListRequests.map((request) => request.path)).toEqual(["/v1/models", "/v1/models", "/api/v1/models"]);
    expect(model.modelListRequests[2]!.headers["authorization"]).toBe("Bearer k");
    // A model list is not a model request.
    expect(model.requests).toEqual([]);
  });
});
