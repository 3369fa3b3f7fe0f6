// The workspace file routes of the Worker host (listFiles, readFile, watchFiles), in workerd
// through miniflare over the /workspace store that Turns write through the file tools and a
// CodeMode script: Node's shapes (WorkspaceListPage, the FileReadEvent and FilesStreamEvent
// streams, checked against the contract), paging with cursors, private state, confinement and
// the typed errors, a configured read deny; and git status/diff, patches and rewind as typed 503s
// that say why.
import { createHash, randomUUID } from "node:crypto";
import type { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sdk, type FileReadEvent, type FilesStreamEvent, type TurnStreamEvent, type ZeClient } from "../../clients/index.js";
import { startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { failure, ok } from "../support/calls.js";
import { networkClient } from "../support/harness.js";
import { testProviderConfig } from "../support/model.js";
import { readSse } from "../support/terminals.js";
import { bundle, miniflare } from "./support.js";

let model: TestModel;
let mf: Miniflare;
let url: string;
let client: ZeClient["client"];
const server = "files-routes";
let sessionId: string;

const b64 = (text: string): string => Buffer.from(text).toString("base64");
const BIG = "é".repeat(40_000); // 80,000 bytes: three chunks, each ending on a character boundary

async function run(text: string): Promise<TurnStreamEvent> {
  const turnId = randomUUID();
  await ok(
    sdk.submitPrompt({ client, path: { server, sessionId }, headers: { "x-ze-harness-client-id": "worker-files-test" }, body: { delivery: "queue", turnId, prompt: [{ type: "text", text }] } as never }),
  );
  const path = `/v1/servers/${server}/sessions/${sessionId}/turns/${turnId}/events`;
  return (await readSse<TurnStreamEvent>(await fetch(`${url}${path}?afterRevision=0`), path, (event) => event.type === "turn.finished")).at(-1)!;
}

async function read(path: string, expectedVersion?: string): Promise<FileReadEvent[]> {
  const route = `/v1/servers/${server}/sessions/${sessionId}/files/content`;
  const query = new URLSearchParams({ path: b64(path), ...(expectedVersion !== undefined ? { expectedVersion } : {}) });
  return readSse<FileReadEvent>(await fetch(`${url}${route}?${query}`), route);
}

const write = (filePath: string, content: string) => ({ type: "tool_call", name: "write", arguments: { filePath, content } }) as const;

beforeAll(async () => {
  model = await startTestModel();
  const worker = await bundle("worker/index.ts");
  mf = miniflare(worker, {
    durableObjects: { HARNESS_SERVERS: { className: "HarnessServerObject", useSQLite: true } },
    bindings: {
      HARNESS_PROVIDERS: JSON.stringify(testProviderConfig(model)),
      HARNESS_PERMISSIONS: JSON.stringify([{ action: "read", resource: "denied.txt", effect: "deny" }]),
    },
    host: "127.0.0.1",
    port: 0,
  });
  url = (await mf.ready).origin;
  client = networkClient(url).client;
  sessionId = randomUUID();
  await ok(sdk.createSession({ client, path: { server, sessionId }, body: {} }));
  // One Turn writes the tree: text, a binary (NUL), private state, and through a CodeMode script
  // 130 files in one directory and a large UTF-8 file (131 nested calls: a Turn that settles many
  // parts, in statements of at most 100 bound values on this host).
  const script =
    "for (let i = 0; i < 130; i++) await tools.write({ filePath: `many/f${String(i).padStart(3, '0')}.txt`, content: 'x' });" +
    " await tools.write({ filePath: 'big.txt', content: '\u00e9'.repeat(40000) }); return 'ok';";
  model.enqueue(
    {
      events: [
        write("src/a.txt", "hello\n"),
        write("data.bin", "a\u0000b"),
        write("denied.txt", "secret"),
        write(".ze-harness/private.md", "private"),
        write(".git/HEAD", "ref: refs/heads/main\n"),
        write("src/.git/config", "[core]\n"),
        { type: "tool_call", name: "execute", arguments: { code: script } },
      ],
    },
    { events: [{ type: "text", text: "Tree written." }] },
  );
  expect(await run("Write the tree")).toMatchObject({ outcome: { kind: "completed", text: "Tree written." } });
}, 90_000);

afterAll(async () => {
  await mf?.dispose();
  await model?.close();
});

describe("workspace file routes on the Worker (workerd)", () => {
  it("lists the workdir's direct children in name-byte order, without .git and .ze-harness", async () => {
    const page = await ok(sdk.listFiles({ client, path: { server, sessionId } }));
    expect(page.path).toBeNull();
    expect(page.directoryIdentity).toMatch(/^ws-[0-9a-f]{32}$/);
    expect(page.next).toBeUndefined();
    const entries = page.entries.map((entry) => ({ ...entry, path: Buffer.from(entry.path.bytesBase64, "base64").toString() }));
    expect(entries.map((entry) => [entry.path, entry.kind, entry.size])).toEqual([
      ["big.txt", "file", 80_000],
      ["data.bin", "file", 3],
      ["denied.txt", "file", 6],
      ["many", "directory", undefined],
      ["src", "directory", undefined],
    ]);
    for (const entry of entries) expect(entry.modifiedAt).toBeGreaterThan(0);
    // A subdirectory: complete workdir-relative paths, `.git` left out there too.
    const src = await ok(sdk.listFiles({ client, path: { server, sessionId }, query: { path: b64("src") } }));
    expect(src.path).toEqual({ bytesBase64: b64("src") });
    expect(src.entries.map((entry) => Buffer.from(entry.path.bytesBase64, "base64").toString())).toEqual(["src/a.txt"]);
    expect(src.directoryIdentity).not.toBe(page.directoryIdentity);
  });

  it("pages 128 entries at a time with a cursor bound to its directory", async () => {
    const first = await ok(sdk.listFiles({ client, path: { server, sessionId }, query: { path: b64("many") } }));
    expect(first.entries).toHaveLength(128);
    expect(first.next).toBeDefined();
    const second = await ok(sdk.listFiles({ client, path: { server, sessionId }, query: { path: b64("many"), cursor: first.next! } }));
    expect(second.entries.map((entry) => Buffer.from(entry.path.bytesBase64, "base64").toString())).toEqual(["many/f128.txt", "many/f129.txt"]);
    expect(second.next).toBeUndefined();
    // The cursor of another directory is stale (409); garbage is a 400.
    expect((await failure(sdk.listFiles({ client, path: { server, sessionId }, query: { path: b64("src"), cursor: first.next! } }))).status).toBe(409);
    expect((await failure(sdk.listFiles({ client, path: { server, sessionId }, query: { path: b64("many"), cursor: "nonsense" } }))).status).toBe(400);
  });

  it("refuses paths out of the workdir, private state, files as directories and missing ones with Node's typed errors", async () => {
    const list = (path: string) => failure(sdk.listFiles({ client, path: { server, sessionId }, query: { path } }));
    for (const escape of [b64("/etc"), b64("../etc"), b64("src/../.."), "not base64!"]) {
      const refused = await list(escape);
      expect(refused.status).toBe(400);
      expect(refused.body._tag).toBe("ValidationError");
    }
    expect((await list(b64(".ze-harness"))).status).toBe(403);
    expect((await list(b64("src/.git"))).status).toBe(403);
    expect((await list(b64("missing"))).body._tag).toBe("NotFoundError");
    expect((await list(b64("src/a.txt"))).status).toBe(400);
    expect((await failure(sdk.listFiles({ client, path: { server, sessionId: randomUUID() } }))).status).toBe(404);
    // A workdir nothing was written to yet is empty (the store makes directories as files arrive);
    // one that is a file is Node's 503.
    const elsewhere = randomUUID();
    await ok(sdk.createSession({ client, path: { server, sessionId: elsewhere }, body: { workdir: "nowhere" } }));
    expect((await ok(sdk.listFiles({ client, path: { server, sessionId: elsewhere } }))).entries).toEqual([]);
    expect((await failure(sdk.listFiles({ client, path: { server, sessionId: elsewhere }, query: { path: b64("deeper") } }))).status).toBe(404);
    const onFile = randomUUID();
    await ok(sdk.createSession({ client, path: { server, sessionId: onFile }, body: { workdir: "src/a.txt" } }));
    const gone = await failure(sdk.listFiles({ client, path: { server, sessionId: onFile } }));
    expect(gone.status).toBe(503);
    expect(gone.body.message).toBe("The Session workdir no longer exists");
  });

  it("reads files as begin, chunks and end with version and SHA-256; binary, directory, absent and changed answers", async () => {
    const small = await read("src/a.txt");
    expect(small.map((event) => event.type)).toEqual(["file.begin", "file.chunk", "file.end"]);
    expect(small[0]).toMatchObject({ content: "text", mimeType: "text/plain; charset=utf-8", size: 6, sequence: 1 });
    expect(small[2]).toMatchObject({ size: 6, sha256: createHash("sha256").update("hello\n").digest("hex") });

    const big = await read("big.txt");
    const chunks = big.filter((event): event is Extract<FileReadEvent, { type: "file.chunk" }> => event.type === "file.chunk");
    expect(chunks.length).toBe(3);
    const bytes = Buffer.concat(chunks.map((chunk) => Buffer.from(chunk.bytesBase64, "base64")));
    for (const chunk of chunks) expect(Buffer.from(chunk.bytesBase64, "base64").toString("utf8")).not.toContain("\uFFFD");
    expect(bytes.toString("utf8")).toBe(BIG);
    const version = (big[0] as Extract<FileReadEvent, { type: "file.begin" }>).version;
    expect((await read("big.txt", version)).at(-1)).toMatchObject({ type: "file.end", version });
    expect(await read("big.txt", "v1-other")).toEqual([{ type: "file.changed", version, sequence: 1 }]);

    expect(await read("data.bin")).toEqual([expect.objectContaining({ type: "file.binary", size: 3 })]);
    expect(await read("src")).toEqual([{ type: "file.unsupported", kind: "directory", sequence: 1 }]);
    expect(await read("src/missing.txt")).toEqual([{ type: "file.absent", sequence: 1 }]);
    expect(await read("missing/deeper.txt")).toEqual([{ type: "file.absent", sequence: 1 }]);

    const route = `/v1/servers/${server}/sessions/${sessionId}/files/content`;
    const status = async (path: string) => (await fetch(`${url}${route}?path=${encodeURIComponent(path)}`)).status;
    expect(await status(b64(".git/HEAD"))).toBe(403);
    expect(await status(b64("../../etc/passwd"))).toBe(400);
    // HARNESS_PERMISSIONS denies reading denied.txt.
    const denied = await fetch(`${url}${route}?path=${encodeURIComponent(b64("denied.txt"))}`);
    expect(denied.status).toBe(403);
    expect(await denied.text()).not.toContain("secret");
  });

  it("watches a directory: ready, then changed when a Turn writes into it", async () => {
    const route = `/v1/servers/${server}/sessions/${sessionId}/files/events`;
    const controller = new AbortController();
    const response = await fetch(`${url}${route}?path=${encodeURIComponent(b64("src"))}`, { signal: controller.signal });
    let turn: Promise<TurnStreamEvent> | undefined;
    const events = await readSse<FilesStreamEvent>(response, route, (event) => {
      if (event.type === "files.ready") {
        model.enqueue({ events: [write("src/b.txt", "new")] }, { events: [{ type: "text", text: "Added." }] });
        turn = run("Add a file");
      }
      return event.type === "files.changed";
    });
    controller.abort();
    expect(events.map((event) => event.type)).toEqual(["files.ready", "files.changed"]);
    expect(events[0]).toMatchObject({ sequence: 1 });
    expect(await turn).toMatchObject({ outcome: { kind: "completed", text: "Added." } });
  });

  it("answers git, patches and rewind as typed 503s that say there is no git", async () => {
    const status = await failure(sdk.gitStatus({ client, path: { server, sessionId } }));
    expect(status.status).toBe(503);
    expect(status.body).toMatchObject({ _tag: "UnavailableError" });
    expect(status.body.message).toContain("no git");
    const rewind = await failure(sdk.rewindTurn({ client, path: { server, sessionId, turnId: randomUUID() }, body: {} }));
    expect(rewind.status).toBe(503);
    expect(rewind.body.message).toContain("no git");
  });
});
