// Turn patches and rewind with real Turns: the scripted test model drives the real `write`
// and `shell` tools in a temp workdir that is a git repository (recording's default mode there
// follows shell changes too); every patch is captured when its Turn settles, read back in pages
// (also after a restart on the same database), and rewinding puts files back — refused, naming
// the files, when they changed outside the harness since.
import { existsSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createZeClient, sdk, unwrap, type TurnPatchPage } from "../../clients/index.js";
import { createHarness } from "../../services/host/harness.js";
import { failure, ok } from "../support/calls.js";
import { startModelHarness, type ModelHarness } from "../support/model.js";
import { b64, initRepo, unb64 } from "./repos.js";

const server = "local";
let h: ModelHarness;
beforeEach(async () => {
  h = await startModelHarness();
});
afterEach(async () => {
  await h.close();
});

/** Runs one Turn whose model makes these tool calls, then answers "done". */
let prompts = 0;
async function turnWith(sessionId: string, calls: { name: string; arguments: Record<string, unknown> }[]): Promise<string> {
  h.model.enqueue(...calls.map((call) => ({ events: [{ type: "tool_call" as const, ...call }] })), { events: [{ type: "text", text: "done" }] });
  const turnId = await h.submit(sessionId, `prompt number ${++prompts}`);
  const { turn } = await h.finish(sessionId, turnId);
  expect(turn.phase).toBe("completed");
  await h.harness.runner!.settled(turnId);
  return turnId;
}

async function readAll(sessionId: string, turnId: string, limit?: number): Promise<{ pages: TurnPatchPage[]; text: string }> {
  const pages: TurnPatchPage[] = [];
  let offset: number | undefined = 0;
  while (offset !== undefined) {
    const page: TurnPatchPage = await ok(sdk.readPatch({ client: h.api.client, path: { server, sessionId, turnId }, query: { offset: String(offset), ...(limit ? { limit: String(limit) } : {}) } }));
    pages.push(page);
    offset = page.nextOffset;
  }
  return { pages, text: pages.map((page) => page.text).join("") };
}

describe("Turn patches", () => {
  it("records what the write and shell tools changed, and pages the patch back", async () => {
    const root = h.home.root;
    const repo = await initRepo(root);
    writeFileSync(join(root, "keep.txt"), "one\ntwo\n");
    writeFileSync(join(root, "gone.txt"), "bye\n");
    // Committed and clean (older than the index: not racy), so git holds what a shell deletes.
    const past = new Date(Date.now() - 10_000);
    for (const name of ["keep.txt", "gone.txt"]) {
      utimesSync(join(root, name), past, past);
      await repo.add(name);
    }
    await repo.commit();
    const sessionId = await h.createSession();
    const turnId = await turnWith(sessionId, [
      { name: "write", arguments: { filePath: "keep.txt", content: "one\nTWO\n" } },
      { name: "write", arguments: { filePath: "dir/new.txt", content: "fresh ✓\n" } },
      { name: "shell", arguments: { command: "rm gone.txt && printf '\\000\\001' > blob.bin" } },
    ]);
    const { patch } = await ok(sdk.snapshotPatch({ client: h.api.client, path: { server, sessionId, turnId } }));
    expect(patch.files.map((file) => `${file.change} ${file.content} ${unb64(file.path.bytesBase64)}`)).toEqual([
      "added binary blob.bin",
      "added text dir/new.txt",
      "deleted text gone.txt",
      "modified text keep.txt",
    ]);
    const { text, pages } = await readAll(sessionId, turnId, 64);
    expect(pages.length).toBeGreaterThan(2);
    expect(Buffer.byteLength(text)).toBe(patch.size);
    expect(text).toContain("diff --git a/keep.txt b/keep.txt\n--- a/keep.txt\n+++ b/keep.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n");
    expect(text).toContain("+fresh ✓\n");
    expect(text).toContain("Binary files /dev/null and b/blob.bin differ\n");
    expect(text).toContain("deleted file mode 100644\n--- a/gone.txt\n+++ /dev/null\n");
    // The same patch again: immutable, also after a later Turn.
    await turnWith(sessionId, [{ name: "write", arguments: { filePath: "keep.txt", content: "later\n" } }]);
    expect((await ok(sdk.snapshotPatch({ client: h.api.client, path: { server, sessionId, turnId } }))).patch).toEqual(patch);
    expect((await readAll(sessionId, turnId)).text).toBe(text);
    // After a restart on the same database: the original artifact.
    const again = await createHarness({ serverRoot: h.home.root, env: h.home.env, database: join(h.home.dir, "test.db"), runTurns: false });
    try {
      const client = createZeClient({ baseUrl: "http://localhost", fetch: again.fetch });
      const page = await unwrap(sdk.readPatch({ client: client.client, path: { server, sessionId, turnId } }));
      expect(page).toEqual({ patch, offset: 0, text });
    } finally {
      await again.close();
    }
    expect(await failure(sdk.readPatch({ client: h.api.client, path: { server, sessionId, turnId }, query: { offset: "-1" } }))).toMatchObject({ status: 400 });
    expect(await failure(sdk.readPatch({ client: h.api.client, path: { server, sessionId, turnId }, query: { offset: String(patch.size + 1) } }))).toMatchObject({ status: 400 });
  });

  it("a Turn that changed nothing has an empty patch; unknown Turns are 404", async () => {
    const sessionId = await h.createSession();
    const turnId = await turnWith(sessionId, [{ name: "read", arguments: { filePath: "." } }]);
    const { patch } = await ok(sdk.snapshotPatch({ client: h.api.client, path: { server, sessionId, turnId } }));
    expect(patch).toMatchObject({ files: [], size: 0 });
    expect(await failure(sdk.snapshotPatch({ client: h.api.client, path: { server, sessionId, turnId: crypto.randomUUID() } }))).toMatchObject({ status: 404 });
    expect(await failure(sdk.readPatch({ client: h.api.client, path: { server, sessionId: crypto.randomUUID(), turnId } }))).toMatchObject({ status: 404 });
  });
});

