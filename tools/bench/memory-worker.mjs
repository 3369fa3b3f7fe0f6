// The measuring process of the `memory` benchmark (spawned by memory.mjs with tsx, for the
// TypeScript test model): the BUILT harness in process on a file database, one-step Turns
// watched to `turn.finished` as a client would (a new Session every 5 Turns, so the per-Session
// caches — history views (128 Sessions), admission hints — are full and evicting by the half-way
// sample), and this process's memory after a full garbage collection every `every` Turns.
// In process, so the collection can be forced (the `turns` benchmark's serve RSS cannot): what
// stays after it is what the harness keeps. The test model forgets the requests it recorded.
//
// Options (one JSON argument): { turns, every }. Prints one JSON line:
// { samples: [{ turns, heapUsedKiB, objectsKiB (the heap without code spaces), rssKiB, externalKiB }] }.
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { getHeapSpaceStatistics, setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { tempHome, watchedTurn, writeTestModelConfig } from "./lib.mjs";

const options = { turns: 2000, every: 250, ...JSON.parse(process.argv[2] ?? "{}") };
setFlagsFromString("--expose-gc");
/** @type {() => void} */
const gc = runInNewContext("gc");

const { startTestModel } = await import("../test-model/index.ts");
const { createHarness } = await import("../../dist/services/host/harness.js");
const clientModule = await import("../../dist/clients/index.js");
const { createZeClient, sdk, unwrap } = clientModule;

const home = tempHome("ze-bench-memory-");
const model = await startTestModel();
model.reply(() => ({ events: [{ type: "text", text: "Hello! This is the scripted answer from the bench model." }] }));
writeTestModelConfig(home, model.openaiBaseURL);
const harness = await createHarness({ serverRoot: home.root, env: home.env, database: join(home.dir, "bench.db") });
const api = { ...createZeClient({ baseUrl: "http://localhost", fetch: harness.fetch }), clientId: "ze-bench" };
const server = "local";

const samples = [];
const sample = (turns) => {
  gc();
  gc();
  const usage = process.memoryUsage();
  // Objects only: V8 keeps compiling (and tiering up) code for a while, which is not kept data.
  const objects = getHeapSpaceStatistics()
    .filter((space) => !space.space_name.startsWith("code"))
    .reduce((sum, space) => sum + space.space_used_size, 0);
  samples.push({
    turns,
    heapUsedKiB: Math.round(usage.heapUsed / 1024),
    objectsKiB: Math.round(objects / 1024),
    rssKiB: Math.round(usage.rss / 1024),
    externalKiB: Math.round(usage.external / 1024),
  });
};

let result;
try {
  let sessionId = "";
  for (let index = 0; index < options.turns; index++) {
    if (index % 5 === 0) {
      sessionId = randomUUID();
      await unwrap(sdk.createSession({ client: api.client, path: { server, sessionId }, body: {} }));
    }
    await watchedTurn(clientModule, api, server, sessionId, "hello");
    model.requests.splice(0, model.requests.length);
    if ((index + 1) % options.every === 0) sample(index + 1);
  }
  result = { samples };
} catch (error) {
  result = { error: error instanceof Error ? error.message : String(error) };
} finally {
  await harness.close();
  await model.close();
  home.cleanup();
}
process.stdout.write(`${JSON.stringify(result)}\n`);
