// Turn recording stores what a Turn could change, not a copy of the workdir (issue 18 §1), with
// real Turns (the scripted model driving the real `write` and `shell` tools) on a real libSQL
// file: ignored files are never read, outside a repository only tool writes are kept, a dirty
// file a shell command changed is named unrecorded and its rewind refused, a clean one comes back
// from git, `workspace.recording: "off"` records nothing, and deleting a Session or rewinding
// frees what nothing else needs — while content another Session still needs stays.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { sdk } from "../../clients/index.js";
import { workspace } from "../../services/storage/index.js";
import { failure, ok } from "../support/calls.js";
import { startModelHarness, type ModelHarness } from "../support/model.js";
import { initRepo, unb64, type TestRepo } from "./repos.js";

const server = "local";
let h: ModelHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

let prompts = 0;
async function turnWith(harness: ModelHarness, sessionId: string, calls: { name: string; arguments: Record<string, unknown> }[]): Promise<string> {
  harness.model.enqueue(...calls.map((call) => ({ events: [{ type: "tool_call" as const, ...call }] })), { events: [{ type: "text", text: "done" }] });
  const turnId = await harness.submit(sessionId, `prompt ${++prompts}`);
  const { turn } = await harness.finish(sessionId, turnId);
  expect(turn.phase).toBe("completed");
  await harness.harness.runner!.settled(turnId);
  return turnId;
}

const patchOf = async (harness: ModelHarness, sessionId: string, turnId: string) => (await ok(sdk.snapshotPatch({ client: harness.api.client, path: { server, sessionId, turnId } }))).patch;
const listed = (files: readonly { change: string; path: { bytesBase64: string }; beforeRecorded?: boolean }[]): string[] =>
  files.map((file) => `${file.change} ${unb64(file.path.bytesBase64)}${file.beforeRecorded === false ? " (unrecorded)" : ""}`);

/** Commits `names` (already written) so they are clean: older than the index, so not racy. */
async function commitClean(repo: TestRepo, names: readonly string[]): Promise<void> {
  const past = new Date(Date.now() - 10_000);
  for (const name of names) {
    utimesSync(join(repo.dir, name), past, past);
    await repo.add(name);
  }
  await repo.commit();
}