describe("rewind", () => {
  it("restores what this Turn and the later ones changed and hides them from later work", async () => {
    const root = h.home.root;
    await initRepo(root);
    writeFileSync(join(root, "a.txt"), "original\n");
    const sessionId = await h.createSession();
    const first = await turnWith(sessionId, [{ name: "write", arguments: { filePath: "a.txt", content: "first\n" } }]);
    const second = await turnWith(sessionId, [
      { name: "write", arguments: { filePath: "a.txt", content: "second\n" } },
      { name: "shell", arguments: { command: "mkdir -p made && echo x > made/b.txt && chmod +x made/b.txt" } },
    ]);
    const third = await turnWith(sessionId, [{ name: "write", arguments: { filePath: "c.txt", content: "third\n" } }]);
    const { rewind } = await ok(sdk.rewindTurn({ client: h.api.client, path: { server, sessionId, turnId: second }, body: {} }));
    expect(rewind).toMatchObject({ turnId: second, turnIds: [second, third], visibility: { excludedTurnIds: expect.arrayContaining([second, third]) } });
    expect(rewind.restored.map((path) => unb64(path.bytesBase64))).toEqual(["a.txt", "c.txt", "made/b.txt"]);
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("first\n");
    expect(existsSync(join(root, "c.txt"))).toBe(false);
    expect(existsSync(join(root, "made", "b.txt"))).toBe(false);
    expect(await failure(sdk.rewindTurn({ client: h.api.client, path: { server, sessionId, turnId: second }, body: {} }))).toMatchObject({ status: 409 });

    // The next Turn's model no longer sees the rewound Turns' prompts.
    const requests = h.model.requests.length;
    const base = prompts;
    await turnWith(sessionId, [{ name: "read", arguments: { filePath: "a.txt" } }]);
    const seen = JSON.stringify((h.model.requests[requests]!.body as { messages: unknown[] }).messages);
    expect(seen).toContain(`prompt number ${base - 2}`); // the first Turn stays
    expect(seen).not.toContain(`prompt number ${base - 1}`);
    expect(seen).not.toContain(`prompt number ${base}"`);
    expect(first).toBeTruthy();
  });

  it("refuses with the files named when they changed outside the harness, and restores nothing", async () => {
    const root = h.home.root;
    writeFileSync(join(root, "a.txt"), "original\n");
    const sessionId = await h.createSession();
    const turnId = await turnWith(sessionId, [
      { name: "write", arguments: { filePath: "a.txt", content: "model\n" } },
      { name: "write", arguments: { filePath: "b.txt", content: "model b\n" } },
    ]);
    writeFileSync(join(root, "a.txt"), "edited by hand\n");
    const refused = await failure(sdk.rewindTurn({ client: h.api.client, path: { server, sessionId, turnId }, body: { filesOnly: true } }));
    expect(refused).toMatchObject({ status: 409, body: { _tag: "RewindConflictError", files: [{ bytesBase64: b64("a.txt") }] } });
    expect(readFileSync(join(root, "b.txt"), "utf8")).toBe("model b\n");
    writeFileSync(join(root, "a.txt"), "model\n");
    const { rewind } = await ok(sdk.rewindTurn({ client: h.api.client, path: { server, sessionId, turnId }, body: { filesOnly: true } }));
    expect(rewind.visibility).toBeUndefined();
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("original\n");
    expect(existsSync(join(root, "b.txt"))).toBe(false);
  });

  it("refuses a parent replaced by a symlink out of the workdir", async () => {
    const root = h.home.root;
    const sessionId = await h.createSession();
    const turnId = await turnWith(sessionId, [{ name: "write", arguments: { filePath: "sub/f.txt", content: "x\n" } }]);
    const outside = join(h.home.dir, "outside");
    mkdirSync(outside);
    writeFileSync(join(outside, "f.txt"), "x\n");
    const { rmSync, symlinkSync } = await import("node:fs");
    rmSync(join(root, "sub"), { recursive: true });
    symlinkSync(outside, join(root, "sub"));
    expect(await failure(sdk.rewindTurn({ client: h.api.client, path: { server, sessionId, turnId }, body: {} }))).toMatchObject({ status: 409, body: { _tag: "RewindConflictError" } });
    expect(readFileSync(join(outside, "f.txt"), "utf8")).toBe("x\n");
  });
});
