// A fresh test model per test, and SDK clients pointed at it with retries off.
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterEach, beforeEach } from "vitest";
import { startTestModel, type TestModel, type TestModelOptions } from "../../tools/test-model/index.js";

export interface ModelFixture {
  readonly model: TestModel;
  readonly openai: OpenAI;
  readonly anthropic: Anthropic;
}

/** Registers beforeEach/afterEach hooks; read the fixture inside tests only. */
export function useTestModel(options: TestModelOptions = {}): ModelFixture {
  let current: ModelFixture | undefined;
  beforeEach(async () => {
    const model = await startTestModel(options);
    current = {
      model,
      openai: new OpenAI({ baseURL: model.openaiBaseURL, apiKey: "test-key", maxRetries: 0 }),
      anthropic: new Anthropic({ baseURL: model.anthropicBaseURL, apiKey: "test-key", maxRetries: 0 }),
    };
  });
  afterEach(async () => {
    await current?.model.close();
    current = undefined;
  });
  const get = (): ModelFixture => {
    if (!current) throw new Error("the test model fixture is only available inside a test");
    return current;
  };
  return {
    get model() {
      return get().model;
    },
    get openai() {
      return get().openai;
    },
    get anthropic() {
      return get().anthropic;
    },
  };
}

/** Rejects with whatever `run` throws; fails if it does not throw. */
export async function caught(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  throw new Error("expected an error, but the call succeeded");
}
