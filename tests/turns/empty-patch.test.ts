// A Turn that changed nothing recorded (outside a repository, no file tool wrote) settles with its
// empty patch recorded on the Turn itself (`turn.empty_patch_at`, set by the settling UPDATE), not
// as a `turn_patch` row: every reader answers that absence as the empty patch — the patch API
// (snapshot and read), a rewind (which then writes the row, to keep when it was rewound, and
// refuses a second one), and deleting the Session leaves nothing behind. Real Turns on a real
// libSQL file with the scripted model.
import { afterEach, describe, expect, it } from "vitest";
import { sdk } from "../../clients/index.js";
import { workspace } from "../../services/storage/index.js";
import { failure, ok } from "../support/calls.js";
import { startModelHarness, type ModelHarness } from "../support/model.js";

const server = "local";
let h: ModelHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function answerOnly(harness: ModelHarness, sessionId: string, text: string): Promise<string> {
  harness.model.enqueue({ events: [{ type: "text", text: "done" }] });
  const turnId = await harness.submit(sessionId, text);
  expect((await harness.finish(sessionId, turnId)).turn.phase).toBe("completed");
  await harness.harness.runner!.settled(turnId);
  return turnId;
}

const EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

async function patchRow(harness: ModelHarness, turnId: string): Promise<{ rewound_at: number | null } | undefined> {
  return harness.harness.storage.reader().sql.get<{ rewound_at: number | null }>("SELECT rewound_at FROM turn_patch WHERE turn_id = ?", [turnId]);
}

describe("a Turn that changed nothing recorded", () => {
  it("has no turn_patch row, and every reader answers its empty patch", async () => {
    h = await startModelHarness();
    const sessionId = await h.createSession();
    // The first Turn's state before it is written (the Session has none yet): it gets a row.
    const first = await answerOnly(h, sessionId, "first");
    const turnId = await answerOnly(h, sessionId, "second");

    // Absent: the settling UPDATE recorded it on the Turn.
    expect(await patchRow(h, turnId)).toBeUndefined();
    const marked = await h.harness.storage.reader().sql.get<{ empty_patch_at: number | null }>("SELECT empty_patch_at FROM turn WHERE id = ?", [turnId]);
    expect(marked?.empty_patch_at).toEqual(expect.any(Number));

    // The patch API answers the empty patch, the same shape as a stored one.
    const { patch } = await ok(sdk.snapshotPatch({ client: h.api.client, path: { server, sessionId, turnId } }));
    expect(patch).toMatchObject({ turnId, files: [], size: 0, sha256: EMPTY_SHA256, capturedAt: marked!.empty_patch_at });
    expect(patch).not.toHaveProperty("rewoundAt");
    const page = await ok(sdk.readPatch({ client: h.api.client, path: { server, sessionId, turnId } }));
    expect(page).toEqual({ patch, offset: 0, text: "" });
    const listed = await workspace.sessionPatchesFrom(h.harness.storage, sessionId, 0);
    expect(listed.map((row) => [row.turnId, row.files, row.rewoundAt])).toEqual([
      [first, [], null],
      [turnId, [], null],
    ]);
    // The snapshot captured nothing new: still no row.
    expect(await patchRow(h, turnId)).toBeUndefined();

    // A rewind of it restores nothing, writes its row with the rewind's time, and is not repeated.
    const { rewind } = await ok(sdk.rewindTurn({ client: h.api.client, path: { server, sessionId, turnId }, body: { filesOnly: true } }));
    expect(rewind).toMatchObject({ turnIds: [turnId], restored: [] });
    expect((await patchRow(h, turnId))?.rewound_at).toBe(rewind.rewoundAt);
    expect(await failure(sdk.rewindTurn({ client: h.api.client, path: { server, sessionId, turnId }, body: { filesOnly: true } }))).toMatchObject({
      status: 409,
      body: { message: expect.stringContaining("already rewound") },
    });

    // Deleting the Session leaves no patch of it, stored or recorded on a Turn.
    await ok(sdk.deleteSession({ client: h.api.client, path: { server, sessionId } }));
    expect(await workspace.getTurnPatch(h.harness.storage, turnId)).toBeUndefined();
    expect(await workspace.sessionPatchesFrom(h.harness.storage, sessionId, 0)).toEqual([]);
  });
});
