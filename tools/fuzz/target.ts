// What a fuzzed host runs with, shared by the in-process target (tests/fuzz) and `npm run fuzz`
// (a `serve` process): the scripted test model as its only provider (every model request answers
// a short text), the real `everything` MCP server over stdio so MCP operations reach a live
// server, and `cat` as the shell a terminal opens by default, so no fuzzed input is ever run by a
// shell. Nothing here reaches the internet: the model catalog is not fetched.
import { join } from "node:path";
import type { TestModel } from "../test-model/index.js";

const repoRoot = join(import.meta.dirname, "..", "..");
const EVERYTHING = join(repoRoot, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");

/** The global config.json of a fuzzed host. */
export function fuzzConfig(model: TestModel): Record<string, unknown> {
  return {
    model: "test/scripted",
    providers: {
      test: {
        definition: {
          displayName: "Scripted test model",
          baseURL: model.openaiBaseURL,
          protocol: "chat",
          authentication: { kind: "none" },
          models: { scripted: { displayName: "Scripted", limits: { contextUnits: 200000, outputUnits: 8192 } } },
        },
      },
    },
    mcp: [{ kind: "local", id: "everything", name: "everything", transport: { kind: "stdio", command: process.execPath, arguments: [EVERYTHING, "stdio"] } }],
  };
}

/** Environment a fuzzed host adds to its temp home's HOME and XDG variables. */
export const FUZZ_ENV: Readonly<Record<string, string>> = {
  SHELL: "/bin/cat",
  ZE_HARNESS_DISABLE_MODELS_FETCH: "1",
  ZE_HARNESS_MODELS_URL: "http://127.0.0.1:9/api.json",
};

/** Starts answering every model request of `model` with a short text. */
export function answerEverything(model: TestModel): void {
  model.reply(() => ({ events: [{ type: "text", text: "ok" }] }));
}
