// The workspace operations through the generated client against the in-process handler (every
// response checked against generated/openapi.json), over real repositories and files in temp
// directories: git status/diff, listing pages, chunked reads, watches, and bad input and path
// escapes on every operation.
import { randomUUID } from "node:crypto";
import { createHash } from "node:crypto";
import { mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readWorkspaceFile, sdk, watchWorkspaceFiles, type FilesStreamEvent } from "../../clients/index.js";
import { failure, ok } from "../support/calls.js";
import { startHarness, type TestHarness } from "../support/harness.js";
import { b64, initRepo, unb64 } from "./repos.js";

const server = "local";
let t: TestHarness;
let sessionId: string;
let workdir: string;

beforeEach(async () => {
  t = await startHarness();
  workdir = join(t.home.root, "project");
  mkdirSync(workdir, { recursive: true });
  sessionId = randomUUID();
  await ok(sdk.createSession({ client: t.api.client, path: { server, sessionId }, body: { workdir: "project" } }));
});
afterEach(async () => {
  await t.close();
});

const path = () => ({ server, sessionId });
const client = () => t.api.client;
/** A raw GET of a streaming operation: its status and error body (the SSE client hides them). */
async function streamRefusal(route: string, query: Record<string, string>): Promise<{ status: number; body: { _tag: string; message: string } }> {
  const url = new URL(`http://localhost/v1/servers/${server}/sessions/${sessionId}/${route}`);
  for (const [key, value] of Object.entries(query)) url.searchParams.set(key, value);
  const response = await t.fetch(new Request(url));
  const text = await response.text();
  return { status: response.status, body: response.ok ? { _tag: "", message: text } : (JSON.parse(text) as { _tag: string; message: string }) };
}

const ESCAPES = [b64("/etc/passwd"), b64("../outside.txt"), b64("a/../../x"), b64("./a"), "%%%", b64("a\0b")];

describe("git over the API", () => {
  it("reports status and diffs, null outside a repository, 422 for unsupported features", async () => {
    expect(await ok(sdk.gitStatus({ client: client(), path: path() }))).toEqual({ status: null });
    expect(await ok(sdk.gitDiff({ client: client(), path: path(), query: { area: "worktree", path: b64("a.txt") } }))).toEqual({ diff: null });
    const repo = await initRepo(workdir);
    repo.write("a.txt", "one\n");
    await repo.add("a.txt");
    await repo.commit();
    repo.write("a.txt", "two\n");
    const status = (await ok(sdk.gitStatus({ client: client(), path: path() }))).status!;
    expect(status.worktree).toEqual([{ path: { bytesBase64: b64("a.txt") }, change: "modified" }]);
    const diff = (await ok(sdk.gitDiff({ client: client(), path: path(), query: { area: "worktree", path: b64("a.txt") } }))).diff;
    expect(diff).toMatchObject({ kind: "text", patch: "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,1 +1,1 @@\n-one\n+two\n" });
    writeFileSync(join(workdir, ".gitattributes"), "*.psd filter=lfs\n");
    expect(await failure(sdk.gitStatus({ client: client(), path: path() }))).toMatchObject({ status: 422, body: { _tag: "WorkspaceUnsupportedError", feature: "external_filter" } });
  });

  it("refuses bad input and unknown Sessions", async () => {
    await initRepo(workdir);
    for (const bad of ESCAPES) {
      expect(await failure(sdk.gitDiff({ client: client(), path: path(), query: { area: "worktree", path: bad } }))).toMatchObject({ status: 400, body: { _tag: "ValidationError" } });
    }
    expect(await failure(sdk.gitDiff({ client: client(), path: path(), query: { area: "sideways" as "worktree", path: b64("a") } }))).toMatchObject({ status: 400 });
    expect(await failure(sdk.gitStatus({ client: client(), path: { server, sessionId: randomUUID() } }))).toMatchObject({ status: 404, body: { resource: "session" } });
    // A symlink out of the workdir is a leaf: nothing behind it is read.
    writeFileSync(join(t.home.dir, "secret.txt"), "secret\n");
    symlinkSync(t.home.dir, join(workdir, "out"));
    expect(await ok(sdk.gitDiff({ client: client(), path: path(), query: { area: "untracked", path: b64("out/secret.txt") } }))).toMatchObject({ diff: { kind: "unchanged" } });
    expect(await ok(sdk.gitDiff({ client: client(), path: path(), query: { area: "untracked", path: b64("out") } }))).toMatchObject({ diff: { kind: "unsupported", reason: "symlink" } });
    const status = (await ok(sdk.gitStatus({ client: client(), path: path() }))).status!;
    expect(status.untracked.map((entry) => unb64(entry.path.bytesBase64))).toEqual(["out"]);
  });
});