describe("what a Turn records", () => {
  it("in a repository: never reads ignored files, however large, and follows shell changes of the rest", async () => {
    h = await startModelHarness();
    const root = h.home.root;
    const repo = await initRepo(root);
    writeFileSync(join(root, ".gitignore"), "build/\n*.log\n");
    writeFileSync(join(root, "src.txt"), "v1\n");
    await commitClean(repo, [".gitignore", "src.txt"]);
    mkdirSync(join(root, "build"));
    for (const name of ["a.bin", "b.bin"]) writeFileSync(join(root, "build", name), Buffer.alloc(3 * 1024 * 1024, name));
    writeFileSync(join(root, "debug.log"), "x".repeat(100_000));
    const sessionId = await h.createSession();
    const before = await workspace.blobBytes(h.harness.storage);
    const turnId = await turnWith(h, sessionId, [{ name: "shell", arguments: { command: "echo v2 > src.txt && echo more >> build/a.bin && echo more >> debug.log && echo new > fresh.txt" } }]);
    const patch = await patchOf(h, sessionId, turnId);
    expect(listed(patch.files)).toEqual(["added fresh.txt", "modified src.txt"]);
    // src.txt's before came from git (it was clean); fresh.txt and src.txt after: a few bytes, not 6 MB.
    const after = await workspace.blobBytes(h.harness.storage);
    expect(after.bytes - before.bytes).toBeLessThan(4096);
    // A Turn that changes nothing adds nothing but a row.
    const quiet = await turnWith(h, sessionId, [{ name: "read", arguments: { filePath: "src.txt" } }]);
    expect((await patchOf(h, sessionId, quiet)).files).toEqual([]);
    expect((await workspace.blobBytes(h.harness.storage)).bytes - after.bytes).toBeLessThan(256);
    // And the shell change rewinds from git's copy.
    await ok(sdk.rewindTurn({ client: h.api.client, path: { server, sessionId, turnId }, body: { filesOnly: true } }));
    expect(readFileSync(join(root, "src.txt"), "utf8")).toBe("v1\n");
  });

  it("a dirty file a shell command changed is named unrecorded, and its rewind is refused naming it", async () => {
    h = await startModelHarness();
    const root = h.home.root;
    const repo = await initRepo(root);
    writeFileSync(join(root, "notes.txt"), "committed\n");
    await commitClean(repo, ["notes.txt"]);
    writeFileSync(join(root, "notes.txt"), "my uncommitted work\n");
    const sessionId = await h.createSession();
    const turnId = await turnWith(h, sessionId, [{ name: "shell", arguments: { command: "echo overwritten > notes.txt" } }]);
    const patch = await patchOf(h, sessionId, turnId);
    expect(listed(patch.files)).toEqual(["modified notes.txt (unrecorded)"]);
    expect(patch.files[0]).not.toHaveProperty("beforeSha256");
    const refused = await failure(sdk.rewindTurn({ client: h.api.client, path: { server, sessionId, turnId }, body: {} }));
    expect(refused).toMatchObject({ status: 409, body: { _tag: "RewindConflictError", reason: "not_recorded", files: [{ bytesBase64: Buffer.from("notes.txt").toString("base64") }] } });
    expect(readFileSync(join(root, "notes.txt"), "utf8")).toBe("overwritten\n");
  });

  it("outside a repository: only what the file tools write, each kept as it was before the write", async () => {
    h = await startModelHarness();
    const root = h.home.root;
    writeFileSync(join(root, "big.bin"), Buffer.alloc(3 * 1024 * 1024, 1));
    writeFileSync(join(root, "a.txt"), "before\n");
    const sessionId = await h.createSession();
    const before = await workspace.blobBytes(h.harness.storage);
    const turnId = await turnWith(h, sessionId, [
      { name: "write", arguments: { filePath: "a.txt", content: "after\n" } },
      { name: "shell", arguments: { command: "echo by-shell > b.txt && echo more >> big.bin" } },
    ]);
    const patch = await patchOf(h, sessionId, turnId);
    expect(listed(patch.files)).toEqual(["modified a.txt"]);
    expect((await workspace.blobBytes(h.harness.storage)).bytes - before.bytes).toBeLessThan(1024);
    await ok(sdk.rewindTurn({ client: h.api.client, path: { server, sessionId, turnId }, body: { filesOnly: true } }));
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("before\n");
    expect(readFileSync(join(root, "b.txt"), "utf8")).toBe("by-shell\n");
  });

  it("outside a repository, a later Turn no tool wrote settles with its empty patch; one that writes is still recorded", async () => {
    h = await startModelHarness();
    const root = h.home.root;
    writeFileSync(join(root, "a.txt"), "one\n");
    const sessionId = await h.createSession();
    await turnWith(h, sessionId, [{ name: "write", arguments: { filePath: "a.txt", content: "two\n" } }]);
    // Nothing pending: the answer-only Turn leaves the manifest unmarked, its settlement writes its patch.
    const answered = await turnWith(h, sessionId, []);
    expect(await workspace.getTurnPatch(h.harness.storage, answered)).toMatchObject({ turnId: answered, files: [], size: 0 });
    expect((await workspace.readManifest(h.harness.storage, sessionId))?.turnId).toBeNull();
    // The next Turn's write marks it first: its before-image is kept and rewound.
    const writing = await turnWith(h, sessionId, [{ name: "write", arguments: { filePath: "a.txt", content: "three\n" } }]);
    expect(listed((await patchOf(h, sessionId, writing)).files)).toEqual(["modified a.txt"]);
    await ok(sdk.rewindTurn({ client: h.api.client, path: { server, sessionId, turnId: writing }, body: { filesOnly: true } }));
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("two\n");
    expect((await ok(sdk.rewindTurn({ client: h.api.client, path: { server, sessionId, turnId: answered }, body: {} }))).rewind.restored).toEqual([]);
  });

  it('workspace.recording "off" records nothing: no patch, no rewind', async () => {
    h = await startModelHarness({ config: { workspace: { recording: "off" } } });
    const root = h.home.root;
    await initRepo(root);
    writeFileSync(join(root, "a.txt"), "before\n");
    const sessionId = await h.createSession();
    const turnId = await turnWith(h, sessionId, [{ name: "write", arguments: { filePath: "a.txt", content: "after\n" } }]);
    expect(await failure(sdk.snapshotPatch({ client: h.api.client, path: { server, sessionId, turnId } }))).toMatchObject({ status: 409, body: { message: expect.stringContaining('workspace.recording is "off"') } });
    expect(await failure(sdk.rewindTurn({ client: h.api.client, path: { server, sessionId, turnId }, body: {} }))).toMatchObject({ status: 409 });
    expect((await workspace.blobBytes(h.harness.storage)).blobs).toBe(0);
  });
});

