// The measuring process of the `depth` benchmark (spawned by depth.mjs as
// `node --import tsx tools/bench/depth-worker.mjs '<options json>'`; tsx for the test model).
// A warm built `ze-harness serve` on a file database, the scripted test model in this process
// (prompt directives: the prompt says which tool the model calls), and the client here.
//
// Sub-agent round trip: a Turn whose model calls `task` (a `general` child runs one model call
// and answers), against the same Turn shape with a cheap tool instead (`read` of a small file):
// both make one tool round; the sub-agent one adds a child Session, its Turn and one more model
// call. The model alone: one streamed chat completion straight through the `openai` SDK.
//
// Prints one JSON line on stdout with the raw samples (ms); progress goes to stderr.
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";
import OpenAI from "openai";
import { binPath, tempHome, writeTestModelConfig } from "./lib.mjs";

const options = { warmup: 10, rounds: 40, ...JSON.parse(process.argv[2] ?? "{}") };
const SERVER = "local";
const log = (line) => process.stderr.write(`depth-worker: ${line}\n`);

const { startTestModel } = await import("../test-model/index.ts");
const { createZeClient, sdk, unwrap } = await import("../../dist/clients/index.js");

const model = await startTestModel({ directives: true });
const home = tempHome("ze-bench-depth-");
writeFileSync(join(home.root, "small.txt"), "a small file\n");
writeTestModelConfig(home, model.openaiBaseURL);

const serve = spawn(process.execPath, [binPath, "serve", "--port", "0", "--database", join(home.dir, "bench.db")], { cwd: home.root, env: home.env, stdio: ["ignore", "pipe", "pipe"] });
let serveStderr = "";
serve.stderr.setEncoding("utf8").on("data", (chunk) => (serveStderr = (serveStderr + chunk).slice(-4000)));
process.once("SIGTERM", () => {
  serve.kill("SIGTERM");
  serve.once("exit", () => (home.cleanup(), process.exit(1)));
});
const url = await new Promise((resolvePromise, reject) => {
  createInterface({ input: serve.stdout }).once("line", resolvePromise);
  serve.once("exit", (code) => reject(new Error(`serve exited with ${code} before printing its URL: ${serveStderr.trim()}`)));
});
const api = createZeClient({ baseUrl: url, clientId: "ze-bench" });
const openai = new OpenAI({ baseURL: model.openaiBaseURL, apiKey: "bench", maxRetries: 0 });

async function createSession() {
  const sessionId = randomUUID();
  await unwrap(sdk.createSession({ client: api.client, path: { server: SERVER, sessionId }, body: {} }));
  return sessionId;
}

/** One Turn: submit, watch to `turn.finished`; the elapsed ms. */
async function turn(sessionId, text) {
  const turnId = randomUUID();
  const started = performance.now();
  await unwrap(sdk.submitPrompt({ client: api.client, path: { server: SERVER, sessionId }, headers: { "x-ze-harness-client-id": api.clientId }, body: { delivery: "queue", turnId, prompt: [{ type: "text", text }] } }));
  const controller = new AbortController();
  const { stream } = await sdk.watchTurn({ client: api.client, path: { server: SERVER, sessionId, turnId }, sseMaxRetryAttempts: 0, signal: controller.signal });
  let outcome;
  try {
    for await (const event of stream) {
      if (event.type === "turn.finished") {
        outcome = event.outcome;
        break;
      }
    }
  } finally {
    controller.abort();
  }
  const elapsed = performance.now() - started;
  if (outcome?.kind !== "completed") throw new Error(`Turn ended ${JSON.stringify(outcome ?? "without turn.finished")}`);
  return elapsed;
}

async function direct() {
  const started = performance.now();
  const stream = await openai.chat.completions.create({ model: "scripted", stream: true, messages: [{ role: "user", content: "@say hello" }] });
  for await (const _chunk of stream) void _chunk;
  return performance.now() - started;
}

const taskPrompt = `@call task ${JSON.stringify({ description: "Say hi", prompt: "@say the child says hi", subagent_type: "general" })}\n@then parent done`;
const readPrompt = `@call read ${JSON.stringify({ filePath: "small.txt" })}\n@then parent done`;

const result = { subagent: [], tool: [], model: [] };
try {
  // Each Turn in a fresh Session, so history length does not differ between the two shapes.
  for (let index = 0; index < options.warmup; index++) {
    await turn(await createSession(), taskPrompt);
    await turn(await createSession(), readPrompt);
    await direct();
  }
  log(`warm; ${options.rounds} rounds`);
  for (let index = 0; index < options.rounds; index++) {
    result.subagent.push(await turn(await createSession(), taskPrompt));
    result.tool.push(await turn(await createSession(), readPrompt));
    result.model.push(await direct());
  }
} catch (error) {
  result.error = `${error instanceof Error ? error.message : String(error)} ${serveStderr.trim().split("\n").slice(-3).join(" | ")}`;
} finally {
  serve.kill("SIGTERM");
  await new Promise((resolvePromise) => serve.once("exit", resolvePromise));
  await model.close();
  home.cleanup();
}
process.stdout.write(`${JSON.stringify(result)}\n`);