describe("listFiles", () => {
  it("lists direct children in byte order, symlinks as leaves, .git and private state left out, in pages of 128", async () => {
    await initRepo(workdir);
    mkdirSync(join(workdir, ".ze-harness", "tool-output"), { recursive: true });
    mkdirSync(join(workdir, "dir"));
    writeFileSync(join(workdir, "dir", "inner.txt"), "x");
    mkdirSync(join(workdir, "dir", ".git"));
    writeFileSync(join(workdir, "b.txt"), "bb");
    symlinkSync("/etc", join(workdir, "link"));
    const odd = Buffer.concat([Buffer.from(join(workdir, "odd-")), Buffer.from([0xff, 0xfe])]);
    writeFileSync(odd, "latin");
    const page = await ok(sdk.listFiles({ client: client(), path: path() }));
    expect(page.path).toBeNull();
    expect(page.next).toBeUndefined();
    expect(page.entries.map((entry) => [Buffer.from(entry.path.bytesBase64, "base64").toString("latin1"), entry.kind, entry.size])).toEqual([
      ["b.txt", "file", 2],
      ["dir", "directory", undefined],
      ["link", "symlink", 4],
      ["odd-\xff\xfe", "file", 5],
    ]);
    const inner = await ok(sdk.listFiles({ client: client(), path: path(), query: { path: b64("dir") } }));
    expect(inner.entries.map((entry) => unb64(entry.path.bytesBase64))).toEqual(["dir/inner.txt"]);

    mkdirSync(join(workdir, "many"));
    for (let i = 0; i < 300; i++) writeFileSync(join(workdir, "many", `f${String(i).padStart(3, "0")}`), "");
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const next = await ok(sdk.listFiles({ client: client(), path: path(), query: { path: b64("many"), ...(cursor ? { cursor } : {}) } }));
      expect(next.entries.length).toBeLessThanOrEqual(128);
      expect(next.directoryIdentity).toBe(page.directoryIdentity === next.directoryIdentity ? page.directoryIdentity : next.directoryIdentity);
      seen.push(...next.entries.map((entry) => unb64(entry.path.bytesBase64)));
      cursor = next.next;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toHaveLength(300);
    expect(seen[0]).toBe("many/f000");
    expect(seen.at(-1)).toBe("many/f299");
  });

  it("refuses escapes, symlinked directories, private state and stale cursors", async () => {
    mkdirSync(join(workdir, "sub"));
    symlinkSync(t.home.dir, join(workdir, "out"));
    for (const bad of ESCAPES) {
      expect(await failure(sdk.listFiles({ client: client(), path: path(), query: { path: bad } }))).toMatchObject({ status: 400, body: { _tag: "ValidationError" } });
    }
    expect(await failure(sdk.listFiles({ client: client(), path: path(), query: { path: b64("out") } }))).toMatchObject({ status: 400, body: { message: expect.stringMatching(/symlink/) } });
    expect(await failure(sdk.listFiles({ client: client(), path: path(), query: { path: b64("out/root") } }))).toMatchObject({ status: 400 });
    expect(await failure(sdk.listFiles({ client: client(), path: path(), query: { path: b64(".git") } }))).toMatchObject({ status: 403 });
    expect(await failure(sdk.listFiles({ client: client(), path: path(), query: { path: b64("missing") } }))).toMatchObject({ status: 404 });
    for (let i = 0; i < 130; i++) writeFileSync(join(workdir, "sub", `f${i}`), "");
    const first = await ok(sdk.listFiles({ client: client(), path: path(), query: { path: b64("sub") } }));
    renameSync(join(workdir, "sub"), join(workdir, "old"));
    mkdirSync(join(workdir, "sub"));
    expect(await failure(sdk.listFiles({ client: client(), path: path(), query: { path: b64("sub"), cursor: first.next! } }))).toMatchObject({ status: 409 });
    expect(await failure(sdk.listFiles({ client: client(), path: path(), query: { cursor: "garbage" } }))).toMatchObject({ status: 400 });
  });
});

