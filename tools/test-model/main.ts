// The test model as a process, for a harness running in another process and for manual runs:
//   node --import tsx tools/test-model/main.ts [--port 0] [--script file.json] [--directives]
// The script is a JSON array of ScriptedResponses, served in order; with --directives a request
// past its end is answered from the `@call` / `@say` / `@then` / `@next` lines of its last user
// message (else an echo) instead of the 500 "no scripted response" (README "Prompt directives"). The first stdout line is
// the server's URL; each request is logged to stderr. More responses can be queued at run time
// with POST <url>/__test-model/enqueue, and GET <url>/__test-model/requests lists requests.
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { scriptProblem, type ScriptedResponse } from "./script.js";
import { startTestModel } from "./server.js";

const usage = [
  "usage: main.ts [--port N] [--script file.json] [--directives] [--responses-reasoning summary|content] [--chat-reasoning-field reasoning_content|reasoning]",
  "  --port N                 listen on 127.0.0.1:N (default 0: any free port)",
  "  --script file.json       a JSON array of scripted responses, served in order",
  "  --directives             past the script, answer from @call/@say/@then/@next lines in the last user message (else echo)",
  "  --responses-reasoning    Responses reasoning as summary (default) or content",
  "  --chat-reasoning-field   Chat Completions reasoning delta field: reasoning_content (default) or reasoning",
].join("\n");

function fail(message: string): never {
  process.stderr.write(`test-model: ${message}\n${usage}\n`);
  process.exit(2);
}

function loadScript(file: string): ScriptedResponse[] {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    fail(`cannot read the script ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (!Array.isArray(value)) fail(`the script ${file} must be a JSON array of scripted responses`);
  for (const [index, response] of value.entries()) {
    const problem = scriptProblem(response);
    if (problem) fail(`${file}[${index}]: ${problem}`);
  }
  return value as ScriptedResponse[];
}

let args;
try {
  args = parseArgs({
    options: {
      port: { type: "string", default: "0" },
      script: { type: "string" },
      directives: { type: "boolean", default: false },
      "responses-reasoning": { type: "string", default: "summary" },
      "chat-reasoning-field": { type: "string", default: "reasoning_content" },
      help: { type: "boolean", short: "h" },
    },
    strict: true,
  }).values;
} catch (error) {
  fail(error instanceof Error ? error.message : String(error));
}
if (args.help) {
  process.stdout.write(`${usage}\n`);
  process.exit(0);
}
const port = Number(args.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`--port must be a port number, got ${args.port}`);
const responsesReasoning = args["responses-reasoning"];
if (responsesReasoning !== "summary" && responsesReasoning !== "content") fail("--responses-reasoning must be summary or content");
const chatReasoningField = args["chat-reasoning-field"];
if (chatReasoningField !== "reasoning_content" && chatReasoningField !== "reasoning") {
  fail("--chat-reasoning-field must be reasoning_content or reasoning");
}

const script = args.script ? loadScript(args.script) : [];
const model = await startTestModel({
  port,
  responsesReasoning,
  chatReasoningField,
  directives: args.directives === true,
  onRequest(request, count) {
    process.stderr.write(`test-model: #${count} ${request.protocol} POST ${request.path}${request.body?.stream === true ? " (stream)" : ""}\n`);
  },
});
// Past the end of the script the server answers from the prompt's directives (--directives), else
// 500 "no scripted response" (x-should-retry: false).
model.enqueue(...script);
process.stdout.write(`${model.url}\n`);

async function shutdown(): Promise<void> {
  await model.close();
  process.exit(0);
}
process.once("SIGINT", () => void shutdown());
process.once("SIGTERM", () => void shutdown());
