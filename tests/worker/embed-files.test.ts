// WorkerHarnessHost's `workspace.files` in workerd (tests/worker/fixtures/embed-files-object.ts,
// one workerd start): the embedder's Map-backed file home replaces the object's SQLite store —
// AGENTS.md from it reaches the model's instructions, the model's `write` lands in it and `read`
// is served from it, a model-chosen `../` path is refused before the home sees anything, GET
// …/files lists it, and the object's own store tables are never created.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sdk, watchTurn, type FileReadEvent, type FilesStreamEvent, type Turn, type ZeClient } from "../../clients/index.js";
import type { TestModel } from "../../tools/test-model/index.js";
import { ok } from "../support/calls.js";
import { readSse } from "../support/terminals.js";
import { startEmbedFixture, type EmbedFixture } from "./support.js";

const SERVER = "home";

let fixture: EmbedFixture;
let model: TestModel;
let url: string;
let api: ZeClient;

beforeAll(async () => {
  fixture = await startEmbedFixture("tests/worker/fixtures/embed-files-object.ts", { className: "HomeObject", binding: "HOME", providersBinding: "HOME_PROVIDERS" });
  ({ model, url, api } = fixture);
}, 60_000);

afterAll(async () => {
  await fixture?.close();
});

interface Seen {
  readonly seen: { op: string; path: string }[];
  readonly files: Record<string, string>;
  readonly storeTables: number;
}

const seen = async (): Promise<Seen> => (await (await fetch(`${url}/fixture/seen`)).json()) as Seen;

async function runTurn(sessionId: string, text: string): Promise<Turn> {
  const turnId = randomUUID();
  await ok(sdk.submitPrompt({ client: api.client, path: { server: SERVER, sessionId }, headers: { "x-ze-harness-client-id": "home-test" }, body: { delivery: "queue", turnId, prompt: [{ type: "text", text }] } as never }));
  return watchTurn(api, { server: SERVER, sessionId, turnId });
}

describe("WorkerHarnessHost workspace.files (workerd)", () => {
  it("serves AGENTS.md, write, read and GET …/files from the embedder's home; a ../ path never reaches it", async () => {
    const sessionId = randomUUID();
    await ok(sdk.createSession({ client: api.client, path: { server: SERVER, sessionId }, body: {} }));
    model.enqueue(
      {
        events: [
          { type: "tool_call", id: "w1", name: "write", arguments: { filePath: "notes/a.txt", content: "hello from the model\n" } },
          { type: "tool_call", id: "w2", name: "write", arguments: { filePath: "../escape.txt", content: "out" } },
          { type: "tool_call", id: "w3", name: "write", arguments: { filePath: "notes/../../../etc/passwd", content: "out" } },
        ],
      },
      { events: [{ type: "tool_call", id: "r1", name: "read", arguments: { filePath: "notes/a.txt" } }] },
      { events: [{ type: "text", text: "done" }] },
    );
    const before = model.requests.length;
    const turn = await runTurn(sessionId, "use the files");
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "done" });
    // AGENTS.md from the home reached the model's instructions.
    expect(JSON.stringify(model.requests[before]!.body.messages)).toContain("Rules from the embedder's home: answer in haiku.");
    const parts = Object.fromEntries(
      turn.parts.filter((part) => part.type === "tool").map((part) => [(part as { toolCallId: string }).toolCallId, part as { state: string; fault?: { code: string }; canonicalResult?: { value: unknown } }]),
    );
    expect(parts["w1"]).toMatchObject({ state: "completed" });
    expect(parts["w2"]).toMatchObject({ state: "failed", fault: { code: "invalid_path" } });
    expect(parts["w3"]).toMatchObject({ state: "failed", fault: { code: "invalid_path" } });
    expect(parts["r1"]).toMatchObject({ state: "completed" });
    expect(String(parts["r1"]!.canonicalResult?.value)).toContain("hello from the model");

    const home = await seen();
    expect(home.files).toEqual({ "/workspace/AGENTS.md": "Rules from the embedder's home: answer in haiku.\n", "/workspace/notes/a.txt": "hello from the model\n" });
    expect(home.seen.filter((call) => call.op === "writeBytes").map((call) => call.path)).toEqual(["/workspace/notes/a.txt"]);
    expect(home.seen.some((call) => call.op === "readBytes" && call.path === "/workspace/notes/a.txt")).toBe(true);
    // Every path the home received was canonical and inside /workspace.
    for (const call of home.seen) expect(call.path === "/workspace" || (call.path.startsWith("/workspace/") && !call.path.split("/").includes(".."))).toBe(true);
    expect(home.storeTables).toBe(0);

    const listed = await ok(sdk.listFiles({ client: api.client, path: { server: SERVER, sessionId } }));
    const named = (entries: typeof listed.entries) => entries.map((entry) => [Buffer.from(entry.path.bytesBase64, "base64").toString(), entry.kind, entry.size]);
    expect(named(listed.entries)).toEqual([
      ["AGENTS.md", "file", 49],
      ["notes", "directory", undefined],
    ]);
    const notes = await ok(sdk.listFiles({ client: api.client, path: { server: SERVER, sessionId }, query: { path: Buffer.from("notes").toString("base64") } }));
    expect(named(notes.entries)).toEqual([["notes/a.txt", "file", 21]]);
  });

  it("watches and reads the embedder's home: a change it reports reaches GET …/files/events, its bytes GET …/files/content", async () => {
    const sessionId = randomUUID();
    await ok(sdk.createSession({ client: api.client, path: { server: SERVER, sessionId }, body: { workdir: "watched" } }));
    const route = `/v1/servers/${SERVER}/sessions/${sessionId}/files/events`;
    const controller = new AbortController();
    const response = await fetch(`${url}${route}`, { signal: controller.signal });
    const events = await readSse<FilesStreamEvent>(response, route, (event) => {
      // The embedder changes its home itself (as its Computer's synchronization would).
      if (event.type === "files.ready") void fetch(`${url}/fixture/put`, { method: "POST", body: JSON.stringify({ path: "/workspace/watched/b.txt", text: "synced" }) });
      return event.type === "files.changed";
    });
    controller.abort();
    expect(events.map((event) => event.type)).toEqual(["files.ready", "files.changed"]);

    const content = `/v1/servers/${SERVER}/sessions/${sessionId}/files/content`;
    const read = await readSse<FileReadEvent>(await fetch(`${url}${content}?path=${encodeURIComponent(Buffer.from("b.txt").toString("base64"))}`), content);
    const text = read.filter((event) => event.type === "file.chunk").map((event) => Buffer.from((event as { bytesBase64: string }).bytesBase64, "base64").toString()).join("");
    expect(text).toBe("synced");
  });
});
