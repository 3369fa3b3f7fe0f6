// The rewind recorder and a Session deleted under it (found by the contract fuzzer: a fuzzed
// deleteSession while the seed Turn's workdir was scanned left an unexpected `SqlError: FOREIGN
// KEY constraint failed` from the manifest write). The deletion takes the manifest and patches
// with it, so a recording for a Session that no longer exists is dropped, not reported; one for a
// Session that exists still is.
import { mkdirSync, writeFileSync } from "node:fs";
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { RewindService } from "../../services/core/rewind/service.js";
import { workspace, type TurnRow } from "../../services/storage/index.js";
import { startHarness, type TestHarness } from "../support/harness.js";

/** The recorder reads only a Turn row's id and Session id. */
const turnRow = (sessionId: string): TurnRow => ({ id: randomUUID(), sessionId }) as TurnRow;

let h: TestHarness;
beforeEach(async () => {
  h = await startHarness();
});
afterEach(async () => {
  await h.close();
});

it("recording the workdir of a deleted Session is dropped without an error, and writes nothing", async () => {
  const errors: unknown[] = [];
  const service = new RewindService({ storage: h.harness.storage, onError: (error) => errors.push(error) });
  const workdir = join(h.home.root, "w");
  mkdirSync(workdir);
  writeFileSync(join(workdir, "a.txt"), "a");
  const sessionId = randomUUID();
  await service.observer.before(turnRow(sessionId), workdir);
  expect(errors).toEqual([]);
  expect(await workspace.readManifest(h.harness.storage, sessionId)).toBeUndefined();
});

it("a failure for a Session that exists is still reported", async () => {
  const errors: unknown[] = [];
  const service = new RewindService({ storage: h.harness.storage, onError: (error) => errors.push(error) });
  const sessionId = randomUUID();
  const created = await h.harness.fetch(new Request(`http://localhost/v1/servers/local/sessions/${sessionId}`, { method: "PUT", headers: { "content-type": "application/json" }, body: "{}" }));
  expect(created.status).toBe(200);
  // A workdir that cannot be scanned (it is a file): the recording fails for a live Session.
  const file = join(h.home.root, "not-a-directory");
  writeFileSync(file, "x");
  await service.observer.before(turnRow(sessionId), file);
  expect(errors).toHaveLength(1);
});
