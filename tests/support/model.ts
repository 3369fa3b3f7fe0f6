// A harness wired to the scripted test model: a temp home whose global config.json
// declares a `test` provider (protocol chat by default) pointing at the test model server,
// with `test/scripted` as the default model. Turns run through the real openai / Anthropic
// SDK code paths against 127.0.0.1.
import { randomUUID } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sdk, unwrap, type Turn, type TurnStreamEvent, type ZeClient } from "../../clients/index.js";
import type { HarnessOptions } from "../../services/host/harness.js";
import { startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { checkSseEvent } from "./contract.js";
import { startHarness, tempHome, type TempHome, type TestHarness } from "./harness.js";

export const TEST_MODEL = "test/scripted";

export type TestProtocol = "chat" | "responses" | "messages";

/** The provider definition for the scripted model in `protocol`. */
export function testProviderConfig(
  model: TestModel,
  protocol: TestProtocol = "chat",
  limits: { contextUnits: number; outputUnits: number } = { contextUnits: 200000, outputUnits: 8192 },
): Record<string, unknown> {
  return {
    test: {
      definition: {
        displayName: "Scripted test model",
        baseURL: protocol === "messages" ? `${model.anthropicBaseURL}/v1` : model.openaiBaseURL,
        protocol,
        authentication: { kind: "none" },
        models: { scripted: { displayName: "Scripted", limits } },
      },
    },
  };
}

/** Writes `$XDG_CONFIG_HOME/ze-harness/config.json` for `home`. */
export function writeGlobalConfig(home: TempHome, config: Record<string, unknown>): void {
  const dir = join(home.env["XDG_CONFIG_HOME"]!, "ze-harness");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "config.json"), JSON.stringify(config, null, 2));
}

export interface ModelHarness extends TestHarness {
  readonly model: TestModel;
  /** Creates a Session (workdir: the server root) and returns its id. */
  createSession(body?: Record<string, unknown>): Promise<string>;
  /** Queues a Turn; returns its id. */
  submit(sessionId: string, text: string, extra?: Record<string, unknown>): Promise<string>;
  /** Watches a Turn to its `turn.finished`, validating every event against the contract; returns the events and the final Turn. */
  finish(sessionId: string, turnId: string): Promise<{ events: TurnStreamEvent[]; turn: Turn }>;
}

export interface ModelHarnessOptions {
  readonly protocol?: TestProtocol;
  /** Extra config merged over the provider config (a function sees the started test model, e.g. to define providers). */
  readonly config?: Record<string, unknown> | ((model: TestModel) => Record<string, unknown>);
  readonly harness?: Partial<HarnessOptions>;
}

/** What a test does over the API of any host: create a Session, queue a Turn, watch it to its end. */
export type ModelShortcuts = Pick<ModelHarness, "createSession" | "submit" | "finish">;

/** The shortcuts over the generated client `api` for `server` (shared by startModelHarness and tests/support/hosts.ts). */
export function modelShortcuts(api: ZeClient, server: string): ModelShortcuts {
  return {
    async createSession(body = {}) {
      const sessionId = randomUUID();
      await unwrap(sdk.createSession({ client: api.client, path: { server, sessionId }, body }));
      return sessionId;
    },
    async submit(sessionId, text, extra = {}) {
      const turnId = randomUUID();
      await unwrap(
        sdk.submitPrompt({
          client: api.client,
          path: { server, sessionId },
          headers: { "x-ze-harness-client-id": "test" },
          body: { delivery: "queue", turnId, prompt: [{ type: "text", text }], ...extra } as never,
        }),
      );
      return turnId;
    },
    async finish(sessionId, turnId) {
      const events: TurnStreamEvent[] = [];
      const path = `/v1/servers/${server}/sessions/${sessionId}/turns/${turnId}/events`;
      const { stream } = await sdk.watchTurn({ client: api.client, path: { server, sessionId, turnId }, sseMaxRetryAttempts: 0 });
      for await (const event of stream) {
        checkSseEvent("GET", path, event);
        events.push(event as TurnStreamEvent);
        if ((event as TurnStreamEvent).type === "turn.finished") break;
      }
      const { turn } = await unwrap(sdk.getTurn({ client: api.client, path: { server, sessionId, turnId } }));
      return { events, turn };
    },
  };
}

export async function startModelHarness(options: ModelHarnessOptions = {}): Promise<ModelHarness> {
  const model = await startTestModel();
  const home = tempHome();
  const extra = typeof options.config === "function" ? options.config(model) : (options.config ?? {});
  writeGlobalConfig(home, { model: TEST_MODEL, providers: testProviderConfig(model, options.protocol), ...extra });
  const base = await startHarness(options.harness ?? {}, home);
  const server = "local";
  return {
    ...base,
    model,
    close: async () => {
      await base.close();
      await model.close();
    },
    ...modelShortcuts(base.api, server),
  };
}
