// Each Turn resolves its workdir's project scope once, at its start, and its own lookups while it
// runs (its workspace recording) answer that scope: a project file created between two Turns is
// picked up by the second (its `workspace.recording: "off"` applies to it), and one removed
// between two Turns stops applying. Real Turns on a real libSQL file with the scripted model.
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { sdk } from "../../clients/index.js";
import { failure, ok } from "../support/calls.js";
import { startModelHarness, type ModelHarness } from "../support/model.js";

const server = "local";
let h: ModelHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function writeTurn(harness: ModelHarness, sessionId: string, content: string): Promise<string> {
  harness.model.enqueue({ events: [{ type: "tool_call", name: "write", arguments: { filePath: "a.txt", content } }] }, { events: [{ type: "text", text: "done" }] });
  const turnId = await harness.submit(sessionId, `write ${content}`);
  expect((await harness.finish(sessionId, turnId)).turn.phase).toBe("completed");
  await harness.harness.runner!.settled(turnId);
  return turnId;
}

const snapshot = (harness: ModelHarness, sessionId: string, turnId: string) => sdk.snapshotPatch({ client: harness.api.client, path: { server, sessionId, turnId } });

describe("a Turn's project scope", () => {
  it("picks up a project file created or removed between two Turns", async () => {
    h = await startModelHarness();
    const project = join(h.home.root, "project");
    mkdirSync(project);
    writeFileSync(join(project, "a.txt"), "zero\n");
    const sessionId = await h.createSession({ workdir: project });
    const recorded = await writeTurn(h, sessionId, "one\n");
    expect((await ok(snapshot(h, sessionId, recorded))).patch.files).toHaveLength(1);

    const file = join(project, "ze-harness.config.json");
    writeFileSync(file, JSON.stringify({ workspace: { recording: "off" } }));
    const unrecorded = await writeTurn(h, sessionId, "two\n");
    expect(await failure(snapshot(h, sessionId, unrecorded))).toMatchObject({ status: 409, body: { message: expect.stringContaining('workspace.recording is "off"') } });

    rmSync(file);
    const again = await writeTurn(h, sessionId, "three\n");
    expect((await ok(snapshot(h, sessionId, again))).patch.files).toHaveLength(1);
  });
});
