// A harness for the provider-management suites: the scripted test model behind a keyed
// provider (`keyed`, bearer, `KEYED_API_KEY`), the keyless `test` provider, and optionally a
// local OAuth server behind a device-login provider (`gate`). Turns run through the generated
// client; the test model records only the SHA-256 of the credential it received.
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { sdk, unwrap, type Turn } from "../../clients/index.js";
import { startHarness, tempHome, type TestHarness } from "../support/harness.js";
import { TEST_MODEL, testProviderConfig, writeGlobalConfig } from "../support/model.js";
import { startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { startOAuthServer, type OAuthServer, type OAuthServerOptions } from "./oauth-server.js";

export const KEYED = "keyed/m";

export interface ProviderHarness extends TestHarness {
  readonly model: TestModel;
  readonly oauth: OAuthServer;
  /** `<XDG_DATA_HOME>/ze-harness/auth.json`. */
  readonly authPath: string;
  authText(): string | undefined;
  /** Runs one Turn on `modelRef` and returns the finished Turn. */
  turn(modelRef: string, text?: string): Promise<Turn>;
  /** Submits a Turn and returns the raw result (for refusals). */
  submit(modelRef: string, text?: string): Promise<{ readonly response: Response; readonly error?: unknown }>;
}

export interface ProviderHarnessOptions {
  /** Extra host environment (a function sees the test model and the OAuth server). */
  readonly env?: Record<string, string> | ((model: TestModel, oauth: OAuthServer) => Record<string, string>);
  readonly oauth?: OAuthServerOptions;
  /** More provider entries (they see the test model and the OAuth server). */
  readonly providers?: (model: TestModel, oauth: OAuthServer) => Record<string, unknown>;
}

export function keyedProvider(model: TestModel, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    definition: {
      displayName: "Keyed test model",
      baseURL: model.openaiBaseURL,
      protocol: "chat",
      authentication: { kind: "bearer" },
      credentials: { environment: ["KEYED_API_KEY"] },
      models: { m: { displayName: "M", limits: { contextUnits: 100000, outputUnits: 4096 } } },
      ...extra,
    },
  };
}

export function gateProvider(model: TestModel, oauth: OAuthServer, notice?: unknown): Record<string, unknown> {
  return keyedProvider(model, { displayName: "Gate", credentials: { environment: ["GATE_API_KEY"] }, login: { device: { discoveryURL: `${oauth.url}${oauth.discoveryPath}`, ...(notice !== undefined ? { notice } : {}) } } });
}

export async function startProviderHarness(options: ProviderHarnessOptions = {}): Promise<ProviderHarness> {
  const model = await startTestModel();
  model.reply(() => ({ events: [{ type: "text", text: "ok" }] }));
  const oauth = await startOAuthServer(options.oauth);
  const home = tempHome("ze-provider-");
  writeGlobalConfig(home, {
    model: TEST_MODEL,
    providers: { ...testProviderConfig(model), keyed: keyedProvider(model), gate: gateProvider(model, oauth), ...(options.providers?.(model, oauth) ?? {}) },
  });
  const extraEnv = typeof options.env === "function" ? options.env(model, oauth) : (options.env ?? {});
  const base = await startHarness({ env: { ...home.env, ...extraEnv } }, home);
  const authPath = join(home.env["XDG_DATA_HOME"]!, "ze-harness", "auth.json");
  const start = async (modelRef: string, text: string) => {
    const sessionId = randomUUID();
    const turnId = randomUUID();
    await unwrap(sdk.createSession({ client: base.api.client, path: { server: "local", sessionId }, body: {} }));
    const result = await sdk.submitPrompt({
      client: base.api.client,
      path: { server: "local", sessionId },
      headers: { "x-ze-harness-client-id": "test" },
      body: { delivery: "queue", turnId, prompt: [{ type: "text", text }], model: modelRef },
    });
    return { sessionId, turnId, result };
  };
  return {
    ...base,
    model,
    oauth,
    authPath,
    authText: () => {
      try {
        return readFileSync(authPath, "utf8");
      } catch {
        return undefined;
      }
    },
    submit: async (modelRef, text = "hello") => (await start(modelRef, text)).result,
    async turn(modelRef, text = "hello") {
      const { sessionId, turnId, result } = await start(modelRef, text);
      await unwrap(Promise.resolve(result));
      const { stream } = await sdk.watchTurn({ client: base.api.client, path: { server: "local", sessionId, turnId }, sseMaxRetryAttempts: 0 });
      for await (const event of stream) if ((event as { type?: string }).type === "turn.finished") break;
      return (await unwrap(sdk.getTurn({ client: base.api.client, path: { server: "local", sessionId, turnId } }))).turn;
    },
    close: async () => {
      await base.close();
      await model.close();
      await oauth.close();
    },
  };
}
