// Hosts sharing a database run each other's Sessions (docs/scale.md). A host that cannot reach a
// Session's workdir (made on another machine, outside what they share) fails that Turn before
// its first model call with the typed fault `workdir_unreachable`, and goes on serving the rest.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { sdk, unwrap, type Turn } from "../../clients/index.js";
import { startHarness, tempHome, type TestHarness } from "../support/harness.js";
import { startModelHarness, TEST_MODEL, testProviderConfig, writeGlobalConfig, type ModelHarness } from "../support/model.js";

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const harness of open.splice(0).reverse()) await harness.close();
});

async function finished(host: TestHarness, sessionId: string, turnId: string): Promise<Turn> {
  const { stream } = await sdk.watchTurn({ client: host.api.client, path: { server: "local", sessionId, turnId }, sseMaxRetryAttempts: 0 });
  for await (const event of stream) if ((event as { type?: string }).type === "turn.finished") break;
  return (await unwrap(sdk.getTurn({ client: host.api.client, path: { server: "local", sessionId, turnId } }))).turn;
}

it("fails a Turn whose workdir this host cannot reach with workdir_unreachable, before any model call", async () => {
  // Host A admits only; host B, on the same database with another server root, runs every Turn.
  const a: ModelHarness = await startModelHarness({ harness: { runTurns: false } });
  open.push(a);
  const home = tempHome();
  writeGlobalConfig(home, { model: TEST_MODEL, providers: testProviderConfig(a.model) });
  const b = await startHarness({ database: join(a.home.dir, "test.db") }, home);
  open.push(b);

  mkdirSync(join(a.home.root, "project"));
  const away = await a.createSession({ workdir: "project" });
  const lost = await a.submit(away, "Only host A has my workdir.");
  const turn = await finished(b, away, lost);
  expect(turn).toMatchObject({ phase: "failed", outcome: { kind: "failed", fault: { code: "workdir_unreachable" } } });
  const message = (turn.outcome as { fault: { message: string } }).fault.message;
  expect(message).toContain(join(home.root, "project"));
  expect(message).toContain("ENOENT");
  expect(a.model.requests).toHaveLength(0);

  // A Session whose workdir B reaches (the server root, present on both) runs on B as usual.
  a.model.enqueue({ events: [{ type: "text", text: "ran" }] });
  const here = await a.createSession();
  const ran = await a.submit(here, "My workdir is everywhere.");
  expect(await finished(b, here, ran)).toMatchObject({ phase: "completed", outcome: { kind: "completed", text: "ran" } });
  expect(a.model.requests).toHaveLength(1);
});
