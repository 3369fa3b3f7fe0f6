// Shared fixtures for the provider suites: a provider definition pointing at the scripted test
// model (127.0.0.1 only), stream collection, and throwaway state directories.
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  ProviderFailure,
  Secret,
  resolveProviders,
  streamModel,
  type Authentication,
  type ModelMessage,
  type ModelProtocol,
  type ModelRequest,
  type ModelStreamEvent,
  type ResolvedModel,
} from "../../services/providers/index.js";
import type { TestModel } from "../../tools/test-model/index.js";

export const PROTOCOLS: readonly ModelProtocol[] = ["chat", "responses", "messages"];

export const KEY = "sk-test-0123456789abcdef";

export interface TestModelOptions {
  readonly authentication?: Authentication;
  readonly options?: Record<string, string | number | boolean | null | Record<string, string>>;
  readonly reasoning?: boolean;
  readonly tools?: boolean;
  readonly outputUnits?: number;
}

/** The model `test/m` (upstream `up-m`) served by `server` over `protocol`, compiled by the real resolver. */
export function testModel(server: TestModel, protocol: ModelProtocol, options: TestModelOptions = {}): ResolvedModel {
  const result = resolveProviders({
    test: {
      definition: {
        displayName: "Test",
        baseURL: server.openaiBaseURL,
        protocol,
        ...(options.authentication !== undefined ? { authentication: options.authentication } : {}),
        models: {
          m: {
            upstreamId: "up-m",
            capabilities: { input: ["text", "image"], tools: options.tools ?? true, reasoning: options.reasoning ?? true },
            limits: { contextUnits: 100_000, outputUnits: options.outputUnits ?? 8000 },
          },
        },
      },
      ...(options.options !== undefined ? { options: options.options } : {}),
    },
  });
  if (!result.ok) throw new Error(JSON.stringify(result.error));
  const model = result.value.model("test/m");
  if (model === undefined) throw new Error("test/m did not resolve");
  return model;
}

export const userText = (text: string): ModelMessage => ({ role: "user", content: [{ type: "text", text }] });

export function request(model: ResolvedModel, overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    model,
    credential: new Secret(KEY),
    messages: [userText("hi")],
    tools: [],
    signal: new AbortController().signal,
    ...overrides,
  };
}

export interface Collected {
  readonly events: ModelStreamEvent[];
  readonly failure?: ProviderFailure;
  readonly thrown?: unknown;
}

/** Runs a stream to its end; a thrown value is captured (and must be a ProviderFailure). */
export async function collect(req: ModelRequest): Promise<Collected> {
  const events: ModelStreamEvent[] = [];
  try {
    for await (const event of streamModel(req)) events.push(event);
    return { events };
  } catch (error) {
    return error instanceof ProviderFailure ? { events, failure: error } : { events, thrown: error };
  }
}

export const textOf = (events: readonly ModelStreamEvent[], type: "text.delta" | "reasoning.delta" | "refusal.delta"): string =>
  events.map((event) => (event.type === type ? event.text : "")).join("");

export interface TempDir {
  readonly path: string;
  dispose(): void;
}

export function tempDir(prefix = "ze-providers-test-"): TempDir {
  const path = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  return { path, dispose: () => rmSync(path, { recursive: true, force: true }) };
}
