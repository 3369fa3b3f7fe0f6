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
// History length: a Session seeded with 1, 1,000 and 10,000 settled Turns (copies of one real
// Turn, written straight into the database before a fresh `serve` opens it, so its history cache
// starts cold), then five more Turns through the harness — the first reads the whole history
// (or, once a compaction checkpoint exists, what follows it), the rest use the runner's cache —
// and the first page of `listSessionTurns`. 10,000 Turns do not fit the test model's context, so
// the first new Turn compacts automatically; a second cold `serve` then shows the bounded read.
//
// Prints one JSON line on stdout with the raw samples (ms); progress goes to stderr.
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";
import OpenAI from "openai";
import { binPath, tempHome, writeTestModelConfig, watchedTurn } from "./lib.mjs";

const options = { warmup: 10, rounds: 40, ...JSON.parse(process.argv[2] ?? "{}") };
const SERVER = "local";
const log = (line) => process.stderr.write(`depth-worker: ${line}\n`);

const { startTestModel } = await import("../test-model/index.ts");
const clientModule = await import("../../dist/clients/index.js");
const { createZeClient, sdk, unwrap } = clientModule;

const model = await startTestModel({ directives: true });
const home = tempHome("ze-bench-depth-");
writeFileSync(join(home.root, "small.txt"), "a small file\n");
writeTestModelConfig(home, model.openaiBaseURL);

/** A warm `serve` on `database` (a fresh process: empty caches). */
async function startServe(database) {
  const child = spawn(process.execPath, [binPath, "serve", "--port", "0", "--database", database], { cwd: home.root, env: home.env, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk) => (stderr = (stderr + chunk).slice(-4000)));
  const url = await new Promise((resolvePromise, reject) => {
    createInterface({ input: child.stdout }).once("line", resolvePromise);
    child.once("exit", (code) => reject(new Error(`serve exited with ${code} before printing its URL: ${stderr.trim()}`)));
  });
  return {
    url,
    stderr: () => stderr,
    stop: () => new Promise((resolvePromise) => (child.once("exit", resolvePromise), child.kill("SIGTERM"))),
    kill: () => child.kill("SIGTERM"),
  };
}

let current = await startServe(join(home.dir, "bench.db"));
process.once("SIGTERM", () => {
  current.kill();
  home.cleanup();
  process.exit(1);
});
let api = createZeClient({ baseUrl: current.url, clientId: "ze-bench" });
const openai = new OpenAI({ baseURL: model.openaiBaseURL, apiKey: "bench", maxRetries: 0 });

async function createSession() {
  const sessionId = randomUUID();
  await unwrap(sdk.createSession({ client: api.client, path: { server: SERVER, sessionId }, body: {} }));
  return sessionId;
}

/** One Turn: submit, watch to `turn.finished`; the elapsed ms. */
const turn = (sessionId, text) => watchedTurn(clientModule, api, SERVER, sessionId, text);

async function direct() {
  const started = performance.now();
  const stream = await openai.chat.completions.create({ model: "scripted", stream: true, messages: [{ role: "user", content: "@say hello" }] });
  for await (const _chunk of stream) void _chunk;
  return performance.now() - started;
}

const taskPrompt = `@call task ${JSON.stringify({ description: "Say hi", prompt: "@say the child says hi", subagent_type: "general" })}\n@then parent done`;
const readPrompt = `@call read ${JSON.stringify({ filePath: "small.txt" })}\n@then parent done`;

const result = { subagent: [], tool: [], model: [], history: [] };
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
  await current.stop();
  for (const earlier of options.historySizes ?? [1, 1000, 10000]) result.history.push(await historyPhase(earlier));
} catch (error) {
  result.error = `${error instanceof Error ? error.message : String(error)} ${current.stderr().trim().split("\n").slice(-3).join(" | ")}`;
} finally {
  current.kill();
  await model.close();
  home.cleanup();
}
process.stdout.write(`${JSON.stringify(result)}\n`);

/** Copies the Session's one settled Turn `count - 1` times (sequence and history revision after it), in one transaction. */
async function seed(database, sessionId, count) {
  const { default: Database } = await import("libsql");
  const db = new Database(database);
  db.exec("PRAGMA busy_timeout = 5000");
  const template = db.prepare("SELECT * FROM turn WHERE session_id = ?").get(sessionId);
  const columns = db.prepare("PRAGMA table_info(turn)").all().map((column) => column.name);
  const insert = db.prepare(`INSERT INTO turn (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`);
  db.exec("BEGIN IMMEDIATE");
  for (let index = 2; index <= count; index++) {
    insert.run(columns.map((column) => (column === "id" ? randomUUID() : column === "sequence" || column === "history_revision" ? index : template[column])));
  }
  db.prepare("UPDATE session SET next_sequence = ?, history_revision = ? WHERE id = ?").run(count + 1, count, sessionId);
  db.exec("COMMIT");
  db.close();
}

async function listPage(sessionId) {
  const started = performance.now();
  await unwrap(sdk.listSessionTurns({ client: api.client, path: { server: SERVER, sessionId }, query: { limit: "50" } }));
  return performance.now() - started;
}

/** One Session with `earlier` settled Turns; fresh `serve` processes measure Turns and a list page. */
async function historyPhase(earlier) {
  const database = join(home.dir, `history-${earlier}.db`);
  current = await startServe(database);
  api = createZeClient({ baseUrl: current.url, clientId: "ze-bench" });
  const sessionId = await createSession();
  // One real Turn with a tool round: the template every seeded Turn copies (≈ 1 KB of transcript).
  await turn(sessionId, readPrompt);
  await current.stop();
  await seed(database, sessionId, earlier);
  const phase = { earlier, cold: [], list: [] };
  for (const pass of ["first", "second"]) {
    current = await startServe(database);
    api = createZeClient({ baseUrl: current.url, clientId: "ze-bench" });
    const turns = [];
    for (let index = 0; index < 5; index++) turns.push(await turn(sessionId, "@say next"));
    const lists = [];
    for (let index = 0; index < 10; index++) lists.push(await listPage(sessionId));
    phase[pass] = { turns, lists };
    await current.stop();
  }
  const { compactions } = await readCompactions(database, sessionId);
  phase.compactions = compactions;
  log(`history ${earlier}: done`);
  return phase;
}

async function readCompactions(database, sessionId) {
  const { default: Database } = await import("libsql");
  const db = new Database(database, { readonly: true });
  const row = db.prepare("SELECT count(*) AS n FROM compaction WHERE session_id = ? AND phase = 'completed'").get(sessionId);
  db.close();
  return { compactions: row.n };
}
