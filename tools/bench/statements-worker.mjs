// The measuring process of the `statements` benchmark (spawned by statements.mjs with tsx, for
// the TypeScript test model): the BUILT harness in process on a file database, every SQL
// statement it runs counted at the storage engine's connection (a wrapper around
// LocalConnection's entry points, `exec` included: a write connection BEGINs through it), for one-step Turns (one prompt → one streamed answer, no
// tools) of a warm Session, watched to `turn.finished` as a client would. Prints one JSON line.
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { tempHome, writeTestModelConfig } from "./lib.mjs";

const { startTestModel } = await import("../test-model/index.ts");
const { LocalConnection } = await import("../../dist/services/storage/engine.js");
const { createHarness } = await import("../../dist/services/host/harness.js");
const { createZeClient, sdk, unwrap } = await import("../../dist/clients/index.js");

/** Counted statements by phase; `phase` is set around each step. */
let phase;
const counts = {};
for (const method of ["allSync", "getSync", "runSync", "executeSync", "exec"]) {
  const original = LocalConnection.prototype[method];
  LocalConnection.prototype[method] = function counted(sql, args) {
    if (phase !== undefined) {
      const text = typeof sql === "string" ? sql : sql.sql;
      const kind = /^\s*(BEGIN|COMMIT|ROLLBACK)/i.test(text) ? "transactionControl" : /^\s*INSERT INTO turn_part/i.test(text) ? "content" : "data";
      const entry = (counts[phase] ??= { data: 0, transactionControl: 0, content: 0, statements: [] });
      entry[kind] += 1;
      entry.statements.push(text.replace(/\s+/g, " ").slice(0, 90));
    }
    return original.call(this, sql, args);
  };
}

const home = tempHome("ze-bench-statements-");
const model = await startTestModel();
writeTestModelConfig(home, model.openaiBaseURL);
const harness = await createHarness({ serverRoot: home.root, env: home.env, database: join(home.dir, "bench.db") });
const api = createZeClient({ baseUrl: "http://localhost", fetch: harness.fetch });
const server = "local";
const sessionId = randomUUID();
await unwrap(sdk.createSession({ client: api.client, path: { server, sessionId }, body: {} }));

/**
 * One Turn: submit, then (with `watch`) follow it on its watch stream to `turn.finished` as a
 * client would (the watch opens right after the submit), else wait for the runner.
 */
async function turn(label, watch) {
  model.enqueue({ events: [{ type: "text", text: "Hello! This is the scripted answer from the bench model." }] });
  const turnId = randomUUID();
  phase = label;
  await unwrap(
    sdk.submitPrompt({ client: api.client, path: { server, sessionId }, headers: { "x-ze-harness-client-id": "bench" }, body: { delivery: "queue", turnId, prompt: [{ type: "text", text: "hello" }] } }),
  );
  if (watch) {
    const { stream } = await sdk.watchTurn({ client: api.client, path: { server, sessionId, turnId }, sseMaxRetryAttempts: 0 });
    for await (const event of stream) if (event.type === "turn.finished") break;
  }
  await harness.runner.settled(turnId);
  phase = undefined;
}

try {
  for (let index = 0; index < 5; index++) await turn(undefined, true);
  await turn("the Turn pipeline (admission, claim, run, completion)", false);
  await turn("the same with a client watching it to turn.finished", true);
  console.log(JSON.stringify({ counts }));
} finally {
  await harness.close();
  await model.close();
  home.cleanup();
}