describe("readFile", () => {
  it("delivers text in UTF-8-aligned chunks of at most 32 KiB with a verified end", async () => {
    const text = "é".repeat(40_000) + "end\n"; // 80,004 bytes: chunk ends must move off the 2-byte letters
    writeFileSync(join(workdir, "big.txt"), text);
    const response = await sdk.readFile({ client: client(), path: path(), query: { path: b64("big.txt") } });
    const events: Extract<import("../../clients/index.js").FileReadEvent, object>[] = [];
    for await (const event of response.stream) events.push(event as never);
    expect(events.map((event) => event.type)).toEqual(["file.begin", "file.chunk", "file.chunk", "file.chunk", "file.end"]);
    const chunks = events.filter((event) => event.type === "file.chunk");
    let offset = 0;
    for (const chunk of chunks) {
      expect(chunk.offset).toBe(offset);
      const bytes = Buffer.from(chunk.bytesBase64, "base64");
      expect(bytes.length).toBeLessThanOrEqual(32 * 1024);
      expect(() => new TextDecoder("utf-8", { fatal: true }).decode(bytes)).not.toThrow();
      offset += bytes.length;
    }
    const end = events.at(-1)!;
    expect(end).toMatchObject({ type: "file.end", size: Buffer.byteLength(text), sha256: createHash("sha256").update(text).digest("hex") });
    const read = await readWorkspaceFile(t.api, { ...path(), path: { bytesBase64: b64("big.txt") } });
    expect(read.kind === "text" && Buffer.from(read.bytes).toString("utf8")).toBe(text);
  });

  it("tells absent, changed, binary, image, empty and unsupported files apart", async () => {
    writeFileSync(join(workdir, "empty.txt"), "");
    writeFileSync(join(workdir, "blob.bin"), Buffer.from([0, 159, 146, 150]));
    const png = Buffer.from("89504e470d0a1a0a0000000d49484452", "hex");
    writeFileSync(join(workdir, "pic.png"), png);
    mkdirSync(join(workdir, "dir"));
    symlinkSync("empty.txt", join(workdir, "link"));
    const read = (name: string, expectedVersion?: string) => readWorkspaceFile(t.api, { ...path(), path: { bytesBase64: b64(name) }, expectedVersion });
    const empty = await read("empty.txt");
    expect(empty).toMatchObject({ kind: "text", size: 0, sha256: createHash("sha256").update("").digest("hex") });
    expect(await read("nothing.txt")).toEqual({ kind: "absent" });
    expect(await read("blob.bin")).toMatchObject({ kind: "binary", size: 4 });
    expect(await read("pic.png")).toMatchObject({ kind: "image", mimeType: "image/png", size: png.length });
    expect(await read("dir")).toEqual({ kind: "unsupported", reason: "directory" });
    expect(await read("link")).toEqual({ kind: "unsupported", reason: "symlink" });
    expect(await read("missing-dir/x")).toEqual({ kind: "absent" });
    const version = (empty as { version: string }).version;
    expect(await read("empty.txt", version)).toMatchObject({ kind: "text", version });
    writeFileSync(join(workdir, "empty.txt"), "now text");
    expect(await read("empty.txt", version)).toMatchObject({ kind: "changed" });
  });

  it("refuses escapes, symlinked parents, private state and denied paths", async () => {
    symlinkSync(t.home.dir, join(workdir, "out"));
    writeFileSync(join(t.home.dir, "secret.txt"), "s");
    for (const bad of ESCAPES) {
      expect(await streamRefusal("files/content", { path: bad })).toMatchObject({ status: 400, body: { _tag: "ValidationError" } });
    }
    expect(await streamRefusal("files/content", { path: b64("out/secret.txt") })).toMatchObject({ status: 400, body: { message: expect.stringMatching(/symlink/) } });
    expect(await streamRefusal("files/content", { path: b64(".git/config") })).toMatchObject({ status: 403, body: { _tag: "ForbiddenError" } });
    const denied = randomUUID();
    await ok(sdk.createSession({ client: client(), path: { server, sessionId: denied }, body: { workdir: "project", permissions: [{ action: "read", resource: "*.key", effect: "deny" }] } }));
    writeFileSync(join(workdir, "server.key"), "k");
    const deniedSession = sessionId;
    sessionId = denied;
    expect(await streamRefusal("files/content", { path: b64("server.key") })).toMatchObject({ status: 403, body: { _tag: "ForbiddenError" } });
    sessionId = deniedSession;
    expect(await streamRefusal("files/content", { path: b64("server.key") })).toMatchObject({ status: 200, body: { message: expect.stringContaining("event: file.begin") } });
    expect(await streamRefusal("files/content", { path: b64("a"), expectedVersion: "" })).toMatchObject({ status: 400 });
  });
});