describe("at any size", () => {
  it("a CodeMode Turn writing 2,000 files at once records and rewinds them all", async () => {
    h = await startModelHarness();
    const root = h.home.root;
    for (let index = 0; index < 1000; index++) writeFileSync(join(root, `f${index}.txt`), `old ${index}\n`);
    const sessionId = await h.createSession();
    const code = "const p=[];for(let i=0;i<2000;i++)p.push(tools.write({filePath:'f'+i+'.txt',content:'new '+i+'\\n'}));await Promise.all(p)";
    const turnId = await turnWith(h, sessionId, [{ name: "execute", arguments: { code } }]);
    const patch = await patchOf(h, sessionId, turnId);
    expect(patch.files.filter((file) => file.change === "modified")).toHaveLength(1000);
    expect(patch.files.filter((file) => file.change === "added")).toHaveLength(1000);
    await ok(sdk.rewindTurn({ client: h.api.client, path: { server, sessionId, turnId }, body: { filesOnly: true } }));
    expect(readFileSync(join(root, "f999.txt"), "utf8")).toBe("old 999\n");
    expect(existsSync(join(root, "f1000.txt"))).toBe(false);
    // A size test, not a speed one: 2,000 writes, their records and the rewind take 20-25 s of a
    // loaded 2-core machine, near the suite's 30 s default (its speed is `npm run bench recording`).
  }, 120_000);
});

describe("each project's own setting", () => {
  it("a project file's workspace.recording applies to that project's Sessions only", async () => {
    h = await startModelHarness();
    const root = h.home.root;
    for (const name of ["quiet", "kept"]) {
      mkdirSync(join(root, name));
      writeFileSync(join(root, name, "a.txt"), "before\n");
    }
    writeFileSync(join(root, "quiet", "ze-harness.config.json"), JSON.stringify({ workspace: { recording: "off" } }));
    const quiet = await h.createSession({ workdir: join(root, "quiet") });
    const kept = await h.createSession({ workdir: join(root, "kept") });
    const quietTurn = await turnWith(h, quiet, [{ name: "write", arguments: { filePath: "a.txt", content: "after\n" } }]);
    const keptTurn = await turnWith(h, kept, [{ name: "write", arguments: { filePath: "a.txt", content: "after\n" } }]);
    expect(await failure(sdk.snapshotPatch({ client: h.api.client, path: { server, sessionId: quiet, turnId: quietTurn } }))).toMatchObject({ status: 409 });
    expect(listed((await patchOf(h, kept, keptTurn)).files)).toEqual(["modified a.txt"]);
  });
});

describe("what is freed", () => {
  it("deleting a Session frees its contents, keeping what another Session still needs", async () => {
    h = await startModelHarness();
    const root = h.home.root;
    writeFileSync(join(root, "shared.txt"), "the same content in both\n");
    const one = await h.createSession();
    const two = await h.createSession();
    const empty = await workspace.blobBytes(h.harness.storage);
    await turnWith(h, one, [{ name: "write", arguments: { filePath: "shared.txt", content: "same after\n" } }]);
    writeFileSync(join(root, "shared.txt"), "the same content in both\n");
    await turnWith(h, two, [{ name: "write", arguments: { filePath: "shared.txt", content: "same after\n" } }]);
    await turnWith(h, two, [{ name: "write", arguments: { filePath: "own.txt", content: "only the second Session's\n" } }]);
    const both = await workspace.blobBytes(h.harness.storage);
    expect(both.blobs).toBeGreaterThan(empty.blobs);
    await ok(sdk.deleteSession({ client: h.api.client, path: { server, sessionId: two } }));
    const left = await workspace.blobBytes(h.harness.storage);
    // The first Session's before and after contents stay (the second shared them); own.txt's went.
    expect(await workspace.storedBlobs(h.harness.storage, [sha("the same content in both\n"), sha("same after\n"), sha("only the second Session's\n")])).toEqual(
      new Set([sha("the same content in both\n"), sha("same after\n")]),
    );
    expect(left.blobs).toBeLessThan(both.blobs);
    await ok(sdk.deleteSession({ client: h.api.client, path: { server, sessionId: one } }));
    expect(await workspace.blobBytes(h.harness.storage)).toEqual({ blobs: 0, bytes: 0 });
  });

  it("a rewind frees what only the rewound Turns needed", async () => {
    h = await startModelHarness();
    const root = h.home.root;
    writeFileSync(join(root, "a.txt"), "original\n");
    const sessionId = await h.createSession();
    const turnId = await turnWith(h, sessionId, [{ name: "write", arguments: { filePath: "a.txt", content: `${"written by the Turn\n".repeat(50)}` } }]);
    expect(await workspace.storedBlobs(h.harness.storage, [sha("written by the Turn\n".repeat(50))])).toEqual(new Set([sha("written by the Turn\n".repeat(50))]));
    await ok(sdk.rewindTurn({ client: h.api.client, path: { server, sessionId, turnId }, body: {} }));
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("original\n");
    expect(await workspace.storedBlobs(h.harness.storage, [sha("written by the Turn\n".repeat(50))])).toEqual(new Set());
  });
});

function sha(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}