describe("watchFiles", () => {
  it("is ready, reports changes, and ends with unavailable when the directory is replaced", async () => {
    mkdirSync(join(workdir, "w"));
    const events: FilesStreamEvent[] = [];
    const waiters: { type: string; resolve: () => void }[] = [];
    const next = (type: string) => new Promise<void>((resolve) => waiters.push({ type, resolve }));
    const ready = next("files.ready");
    const done = watchWorkspaceFiles(t.api, {
      ...path(),
      path: { bytesBase64: b64("w") },
      onEvent: (event) => {
        events.push(event);
        for (const waiter of waiters.filter((candidate) => candidate.type === event.type)) waiter.resolve();
      },
    });
    await ready;
    const page = await ok(sdk.listFiles({ client: client(), path: path(), query: { path: b64("w") } }));
    expect(events[0]).toMatchObject({ type: "files.ready", directoryIdentity: page.directoryIdentity });
    const changed = next("files.changed");
    writeFileSync(join(workdir, "w", "new.txt"), "x");
    await changed;
    rmSync(join(workdir, "w"), { recursive: true });
    mkdirSync(join(workdir, "w"));
    expect(await done).toMatchObject({ reason: expect.stringMatching(/^(deleted|replaced)$/) });
    expect(events.at(-1)?.type).toBe("files.unavailable");
  });

  it("refuses escapes and private state before streaming", async () => {
    symlinkSync(t.home.dir, join(workdir, "out"));
    for (const bad of [...ESCAPES, b64("out")]) {
      expect(await streamRefusal("files/events", { path: bad })).toMatchObject({ status: 400, body: { _tag: "ValidationError" } });
    }
    expect(await streamRefusal("files/events", { path: b64(".ze-harness") })).toMatchObject({ status: 403 });
    expect(await streamRefusal("files/events", { path: b64("gone") })).toMatchObject({ status: 404 });
  });
});

describe("names no filesystem holds", () => {
  it("a name over 255 bytes is a 400 naming the path field on every operation, never a 500", async () => {
    const long = "n".repeat(256);
    const expected = { status: 400, body: { _tag: "ValidationError", message: expect.stringMatching(/^path has a name longer than 255 bytes/) } };
    for (const name of [long, `dir/${long}`, `${long}/x`]) {
      expect(await streamRefusal("files/content", { path: b64(name) })).toMatchObject(expected);
      expect(await failure(sdk.listFiles({ client: client(), path: path(), query: { path: b64(name) } }))).toMatchObject(expected);
      expect(await streamRefusal("files/events", { path: b64(name) })).toMatchObject(expected);
      expect(await failure(sdk.gitDiff({ client: client(), path: path(), query: { area: "worktree", path: b64(name) } }))).toMatchObject(expected);
    }
    // 255 bytes is a name like any other.
    writeFileSync(join(workdir, "m".repeat(255)), "fits\n");
    const read = await readWorkspaceFile(t.api, { ...path(), path: { bytesBase64: b64("m".repeat(255)) } });
    expect(read).toMatchObject({ kind: "text", size: 5 });
  });
});
